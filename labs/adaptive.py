"""Lab ``adaptive``: rho_H(t) and rho_L(t) of adaptive HLWM from crossing points (seed 003 sec. 2.3).

The scheduler first runs as static HLWM (rho_H = 0.5, rho_L = 0.1 in seed 003 sec. 4.1) and
learns the reference rates from Fig. 2's first crossing points t_1^LWM, t_1^HWM, t_2^LWM,
t_2^HWM, t_3^LWM: i_B averages the rising slopes, delta_B the falling ones (sec. 2.3.2). Every
k seconds it then re-estimates i(t) and delta(t) from the last three crossing points and the
current one (sec. 2.3.3) and moves the marks by eq. (3) and (4):

    rho_H(t) = max{0, 1 - (1 - rho_H) i(t) / i_B}
    rho_L(t) = min{1, max{0, rho_L delta(t) / delta_B}, rho_H(t)}

Seed 0 uses the paper's worked example of sec. 2.3.3 (points at t = 10, 20, 25, now 30 with
occupancies 70, 30, 70, now 40, giving i = 40/5 and delta = (40/10 + 30/5)/2); its learning
phase and i_B, delta_B are ours (the paper gives none for that example). Other seeds deal
both phases. Occupancies are in % of the write cache, rates in % per second. The answers are
:func:`policies.destage.adaptive.reference_rates`, :func:`~policies.destage.adaptive.estimate_rates`
and :func:`~policies.destage.adaptive.adaptive_thresholds`, the functions the scheduler runs.
"""

from __future__ import annotations

from vraid.policies.destage.adaptive import adaptive_thresholds, estimate_rates, reference_rates

from .framework import Lab, Question, rng

RHO_H, RHO_L = 0.5, 0.1
PAPER_EXAMPLE = ([(10.0, 70.0, "H"), (20.0, 30.0, "L"), (25.0, 70.0, "H")], 30.0, 40.0)


def learning_points(r) -> list[tuple[float, float, str]]:
    """Fig. 2: L, H, L, H, L at the static marks (10 % and 50 %), times dealt."""
    t, out = float(r.randrange(1, 4)), []
    for kind in "LHLHL":
        out.append((t, 100 * (RHO_L if kind == "L" else RHO_H), kind))
        t += r.choice((2, 4, 5, 8, 10)) if kind == "L" else r.choice((2, 4, 5, 10))
    return out


class AdaptiveLab(Lab):
    def dealt(self, seed: int):
        r = rng(self, seed)
        learn = learning_points(r)
        if seed == 0:
            recent, now, occ = PAPER_EXAMPLE
            return learn, recent, now, occ
        t0 = learn[-1][0] + 20 * r.randrange(1, 4)
        hi, lo = r.choice((40, 60, 70, 80)), r.choice((10, 20, 30))
        if r.random() < 0.5:  # H, L, H: destaging since the last HWM point
            times = [t0, t0 + r.choice((4, 5, 8, 10)), 0.0]
            times[2] = times[1] + r.choice((2, 4, 5))
            recent = [(times[0], hi, "H"), (times[1], lo, "L"), (times[2], hi, "H")]
            now = times[2] + r.choice((2, 5, 10))
            occ = hi - r.choice((5, 10, 20))
        else:  # L, H, L: filling since the last LWM point
            times = [t0, t0 + r.choice((2, 4, 5, 10)), 0.0]
            times[2] = times[1] + r.choice((4, 5, 8))
            recent = [(times[0], lo, "L"), (times[1], hi, "H"), (times[2], lo, "L")]
            now = times[2] + r.choice((2, 5, 10))
            occ = lo + r.choice((5, 10, 20))
        return learn, [(float(t), float(o), k) for t, o, k in recent], float(now), float(occ)

    def setting(self, seed: int) -> str:
        learn, recent, now, occ = self.dealt(seed)
        pts = lambda ps: ", ".join(f"t={t:g} {o:g}% ({'HWM' if k == 'H' else 'LWM'})" for t, o, k in ps)
        src = "the paper's sec. 2.3.3 example" if seed == 0 else "dealt"
        return (f"Adaptive HLWM with static rho_H = {RHO_H}, rho_L = {RHO_L}.\n"
                f"Learning phase (Fig. 2), crossing points: {pts(learn)}.\n"
                f"Later, the last three crossing points ({src}): {pts(recent)}; now t = {now:g}, occupancy {occ:g}%.\n"
                "Rates in % per second; thresholds as fractions (e.g. 0.35). Answers within 0.01 count.\n"
                "Watch it move: vraid top --sim --destage adaptive:period=3s --workload random-write")

    def questions(self, seed: int) -> list[Question]:
        learn, recent, now, occ = self.dealt(seed)
        i_b, d_b = reference_rates(learn)
        i_t, d_t = estimate_rates(recent, now, occ)
        destaging = "".join(k for _, _, k in recent) == "HLH"
        # the scheduler takes delta(t) only while destaging (sec. 2.3.3); else it keeps the reference
        use_d = d_t if destaging else d_b
        rho_h_t, rho_l_t = adaptive_thresholds(RHO_H, RHO_L, max(i_t, 0.0), i_b, max(use_d, 0.0), d_b)
        rise = [f"({b[1]:g}-{a[1]:g})/({b[0]:g}-{a[0]:g})" for a, b in zip(learn, learn[1:]) if a[2] == "L"]
        fall = [f"({a[1]:g}-{b[1]:g})/({b[0]:g}-{a[0]:g})" for a, b in zip(learn, learn[1:]) if a[2] == "H"]
        kinds = "".join(k for _, _, k in recent)
        return [
            Question("q1", "i_B, the reference increasing rate?", round(i_b, 4), kind="float", tolerance=0.01,
                     explanation=f"the mean of the two rising slopes {' and '.join(rise)} (LWM -> HWM) = {i_b:.4g}."),
            Question("q2", "delta_B, the reference decreasing rate?", round(d_b, 4), kind="float", tolerance=0.01,
                     explanation=f"the mean of the two falling slopes {' and '.join(fall)} (HWM -> LWM) = {d_b:.4g}."),
            Question("q3", "i(t) now?", round(i_t, 4), kind="float", tolerance=0.01,
                     explanation=(f"points {kinds}: " + ("i is the one rising slope H_last - L_last over its interval"
                                  if kinds == "HLH" else "i averages the rising slope L_last-1 -> H_last and the "
                                  "current one from L_last to now") + f" = {i_t:.4g}.")),
            Question("q4", "delta(t) now?", round(d_t, 4), kind="float", tolerance=0.01,
                     explanation=(f"points {kinds}: " + ("delta averages the falling slope H_last-1 -> L_last and the "
                                  "current one from H_last to now" if kinds == "HLH" else
                                  "delta is the one falling slope H_last -> L_last") + f" = {d_t:.4g}.")),
            Question("q5", "Is the cache destaging now, so that the scheduler takes this delta(t)? (yes/no)",
                     "yes" if destaging else "no", kind="word",
                     explanation="delta(t) is updated only while the destage is active (sec. 2.3.3): after an HWM "
                                 "point it is; after an LWM point it is not, and delta keeps its last value "
                                 "(here delta_B)."),
            Question("q6", "rho_H(t) by eq. (3)?", round(rho_h_t, 4), kind="float", tolerance=0.01,
                     explanation=f"1 - (1 - {RHO_H}) * {i_t:.4g} / {i_b:.4g} = {rho_h_t:.4g} (bounded to [0, 1]). "
                                 "Writes arriving faster than at the reference lower the HWM: destaging starts earlier."),
            Question("q7", "rho_L(t) by eq. (4)?", round(rho_l_t, 4), kind="float", tolerance=0.01,
                     explanation=f"{RHO_L} * {use_d:.4g} / {d_b:.4g}, bounded to [0, rho_H(t)] = {rho_l_t:.4g}. "
                                 "A faster drain raises the LWM: destaging stops earlier."),
        ]


LAB = AdaptiveLab(name="adaptive", title="Adaptive HLWM: i_B, delta_B, i(t), delta(t) and the moving marks",
                  seeds=["003"])

"""The ``adaptive-hlwm`` rows for the period-by-period claims of seed 003's Figs. 4-6 that the
Case rows (:mod:`.adaptive_hlwm_report`) do not hold.

Seed 003 sec. 4.2.1 on W_synth^1 (the run these rows judge):

* Fig. 4: "the HWM and LWM values for the time-periods of T3, T5, and T7 are the same as those
  at T1"; at T6 "the HWM remains nearby at 50 percent" and "is also increased slightly"; "the
  decreasing amount of the LWM at T8 is relatively smaller than the increasing amount of the
  LWM at T6".
* Fig. 5: the adaptive overwrite ratio "becomes worse than the HLWM algorithm" at T4, "still
  remains higher" at T3 and T7, "a lower overwrite ratio continues at T5", and at T8 it "has a
  slightly better overwrite ratio".
* Fig. 6: "At T3 and T7 ... the proposed algorithm produces a larger amount of disk IO traffic".

A claim with no number is a yes/no row (:func:`.verdict.holds`); "the same as" is a ratio row
against 1.00x, judged by the one rule like every ratio. Marks are the adaptive mark's
time-weighted median over the period (as the Case rows'); overwrite ratios and traffic are
over the period. Each row's cause carries the counters that decide it: both runs' overwrite
ratios and mean marks, and for traffic the destaged blocks with the dirty entries each run
carried into the next period (:func:`.adaptive_hlwm_report.carried`'s rule, passed in).
"""

from __future__ import annotations

from typing import Any, Callable

from . import verdict

#: Fig. 5: the periods whose overwrite claim has no number, and its sign (adaptive against HLWM)
OVERWRITE_SIGNS = {"T3": (+1, "still remains higher"), "T4": (-1, "becomes worse"),
                   "T5": (-1, "a lower overwrite ratio continues"), "T7": (+1, "still remains higher"),
                   "T8": (+1, "a slightly better overwrite ratio")}
#: Fig. 6: the periods where the adaptive run "produces a larger amount of disk IO traffic"
MORE_TRAFFIC = ("T3", "T7")
#: Fig. 4: the periods whose marks are "the same as those at T1"
AS_T1 = ("T3", "T5", "T7")


def period_rows(by: dict[str, dict[str, Any]],
                carried: Callable[[dict[str, Any], str], int | None]) -> list[verdict.Comparison]:
    """The rows of Figs. 4-6 listed in the module docstring, for W_synth^1 (``by["static"]``,
    ``by["adaptive"]``: the outputs of :func:`.adaptive_hlwm_sim.simulate`)."""
    st = {r["name"]: r for r in by["static"]["periods"]}
    ad = {r["name"]: r for r in by["adaptive"]["periods"]}
    rows: list[verdict.Comparison] = []

    def marks(n: str) -> str:
        return (f"mean marks adaptive {100 * ad[n]['hwm']:.0f} % / {100 * ad[n]['lwm']:.0f} %, "
                f"static {100 * st[n]['hwm']:.0f} % / {100 * st[n]['lwm']:.0f} %")

    for n in AS_T1:
        if n not in ad or "T1" not in ad:
            continue
        for key, name in (("hwm", "HWM"), ("lwm", "LWM")):
            base, here = ad["T1"][f"{key}_median"], ad[n][f"{key}_median"]
            rows.append(verdict.same(
                f"Fig. 4, {n}: adaptive {name} the same as at T1 (median, {n} over T1)", here, base,
                cause=f"counter: median {name} {100 * here:.0f} % in {n}, {100 * base:.0f} % in T1 (range in {n} "
                      f"{100 * ad[n][f'{key}_min']:.0f}-{100 * ad[n][f'{key}_max']:.0f} %); i(t)/i_B averaged "
                      f"{_r(ad[n], 'i_ratio')}, delta(t)/delta_B {_r(ad[n], 'delta_ratio')} in {n}: the marks "
                      "follow these ratios (eqs. (3), (4)), which come from the last three crossings, some of them "
                      "still the period before's"))
    if "T6" in ad:
        h6 = 100 * ad["T6"]["hwm_median"]
        why6 = (f"counter: median HWM {h6:.0f} % (range {100 * ad['T6']['hwm_min']:.0f}-"
                f"{100 * ad['T6']['hwm_max']:.0f} %); i(t)/i_B averaged {_r(ad['T6'], 'i_ratio')}: eq. (3) puts "
                "the HWM above 50 % when i(t) < i_B")
        rows.append(verdict.compare("Fig. 4, T6: adaptive HWM \"remains nearby at 50 percent\" (median)", 50.0, h6,
                                    baseline=50.0, unit="%", cause=why6))
        rows.append(verdict.holds("Fig. 4, T6: adaptive HWM \"increased slightly\" (median above 50 %)", True,
                                  h6 > 50.0, cause=why6))
    if all(n in ad for n in ("T5", "T6", "T7", "T8")):
        rise = ad["T6"]["lwm_median"] - ad["T5"]["lwm_median"]
        fall = ad["T7"]["lwm_median"] - ad["T8"]["lwm_median"]
        rows.append(verdict.holds(
            "Fig. 4: the LWM's fall at T8 smaller than its rise at T6 (medians against the period before)", True,
            fall < rise,
            cause=f"counter: median LWM T5 {100 * ad['T5']['lwm_median']:.0f} % -> T6 "
                  f"{100 * ad['T6']['lwm_median']:.0f} % ({100 * rise:+.0f} points), T7 "
                  f"{100 * ad['T7']['lwm_median']:.0f} % -> T8 {100 * ad['T8']['lwm_median']:.0f} % "
                  f"({-100 * fall:+.0f} points); delta(t)/delta_B averaged {_r(ad['T6'], 'delta_ratio')} in T6, "
                  f"{_r(ad['T8'], 'delta_ratio')} in T8 (eq. (4): LWM = 0.1 delta/delta_B)"))
    for n, (sign, words) in OVERWRITE_SIGNS.items():
        if n not in ad:
            continue
        s, a = st[n]["overwrite_ratio"], ad[n]["overwrite_ratio"]
        rows.append(verdict.holds(
            f"Fig. 5, {n}: adaptive overwrite ratio {'above' if sign > 0 else 'below'} HLWM's (\"{words}\")", True,
            (a > s) if sign > 0 else (a < s),
            cause=f"counter: overwrite ratio static {s:.3f}, adaptive {a:.3f}; {marks(n)}: a higher mark keeps more "
                  "entries dirty for longer, so more writes find theirs"))
    for n in MORE_TRAFFIC:
        if n not in ad:
            continue
        s, a = st[n]["destage_blocks"], ad[n]["destage_blocks"]
        cs, ca = carried(by["static"], n), carried(by["adaptive"], n)
        carry = (f"; dirty entries carried into the next period: static {cs:+d}, adaptive {ca:+d}"
                 if cs is not None and ca is not None else "")
        rows.append(verdict.holds(
            f"Fig. 6, {n}: adaptive destage traffic above HLWM's (\"a larger amount of disk IO traffic\")", True,
            a > s, cause=f"counter: member blocks of destages static {s}, adaptive {a}; {marks(n)}{carry}: the "
                         "entries a higher mark kept dirty in the period before are destaged in this one"))
    return rows


def _r(period: dict[str, Any], key: str) -> str:
    v = period.get(key)
    return "n/a" if v is None else f"{v:.2f}"


__all__ = ["AS_T1", "MORE_TRAFFIC", "OVERWRITE_SIGNS", "period_rows"]

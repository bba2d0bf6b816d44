"""The ``adaptive-hlwm`` rows beyond W_synth^1: W_synth^2, the traced workloads' stand-ins, the
read-hit claims, and the destage-cost ablation that measures the causes of W_synth^1's misses.

Seed 003 sec. 4.2.1 gives W_synth^2's reference rates (i_B = 104.00, delta_B = 28.92) and says
its destaging "continues" through T4 and T8; sec. 4.2.2 (Figs. 7-9, the abstract) gives the
traced workloads' rates, Fig. 7's marks over time, W_traced^1's overwrite ratio (50.8 % for
HLWM, 6.2 % higher adaptive) and traffic (12 % less), W_traced^2's "same" overwrite ratio and
"almost the same" traffic, and read-hit ratios "almost equal" throughout. Every row here is
judged by :mod:`.verdict` (a "same" claim as the ratio adaptive over HLWM against 1.00x); a
stand-in's rows say they are judged on the stand-in (:mod:`.adaptive_hlwm_standin`), and the
claims a stand-in cannot speak to are ``not run``.
``by``: run id -> the output of :func:`.adaptive_hlwm_sim.simulate`.
"""

from __future__ import annotations

from typing import Any

from . import verdict
from .adaptive_hlwm_paper import (PAPER, PAPER2, PAPER_NW, PAPER_TRACED, SCHEDULERS, STANDINS,
                                  THINK, WORKLOAD_LABEL)
from .adaptive_hlwm_rates import paper_rate, rates
from .adaptive_hlwm_standin import LOCALITY as STANDIN_LOCALITY
from .adaptive_hlwm_think import think_text

#: the counters that add up over periods
SUMS = ("overwrites", "write_blocks", "read_blocks", "read_hit_blocks", "destage_blocks", "destage_read_blocks",
        "destages", "requests")


def totals(run: dict[str, Any], periods: int | None = None) -> dict[str, float]:
    """The counters of :data:`SUMS` over the run's first ``periods`` periods (all by default),
    with the overwrite ratio and the read-hit ratio over them."""
    rows = run["periods"][:periods]
    out: dict[str, float] = {k: float(sum(r.get(k, 0) for r in rows)) for k in SUMS}
    out["overwrite_ratio"] = out["overwrites"] / out["write_blocks"] if out["write_blocks"] else 0.0
    out["read_hit_ratio"] = out["read_hit_blocks"] / out["read_blocks"] if out["read_blocks"] else 0.0
    out["destaging_share"] = sum(r.get("destaging_share", 0.0) for r in rows) / len(rows) if rows else 0.0
    return out


def change(a: float, b: float) -> float:
    """b against a, in per cent of a."""
    return 100.0 * (b - a) / a if a else float("nan")


def first_move(run: dict[str, Any]) -> float | None:
    """When the adaptive marks first left their initial values, in the paper's seconds (the
    reference rates are learned then); None if they never moved."""
    marks = run.get("timeline", {}).get("marks", [])
    if not marks:
        return None
    h0, l0 = marks[0][1], marks[0][2]
    for t, h, l in marks[1:]:
        if (h, l) != (h0, l0):
            return t / run["setup"].get("tau", 1.0)
    return None


# ---------------------------------------------------------------------- W_synth^2
def synth2_rows(by: dict[str, dict[str, Any]], th: dict[str, float] | None = None) -> list[verdict.Comparison]:
    """W_synth^2 (sec. 4.2.1): its reference rates, theirs against W_synth^1's, and its
    destaging through T4 and T8. ``th``: the think-factor ablation
    (:func:`.adaptive_hlwm_think.think`), quoted where the factor is the cause."""
    if not all(f"synth2-{s}" in by for s in SCHEDULERS):
        return []
    ad2, st2, ad1 = by["synth2-adaptive"], by["synth2-static"], by["adaptive"]
    i2, d2 = rates(ad2)
    i1, d1 = rates(ad1)
    t1 = {r["name"]: r for r in ad2["periods"]}
    t1s = {r["name"]: r for r in st2["periods"]}
    busy = (f"disks busy {100 * t1['T1']['disk_busy']:.0f} % in T1 (W_synth^1: "
            f"{100 * ad1['periods'][0]['disk_busy']:.0f} %)")
    rows = [
        verdict.compare("W_synth^2: i_B, entries/s at the paper's scale (T1)", PAPER2["i_b"], i2,
                        cause=f"the think factor {THINK} x Table 1 (W_synth^1's, vraid's choice) sets the level; the "
                              "ratio to W_synth^1's (below) is free of it; counter: T1 host requests "
                              f"{t1['T1']['requests']} (W_synth^1: {ad1['periods'][0]['requests']}), {busy}"
                              + think_text(th, "s2_i_b")),
        verdict.compare("W_synth^2: delta_B, entries/s at the paper's scale (T1)", PAPER2["delta_b"], d2,
                        cause=f"counter: {_per_destage(ad2, 1)} in T1; the paper's read-modify-write destage is "
                              "slower: on W_synth^1"
                              + (ablation_text(ablation(by), "delta_b") or " (no ablation run)")),
        verdict.compare("W_synth^2 over W_synth^1: i_B", PAPER2["i_b"] / PAPER["i_b"], i2 / i1 if i1 else float("nan"),
                        baseline=1.0, unit="x", cause="both workloads have the think factor; "
                        f"ours: i_B {i2:.1f} against {i1:.1f}" + think_text(th, "s2_over_s1")),
        verdict.compare("W_synth^2 over W_synth^1: delta_B", PAPER2["delta_b"] / PAPER["delta_b"],
                        d2 / d1 if d1 else float("nan"), baseline=1.0, unit="x",
                        cause=f"ours: delta_B {d2:.1f} against {d1:.1f}; delta = destage rate - i, so with our destage "
                              f"rate far above i (W_synth^1: d = {i1 + d1:.0f}, W_synth^2: d = {i2 + d2:.0f} "
                              "entries/s) "
                              "the rise of i takes a smaller share of it"),
    ]
    for n in ("T4", "T8"):
        share, base = 100 * t1[n]["destaging_share"], 100 * t1["T1"]["destaging_share"]
        rows.append(verdict.compare(
            f"W_synth^2 {n}: adaptive destaging continues through the period (share of time destaging; "
            f"baseline: T1's)", PAPER2[f"destaging_{n}"], share, baseline=base, unit="%",
            cause=f"counter: destaging during {share:.0f} % of {n}, {base:.0f} % of T1 (static HLWM: "
                  f"{100 * t1s[n]['destaging_share']:.0f} % of {n}); mean occupancy {100 * t1[n]['occupancy']:.0f} %, "
                  f"LWM median {100 * t1[n]['lwm_median']:.0f} %" + _rmw2_text(by, n)))
    return rows


def _rmw2_text(by: dict[str, dict[str, Any]], n: str) -> str:
    """The destage-cost ablation of W_synth^2 for a destaging-share row of period ``n``: the
    share with one-block writes (each destage a read-modify-write, as the paper's) beside ours."""
    rmw, base = by.get("ablation-rmw-synth2-adaptive"), by.get("synth2-adaptive")
    if rmw is None or base is None or len(rmw["periods"]) < len(base["periods"]):
        return ""
    p = {r["name"]: r for r in rmw["periods"]}
    return (f"; ablation (W_synth^2 with one-block writes, so each destage is a read-modify-write of "
            f"{_per_destage(rmw)}, as the paper's; ours: {_per_destage(base)}): destaging during "
            f"{100 * p[n]['destaging_share']:.0f} % of {n}, {100 * p['T1']['destaging_share']:.0f} % of T1")


def destage_rate(run: dict[str, Any]) -> float:
    """Destages completed per second spent destaging, at the paper's scale (entries/s): the
    most the run's one destaging process drains, so delta_B = d - i_B stays below it minus i_B."""
    rows, setup = run["periods"], run["setup"]
    busy = sum(r.get("destaging_share", 0.0) for r in rows) * setup["period_seconds"]
    return paper_rate(sum(r.get("destages", 0) for r in rows) / busy, setup) if busy > 0 else float("nan")


def _destage_rate_text(run: dict[str, Any], i_b: float, paper_i_b: float, paper_delta_b: float) -> str:
    d = destage_rate(run)
    if d != d:
        return ""
    need = paper_i_b + paper_delta_b
    return (f"; counter: its one destaging process completes {d:.0f} destages a second while destaging "
            f"({1e3 / d:.1f} ms each at the paper's scale), so delta_B = d - i is at most {d - i_b:.0f}; the "
            f"paper's i_B + delta_B = {need:.0f} needs destages of {1e3 / need:.1f} ms")


def _per_destage(run: dict[str, Any], periods: int | None = None) -> str:
    t = totals(run, periods)
    if not t["destages"]:
        return "no destages"
    return (f"{t['destage_blocks'] / t['destages']:.2f} member blocks per destage, "
            f"{t['destage_read_blocks'] / t['destages']:.2f} of them reads")


# ---------------------------------------------------------------------- the stand-ins
def standin_rows(by: dict[str, dict[str, Any]], th: dict[str, float] | None = None) -> list[verdict.Comparison]:
    """The traced workloads' claims, each judged on its stand-in, or ``not run`` where a stand-in
    cannot speak to it."""
    rows: list[verdict.Comparison] = []
    for w in STANDINS:
        label, p = WORKLOAD_LABEL[w], PAPER_TRACED[w]
        if not all(f"{w}-{s}" in by for s in SCHEDULERS):
            continue
        st, ad = by[f"{w}-static"], by[f"{w}-adaptive"]
        ts, ta = totals(st), totals(ad)
        i_b, d_b = rates(ad)
        on = "judged on the stand-in (Table 2's read ratio, size and inter-arrival time; Poisson arrivals and " \
             "W_synth's 0.4 % locality are vraid's choice)"
        moved = first_move(ad)
        info = st["setup"]["stand_in"]
        writes = (1 - info["read_fraction"]) / info["iat_seconds"]
        rows += [
            verdict.compare(f"{label}: i_B, entries/s", p["i_b"], i_b,
                            cause=f"{on}; open loop at Table 2's rate, no think factor; counter: writes arrive at "
                                  f"{writes:.1f}/s (Table 2: {100 * (1 - info['read_fraction']):.2f} % of one request "
                                  f"every {1e3 * info['iat_seconds']:.2f} ms), the most new dirty entries a second a "
                                  f"write stream can make; the paper's {p['i_b']} is {p['i_b'] / writes:.1f}x that, "
                                  "so cause not found in vraid: Table 2's own rates do not give the paper's i_B"),
            verdict.compare(f"{label}: delta_B, entries/s", p["delta_b"], d_b,
                            cause=f"{on}; counter: {_per_destage(ad)}; disks busy "
                                  f"{100 * _mean(ad, 'disk_busy'):.0f} %"
                                  + _destage_rate_text(ad, i_b, p["i_b"], p["delta_b"])),
        ]
        ow = 100 * (ta["overwrite_ratio"] - ts["overwrite_ratio"])
        tr = change(ts["destage_blocks"], ta["destage_blocks"])
        counters = (f"static overwrite ratio {ts['overwrite_ratio']:.3f}, adaptive {ta['overwrite_ratio']:.3f}; "
                    f"destage blocks static {ts['destage_blocks']:.0f}, adaptive {ta['destage_blocks']:.0f}; mean "
                    f"marks adaptive {100 * _mean(ad, 'hwm'):.0f} % / {100 * _mean(ad, 'lwm'):.0f} %")
        loc = locality_text(by, w)
        if "overwrite_static" in p:
            rows.append(verdict.compare(
                f"{label}: HLWM overwrite ratio (Fig. 8)", p["overwrite_static"], 100 * ts["overwrite_ratio"], unit="%",
                cause=f"{on}; {counters}; ruled out the request mix (Table 2's read ratio and size are the "
                      "stand-in's); the locality, which Table 2 does not give (the paper: the traces' writes show "
                      "\"a high spatial locality\"; ours: W_synth's 0.4 %)"
                      + (loc or ", not ablated: cause not found")))
        reading = ""
        if "overwrite_static" in p:
            o = p["overwrite_static"] / 100
            g = p["overwrite_change"] / 100
            reading = (f"; the paper's +{p['overwrite_change']} read as points (its {o:.3f} -> {o + g:.3f}) gives its "
                       f"own {p['traffic_change']:+.0f} % traffic ({change(1 - o, 1 - o - g):+.1f} %); read as per "
                       f"cent of {p['overwrite_static']} % it would give {change(1 - o, 1 - o * (1 + g)):+.1f} %, so "
                       f"points it is (ours as per cent: {change(ts['overwrite_ratio'], ta['overwrite_ratio']):+.1f} %)")
        fill = (f"; counter: one fill from LWM to HWM (40 % of N_W) takes {0.4 * PAPER_NW / i_b:.0f} s at our i_B, "
                f"{0.4 * PAPER_NW / p['i_b']:.0f} s at the paper's, and the rates need several crossings"
                if i_b and i_b == i_b else "")
        ow_why = (f"{on}; {counters}{reading}; the overwrite level (and so the room for a gain) follows the "
                  "locality, vraid's choice" + (loc or ", not ablated: cause not found"))
        tr_why = (f"{on}; {counters}; counter: the overwrite ratios predict "
                  f"{change(1 - ts['overwrite_ratio'], 1 - ta['overwrite_ratio']):+.1f} % (traffic = the entries not "
                  "overwritten), so the gap is the stand-in's low overwrite level, whose locality is vraid's choice"
                  + loc)
        if p["overwrite_change"] == 0:  # "the same"
            rows.append(verdict.same(f"{label}: overwrite ratio, adaptive over HLWM (Fig. 8, \"the same\")",
                                     ta["overwrite_ratio"], ts["overwrite_ratio"], cause=ow_why))
        else:
            rows.append(verdict.compare(f"{label}: overwrite ratio, adaptive minus HLWM, points (Fig. 8)",
                                        p["overwrite_change"], ow, unit="%", cause=ow_why))
        if p["traffic_change"] == 0:
            rows.append(verdict.same(f"{label}: destage traffic, adaptive over HLWM (Fig. 9, \"almost the same\")",
                                     ta["destage_blocks"], ts["destage_blocks"], cause=tr_why))
        else:
            rows.append(verdict.compare(f"{label}: destage traffic, adaptive vs HLWM (Fig. 9)", p["traffic_change"],
                                        tr, unit="%", cause=tr_why))
        rows += [
            verdict.compare(f"{label}: reference rates learned after (s; the paper: \"about 4 minutes\")", 240.0,
                            float("nan") if moved is None else moved, unit="s",
                            cause=f"{on}; ours: when the adaptive marks first moved, in the paper's seconds{fill}"),
        ]
    for w in STANDINS:  # "W_traced^1 and W_traced^2 have lighter IO traffic than the synthetic workloads"
        if not (all(f"{w}-{s}" in by for s in SCHEDULERS) and "adaptive" in by):
            continue
        i_t, i_s = rates(by[f"{w}-adaptive"])[0], rates(by["adaptive"])[0]
        rows.append(verdict.compare(
            f"{WORKLOAD_LABEL[w]} over W_synth^1: i_B (\"lighter IO traffic than the synthetic workloads\")",
            PAPER_TRACED[w]["i_b"] / PAPER["i_b"], i_t / i_s if i_s else float("nan"), baseline=1.0, unit="x",
            cause=f"judged on the stand-in; counter: ours {i_t:.1f} against {i_s:.1f}: the stand-in's is bounded by "
                  f"its write arrivals (its i_B row), W_synth^1's set by vraid's think factor {THINK}"
                  + think_text(th, "i_b")))
    why = ("not run: the marks follow the trace's own changes over its two hours, which Table 2 (averages) does not "
           "give and a stationary stand-in does not have; the cello traces are not public")
    rows += [
        verdict.not_run("W_traced^1 (Fig. 7a): HWM rises to 72 % and 95 %, LWM to 32-55 % until 1606 s", 95.0, why,
                        unit="%"),
        verdict.not_run("W_traced^1 (Fig. 7a): then HWM 40-39 %, LWM 24-10 %", 40.0, why, unit="%"),
        verdict.not_run("W_traced^1 (Fig. 7a): marks end at HWM 85 %, LWM 45 %", 85.0, why, unit="%"),
        verdict.not_run("W_traced^2 (Fig. 7b): HWM and LWM fall to about 40 % and 10 % from 1192 s", 40.0, why,
                        unit="%"),
        verdict.not_run("W_traced^2 (Fig. 7b): then rise to HWM 74 %, LWM 34 %", 74.0, why, unit="%"),
    ]
    return rows


def locality_text(by: dict[str, dict[str, Any]], w: str) -> str:
    """The locality ablation of stand-in ``w``, as a cause: at each locality run, HLWM's
    overwrite ratio, the adaptive one's gain over it (points) and the change in destage traffic,
    beside the stand-in's own 0.4 % ("": the ablation did not run)."""
    points = [(float(k.split("-")[1][3:]), k.rsplit("-", 1)[0]) for k in by
              if k.startswith("ablation-loc") and k.endswith(f"-{w}-static")]
    if not points or f"{w}-static" not in by:
        return ""

    def one(prefix: str) -> str:
        if not all(f"{prefix}-{s}" in by for s in SCHEDULERS):
            return ""
        ts, ta = totals(by[f"{prefix}-static"]), totals(by[f"{prefix}-adaptive"])
        return (f"HLWM overwrite ratio {100 * ts['overwrite_ratio']:.1f} %, adaptive "
                f"{100 * (ta['overwrite_ratio'] - ts['overwrite_ratio']):+.1f} points, traffic "
                f"{change(ts['destage_blocks'], ta['destage_blocks']):+.1f} %")

    parts = [f"{100 * STANDIN_LOCALITY:g} %: {one(w)}"]
    parts += [f"{100 * loc:g} %: {text}" for loc, prefix in sorted(points, reverse=True) if (text := one(prefix))]
    return "; ablation, the local processes kept to less of the space (locality " + "; ".join(parts) + ")"


def _mean(run: dict[str, Any], key: str) -> float:
    vals = [r[key] for r in run["periods"] if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else 0.0


# ---------------------------------------------------------------------- read hits
def read_hit_rows(by: dict[str, dict[str, Any]]) -> list[verdict.Comparison]:
    """"The read cache hit ratios of both algorithms are observed almost equal" (sec. 4.2.1,
    4.2.2): the adaptive run's read-hit ratio against HLWM's, over the whole run."""
    rows = []
    for prefix, w in (("", "synth1"), ("synth2-", "synth2"), ("traced1-", "traced1"), ("traced2-", "traced2")):
        if not all(prefix + s in by for s in SCHEDULERS):
            continue
        ts, ta = totals(by[prefix + "static"]), totals(by[prefix + "adaptive"])
        note = "; judged on the stand-in" if w in STANDINS else ""
        rows.append(verdict.same(
            f"{WORKLOAD_LABEL[w]}: read cache hit ratio, adaptive over HLWM (\"almost equal\")",
            ta["read_hit_ratio"], ts["read_hit_ratio"],
            cause=f"counter: read-hit ratio static {ts['read_hit_ratio']:.4f}, adaptive {ta['read_hit_ratio']:.4f}"
                  f"{note}; cause not found: the read cache is the same in both runs (size, policy); what differs is "
                  "the write cache's dirty entries, which also serve reads, and the runs' timing; not ablated"))
    return rows


# ---------------------------------------------------------------------- the ablation
def ablation(by: dict[str, dict[str, Any]]) -> dict[str, float] | None:
    """The destage-cost ablation against the adaptive W_synth^1 run over the same periods:
    i_B, delta_B, their ratio, the T2 LWM median (if T2 ran) and the member blocks per destage,
    ``{"base_...": ..., "rmw_...": ...}``; None without the ablation run."""
    rmw, base = by.get("ablation-rmw-adaptive"), by.get("adaptive")
    if rmw is None or base is None:
        return None
    out: dict[str, float] = {}
    n = len(rmw["periods"])
    for tag, run in (("base", base), ("rmw", rmw)):
        i_b, d_b = rates(run)
        t = totals(run, n)
        out |= {f"{tag}_i_b": i_b, f"{tag}_delta_b": d_b, f"{tag}_ratio": i_b / d_b if d_b else float("nan"),
                f"{tag}_per_destage": t["destage_blocks"] / t["destages"] if t["destages"] else float("nan"),
                f"{tag}_reads_per_destage": t["destage_read_blocks"] / t["destages"] if t["destages"] else float("nan")}
        if n >= 2:
            out[f"{tag}_t2_lwm"] = 100 * run["periods"][1]["lwm_median"]
    out["periods"] = float(n)
    return out


def ablation_text(a: dict[str, float] | None, key: str) -> str:
    """What the ablation measured for a row's number (``key``: "delta_b", "ratio", "t2_lwm")."""
    if a is None or f"rmw_{key}" not in a:
        return ""
    return (f"; ablation (W_synth^1 T1-T{a['periods']:.0f} with one-block writes, so each destage is a "
            f"read-modify-write of {a['rmw_per_destage']:.1f} member blocks, {a['rmw_reads_per_destage']:.1f} "
            f"of them reads, as the paper's; ours: {a['base_per_destage']:.1f}, "
            f"{a['base_reads_per_destage']:.1f} reads): {a[f'base_{key}']:.3g} -> {a[f'rmw_{key}']:.3g}")


__all__ = ["SUMS", "ablation", "ablation_text", "change", "destage_rate", "first_move", "locality_text",
           "read_hit_rows", "standin_rows", "synth2_rows", "totals"]

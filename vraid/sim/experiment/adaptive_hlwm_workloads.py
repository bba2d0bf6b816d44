"""The ``adaptive-hlwm`` report's section on W_synth^2 and the traced workloads' stand-ins
(seed 003 sec. 4.1, Table 2; sec. 4.2.1-4.2.2): how each stand-in is built, and each
workload's two runs summed over the whole run, from ``detail.json``'s runs.
"""

from __future__ import annotations

from typing import Any

from .adaptive_hlwm_paper import ABLATION_PERIODS, SCHEDULERS, STANDINS, TABLE2, WORKLOAD_LABEL
from .adaptive_hlwm_rates import paper_rate
from .adaptive_hlwm_rows import totals
from .adaptive_hlwm_standin import LOCALITY, PIECES, size_mix


def standin_text() -> list[str]:
    """How the stand-ins are built (what is Table 2's, what is vraid's)."""
    out = ["**The stand-ins are not the traces.** The cello traces the paper replays are not public, so each "
           "traced workload is a synthetic *stand-in* built from Table 2's numbers alone: "]
    parts = []
    for w in STANDINS:
        t = TABLE2[w]
        parts.append(f"{WORKLOAD_LABEL[w]}: {100 * t['read_fraction']:.2f} % reads, requests of one or two 4 KiB "
                     f"blocks with a mean of {t['size'] / 1024:g} KB ({100 * size_mix(t['size']):.1f} % two blocks), "
                     f"Poisson arrivals every {1e3 * t['iat']:.2f} ms on average (the replay's, already halved: "
                     f"{t['ios']} IOs x {1e3 * t['iat']:.2f} ms = {t['ios'] * t['iat'] / 60:.0f} min)")
    out[0] += "; ".join(parts) + (
        f". vraid's choices, since Table 2 gives no more: Poisson arrivals, W_synth's five processes at "
        f"{100 * LOCALITY:g} % locality (T1 of Table 1), requests inside one 16 KiB entry. Both schedulers run the "
        f"hour open loop (the paper replays \"based on its arrival time\"), in {PIECES} pieces of 5 minutes, time "
        "scaled by N_W / 4096 (no think factor). Fig. 7's marks over time follow the traces' own changes, which a "
        "stationary stand-in has not: those rows are *not run*.")
    return out


def workloads_markdown(results: dict[str, Any], runs: dict[str, Any]) -> list[str]:
    """The section's lines (empty when the runs are not there)."""
    present = [w for w in ("", "synth2-", *(f"{s}-" for s in STANDINS)) if all(w + s in runs for s in SCHEDULERS)]
    if len(present) < 2:
        return []
    lines = ["## W_synth^2 and the traced workloads' stand-ins (whole runs)", "", *standin_text(), "",
             "| workload | scheduler | HWM mean | LWM mean | overwrite ratio | destage blocks | blocks per destage "
             "| read-hit ratio | time destaging | i_B (paper's scale) | delta_B |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for prefix in present:
        w = prefix.rstrip("-") or "synth1"
        for s in SCHEDULERS:
            run = runs[prefix + s]
            t = totals(run)
            rows = run["periods"]
            hwm = sum(r["hwm"] for r in rows) / len(rows)
            lwm = sum(r["lwm"] for r in rows) / len(rows)
            setup = run.get("setup") or {}
            sched = run.get("scheduler") or {}
            i_b = paper_rate(sched.get("i_b_entries_per_s"), setup) if setup else float("nan")
            d_b = paper_rate(sched.get("delta_b_entries_per_s"), setup) if setup else float("nan")
            per = t["destage_blocks"] / t["destages"] if t["destages"] else float("nan")
            rates = f"{i_b:.1f} | {d_b:.1f}" if s == "adaptive" else "- | -"
            lines.append(f"| {WORKLOAD_LABEL[w]} | {s} | {100 * hwm:.0f} % | {100 * lwm:.0f} % | "
                         f"{t['overwrite_ratio']:.3f} | {t['destage_blocks']:.0f} | {per:.2f} | "
                         f"{t['read_hit_ratio']:.3f} | {100 * t['destaging_share']:.0f} % | {rates} |")
    if "ablation-rmw-adaptive" in runs:
        run = runs["ablation-rmw-adaptive"]
        t = totals(run)
        sched, setup = run.get("scheduler") or {}, run.get("setup") or {}
        lines += ["", f"Destage-cost ablation (`ablation-rmw-adaptive`): W_synth^1's first {ABLATION_PERIODS} "
                  "periods, adaptive, every write one 4 KiB block at the start of its entry, so each destage is a "
                  f"read-modify-write ({t['destage_blocks'] / max(1.0, t['destages']):.2f} member blocks per destage, "
                  f"{t['destage_read_blocks'] / max(1.0, t['destages']):.2f} of them reads) as the paper's 16 KB-strip "
                  f"destage is: i_B = {paper_rate(sched.get('i_b_entries_per_s'), setup):.1f}, delta_B = "
                  f"{paper_rate(sched.get('delta_b_entries_per_s'), setup):.1f} at the paper's scale; the rows' "
                  "causes give it beside the run it ablates."]
    return lines


__all__ = ["standin_text", "workloads_markdown"]

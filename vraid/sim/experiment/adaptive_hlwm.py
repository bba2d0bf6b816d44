"""Experiment ``adaptive-hlwm``: seed 003 (Nam & Park, adaptive HLWM) Fig. 4-9.

Beside W_synth^1 (below), :func:`runs` adds W_synth^2 (40 % reads, sec. 4.1), a synthetic
*stand-in* for each traced workload (:mod:`.adaptive_hlwm_standin`: Table 2's read ratio,
request size and inter-arrival time; the cello traces are not public) and the destage-cost
ablation; :mod:`.adaptive_hlwm_rows` judges their claims (Figs. 7-9 on the stand-ins, or
``not run`` where a stand-in cannot speak to them).

The paper runs its synthetic workload W_synth^1 (60 % reads) through eight 5-minute periods
T1..T8 (Table 1) on a RAID-5 with a 64 MB write cache of N_W = 4096 16 KB entries, once with
the static high/low water mark scheduler (rho_H = 0.5, rho_L = 0.1) and once with adaptive
thresholding (the same initial marks, i(t) and delta(t) re-estimated every 3 s; sec. 4.1).
Fig. 4 shows the cache occupancy with both marks over time; the text gives the marks the
adaptive scheduler reaches in each period, and Figs. 5 and 6 the overwrite ratio and the disk
I/O traffic per period. T2, T4, T6 and T8 are the four cases of sec. 2.3.1 (Table 1):

========  ================================  =====================================
period    change against T1                 case of sec. 2.3.1 (what the marks do)
========  ================================  =====================================
T2        inter-arrival 40 ms (was 20 ms)   Case 1: i < i_B, HWM and LWM rise
T4        inter-arrival 10 ms               Case 2: i > i_B, HWM and LWM fall
T6        locality 0.2 % (was 0.4 %)        Case 3: delta > delta_B, LWM rises
T8        locality 0.8 %                    Case 4: delta < delta_B, LWM falls
========  ================================  =====================================

How it runs (:mod:`.adaptive_hlwm_sim` runs it, :mod:`.adaptive_hlwm_report` writes the report;
docs/experiments.md has the reasoning and our numbers against the paper's):

* **The cache entry is a PBG of 16 KiB.** vraid's smallest cache unit is one row of a
  stripe. With 5 disks and 4 KiB strips a row holds 16 KiB of data, so one unit is one of the
  paper's 16 KB entries and one 16 KB request (the workload's ``size``) fills exactly one,
  and a write cache overwrite means what it means in the paper. N_W units = ``nw``.
* **Scaling.** ``nw`` = 4096 is the paper's cache; a smaller ``nw`` shrinks the space
  (160 entries of space per cache entry, the paper's 10 GB over 4096 entries, so each
  locality subset keeps its size relative to the cache) and every time by ``tau``
  (see :class:`Setup`): periods last 300 s x tau, the adaptive scheduler's period is
  3 s x tau. The disks are not scaled: each member is placed on a st39175fc at the fraction
  of its stroke that the paper's 10 GB LUN took of eight 9.1 GB disks.
* **Five processes in a closed loop.** Each of the workload's five processes issues its next
  request an exponential think time after the previous one completed. The paper's numbers
  call for it: its i_B = 70.09 entries/s is more new dirty entries per second than the
  workload's open-loop arrival rate could give, and i(T2)/i_B ~ 0.54, i(T4)/i_B ~ 1.22
  (from the marks it reports for T2 and T4) are what a think-time loop gives, where the open
  loop would give 0.5 and 2. The addresses, the read/write mix and the process of every
  request come from the ``hlwm-periods`` workload (its requests of the current period and
  process, in order); only the timing is the loop's. ``loop="open"`` runs the workload's own
  Poisson arrival times instead (not part of the experiment; see the docs).
* **Load.** Each request here is a full stripe, so a read miss keeps four of the five disks
  busy and a destage five; the paper's 16 KB strips on eight disks cost it one disk for a read
  and four I/Os for a destage. With the paper's think times our disks would be saturated, so
  think times are ``THINK`` = 2.5 x Table 1 (every ratio between periods is kept), and tau
  includes the same factor so that a period holds as many fill/drain cycles as in the paper.
* **One destaging process** (sec. 3.3), for both schedulers: ``max_destages=1``.
* **The paper's controller otherwise**: FIFO destage selection (sec. 3.3, ``destage_order``
  ``fifo``), C-LOOK member queues with host requests before destages (sec. 3.1,
  ``queue_order`` ``clook``), a clean-block read cache as large as the write cache beside it
  (sec. 2.1, 4.1: separate read and write caches of 64 MB), and disk traffic counted as the
  paper does, "directly associated with the amount of IO traffic to and/or from physical
  disks by the destaging process" (sec. 4.1): the member blocks of destage plans.

``results.json``, exactly::

    {"periods": [{"name": "T1",
                  "static":   {"hwm": 0.5, "lwm": 0.1, "overwrite_ratio": 0.07, "disk_blocks": 12345,
                               "destage_blocks": 6130},
                  "adaptive": {"hwm": 0.47, "lwm": 0.1, "overwrite_ratio": 0.06, "disk_blocks": 12000,
                               "destage_blocks": 5970}},
                 ...],
     "synth2": {"periods": [...]}, "traced1": {"periods": [...]}, "traced2": {"periods": [...]},
     "paper_vs_vraid": [{"item", "paper", "vraid", "verdict", "cause", "unit", "tolerance", "baseline"}, ...]}

(``synth2``: W_synth^2's T1..T8; ``traced1``/``traced2``: a stand-in's hour in twelve 5-minute
pieces, entries as W_synth^1's.)

``hwm``/``lwm``: the time-weighted mean of the scheduler's marks over the period, as fractions
of N_W; ``overwrite_ratio``: overwritten dirty blocks / written blocks in the period;
``disk_blocks``: 4 KiB member blocks read plus written in the period (the final drain after T8
is not in any period; ``detail.json`` has it); ``destage_blocks``: those of destages (the
paper's disk IO traffic); ``paper_vs_vraid``: :func:`comparisons` (vraid.sim.experiment.verdict).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import verdict
from .adaptive_hlwm_paper import ABLATION_PERIODS, ABLATION_THINK, FULL_NW, QUICK_NW, SCHEDULERS, STANDINS
from .adaptive_hlwm_sim import rounded, simulate
from .adaptive_hlwm_standin import ABLATION_LOCALITIES

NAME = "adaptive-hlwm"


def describe() -> str:
    return ("paper 003 Fig. 4-6: static HLWM (0.5/0.1) vs adaptive thresholding over the synthetic "
            "periods T1..T8 of Table 1 (marks, overwrite ratio, disk traffic per period; Cases 1-4)")


# ---------------------------------------------------------------------- the experiment
def runs(quick: bool, *, nw: int | None = None) -> list[dict[str, Any]]:
    """Independent runs, one per workload and scheduler (``--jobs`` runs them side by side):
    W_synth^1 (ids ``static``, ``adaptive``), W_synth^2 (``synth2-...``), the stand-ins of the
    traced workloads (``traced1-...``, ``traced2-...``) and the destage-cost ablation
    (``ablation-rmw-adaptive``: W_synth^1's first periods with one-block writes;
    ``ablation-rmw-synth2-adaptive``: W_synth^2's eight), the locality ablation
    (``ablation-locL-traced1-...``: W_traced^1's stand-in with its local processes kept to a
    share L of the space) and the think-factor ablation (``ablation-think1-...``: Table 1's own
    think times, W_synth^1 and W_synth^2 through T4); ``nw``
    overrides the cache size of ``quick`` (``--set nw=1024``)."""
    nw = int(nw) if nw else (QUICK_NW if quick else FULL_NW)
    out = [{"id": s, "scheduler": s, "nw": nw, "seed": 0, "loop": "closed"} for s in SCHEDULERS]
    out += [{"id": f"synth2-{s}", "scheduler": s, "nw": nw, "seed": 0, "loop": "closed", "workload": "synth2"}
            for s in SCHEDULERS]
    out += [{"id": f"{w}-{s}", "scheduler": s, "nw": nw, "seed": 0, "loop": "open", "workload": w}
            for w in STANDINS for s in SCHEDULERS]
    out.append({"id": "ablation-rmw-adaptive", "scheduler": "adaptive", "nw": nw, "seed": 0, "loop": "closed",
                "writes": "block", "until": ABLATION_PERIODS})
    out += [{"id": f"ablation-loc{loc:g}-traced1-{s}", "scheduler": s, "nw": nw, "seed": 0, "loop": "open",
             "workload": "traced1", "locality": loc} for loc in ABLATION_LOCALITIES for s in SCHEDULERS]
    # the think-factor ablation: Table 1's own think times, W_synth^1 and W_synth^2 through T4 (Case 2;
    # the reference rates are learned after T1 when the disks are busy); and the destage-cost
    # ablation of W_synth^2's eight periods
    out += [{"id": f"ablation-think{ABLATION_THINK:g}-adaptive", "scheduler": "adaptive", "nw": nw, "seed": 0,
             "loop": "closed", "think": ABLATION_THINK, "until": 4},
            {"id": f"ablation-think{ABLATION_THINK:g}-synth2-adaptive", "scheduler": "adaptive", "nw": nw, "seed": 0,
             "loop": "closed", "workload": "synth2", "think": ABLATION_THINK, "until": 4},
            {"id": "ablation-rmw-synth2-adaptive", "scheduler": "adaptive", "nw": nw, "seed": 0, "loop": "closed",
             "workload": "synth2", "writes": "block"}]
    return out


def run(spec: dict[str, Any]) -> dict[str, Any]:
    return simulate(spec["nw"], spec["scheduler"], seed=spec.get("seed", 0), loop=spec.get("loop", "closed"),
                    workload=spec.get("workload", "synth1"), writes=spec.get("writes", "entry"),
                    until=spec.get("until"), locality=spec.get("locality"), think=spec.get("think"))


def _periods(by: dict[str, dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """The per-period entries of one workload's two runs (``prefix`` "" for W_synth^1)."""
    names = [row["name"] for row in by[prefix + SCHEDULERS[0]]["periods"]]
    periods = []
    for k, name in enumerate(names):
        entry: dict[str, Any] = {"name": name}
        for s in SCHEDULERS:
            row = by[prefix + s]["periods"][k]
            entry[s] = {"hwm": round(row["hwm"], 4), "lwm": round(row["lwm"], 4),
                        "overwrite_ratio": round(row["overwrite_ratio"], 4), "disk_blocks": int(row["disk_blocks"]),
                        "destage_blocks": int(row["destage_blocks"])}
        periods.append(entry)
    return periods


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """results.json: ``{"periods": [{"name", "static": {hwm, lwm, overwrite_ratio,
    disk_blocks, destage_blocks}, "adaptive": {...}}, ...], "synth2": {"periods": [...]},
    "traced1": {"periods": [...]}, "traced2": {...}, "paper_vs_vraid": [...]}`` (W_synth^1's
    periods at the top, as before; the stand-ins' periods are their hour's 5-minute pieces)."""
    by = {spec["id"]: out for spec, out in results}
    out: dict[str, Any] = {"periods": _periods(by, "")}
    for w in ("synth2", *STANDINS):
        if all(f"{w}-{s}" in by for s in SCHEDULERS):
            out[w] = {"periods": _periods(by, f"{w}-")}
    if all(s in by for s in SCHEDULERS):
        out["paper_vs_vraid"] = verdict.paper_vs_vraid(comparisons(by))
    return out


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """timeline.json (occupancy and marks over time, for the plot) and detail.json (setup,
    every per-period aggregate, what the adaptive scheduler learned, the final drain)."""
    timeline: dict[str, Any] = {}
    detail: dict[str, Any] = {"setup": None, "runs": {}}
    for spec, out in results:
        s = spec["id"]
        setup = dict(out["setup"])
        if s in SCHEDULERS:
            timeline[s] = out["timeline"]
            timeline["period_seconds"] = setup["period_seconds"]
            timeline["names"] = [row["name"] for row in out["periods"]]
            detail["setup"] = {k: v for k, v in setup.items() if k != "scheduler"}
        elif not spec.get("writes") and "locality" not in spec and "think" not in spec:
            timeline.setdefault("workloads", {})[s] = {"timeline": out["timeline"],
                                                      "period_seconds": setup["period_seconds"]}
        detail["runs"][s] = {"setup": setup, "destage": setup[spec["scheduler"]], "scheduler": out["scheduler"],
                             "tail": out["tail"],
                             "periods": [{k: (rounded(v, 6) if isinstance(v, float) else v) for k, v in row.items()}
                                         for row in out["periods"]]}
    return {"timeline.json": timeline, "detail.json": detail}


# ---------------------------------------------------------------------- checks
def summary(results: dict[str, Any]):
    """Per-period table for the terminal."""
    from ..table import TextTable

    t = TextTable(title="paper 003 Fig. 4-6: static HLWM vs adaptive thresholding")
    for col in ("period", "HWM st", "HWM ad", "LWM st", "LWM ad", "overwrite st", "overwrite ad",
                "disk blocks st", "disk blocks ad"):
        t.add_column(col, justify="left" if col == "period" else "right")
    for row in results["periods"]:
        s, a = row["static"], row["adaptive"]
        t.add_row(row["name"], f"{s['hwm']:.3f}", f"{a['hwm']:.3f}", f"{s['lwm']:.3f}", f"{a['lwm']:.3f}",
                  f"{s['overwrite_ratio']:.3f}", f"{a['overwrite_ratio']:.3f}", str(s["disk_blocks"]),
                  str(a["disk_blocks"]))
    return t


# ---------------------------------------------------------------------- report
def comparisons(by: dict[str, dict[str, Any]]) -> list[verdict.Comparison]:
    """The paper's numbers beside ours (:func:`.adaptive_hlwm_report.comparisons`)."""
    from .adaptive_hlwm_report import comparisons as compare

    return compare(by)


def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """results.md, fig4.png and fig5_6.png (:func:`.adaptive_hlwm_report.report`)."""
    from .adaptive_hlwm_report import report as write

    return write(results, out_dir)


__all__ = ["NAME", "collect", "comparisons", "describe", "extras", "report", "run", "runs", "summary"]

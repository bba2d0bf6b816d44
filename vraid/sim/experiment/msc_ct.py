"""Experiment ``msc-ct``: seed 000 (Baek & Park, MSC-CT) Fig. 11, random writes vs workspace.

The paper (sec. IV-A, IV-B): five ST373454LC disks in RAID-5, a 512 MiB driver cache (PBGC: the
Linux md driver's parity-block-group cache; SC: the MSC driver's stripe cache without CT;
MSC-CT: with CT), high/low marks 95 %/85 % and LRW destage (sec. III-G), Tiobench threads each
writing 4 KiB pages uniformly at random in their own 1 GB file through ext3, a fixed 160k
writes, the workspace grown from 1 GB by adding threads. "At the lowest workspace size of 1 GB,
MSC-CT outperforms SC by 170%, and MSC-CT outperforms PBGC by 220%. With a workspace size of
8 GB, MSC-CT outperforms SC by 108%, and SC outperforms PBGC by 10%."

vraid runs the same in virtual time through :func:`vraid.sim.simulator.run_sim` (cache
``pbg:merge=true`` for PBGC, md with the block layer's elevator merging adjacent rows' requests
per member, the paper's baseline; ``pbg``, vraid's row-by-row PBGC, as the ablation ``pbgc_rows``;
``stripe`` for SC and MSC-CT; ``hlwm`` destage, LRW order, ``ct`` ``none`` or ``msc`` with the limits the
stride benchmark measured on the model, ``vraid.policies.ct.default_limits``), scaled down by
``scale`` (cache, workspace and writes alike; quick 1/64, full 1/16): the ratios that decide
the result (cache : workspace, writes : cache) are the paper's.

Two hosts, because the paper's writes reach the RAID driver through ext3 and the page cache,
a path the paper does not describe further:

* ``page-cache`` (the headline numbers; vraid's *model* of the paper's path, not the paper's
  own description): the Tiobench writes go through the ``page-cache`` workload wrapper
  (:mod:`vraid.sim.workload.pagecache`, whose docstring justifies each parameter): dirty
  limit ``dirty`` = Linux 2.6's 40 % ``dirty_ratio`` of the memory the 512 MiB driver cache
  leaves of the paper's 1 GB (0.4 x 512 MiB); a write to a page already dirty is absorbed;
  at the limit every dirty page is written back (``background=0``) in ascending offset order
  (writeback walks each file's pages in index order; each thread's file is taken as one
  contiguous extent, thread k after thread k-1), with up to 64 in flight (the block layer's
  queue). ext3's own metadata and journal writes are not modelled.
* ``direct``: the same random writes straight to the array, one outstanding per thread.

Throughput is the Tiobench writes (N x 4 KiB) over the virtual time until the last of them
is on the members (the run plus the final drain of the cache): what the disks sustain.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from vraid.errors import VraidError
from vraid.engine.events import PlanEvent
from . import verdict
from .msc_ct_paper import (BLOCK, DISK_MODEL, DISKS, GIB, HOSTS, LABEL as _LABEL, ONE_COMMAND, PAPER,  # noqa: F401
                           PAPER_CACHE, PAPER_DIRTY, PAPER_RATIOS, PAPER_WORKSPACES_GB, PAPER_WRITES, POLICIES,
                           QUEUE, STRIP, gains)

NAME = "msc-ct"
def describe() -> str:
    return ("paper 000 Fig. 11: random 4 KiB writes (Tiobench), PBGC (md + elevator) vs SC vs MSC-CT on "
            "5 x ST373454LC, throughput vs workspace; the CT gain's ablations, eq. (1), Fig. 12, Table II; "
            "--set parts=fig11,more,mount adds Table II's file-system rows, Fig. 13 and Fig. 14 on ext3 over a "
            "real mount (root)")


def _settings(quick: bool) -> dict[str, Any]:
    return {"scale": 64 if quick else 16, "workspaces_gb": list(PAPER_WORKSPACES_GB), "seed": 1}


#: the parts of the experiment: Fig. 11, the rest of the paper in the simulator (:mod:`.msc_ct_figs`),
#: and the file-system claims on a real mount (:mod:`.msc_ct_mount`: root, real time; not by default)
PARTS = ("fig11", "more", "mount")
DEFAULT_PARTS = ("fig11", "more")


def runs(quick: bool, *, scale: int | None = None, workspaces_gb: list[int] | None = None,
         hosts: tuple[str, ...] = HOSTS, disk_model: str = DISK_MODEL,
         ct_limits: str | None = None, parts: tuple[str, ...] = DEFAULT_PARTS,
         mount: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One run per (host, workspace, policy); ``scale`` divides the paper's sizes and writes.

    ``disk_model`` replaces the members' model (``--set disk_model=hdd:st373454lc,tcq=off``: one
    command at a time); ``ct_limits`` gives MSC-CT's limits (``sr_max=4,sw_max=4``) instead of
    the preset's measured ones (a modified preset names none and would get the conservative ones).
    ``parts``: ``fig11`` (the Fig. 11 runs) and ``more`` (the CT-gain ablations at 1 GB, eq. (1),
    Fig. 12 and Table II's block-level rows, :mod:`.msc_ct_figs`; ``--set parts=fig11`` leaves them out)
    and ``mount`` (Table II's file-system rows, Figs. 13 and 14 on a real mount, :mod:`.msc_ct_mount`:
    needs root, runs in real time, one run at a time; ``--set parts=fig11,more,mount``; ``mount``
    overrides its sizes, e.g. ``--set 'mount={"dbench_strips": []}'``).
    """
    from . import msc_ct_figs

    st = _settings(quick)
    scale = scale or st["scale"]
    if isinstance(hosts, str):  # --set hosts=direct
        hosts = (hosts,)
    if isinstance(parts, str):  # --set parts=fig11 or parts=fig11,more
        parts = tuple(p for p in parts.split(",") if p)
    unknown_parts = sorted(set(parts) - set(PARTS))
    if unknown_parts or "fig11" not in parts:
        raise VraidError(f"msc-ct has no part {', '.join(unknown_parts)}" if unknown_parts
                         else "msc-ct always runs its fig11 part", "parts are fig11, fig11,more or fig11,more,mount")
    if isinstance(workspaces_gb, int):  # --set workspaces_gb=8
        workspaces_gb = [workspaces_gb]
    unknown = sorted(set(hosts) - set(HOSTS))
    if unknown:
        raise VraidError(f"msc-ct has no host {', '.join(unknown)}", f"hosts are {', '.join(HOSTS)}")
    ws_list = workspaces_gb or st["workspaces_gb"]
    capacity = max(ws_list) * GIB // scale  # one array for every point: only the workspace varies
    specs = []
    for host in hosts:
        for gb in ws_list:
            for key, (cache, ct) in POLICIES.items():
                specs.append({"id": f"{host}-{gb}g-{key}", "host": host, "workspace_gb": gb, "policy": key,
                              "cache": cache, "ct": ct, "workspace": gb * GIB // scale, "threads": gb,
                              "capacity": capacity, "cache_size": PAPER_CACHE // scale,
                              "dirty": PAPER_DIRTY // scale, "writes": PAPER_WRITES // scale, "scale": scale,
                              "seed": st["seed"], "strip": STRIP, "disks": DISKS, "disk_model": disk_model,
                              **({"ct_limits": ct_limits} if ct_limits else {})})
    if "more" in parts:
        base = {spec["policy"]: dict(spec, host="page-cache", workspace_gb=1, workspace=GIB // scale, threads=1)
                for spec in specs if spec["host"] == hosts[0]}
        specs += msc_ct_figs.specs(base, scale)
    if "mount" in parts:
        from . import msc_ct_mount

        specs += msc_ct_mount.specs(quick, mount)
    elif mount:
        raise VraidError("--set mount=... given without the mount part", "add it: --set parts=fig11,more,mount")
    return specs


# ---------------------------------------------------------------------- one run
def workload_spec(spec: dict[str, Any]) -> str:
    """The run's workload: Tiobench's random writes, through the host page cache or not."""
    tiobench = f"random-write:workspace={spec['workspace']},threads={spec['threads']}"
    if spec["host"] == "direct":
        return tiobench
    return (f"page-cache:of={tiobench.replace(',', ';')},dirty={spec['dirty']},"
            f"background={spec.get('background', 0)},order=ascending,gap=1us")


class _PlanStats:
    """Destage plans seen on the event bus: dirty blocks per stripe, gaps between writes."""

    def __init__(self, sw_max: int) -> None:
        self.sw_max = sw_max
        self.plans = 0
        self.dirty = 0
        self.gaps: Counter[int] = Counter()
        self.requests_basic = 0
        self.requests = 0

    def observe(self, array) -> None:
        array.events.subscribe(self._event)

    def _event(self, ev) -> None:
        if not isinstance(ev, PlanEvent) or not ev.cause.is_destage:
            return
        from vraid.core.rxw import column_requests

        p = ev.plan
        self.plans += 1
        self.dirty += sum(row.count("D") for row in p.z)
        self.requests += len(p.requests)
        self.requests_basic += len(column_requests(p.basic)) if p.basic is not p.transformed else len(p.requests)
        for c in range(len(p.basic[0]) if p.basic else 0):
            rows = [i for i, row in enumerate(p.basic) if "w" in row[c]]
            for a, b in zip(rows, rows[1:]):
                self.gaps[b - a] += 1

    def to_dict(self) -> dict[str, Any]:
        total = sum(self.gaps.values())
        closely = sum(v for s, v in self.gaps.items() if 2 <= s < self.sw_max)
        return {"destage_plans": self.plans,
                "dirty_blocks_per_plan": round(self.dirty / self.plans, 3) if self.plans else 0.0,
                "write_gaps": total,
                "write_gaps_below_sw_max": round(closely / total, 4) if total else 0.0,
                "member_requests_basic": self.requests_basic, "member_requests": self.requests}


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from . import msc_ct_figs

    if spec.get("kind") == "eq1":
        return msc_ct_figs.eq1_run(spec)
    if spec.get("kind") == "table2":
        return msc_ct_figs.table2_run(spec)
    if spec.get("kind") == "mount":
        from . import msc_ct_mount

        return msc_ct_mount.run(spec)
    return _tiobench_run(spec)


def _tiobench_run(spec: dict[str, Any]) -> dict[str, Any]:
    """A Fig. 11 (or Fig. 12, or ablation) run: Tiobench's random writes through the host."""
    from vraid.backends.models import disk_preset
    from vraid.policies.ct import CtLimits, default_limits
    from vraid.sim.simulator import SimConfig, run_sim

    ct = spec["ct"]
    if spec.get("ct_limits") and ct != "none":
        ct = f"{ct}:{spec['ct_limits']}"
    policies = {"cache": spec["cache"], "cache_size": str(spec["cache_size"]), "destage": spec.get("destage", "hlwm"),
                "destage_order": "lrw", "ct": ct}
    common = {"level": 5, "disks": spec["disks"], "strip": spec["strip"], "capacity": spec["capacity"],
              "disk_model": spec["disk_model"], "seed": spec["seed"], "policies": policies}
    limits = default_limits(disk_preset=disk_preset(spec["disk_model"]))
    if spec.get("ct_limits"):
        given = dict(kv.split("=", 1) for kv in spec["ct_limits"].split(","))
        limits = CtLimits(sr_max=int(given.get("sr_max", limits.sr_max)), sw_max=int(given.get("sw_max", limits.sw_max)),
                          source="--set ct_limits")
    stats = _PlanStats(limits.sw_max)
    extra = {} if spec["host"] == "direct" else {"max_in_flight": QUEUE}
    config = SimConfig(workload=workload_spec(spec), requests=spec["writes"], **common, **extra)
    metrics = run_sim(config, observe=stats.observe).metrics
    block_writes = metrics["host_writes"]
    seconds = metrics["virtual_seconds"] + metrics["drain_seconds"]
    busy = metrics["disk_busy"]
    return {"mb_s": spec["writes"] * BLOCK / 1e6 / seconds if seconds > 0 else 0.0,
            "seconds": seconds, "block_writes": block_writes,
            "disk_write_requests": metrics["disk_write_requests"], "disk_read_requests": metrics["disk_read_requests"],
            "disk_write_blocks": metrics["disk_write_blocks"], "disk_read_blocks": metrics["disk_read_blocks"],
            "missed_rotations": metrics["missed_rotations"], "ct_limits": limits.spec(),
            # where the members' time went (model seconds summed over the members)
            "seek_seconds": metrics.get("seek_seconds", 0.0),
            "rotation_wait_seconds": metrics.get("rotation_wait_seconds", 0.0),
            "disk_busy": round(sum(busy) / len(busy), 4) if busy else 0.0,
            "max_response_ms": metrics.get("max_response_ms", 0.0),
            "mean_response_ms": metrics.get("mean_response_ms", 0.0),
            "pbg_rmw": metrics["pbg_rmw"], "pbg_rcw": metrics["pbg_rcw"], "pbg_full": metrics["pbg_full"],
            **stats.to_dict()}


# ---------------------------------------------------------------------- collect and report
def _r(x: float) -> float:
    return round(x, 4)


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """``{"workspace": [GB...], "pbgc": [MB/s...], "sc": [...], "msc_ct": [...]}`` for the page-cache
    host (the paper's set-up), the same under ``"direct"``, and the settings under ``"setup"``."""
    from . import msc_ct_figs

    from . import msc_ct_mount_report

    more = msc_ct_figs.collect(results)
    mounted = msc_ct_mount_report.collect(results)
    results = [(spec, out) for spec, out in results if not spec.get("kind")]
    series: dict[str, dict[str, dict[int, float]]] = {h: {k: {} for k in POLICIES} for h in HOSTS}
    setup: dict[str, Any] = {}
    for spec, out in results:
        series[spec["host"]][spec["policy"]][spec["workspace_gb"]] = _r(out["mb_s"])
        setup = {k: spec[k] for k in ("scale", "cache_size", "writes", "dirty", "strip", "disks", "disk_model",
                                      "capacity", "seed")} | {"ct": out["ct_limits"]}
    hosts = [h for h in HOSTS if any(series[h][k] for k in POLICIES)]
    ws = sorted({spec["workspace_gb"] for spec, _ in results})
    out_: dict[str, Any] = {"workspace": ws}
    main = hosts[0]
    out_.update({k: [series[main][k][w] for w in ws] for k in POLICIES})
    out_["host"] = main
    for h in hosts[1:]:
        out_[h] = {k: [series[h][k][w] for w in ws] for k in POLICIES}
    out_["setup"] = setup
    out_["more"] = more
    out_["mount"] = mounted
    main_1gb = {spec["policy"]: out for spec, out in results if spec["host"] == "page-cache" and spec["workspace_gb"] == 1}
    from .msc_ct_trends import more_rows, mount_rows

    rows = comparisons(out_, results) + more_rows(more, main_1gb) + mount_rows(mounted)
    out_["paper_vs_vraid"] = verdict.paper_vs_vraid(rows)
    return out_


def comparisons(collected: dict[str, Any], results: list[tuple[dict[str, Any], dict[str, Any]]]
                ) -> list[verdict.Comparison]:
    """Fig. 11's statements (as throughput ratios) beside ours, for every host run, each with a
    verdict (baseline 1: a gain or a loss) and the measured pattern behind ours; then the host's
    shape, the CT gain falling with the workspace and never below 1 (:func:`.msc_ct_trends.fig11_rows`)."""
    from .msc_ct_trends import fig11_rows

    runs_ = {(spec["host"], spec["workspace_gb"], spec["policy"]): out for spec, out in results}
    ct = collected.get("setup", {}).get("ct", "?")
    rows = []
    for host in [collected["host"]] + [h for h in HOSTS if h in collected]:
        s = collected if host == collected["host"] else collected[host]
        ws = collected["workspace"]
        label = "page-cache model" if host == "page-cache" else "no page cache"
        for key, gb, paper in PAPER_RATIOS:
            if gb not in ws:
                continue
            i = ws.index(gb)
            a, b = key.split("_over_")
            ours = s[a][i] / s[b][i] if s[b][i] else float("nan")
            conc = ""
            if host == "page-cache":
                from .msc_ct_figs import concurrency_cause

                conc = concurrency_cause(collected.get("more", {}), gb,
                                         {k: runs_.get((host, gb, k)) for k in ("sc", "pbgc") if runs_.get((host, gb, k))})
            cause = _cause(key, runs_, host, gb, ct, conc)
            if key == "msc_ct_over_sc" and gb == 1 and host == "page-cache":
                from .msc_ct_figs import gap_cause

                cause += gap_cause(collected.get("more", {}), s[b][i])
            rows.append(verdict.compare(f"{_LABEL[key]}, {gb} GB, {label}", round(paper, 3), round(ours, 3),
                                        baseline=1.0, unit="x", cause=cause))
        # the shape ("the gain of MSC-CT over SC decreases but will not be negative"): yes/no rows
        per_ws: dict[int, dict[str, Any]] = {}
        for (h, gb, key), out in runs_.items():
            if h == host:
                per_ws.setdefault(gb, {})[key] = out
        rows += fig11_rows(s, ws, label, per_ws)
    return rows


def _cause(key: str, runs_: dict, host: str, gb: int, ct: str, concurrency: str = "") -> str:
    """The measured pattern behind one ratio (from the runs' destage plans and members)."""
    sc, pbg, msc = (runs_.get((host, gb, k)) for k in ("sc", "pbgc", "msc_ct"))
    if not sc or not pbg or not msc:
        return ""
    reqs = lambda o: o["disk_write_requests"] + o["disk_read_requests"]  # noqa: E731
    if key == "msc_ct_over_sc":
        return (f"CT `{ct}` fills gaps with 2 <= S < S_w^max: {sc['write_gaps_below_sw_max']:.0%} of SC's write "
                f"gaps; member requests SC {reqs(sc)} -> MSC-CT {reqs(msc)}, missed rotations "
                f"{sc['missed_rotations']} -> {msc['missed_rotations']}")
    rows = runs_.get((host, gb, "pbgc_rows"))
    ablation = (f"; ablation, vraid's row-by-row PBGC: {sc['mb_s'] / rows['mb_s']:.2f}x SC over it, "
                f"{reqs(rows)} member requests, {rows['missed_rotations']} missed revolutions" if rows and rows["mb_s"] else "")
    if key == "sc_over_pbgc":
        busy = lambda o: DISKS * o["seconds"]  # noqa: E731
        blocks = lambda o: o["disk_write_blocks"] + o["disk_read_blocks"]  # noqa: E731
        found = ""
        if sc["mb_s"] < pbg["mb_s"] and blocks(sc) > 1.05 * blocks(pbg):
            found = (f"; measured: SC moves {blocks(sc)} blocks in {reqs(sc)} member requests against PBGC's "
                     f"{blocks(pbg)} in {reqs(pbg)}: a whole-stripe unit holds {sc['dirty_blocks_per_plan']:.1f} dirty "
                     f"blocks when destaged, so the same memory holds 1/{16 if STRIP == 64 << 10 else 'u'} as many units "
                     "as PBGC's one-row units and absorbs fewer rewrites (the memory utilisation the paper itself "
                     "gives as its SC's weakness, sec. IV-B)")
        elif sc["mb_s"] < pbg["mb_s"]:
            found = (f"; measured: the two move {blocks(pbg)} vs {blocks(sc)} blocks in {reqs(pbg)} vs {reqs(sc)} member "
                     f"requests (ruled out: request count, merging, blocks moved), but SC's run takes "
                     f"{sc['seconds']:.2f} s against {pbg['seconds']:.2f} s ({busy(sc):.1f} vs {busy(pbg):.1f} member s; "
                     f"seek {sc['seek_seconds']:.1f} vs {pbg['seek_seconds']:.1f}, rotational waits "
                     f"{sc['rotation_wait_seconds']:.1f} vs {pbg['rotation_wait_seconds']:.1f})")
            where = "runs on the page-cache host only" if host != "page-cache" else "is not in this run"
            found += concurrency or ("; why SC's destages wait longer per request: cause not found (the "
                                     f"destage-concurrency ablation, part more, {where})")
        else:  # SC ahead: how far the ablations move its gain (the paper's is 1.19x at 1 GB, 1.10x at 8 GB)
            found = concurrency
        return (f"PBGC = md + elevator (pbg:merge=true: adjacent dirty rows destaged together, merged per member); "
                f"missed revolutions PBGC {pbg['missed_rotations']} vs SC {sc['missed_rotations']}{found}{ablation}")
    return (f"product of the two: member requests PBGC {reqs(pbg)}, MSC-CT {reqs(msc)}; "
            f"missed revolutions {pbg['missed_rotations']} vs {msc['missed_rotations']}{ablation}")


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """detail.json: every run's member requests, missed rotations and destage write pattern."""
    rows, more = [], []
    for spec, out in results:
        values = {k: (_r(v) if isinstance(v, float) else v) for k, v in out.items()}
        if spec.get("kind"):  # the ablations, eq. (1), Fig. 12, Table II (msc_ct_figs)
            more.append({"id": spec["id"], "kind": spec["kind"], **values})
            continue
        rows.append({"host": spec["host"], "workspace_gb": spec["workspace_gb"], "policy": spec["policy"], **values})
    return {"detail.json": {"runs": rows, "more": more}}


def summary(results: dict[str, Any]):
    from ..table import TextTable

    t = TextTable(title=f"paper 000 Fig. 11 ({results['host']} host): MB/s vs workspace")
    for col in ("workspace", "PBGC", "SC", "MSC-CT", "MSC-CT/SC", "MSC-CT/PBGC"):
        t.add_column(col, justify="right")
    g = gains(results)
    for i, w in enumerate(results["workspace"]):
        t.add_row(f"{w} GB", f"{results['pbgc'][i]:.2f}", f"{results['sc'][i]:.2f}", f"{results['msc_ct'][i]:.2f}",
                  f"{g['msc_ct_over_sc'][i]:+.0%}", f"{g['msc_ct_over_pbgc'][i]:+.0%}")
    return t




def report(results: dict[str, Any], out_dir: Path) -> list[Path]:
    """results.md and fig11.png (:mod:`vraid.sim.experiment.msc_ct_report`)."""
    from .msc_ct_report import report as write

    return write(results, out_dir)

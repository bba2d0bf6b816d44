"""Rows and tables of ``msc-ct``'s mount part (:mod:`.msc_ct_mount`): Table II's file-system
rows, Fig. 13 (DBench) and Fig. 14 (the aged ext3), each judged by the one verdict rule
(:mod:`.verdict`). Without mount runs every such row is ``not run``, with the reason."""

from __future__ import annotations

import statistics
from typing import Any

from . import verdict
from .floor import disk_shares
from .msc_ct_mount import FLOOR

#: Table II's file-system rows (sec. IV-E): benchmark -> (PBGC, SC, MSC-CT, unit); "s" is a time
TABLE2_FS = {
    "video self-copy": (31.4, 21.6, 21.6, "s"), "music self-copy": (20.6, 10.5, 10.5, "s"),
    "src self-copy": (29.3, 15.2, 13.5, "s"), "mkfs (ext3)": (42.0, 34.2, 34.0, "s"),
    "sequential read (fs)": (190, 252, 252, "MB/s"), "sequential write (fs)": (166, 189, 189, "MB/s"),
    "bulky random read (fs)": (57.5, 67.4, 67.4, "MB/s"), "bulky random write (fs)": (58.8, 68.0, 68.0, "MB/s"),
}
#: where each Table II benchmark's number is in a table2 mount run: (key, field)
_TABLE2_KEYS = {"video self-copy": ("video", "seconds"), "music self-copy": ("music", "seconds"),
                "src self-copy": ("src", "seconds"), "mkfs (ext3)": ("mkfs_seconds", None),
                "sequential read (fs)": ("seq_read", "mb_s"), "sequential write (fs)": ("seq_write", "mb_s"),
                "bulky random read (fs)": ("rand_read", "mb_s"), "bulky random write (fs)": ("rand_write", "mb_s")}
#: Fig. 13 and 14's statements (sec. IV-C, IV-D, the abstract and conclusion)
FIG13 = {"ct_over_sc_best": 1.30, "ct_over_pbgc_best": 1.59, "one_client": 1.0, "strip_ct_over_pbgc_best": 1.80}
FIG14 = {"16k": 2.30, "2048k": 1.06, "sc_loss": 86.0, "msc_ct_loss": 17.0, "abstract_16k": 2.80, "small_copy": 2.70}
NOT_MOUNTED = ("the mount part did not run (it mounts a real array: root, `--set parts=fig11,more,mount`); "
               "vraid's simulator has no file system, and ext3's block allocation is what this measures")


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """``{"table2": {bench: {config: value}}, "dbench": {"clients": [..], config: [MB/s..]},
    "dbench_strip": {"strips": [..], config: [MB/s..]}, "aging": {"16k"|"2048k": {config: [cycle..]}},
    "disks": {step: {config: disk use}}, "repeats": N, "setup": {...}}``; ``{}`` when no mount run
    is in ``results``.

    Every value is the median over the run's repeats (:data:`.msc_ct_mount.FULL`'s ``repeats``),
    each run's kept beside it: ``table2_runs`` {bench: {config: [..]}}, ``dbench_runs`` {config:
    [[per repeat..] per client count]}, ``dbench_strip_runs`` {strip: {config: [..]}} and an aging
    cycle's ``runs``. A step's disk use (:func:`.msc_ct_mount_bench.disk_use`: the members'
    requests, MB and busy share during it) is the median of the repeats that measured it."""
    mounts = [(s, r) for s, r in results if s.get("kind") == "mount"]
    if not mounts:
        return {}
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for spec, r in sorted(mounts, key=lambda p: p[0].get("repeat", 1)):
        groups.setdefault((spec["bench"], spec["config"], spec["strip"]), []).append(r)
    out: dict[str, Any] = {"table2": {}, "table2_runs": {}, "dbench": {}, "dbench_runs": {}, "dbench_strip": {},
                           "dbench_strip_runs": {}, "aging": {}, "runs": {}, "disks": {},
                           "repeats": max(len(rs) for rs in groups.values())}
    strips: dict[str, dict[str, float]] = {}
    for (bench, cfg, strip), rs in groups.items():
        if bench == "table2":
            for name, (key, field) in _TABLE2_KEYS.items():
                values = [r[key] if field is None else r[key][field] for r in rs]
                out["table2"].setdefault(name, {})[cfg] = _median(values)
                out["table2_runs"].setdefault(name, {})[cfg] = values
                use = _median_use([r.get("mkfs_disks") if field is None else r[key].get("disks") for r in rs])
                if use:
                    out["disks"].setdefault(name, {})[cfg] = use
            out["runs"][f"table2-{cfg}"] = [{k: r[k] for k in ("video", "music", "src", "tree") if k in r} for r in rs]
        elif bench in ("dbench", "dbench-strip"):
            if bench == "dbench":
                per = list(zip(*[r["dbench"] for r in rs]))  # per client count, the repeats' runs
                out["dbench"]["clients"] = [runs[0]["clients"] for runs in per]
                out["dbench"][cfg] = [_median([d["mb_s"] for d in runs]) for runs in per]
                out["dbench_runs"][cfg] = [[d["mb_s"] for d in runs] for runs in per]
                out["dbench"].setdefault("mkfs_seconds", {})[cfg] = _median([r.get("mkfs_seconds") or 0.0 for r in rs])
                out["disks"].setdefault("dbench", {})[cfg] = [_median_use([d.get("disks") for d in runs]) for runs in per]
            last = [r["dbench"][-1] for r in rs]
            strips.setdefault(strip, {})[cfg] = _median([d["mb_s"] for d in last])
            out["dbench_strip_runs"].setdefault(strip, {})[cfg] = [d["mb_s"] for d in last]
            out["disks"].setdefault("dbench_strip", {}).setdefault(strip, {})[cfg] = _median_use(
                [d.get("disks") for d in last])
        else:
            cycles = list(zip(*[r["aging"] for r in rs]))  # per cycle, the repeats' runs of it
            out["aging"].setdefault(bench.split("-", 1)[1], {})[cfg] = [
                {**runs[0], "mb_s": _median([c["mb_s"] for c in runs]), "runs": [c["mb_s"] for c in runs],
                 "disks": _median_use([c.get("disks") for c in runs])} for runs in cycles]
    spec0 = mounts[0][0]
    out["setup"] = {k: spec0[k] for k in ("disk_model", "time_scale", "disks", "cache_size")}
    if strips and len(strips) > 1:
        order = sorted(strips, key=lambda s: int(s.rstrip("K")))
        # the floor ablation's at every strip, where it ran at every one (runs before it ran at 64K only)
        cfgs = ("pbgc", "sc", "msc_ct") + ((FLOOR,) if all(FLOOR in strips[s] for s in order) else ())
        out["dbench_strip"] = {"strips": order, **{c: [strips[s].get(c) for s in order] for c in cfgs}}
        out["dbench_strip"]["clients"] = max(out["dbench"].get("clients", [0]))
    out["sizes"] = {spec["bench"]: {k: spec[k] for k in ("disk_size", "strip", "video_mb", "music_files", "music_mb",
                                                         "tree", "fio_mb", "clients", "seconds", "ram", "mean", "cycles")
                                    if k in spec} for spec, _ in mounts}
    return out


def _median(values: list[float]) -> float:
    return round(float(statistics.median(values)), 3)


def _median_use(uses: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The median of each counter of the repeats' :func:`disk_use` (None where none measured it)."""
    got = [u for u in uses if u and u.get("busy") is not None]
    if not got:
        return None
    if len(got) == 1:
        return got[0]
    return {"requests": int(statistics.median(u["requests"] for u in got)),
            "read_mb": round(float(statistics.median(u["read_mb"] for u in got)), 2),
            "write_mb": round(float(statistics.median(u["write_mb"] for u in got)), 2),
            "busy": round(float(statistics.median(u["busy"] for u in got)), 3)}


#: below this share of a step the members were busy, the mount (not the disks) set the step's pace
IDLE_DISKS = 0.5
#: from this share on, the disks (not the mount) set the step's pace
BUSY_DISKS = 0.8
_NAMES = {"pbgc": "PBGC", "sc": "SC", "msc_ct": "MSC-CT"}


def disk_note(uses: dict[str, Any], *, floor: bool = False) -> str:
    """The measured part of a mount row's cause: what the members did during the step under each
    driver (``uses``: config -> :func:`.msc_ct_mount_bench.disk_use`), and what that rules out;
    "" where the run did not measure it. ``floor``: the row carries the floor ablation too
    (:func:`floor_note`), which measures what the busy share only suggests, and decides: the
    counters are given without a conclusion of their own. (The busy share is the members' mean:
    a step that keeps one member of five busy at a time shows 20 % and may still wait for the
    disks all along; the quick run's sequential read did, at 10 % busy and 20x the floor's time.)"""
    got = {c: u for c, u in uses.items() if u and u.get("busy") is not None}
    if not got:
        return ""
    order = [c for c in ("pbgc", "sc", "msc_ct") if c in got]
    names = " / ".join(_NAMES[c] for c in order)
    busy = " / ".join(f"{100 * got[c]['busy']:.0f} %" for c in order)
    requests = " / ".join(f"{got[c]['requests']:,}" for c in order)
    moved = " / ".join(f"{got[c]['read_mb'] + got[c]['write_mb']:.0f}" for c in order)
    text = f"measured (the members, over the step): busy {busy} of it, {requests} requests, {moved} MB ({names})"
    if floor:
        return text
    most = max(got[c]["busy"] for c in order)
    if most < IDLE_DISKS:
        return text + ("; the disks were idle most of the step, so the mount (FUSE, the loop device, the daemon), "
                       "not the array's policy, set its pace: ruled out as the cause, the disks")
    if most >= BUSY_DISKS:
        return text + ("; cause not found beyond these counters (the disks were busy most of the step: ruled out, "
                       "the mount's floor)")
    return text + ("; cause not found: the disks were busy for part of the step and the mount for the rest, so "
                   "neither is ruled out")


def _per_unit(value: float | None, unit: str) -> float | None:
    """A step's time per unit of work: a time as it is, a throughput inverted (s per MB)."""
    if not value:
        return None
    return float(value) if unit == "s" else 1.0 / float(value)


def floor_share(values: dict[str, Any], top: str, bottom: str, unit: str) -> dict[str, Any] | None:
    """The floor ablation's arithmetic for one step (:data:`.msc_ct_mount.FLOOR`: SC with no disk
    time): the step's time (per MB for a throughput, ``unit`` not "s") in the mount alone
    (``floor``), under ``top`` and ``bottom`` with the disks, the drivers that took within the
    verdict's tolerance of the floor (``at_floor``: their disks' share is noise), and ``share``,
    the throughput ratio ``top`` over ``bottom`` of the disks' shares (the times less the floor;
    None when a driver is at the floor). None where the floor did not run."""
    floor = _per_unit(values.get(FLOOR), unit)
    t_top, t_bottom = _per_unit(values.get(top), unit), _per_unit(values.get(bottom), unit)
    if floor is None or t_top is None or t_bottom is None:
        return None
    shares = disk_shares(t_top, floor, t_bottom, floor)
    return {"floor": floor, "top": t_top, "bottom": t_bottom, "share": shares.ratio,
            "at_floor": [_NAMES[c] for c, at in zip((top, bottom), shares.at_floor) if at]}


def floor_note(values: dict[str, Any], top: str, bottom: str, paper: float | None, unit: str) -> str:
    """The floor ablation's part of a mount row's cause (:func:`floor_share`): the step in the mount
    alone against the timed ones, and the ratio of the disks' shares judged against ``paper`` by
    the verdict rule (None: a yes/no claim that ``top`` is above ``bottom``). "" where the floor
    did not run."""
    f = floor_share(values, top, bottom, unit)
    if f is None:
        return ""
    show = (lambda t: f"{t:.2f} s") if unit == "s" else (lambda t: f"{1 / t:.2f} MB/s")
    head = (f"floor ablation (SC with `--time none`, no disk time): {show(f['floor'])} in the mount alone, "
            f"{_NAMES[top]} {show(f['top'])} and {_NAMES[bottom]} {show(f['bottom'])} with the disks")
    if f["at_floor"]:
        return head + (f"; {' and '.join(f['at_floor'])} took within {verdict.TOLERANCE * 100:.0f} % of the mount's "
                       "own time: the disks' share of the step is within the noise, so the mount, not the driver, "
                       "set its pace (ruled out as the cause: the drivers' policies)")
    share = f["share"]
    text = head + (f"; the disks' share alone gives {_NAMES[top]} over {_NAMES[bottom]} = {share:.2f}x "
                   + (f"(paper {paper:.2f}x)" if paper is not None else "(the claim: above 1)"))
    held = share > 1.0 if paper is None else verdict.compare("", paper, share, baseline=1.0).verdict == "reproduced"
    if held:
        return text + ": the disks' share alone holds the paper's claim, so what sets the timed ratio apart is the mount's floor"
    return text + "; the rest: cause not found (ruled out: the mount's floor)"


def floor_loss_note(runs: dict[str, list[dict[str, Any]]], ours: float) -> str:
    """Fig. 14(b)'s loss beside the floor ablation's over the same cycles: how much of the aged
    file system's slowdown is the mount's own (its loss within the verdict's tolerance of ours:
    all of it). "" where the floor did not age."""
    cyc = runs.get(FLOOR)
    if not cyc or len(cyc) < 2 or not cyc[0].get("mb_s"):
        return ""
    lost = round(100 * (1 - cyc[-1]["mb_s"] / cyc[0]["mb_s"]), 1)
    text = (f"floor ablation (SC with no disk time): the mount alone loses {lost:.1f} % from cycle 1 to "
            f"{len(cyc)} (MB/s {cyc[0]['mb_s']:.2f} -> {cyc[-1]['mb_s']:.2f})")
    if abs(ours - lost) <= verdict.TOLERANCE * max(abs(ours), 1.0):
        return text + ": the mount's own slowdown accounts for the loss (ruled out as the cause: the disks)"
    return text + f"; the rest of the {ours:.1f} %: cause not found (ruled out: the mount's own slowdown)"


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def _ratio(a: float | None, b: float | None) -> float:
    return round(a / b, 3) if a and b else float("nan")


def _spread(top: list[float] | None, bottom: list[float] | None) -> tuple[float, float] | None:
    """The run-to-run range of ``top / bottom`` (:func:`.verdict.ratio_spread`), None with one run each."""
    if not top or not bottom or (len(top) < 2 and len(bottom) < 2) or min(bottom) <= 0:
        return None
    lo, hi = verdict.ratio_spread(top, bottom)
    return round(lo, 3), round(hi, 3)


def _runs_text(m: dict[str, Any]) -> str:
    n = m.get("repeats", 1)
    return f"the median of {n} runs each" if n > 1 else "one run each"


def table2_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    rows = []
    t2, t2_runs = m.get("table2", {}), m.get("table2_runs", {})
    for bench, (pb, sc, ct, unit) in TABLE2_FS.items():
        p_sc_pb = pb / sc if unit == "s" else sc / pb  # as throughput ratios: a time's ratio inverted
        p_ct_sc = sc / ct if unit == "s" else ct / sc
        got = t2.get(bench)
        if not got or not {"pbgc", "sc", "msc_ct"} <= set(got):
            rows.append(verdict.not_run(f"Table II {bench}: SC over PBGC", round(p_sc_pb, 3), NOT_MOUNTED, unit="x"))
            rows.append(verdict.not_run(f"Table II {bench}: MSC-CT over SC", round(p_ct_sc, 3), NOT_MOUNTED, unit="x"))
            continue
        inv = unit == "s"
        runs = t2_runs.get(bench, {})
        # (top, bottom) of each ratio: a time's inverted, so that both are throughput ratios
        sc_pb_of, ct_sc_of = (("pbgc", "sc"), ("sc", "msc_ct")) if inv else (("sc", "pbgc"), ("msc_ct", "sc"))
        sc_pb = _ratio(got[sc_pb_of[0]], got[sc_pb_of[1]])
        ct_sc = _ratio(got[ct_sc_of[0]], got[ct_sc_of[1]])
        u = "s" if inv else "MB/s"
        head = (f"mount: {u} PBGC {got['pbgc']:.2f}, SC {got['sc']:.2f}, MSC-CT {got['msc_ct']:.2f} "
                f"(paper {pb:g}/{sc:g}/{ct:g} {unit}); ext3 on vraid, {_runs_text(m)}")
        note = disk_note(m.get("disks", {}).get(bench, {}), floor=FLOOR in got)
        rows.append(verdict.compare(f"Table II {bench}: SC over PBGC (mount)", round(p_sc_pb, 3), sc_pb,
                                    baseline=1.0, unit="x",
                                    cause=_join(head, note, floor_note(got, "sc", "pbgc", p_sc_pb, u)),
                                    spread=_spread(runs.get(sc_pb_of[0]), runs.get(sc_pb_of[1]))))
        rows.append(verdict.compare(f"Table II {bench}: MSC-CT over SC (mount)", round(p_ct_sc, 3), ct_sc,
                                    baseline=1.0, unit="x",
                                    cause=_join(head, note, floor_note(got, "msc_ct", "sc", p_ct_sc, u)),
                                    spread=_spread(runs.get(ct_sc_of[0]), runs.get(ct_sc_of[1]))))
    src = t2.get("src self-copy", {})
    item = "Conclusion: small-file copy, MSC-CT over MD (\"2.7 times\"; Table II's src self-copy gives 2.17x)"
    if {"pbgc", "msc_ct"} <= set(src):
        src_runs = t2_runs.get("src self-copy", {})
        rows.append(verdict.compare(item + " (mount)", FIG14["small_copy"], _ratio(src["pbgc"], src["msc_ct"]),
                                    baseline=1.0, unit="x",
                                    spread=_spread(src_runs.get("pbgc"), src_runs.get("msc_ct")), cause=_join(
                                        f"src self-copy s PBGC {src['pbgc']:.2f}, MSC-CT {src['msc_ct']:.2f}",
                                        disk_note(m.get("disks", {}).get("src self-copy", {}), floor=FLOOR in src),
                                        floor_note(src, "msc_ct", "pbgc", FIG14["small_copy"], "s"))))
    else:
        rows.append(verdict.not_run(item, FIG14["small_copy"], NOT_MOUNTED, unit="x"))
    return rows


def fig13_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    d = m.get("dbench", {})
    items = [("Fig. 13(a) DBench: MSC-CT over SC, best case (1..256 clients)", FIG13["ct_over_sc_best"]),
             ("Fig. 13(a) DBench: MSC-CT over PBGC, best case", FIG13["ct_over_pbgc_best"]),
             ("Fig. 13(a) DBench: no CT gain with 1 client", FIG13["one_client"])]
    rows = []
    if not {"pbgc", "sc", "msc_ct"} <= set(d):
        rows += [verdict.not_run(i, p, NOT_MOUNTED, unit="x") for i, p in items]
    else:
        cl = d["clients"]
        over_sc = [_ratio(c, s) for c, s in zip(d["msc_ct"], d["sc"])]
        over_pb = [_ratio(c, p) for c, p in zip(d["msc_ct"], d["pbgc"])]
        table = "; MB/s PBGC / SC / MSC-CT: " + ", ".join(
            f"{n} clients {p:.1f}/{s:.1f}/{c:.1f}" for n, p, s, c in zip(cl, d["pbgc"], d["sc"], d["msc_ct"]))
        i_sc, i_pb = over_sc.index(max(over_sc)), over_pb.index(max(over_pb))
        uses = m.get("disks", {}).get("dbench", {})
        dr = m.get("dbench_runs", {})

        def spread(top: str, bottom: str, i: int) -> tuple[float, float] | None:
            return _spread(dr[top][i], dr[bottom][i]) if top in dr and bottom in dr else None

        floored = _dbench_floor(d) is not None
        if floored:
            table += "; the floor ablation (SC, no disk time): " + ", ".join(f"{v:.1f}" for v in d[FLOOR])

        def at(i: int, top: str, bottom: str, paper: float) -> str:
            return _join(disk_note({c: (u[i] if u and i < len(u) else None) for c, u in uses.items()}, floor=floored),
                         floor_note({c: v[i] for c, v in d.items() if c in (*_NAMES, FLOOR) and i < len(v)}, top,
                                    bottom, paper, "MB/s"))

        rows.append(verdict.compare(items[0][0] + f" (mount, clients {', '.join(map(str, cl))})", items[0][1],
                                    over_sc[i_sc], baseline=1.0, unit="x", spread=spread("msc_ct", "sc", i_sc),
                                    cause=_join(f"best at {cl[i_sc]} clients" + table,
                                                at(i_sc, "msc_ct", "sc", items[0][1]))))
        rows.append(verdict.compare(items[1][0] + " (mount)", items[1][1], over_pb[i_pb], baseline=1.0, unit="x",
                                    spread=spread("msc_ct", "pbgc", i_pb),
                                    cause=_join(f"best at {cl[i_pb]} clients" + table,
                                                at(i_pb, "msc_ct", "pbgc", items[1][1]))))
        if 1 in cl:
            one = cl.index(1)
            rows.append(verdict.compare(items[2][0] + " (mount)", items[2][1], over_sc[one], baseline=1.0,
                                        unit="x", spread=spread("msc_ct", "sc", one),
                                        cause=_join(table[2:], at(one, "msc_ct", "sc", items[2][1]))))
        else:
            rows.append(verdict.not_run(items[2][0], items[2][1], "1 client not in this run", unit="x"))
    s = m.get("dbench_strip", {})
    item_b = "Fig. 13(b) DBench, 128 clients: MSC-CT over PBGC, best strip size (conclusion: 80 % over MD)"
    item_c = "Fig. 13(b): SC above PBGC at every strip size (8..256 KiB)"
    strips = s.get("strips", [])
    complete = strips and all(v is not None for c in ("pbgc", "sc", "msc_ct") for v in s.get(c, [None]))
    if not complete:
        why = NOT_MOUNTED if not d else "other strip sizes not in this run (`dbench_strips`: each is a mount session per driver)"
        rows.append(verdict.not_run(item_b, FIG13["strip_ct_over_pbgc_best"], why, unit="x"))
        rows.append(verdict.not_run(item_c, 1.0, why, unit=verdict.YES_NO))
    else:
        over = [_ratio(c, p) for c, p in zip(s["msc_ct"], s["pbgc"])]
        table = "MB/s PBGC / SC / MSC-CT: " + ", ".join(
            f"{st} {p:.1f}/{sc:.1f}/{c:.1f}" for st, p, sc, c in zip(strips, s["pbgc"], s["sc"], s["msc_ct"]))
        best = over.index(max(over))
        by_strip = m.get("disks", {}).get("dbench_strip", {})
        sr = m.get("dbench_strip_runs", {})
        best_runs = sr.get(strips[best], {})
        # the floor at the same strip, or where it ran at 64K only (runs before it ran at every strip)
        # DBench's floor at the same client count: with no disk time the strip changes only how the
        # daemon cuts requests, an assumption of ours that the later runs measure
        floor, own = _dbench_floor(d), FLOOR in s
        values = {"pbgc": s["pbgc"][best], "msc_ct": s["msc_ct"][best]}
        if own:
            values[FLOOR] = s[FLOOR][best]
        elif floor and s["clients"] in d["clients"]:
            values[FLOOR] = floor[d["clients"].index(s["clients"])]
        fnote = floor_note(values, "msc_ct", "pbgc", FIG13["strip_ct_over_pbgc_best"], "MB/s")
        rows.append(verdict.compare(item_b.replace("128 clients", f"{s['clients']} clients (mount; paper 128)"),
                                    FIG13["strip_ct_over_pbgc_best"], over[best], baseline=1.0, unit="x",
                                    spread=_spread(best_runs.get("msc_ct"), best_runs.get("pbgc")),
                                    cause=_join(f"best at strip {strips[best]}; " + table,
                                                disk_note(by_strip.get(strips[best], {}), floor=bool(fnote)),
                                                fnote + (" (the floor run's strip is 64K, DBench's)"
                                                         if fnote and not own else ""))))
        worst = min(range(len(strips)), key=lambda i: _ratio(s["sc"][i], s["pbgc"][i]))
        wnote = floor_note({c: s[c][worst] for c in ("sc", "pbgc", FLOOR) if c in s}, "sc", "pbgc", None, "MB/s")
        note = _join(disk_note(by_strip.get(strips[worst], {}), floor=bool(wnote)), wnote)
        # the range: whether it held with SC's worst run against PBGC's best at every strip, and best against worst
        held = None
        if all({"sc", "pbgc"} <= set(sr.get(st, {})) for st in strips) and m.get("repeats", 1) > 1:
            held = [all(min(sr[st]["sc"]) > max(sr[st]["pbgc"]) for st in strips),
                    all(max(sr[st]["sc"]) > min(sr[st]["pbgc"]) for st in strips)]
        rows.append(verdict.holds(item_c + " (mount, strips " + ", ".join(strips) + ")", True,
                                  all(sc > p for sc, p in zip(s["sc"], s["pbgc"])), spread=held,
                                  cause=_join(table, f"at strip {strips[worst]}: {note}" if note else "")))
    return rows


def _dbench_floor(d: dict[str, Any]) -> list[float] | None:
    """The floor ablation's DBench MB/s at each client count of ``d`` (``m["dbench"]``), or None
    where it did not run at every one of them."""
    floor = d.get(FLOOR)
    return floor if floor and len(floor) == len(d.get("clients", [])) else None


def _cycle_note(runs: dict[str, list[dict[str, Any]]], n: int, *, floor: bool | None = None) -> str:
    """:func:`disk_note` of aging cycle ``n`` (1-based) under each driver in ``runs`` (``floor``: the
    row carries the floor ablation; None: whether ``runs`` has a floor run of that cycle)."""
    if floor is None:
        floor = len(runs.get(FLOOR, [])) >= n
    return disk_note({c: (cyc[n - 1].get("disks") if len(cyc) >= n else None) for c, cyc in runs.items()}, floor=floor)


def _cycle_floor(runs: dict[str, list[dict[str, Any]]], n: int, paper: float) -> str:
    """:func:`floor_note` of MSC-CT over SC at aging cycle ``n`` (1-based)."""
    return floor_note({c: cyc[n - 1]["mb_s"] for c, cyc in runs.items() if len(cyc) >= n}, "msc_ct", "sc", paper,
                      "MB/s")


def fig14_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    a = m.get("aging", {})
    rows = []
    for key, item in (("16k", "Fig. 14(a) aged ext3, 16 KiB files: MSC-CT over SC"),
                      ("2048k", "Fig. 14(a) aged ext3, 2048 KiB files: MSC-CT over SC")):
        runs = a.get(key, {})
        if not {"sc", "msc_ct"} <= set(runs):
            rows.append(verdict.not_run(item, FIG14[key], NOT_MOUNTED, unit="x"))
            continue
        sc, ct = runs["sc"], runs["msc_ct"]
        n = min(len(sc), len(ct))
        per = ", ".join(f"{c['mb_s']:.2f}/{s['mb_s']:.2f}" for s, c in zip(sc, ct))
        rows.append(verdict.compare(f"{item} (mount, cycle {n} of the paper's 50)", FIG14[key],
                                    _ratio(ct[n - 1]["mb_s"], sc[n - 1]["mb_s"]), baseline=1.0, unit="x",
                                    spread=_spread(ct[n - 1].get("runs"), sc[n - 1].get("runs")),
                                    cause=_join(f"MB/s MSC-CT/SC per cycle: {per}", _cycle_note(runs, n),
                                                _cycle_floor(runs, n, FIG14[key]))))
    runs = a.get("16k", {})
    for cfg, key, name in (("sc", "sc_loss", "SC"), ("msc_ct", "msc_ct_loss", "MSC-CT")):
        item = f"Fig. 14(b) 20th aging cycle over the 1st: {name}'s loss"
        cyc = runs.get(cfg)
        if not cyc or len(cyc) < 2:
            rows.append(verdict.not_run(item, FIG14[key], NOT_MOUNTED if not cyc else "one cycle only", unit="%"))
            continue
        # each run's loss (its last cycle over its own first); the row gives their median and range
        firsts, lasts = cyc[0].get("runs", [cyc[0]["mb_s"]]), cyc[-1].get("runs", [cyc[-1]["mb_s"]])
        losses = [round(100 * (1 - b / a), 1) if a else float("nan") for a, b in zip(firsts, lasts)]
        loss = round(float(statistics.median(losses)), 1)
        lnote = floor_loss_note(runs, loss)
        rows.append(verdict.compare(item.replace("20th", f"{len(cyc)}th (ours; paper: 20th)"), FIG14[key], loss,
                                    unit="%", spread=(min(losses), max(losses)) if len(losses) > 1 else None,
                                    cause=_join("judged on the cycles run, not the paper's 20: MB/s per cycle "
                                                          + ", ".join(f"{c['mb_s']:.2f}" for c in cyc),
                                                          _cycle_note({cfg: cyc}, len(cyc), floor=bool(lnote)),
                                                          lnote)))
    item = "Abstract/conclusion: aged file system, 16 KiB files, MSC-CT's gain (\"180 %\"; sec. IV-D says 2.3x)"
    if {"sc", "msc_ct"} <= set(runs):
        n = min(len(runs["sc"]), len(runs["msc_ct"]))
        rows.append(verdict.compare(item + " (mount)", FIG14["abstract_16k"],
                                    _ratio(runs["msc_ct"][n - 1]["mb_s"], runs["sc"][n - 1]["mb_s"]), baseline=1.0,
                                    unit="x", spread=_spread(runs["msc_ct"][n - 1].get("runs"),
                                                             runs["sc"][n - 1].get("runs")),
                                    cause=_join(f"the Fig. 14(a) 16 KiB row, cycle {n}", _cycle_note(runs, n),
                                                _cycle_floor(runs, n, FIG14["abstract_16k"]))))
    else:
        rows.append(verdict.not_run(item, FIG14["abstract_16k"], NOT_MOUNTED, unit="x"))
    return rows


def markdown(m: dict[str, Any]) -> list[str]:
    """results.md's section of the mount part: what ran, at which size, and every number measured."""
    if not m:
        return ["## File-system claims (Table II's fs rows, Figs. 13, 14): the mount part", "",
                "Not in this run: it mounts a real array (root; `--set parts=fig11,more,mount`). Their rows are "
                "`not run`.", ""]
    st, sz = m.get("setup", {}), m.get("sizes", {})
    t2s, db, ag = sz.get("table2", {}), sz.get("dbench", {}), sz.get("aging-16k", {})
    out = ["## File-system claims on a real mount: Table II's fs rows, Fig. 13 (DBench), Fig. 14 (aging)", "",
           f"`vraid mount --disk-model {st.get('disk_model')} --time real:{st.get('time_scale')}` (every modelled disk "
           f"time runs at {st.get('time_scale')} of its length), RAID-5 on {st.get('disks')} members in /dev/shm, write "
           f"cache {st.get('cache_size')} in an emulated NVS (`--nvram`; the paper: 512 MiB), hlwm 95 %/85 %, LRW; "
           "a loop device, `mkfs.ext3`, mounted by the ext4 driver. PBGC = `--cache pbg:merge=true`, SC = `--cache "
           "stripe`, MSC-CT = `--cache stripe --ct msc` with the simulation's limits. In real time on a machine "
           "shared with other work (the load average is in detail.json), so "
           + (f"every run was made {m['repeats']} times, round by round: each number below is the median of its "
              "runs, and a row's range over them (ratios: the lowest top run over the highest bottom one, and the "
              "other way) is in the verdict table" if m.get("repeats", 1) > 1 else
              "one run per number: a few percent between two runs is noise")
           + (". The floor ablation (vraid's) mounts SC with `--time none` (no disk time) for the same steps: its "
              "time is the mount's own (FUSE, the loop device, the daemon, ext3), and a step's time less it is the "
              "disks' share, whose ratio between the drivers each row names beside the paper's"
              if _has_floor(m) else "")
           + ". Scaled down (paper in brackets):", ""]
    if t2s:
        out.append(f"- Table II: members of {t2s.get('disk_size')}, strip {t2s.get('strip')} (stripe 512 KiB as the "
                   f"paper's); video one file of {t2s.get('video_mb')} MiB (2.13 GB); music {t2s.get('music_files')} "
                   f"files of {t2s.get('music_mb')} MiB (154 mp3s, 682 MB); src the Python standard library's tree "
                   f"({'a few packages' if t2s.get('tree') == 'quick' else 'whole'}; 25628 kernel files, 458 MB); "
                   f"fio on one file of {t2s.get('fio_mb')} MiB, 1 MiB sequential, 512 KiB random requests "
                   "(Tiobench); each self-copy and read after a remount and dropped page cache; times include `sync`.")
    if db:
        out.append(f"- Fig. 13: DBench {db.get('seconds')} s per client count, members of {db.get('disk_size')}, "
                   f"page cache capped at {db.get('ram')} (a memory cgroup); clients "
                   f"{', '.join(map(str, db.get('clients', [])))} (paper 1..256).")
    if ag:
        out.append(f"- Fig. 14: an ext3 of {ag.get('disk_size')} members (paper 10 GB) aged by the paper's benchmark "
                   f"(fill to 90 % with files ~ N(mu, mu/4), delete 20 %, refill) for {ag.get('cycles')} cycles "
                   "(paper 50; Fig. 14(b) to 20); each cycle's creation timed with its `sync`.")
    t2 = m.get("table2", {})
    if t2:
        floored = any(FLOOR in g for g in t2.values())
        out += ["", "| Table II (fs) | paper PBGC / SC / MSC-CT | vraid PBGC / SC / MSC-CT |"
                + (" vraid SC, no disk time (floor ablation) |" if floored else ""),
                "|---|---|---|" + ("---|" if floored else "")]
        for bench, (pb, sc, ct, unit) in TABLE2_FS.items():
            g = t2.get(bench, {})
            u = "s" if unit == "s" else "MB/s"
            out.append(f"| {bench} | {pb:g} / {sc:g} / {ct:g} {unit} | "
                       + " / ".join(f"{g[k]:.2f}" if k in g else "n/a" for k in ("pbgc", "sc", "msc_ct")) + f" {u} |"
                       + ((f" {g[FLOOR]:.2f} {u} |" if FLOOR in g else " n/a |") if floored else ""))
    d = m.get("dbench", {})
    if {"pbgc", "sc", "msc_ct"} <= set(d):
        floor = _dbench_floor(d)
        out += ["", "| DBench clients | PBGC MB/s | SC MB/s | MSC-CT MB/s | MSC-CT over SC | MSC-CT over PBGC |"
                + (" SC, no disk time (floor ablation) MB/s |" if floor else ""),
                "|--:|--:|--:|--:|--:|--:|" + ("--:|" if floor else "")]
        for i, n in enumerate(d["clients"]):
            p, s_, c = d["pbgc"][i], d["sc"][i], d["msc_ct"][i]
            out.append(f"| {n} | {p:.2f} | {s_:.2f} | {c:.2f} | {_ratio(c, s_):.2f}x | {_ratio(c, p):.2f}x |"
                       + (f" {floor[i]:.2f} |" if floor else ""))
    ds = m.get("dbench_strip", {})
    if ds.get("strips"):
        cols = ("pbgc", "sc", "msc_ct") + ((FLOOR,) if FLOOR in ds else ())
        out += ["", f"| strip ({ds.get('clients')} DBench clients) | PBGC MB/s | SC MB/s | MSC-CT MB/s |"
                + (" SC, no disk time (floor ablation) MB/s |" if FLOOR in ds else ""), "|--:|" + "--:|" * len(cols)]
        for i, st_ in enumerate(ds["strips"]):
            out.append(f"| {st_} | " + " | ".join(f"{ds[k][i]:.2f}" if ds[k][i] is not None else "n/a"
                                                  for k in cols) + " |")
    for key, label in (("16k", "16 KiB"), ("2048k", "2048 KiB")):
        a = m.get("aging", {}).get(key, {})
        if {"sc", "msc_ct"} <= set(a):
            floor = a.get(FLOOR) if len(a.get(FLOOR) or []) >= len(a["sc"]) else None
            out += ["", f"| aging cycle, mean file {label} | files | SC MB/s | MSC-CT MB/s | MSC-CT over SC |"
                    + (" SC, no disk time (floor ablation) MB/s |" if floor else ""),
                    "|--:|--:|--:|--:|--:|" + ("--:|" if floor else "")]
            for i, (s_, c) in enumerate(zip(a["sc"], a["msc_ct"])):
                out.append(f"| {s_['cycle']} | {s_.get('files', '')} | {s_['mb_s']:.2f} | {c['mb_s']:.2f} | "
                           f"{_ratio(c['mb_s'], s_['mb_s']):.2f}x |" + (f" {floor[i]['mb_s']:.2f} |" if floor else ""))
    return out + [""]


def _has_floor(m: dict[str, Any]) -> bool:
    """Whether the mount runs had the floor ablation (:data:`.msc_ct_mount.FLOOR`)."""
    return (any(FLOOR in g for g in m.get("table2", {}).values()) or FLOOR in m.get("dbench", {})
            or any(FLOOR in a for a in m.get("aging", {}).values()))


def rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    """Every row the mount part decides (``not run`` ones when ``m`` is empty); Figs. 13's and 14's
    trend claims (yes/no rows) are :mod:`.msc_ct_trends`', which sits above this module and puts
    them among these (:func:`.msc_ct_trends.mount_rows`)."""
    return table2_rows(m) + fig13_rows(m) + fig14_rows(m)


__all__ = ["FIG13", "FIG14", "NOT_MOUNTED", "TABLE2_FS", "collect", "disk_note", "floor_loss_note", "floor_note", "floor_share",
           "markdown", "rows", "fig13_rows", "fig14_rows", "table2_rows"]

"""Experiment ``msc-ct``: paper 000's trend claims, each a yes/no row (:func:`.verdict.holds`).

The paper states a number of its results as trends ("As the workspace size increases, the gain
of MSC-CT over SC decreases but will not be negative"); each is judged here, from runs the
experiment already makes, as a claim that holds (1) or does not (0):

* Fig. 11 (sec. IV-B), per host: the CT gain falls as the workspace grows; MSC-CT is never below
  SC (the Fig. 11 runs, :func:`fig11_rows`).
* Fig. 12(a), 12(b) (sec. IV-B): the throughput's rise saturates as the writes grow; the average
  latency follows the throughput's trend (the Fig. 12 runs of part ``more``, :func:`fig12_rows`).
* Table II (sec. IV-E): MSC-CT's bulky random write is faster than its bulky random read (the
  block-level Table II runs of part ``more``, :func:`table2_rows`; a ratio, as the table prints
  both numbers).
* Fig. 13(a), 13(b) (sec. IV-C): MSC-CT above SC but at one client and where the performance is
  saturated; the CT gain grows with the strip size; SC's throughput falls with it (the DBench
  runs of the mount part, :func:`fig13_rows`).
* Fig. 14(a) (sec. IV-D): the smaller the file, the larger MSC-CT's gain (the aging runs of the
  mount part, :func:`fig14_rows`).

Where a trend does not hold, the cause names the counters of the runs at the step where it
breaks, and which of them moves the way the throughput does (a measured cause) or, where none
does, which ones that rules out. Mount rows carry the run-to-run verdict of the trend, round by
round (the mount runs go round by round, so round r of every driver ran under the same load).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from . import verdict
from . import msc_ct_figs, msc_ct_mount_report
from .floor import disk_share
from .msc_ct_figs import TABLE2, per_write as _per_write
from .msc_ct_mount import FLOOR
from .msc_ct_mount_report import NOT_MOUNTED, disk_note, floor_note, floor_share

YES = verdict.YES_NO
#: Table II, block level (sec. IV-E): MSC-CT's bulky random write and read, MB/s
TABLE2_RW = ("bulky random write (block)", "bulky random read (block)")
NOT_IN_RUN = "not in this run"


def _ratio(a: float | None, b: float | None) -> float:
    return round(a / b, 3) if a and b else float("nan")


def _pct(x: float) -> str:
    return f"{100 * x:+.0f} %"


def _req(r: dict[str, Any]) -> int:
    return r["disk_write_requests"] + r["disk_read_requests"]


def _blocks(r: dict[str, Any]) -> int:
    return r.get("disk_write_blocks", 0) + r.get("disk_read_blocks", 0)


# ---------------------------------------------------------------------- Fig. 11
#: what CT removes of SC's work, each as a share: (name, counter of a run)
_REMOVED: tuple[tuple[str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("member requests", _req), ("missed revolutions", lambda r: r.get("missed_rotations")),
    ("rotational waits", lambda r: r.get("rotation_wait_seconds")), ("seek time", lambda r: r.get("seek_seconds")))


def _share_removed(sc: dict[str, Any], ct: dict[str, Any], get: Callable[[dict[str, Any]], float | None]) -> float | None:
    a, b = get(sc), get(ct)
    return None if a is None or b is None or not a else 1 - b / a


def fig11_rows(series: dict[str, Any], ws: Sequence[int], label: str,
               runs: dict[int, dict[str, dict[str, Any]]]) -> list[verdict.Comparison]:
    """Fig. 11's shape for one host: the CT gain falls as the workspace grows, and never below 1.

    ``series``: the host's MB/s per policy (``sc``, ``msc_ct``) over ``ws`` (GB); ``label``: the
    host as the ratio rows name it; ``runs``: workspace -> policy -> the run's output."""
    gain = [_ratio(c, s) for c, s in zip(series["msc_ct"], series["sc"])]
    at = ", ".join(f"{w} GB {g:.3f}x" for w, g in zip(ws, gain))
    span = ", ".join(map(str, ws))
    item = f"Fig. 11, {label}: the CT gain (MSC-CT over SC) falls as the workspace grows ({span} GB)"
    rows = []
    if len(ws) < 2:
        rows.append(verdict.not_run(item, 1.0, "one workspace in this run: a trend needs two or more", unit=YES))
    else:
        breaks = [i for i in range(len(ws) - 1) if not gain[i + 1] < gain[i]]
        cause = "MSC-CT over SC " + at + "".join(
            "; " + _rise_cause(ws[i], ws[i + 1], gain[i], gain[i + 1], runs.get(ws[i], {}), runs.get(ws[i + 1], {}))
            for i in breaks)
        rows.append(verdict.holds(item, True, not breaks, cause=cause))
    below = [i for i, g in enumerate(gain) if g < 1.0]
    cause = "MSC-CT over SC " + at + "".join("; " + _below_cause(ws[i], gain[i], runs.get(ws[i], {})) for i in below)
    rows.append(verdict.holds(f"Fig. 11, {label}: MSC-CT never below SC (the gain \"will not be negative\"; "
                              f"{span} GB)", True, not below, cause=cause))
    return rows


def _rise_cause(a: int, b: int, ga: float, gb: float, ra: dict[str, Any], rb: dict[str, Any]) -> str:
    """Why the CT gain does not fall from ``a`` to ``b`` GB: what CT removes of SC's work there."""
    head = f"{a} -> {b} GB: the gain {'rises' if gb > ga else 'does not fall'} ({ga:.3f}x -> {gb:.3f}x)"
    if not {"sc", "msc_ct"} <= set(ra) or not {"sc", "msc_ct"} <= set(rb):
        return head + "; the runs' counters are not in this result"
    moves = []
    for name, get in _REMOVED:
        x, y = _share_removed(ra["sc"], ra["msc_ct"], get), _share_removed(rb["sc"], rb["msc_ct"], get)
        if x is not None and y is not None:
            moves.append((f"share of SC's {name} CT removes", x, y))
    gx, gy = ra["sc"].get("write_gaps_below_sw_max"), rb["sc"].get("write_gaps_below_sw_max")
    if gx is not None and gy is not None:
        moves.append(("SC's write gaps with 2 <= S < S_w^max", gx, gy))
    text = lambda ms: ", ".join(f"{n} {x:.1%} -> {y:.1%}" for n, x, y in ms)  # noqa: E731
    up = [m for m in moves if m[2] > m[1]]
    down = [m for m in moves if m[2] <= m[1]]
    if up:
        return head + "; measured, larger at the larger workspace as the gain: " + text(up) + (
            " (smaller: " + text(down) + ")" if down else "")
    return head + ("; cause not found: ruled out " + text(down) + " (each no larger at the larger workspace)"
                   if down else "; the runs' counters are not in this result")


#: the counters of a run where MSC-CT can lose to SC: (name, counter)
_COSTS: tuple[tuple[str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("member requests", _req), ("blocks moved", _blocks), ("missed revolutions", lambda r: r.get("missed_rotations")),
    ("rotational waits (member s)", lambda r: r.get("rotation_wait_seconds")),
    ("seek (member s)", lambda r: r.get("seek_seconds")))


def _below_cause(w: int, g: float, runs: dict[str, Any]) -> str:
    """Why MSC-CT is below SC at ``w`` GB: the counters that are higher under MSC-CT."""
    head = f"at {w} GB MSC-CT is {g:.3f}x SC"
    sc, ct = runs.get("sc"), runs.get("msc_ct")
    if not sc or not ct:
        return head + "; the runs' counters are not in this result"
    pairs = [(n, get(sc), get(ct)) for n, get in _COSTS]
    pairs = [(n, a, b) for n, a, b in pairs if a is not None and b is not None]
    fmt = lambda v: f"{v:.1f}" if isinstance(v, float) else f"{v}"  # noqa: E731
    text = lambda ps: ", ".join(f"{n} {fmt(a)} -> {fmt(b)}" for n, a, b in ps)  # noqa: E731
    higher = [p for p in pairs if p[2] > p[1]]
    if higher:
        return head + "; measured, higher under MSC-CT than SC: " + text(higher)
    return head + "; cause not found: ruled out " + text(pairs) + " (none higher under MSC-CT than SC)"


# ---------------------------------------------------------------------- Fig. 12
def _saturation(t: Sequence[float]) -> str:
    """"" where the series rises and saturates (higher at the end than at the start, the last step's
    change smaller than the first's); else what breaks it: "no rise" or "no saturation"."""
    steps = [b / a - 1 for a, b in zip(t, t[1:])]
    if not t[-1] > t[0]:
        return "no rise"
    return "" if abs(steps[-1]) < steps[0] else "no saturation"


def _steps(t: Sequence[float]) -> str:
    return ", ".join(_pct(b / a - 1) for a, b in zip(t, t[1:]))


FIG12_LATENCY = ("Fig. 12(b): the average latency follows the throughput's trend (read as: MSC-CT's mean-latency gain "
                 "over SC, SC's mean over MSC-CT's, moves from the fewest to the most writes the way its throughput "
                 "gain does)")
FIG12_SATURATION = ("Fig. 12(a): the throughput's rise saturates as the writes grow (read as: higher at the most "
                    "writes than at the fewest, the last x4 step's change smaller than the first's), PBGC, SC and MSC-CT")
_LATENCY_WHAT = ("mean response of the array's writes (the page cache's write-back), not Tiobench's write() latency, "
                 "which the host model does not time")


def fig12_rows(more: dict[str, Any]) -> list[verdict.Comparison]:
    """Fig. 12's two trend claims from the Fig. 12 runs (``more["fig12"]``, :func:`.msc_ct_figs.collect`)."""
    f = more.get("fig12") or {}
    if not f:
        return [verdict.not_run(FIG12_SATURATION, 1.0, NOT_IN_RUN, unit=YES),
                verdict.not_run(FIG12_LATENCY, 1.0, NOT_IN_RUN, unit=YES)]
    return [_saturation_row(f), _latency_row(f)]


def _saturation_row(f: dict[str, Any]) -> verdict.Comparison:
    ws = f["writes"]
    if len(ws) < 3:
        return verdict.not_run(FIG12_SATURATION, 1.0, "a saturation needs three write counts or more", unit=YES)
    names = {"pbgc": "PBGC", "sc": "SC", "msc_ct": "MSC-CT"}
    cause = [f"MB/s change per x4 step ({', '.join(f'{w // 1000}k' for w in ws)}): "
             + "; ".join(f"{names[p]} {_steps(f[p])}" for p in names)]
    broken = {p: _saturation(f[p]) for p in names if _saturation(f[p])}
    for p, how in broken.items():
        cause.append(f"{names[p]}: {how} ({', '.join(f'{x:.2f}' for x in f[p])} MB/s); " + _saturation_cause(f, p, how))
    return verdict.holds(FIG12_SATURATION, True, not broken, cause="; ".join(cause))


def _saturation_cause(f: dict[str, Any], p: str, how: str) -> str:
    """The counters of driver ``p``'s Fig. 12 runs that break the same way as its throughput (a cost
    per write read inverted: fewer per write, faster)."""
    series = []
    for name, key in (("member requests", "member_requests"), ("missed revolutions", "missed_rotations")):
        per = _per_write(f, key, p)
        if per and all(v > 0 for v in per):
            series.append((f"{name} per write", per, [1 / v for v in per]))
    dirty = (f.get("dirty_blocks_per_plan") or {}).get(p)
    if dirty and len(dirty) == len(f[p]) and all(v is not None and v > 0 for v in dirty):
        series.append(("dirty blocks per destaged unit", dirty, dirty))
    if not series:
        return "the runs' counters are not in this result"
    fmt = lambda vs: ", ".join(f"{v:.3g}" for v in vs)  # noqa: E731
    same = [(n, vs) for n, vs, speed in series if _saturation(speed) == how]
    if same:
        return "measured, the same pattern in its " + "; ".join(f"{n} {fmt(vs)}" for n, vs in same)
    return ("cause not found: ruled out its " + "; ".join(f"{n} {fmt(vs)}" for n, vs, _ in series)
            + f" (none shows the throughput's {how})")


def _latency_row(f: dict[str, Any]) -> verdict.Comparison:
    lat = f.get("mean_response_ms") or {}
    if not lat.get("sc") or not lat.get("msc_ct") or not all(lat["msc_ct"]):
        return verdict.not_run(FIG12_LATENCY, 1.0, "the Fig. 12 runs of this result kept no mean response", unit=YES)
    ws = f["writes"]
    tg = [_ratio(c, s) for c, s in zip(f["msc_ct"], f["sc"])]
    lg = [_ratio(s, c) for s, c in zip(lat["sc"], lat["msc_ct"])]
    sign = lambda a, b: (b > a) - (b < a)  # noqa: E731
    t_dir, l_dir = sign(tg[0], tg[-1]), sign(lg[0], lg[-1])
    word = {1: "rises", 0: "stays", -1: "falls"}
    cause = (f"{ws[0] // 1000}k -> {ws[-1] // 1000}k writes: throughput gain {tg[0]:.2f}x -> {tg[-1]:.2f}x "
             f"({word[t_dir]}), mean-latency gain {lg[0]:.2f}x -> {lg[-1]:.2f}x ({word[l_dir]}); mean response ms "
             "SC / MSC-CT " + ", ".join(f"{w // 1000}k {s:.0f}/{c:.0f}" for w, s, c in zip(ws, lat["sc"], lat["msc_ct"]))
             + f" ({_LATENCY_WHAT})")
    if t_dir != l_dir:
        rs, rc = _per_write(f, "member_requests", "sc"), _per_write(f, "member_requests", "msc_ct")
        if rs and rc and all(rc):
            rq = [a / b for a, b in zip(rs, rc)]
            r_dir = sign(rq[0], rq[-1])
            what = f"SC's member requests per write over MSC-CT's {rq[0]:.2f}x -> {rq[-1]:.2f}x"
            cause += (f"; measured, {what} {word[r_dir]} as the latency gain does" if r_dir == l_dir else
                      f"; cause not found: ruled out the member requests ({what} {word[r_dir]}, as the latency "
                      "gain does not)")
        else:
            cause += "; the runs' member requests are not in this result"
    return verdict.holds(FIG12_LATENCY, True, t_dir == l_dir, cause=cause)


# ---------------------------------------------------------------------- Table II (block level)
TABLE2_ITEM = "Table II, block level: MSC-CT's bulky random write over its bulky random read (94 / 85 MB/s)"


def table2_rows(more: dict[str, Any]) -> list[verdict.Comparison]:
    """Sec. IV-E: "The bulky random write of MSC-CT is better than the bulky random read" (the paper:
    because its anticipatory disk scheduler shortens the writes' seeks), from the block-level runs."""
    wb, rb = TABLE2_RW
    paper = round(TABLE2[wb][2] / TABLE2[rb][2], 3)
    t2 = more.get("table2", {})
    w, r = t2.get(wb, {}).get("msc_ct"), t2.get(rb, {}).get("msc_ct")
    if not w or not r:
        return [verdict.not_run(TABLE2_ITEM, paper, NOT_IN_RUN, unit="x")]
    ours = _ratio(w, r)
    cw = more.get("table2_counters", {}).get(wb, {}).get("msc_ct", {})
    cr = more.get("table2_counters", {}).get(rb, {}).get("msc_ct", {})
    cause = f"MSC-CT MB/s write {w:.1f}, read {r:.1f}"
    if cw.get("member_requests") and cr.get("member_requests") and "seek_seconds" in cw and "seek_seconds" in cr:
        sw = 1e3 * cw["seek_seconds"] / cw["member_requests"]
        sr = 1e3 * cr["seek_seconds"] / cr["member_requests"]
        cause += (f"; member requests write {cw['member_requests']} / read {cr['member_requests']}; seek per member "
                  f"request write {sw:.2f} ms / read {sr:.2f} ms (the paper's cause: its anticipatory scheduler "
                  "shortens the writes' seeks; here the write cache destages several stripes at once and the drives "
                  "order them, while the reads go one at a time)")
        if ours <= 1.0:
            if sw >= sr:
                cause += "; measured: the writes' seeks are no shorter than the reads', the paper's cause is absent"
            elif cw["member_requests"] > cr["member_requests"]:
                cause += ("; measured: the writes' seeks are shorter, but they make more member requests (the "
                          "parity strip of every stripe)")
            else:
                cause += ("; cause not found: ruled out the seeks and the member requests (both fewer or shorter "
                          "for the writes)")
    else:
        cause += "; the runs' seek counters are not in this result"
    return [verdict.compare(TABLE2_ITEM, paper, ours, baseline=1.0, unit="x", cause=cause)]


# ---------------------------------------------------------------------- Figs. 13, 14 (mount)
def _rounds(*series: Sequence[float] | None) -> list[tuple[float, ...]]:
    """Round r's value of every series (a mount run's repeats, in round order); [] with fewer than
    two rounds or series of different lengths."""
    if any(not s for s in series) or len({len(s) for s in series}) != 1 or len(series[0]) < 2:  # type: ignore[arg-type]
        return []
    return list(zip(*series))  # type: ignore[arg-type]


def _held(per_round: list[bool]) -> list[bool] | None:
    return per_round or None


FIG13_OUTPERFORMS = ("Fig. 13(a) DBench: MSC-CT above SC at every client count but 1 and the saturated range (read as: "
                     "from the first count at which MSC-CT's MB/s no longer rises)")
FIG13_STRIP_GAIN = "Fig. 13(b) DBench: the CT gain (MSC-CT over SC) grows with the strip size"
FIG13_STRIP_SC = "Fig. 13(b) DBench: SC's throughput falls as the strip size grows"
FIG14_SIZE = ("Fig. 14(a) aged ext3: the smaller the file, the larger MSC-CT's gain over SC (read as the gain, the "
              "sentence following the 16 and 2048 KiB gains)")


def _judged_counts(cl: Sequence[int], ct: Sequence[float]) -> tuple[list[int], int]:
    """The client counts Fig. 13(a)'s claim judges (above 1, before the saturated range) and the
    index where that range starts (the first count at which MSC-CT's MB/s no longer rises)."""
    sat = next((i for i in range(1, len(ct)) if ct[i] <= ct[i - 1]), len(ct))
    return [i for i in range(len(cl)) if cl[i] > 1 and i < sat], sat


def fig13_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    """Fig. 13's trend claims from the mount part's DBench runs (:func:`.msc_ct_mount_report.collect`)."""
    rows = [_outperforms_row(m)]
    s = m.get("dbench_strip", {})
    strips = s.get("strips", [])
    if not strips or not all(v is not None for c in ("pbgc", "sc", "msc_ct") for v in s.get(c, [None])):
        why = NOT_MOUNTED if not m.get("dbench") else \
            "other strip sizes not in this run (`dbench_strips`: each is a mount session per driver)"
        return rows + [verdict.not_run(FIG13_STRIP_GAIN, 1.0, why, unit=YES),
                       verdict.not_run(FIG13_STRIP_SC, 1.0, why, unit=YES)]
    return rows + _strip_rows(m, s, strips)


def _outperforms_row(m: dict[str, Any]) -> verdict.Comparison:
    d = m.get("dbench", {})
    if not {"pbgc", "sc", "msc_ct"} <= set(d):
        return verdict.not_run(FIG13_OUTPERFORMS, 1.0, NOT_MOUNTED, unit=YES)
    cl, sc, ct = d["clients"], d["sc"], d["msc_ct"]
    item = FIG13_OUTPERFORMS + f" (mount, clients {', '.join(map(str, cl))})"
    judged, sat = _judged_counts(cl, ct)
    table = "MB/s SC / MSC-CT: " + ", ".join(f"{n} clients {s:.1f}/{c:.1f}" for n, s, c in zip(cl, sc, ct))
    where = (f"saturated from {cl[sat]} clients on: MSC-CT {ct[sat - 1]:.1f} -> {ct[sat]:.1f} MB/s" if sat < len(cl)
             else "no saturation within the counts run")
    if not judged:
        return verdict.not_run(item, 1.0, f"no client count between 1 and the saturated range in this run: {where}; "
                               + table, unit=YES)
    over = {i: _ratio(ct[i], sc[i]) for i in judged}
    worst = min(judged, key=lambda i: over[i])
    runs = m.get("dbench_runs", {})  # policy -> per client count, the rounds' MB/s
    per_round = []
    if len(runs.get("sc", [])) == len(cl) == len(runs.get("msc_ct", [])):
        for vals in _rounds(*runs["sc"], *runs["msc_ct"]):
            s_r, c_r = vals[:len(cl)], vals[len(cl):]
            j, _ = _judged_counts(cl, c_r)
            if j:  # a round whose MSC-CT saturates at once judges nothing
                per_round.append(all(c_r[i] > s_r[i] for i in j))
    uses = m.get("disks", {}).get("dbench", {})
    fnote = floor_note({c: v[worst] for c, v in d.items() if c in ("sc", "msc_ct", FLOOR) and worst < len(v)},
                       "msc_ct", "sc", None, "MB/s")
    note = "; ".join(x for x in (disk_note({c: (u[worst] if u and worst < len(u) else None) for c, u in uses.items()},
                                           floor=bool(fnote)), fnote) if x)
    cause = "; ".join(x for x in (
        f"judged at {', '.join(str(cl[i]) for i in judged)} clients ({where}); MSC-CT over SC "
        + ", ".join(f"{cl[i]} clients {over[i]:.2f}x" for i in judged), table,
        f"at {cl[worst]} clients: {note}" if note else "") if x)
    return verdict.holds(item, True, all(over[i] > 1.0 for i in judged), cause=cause, spread=_held(per_round))


def _strip_rows(m: dict[str, Any], s: dict[str, Any], strips: list[str]) -> list[verdict.Comparison]:
    gain = [_ratio(c, sc) for c, sc in zip(s["msc_ct"], s["sc"])]
    by_strip = m.get("disks", {}).get("dbench_strip", {})
    runs = m.get("dbench_strip_runs", {})
    clients = f"{s.get('clients')} clients, paper 128"
    span = ", ".join(strips)

    def requests(cfg: str) -> str:
        got = [(st, (by_strip.get(st, {}).get(cfg) or {}).get("requests")) for st in strips]
        return ", ".join(f"{st} {n:,}" for st, n in got if n is not None)

    def note_at(i: int) -> str:  # with the floor at every strip, it decides (its text follows)
        note = disk_note(by_strip.get(strips[i], {}), floor=FLOOR in s)
        return f"at strip {strips[i]}: {note}" if note else ""

    def per_round(values: Callable[[tuple[float, ...], tuple[float, ...]], list[float]]) -> list[bool] | None:
        sc_runs = [runs.get(st, {}).get("sc") for st in strips]
        ct_runs = [runs.get(st, {}).get("msc_ct") for st in strips]
        rounds = _rounds(*sc_runs, *ct_runs)
        n = len(strips)
        return _held([_rising(values(r[:n], r[n:])) is None for r in rounds])

    rows = []
    brk = _rising(gain)
    req_sc, req_ct = requests("sc"), requests("msc_ct")
    cause = "; ".join(x for x in (
        "MSC-CT over SC " + ", ".join(f"{st} {g:.2f}x" for st, g in zip(strips, gain)),
        f"member requests SC {req_sc}; MSC-CT {req_ct}" if req_sc and req_ct else "",
        note_at(brk + 1) if brk is not None else "",
        _strip_floor_gain(s, strips) if brk is not None else "") if x)
    rows.append(verdict.holds(FIG13_STRIP_GAIN + f" (mount, {clients}, strips {span})", True, brk is None, cause=cause,
                              spread=per_round(lambda sc, ct: [c / x for c, x in zip(ct, sc)])))
    falls = _rising([-v for v in s["sc"]])
    cause = "; ".join(x for x in (
        "SC MB/s " + ", ".join(f"{st} {v:.1f}" for st, v in zip(strips, s["sc"])),
        f"SC's member requests {req_sc}" if req_sc else "",
        note_at(falls + 1) if falls is not None else "",
        _strip_floor_sc(s, strips) if falls is not None else "") if x)
    rows.append(verdict.holds(FIG13_STRIP_SC + f" (mount, {clients}, strips {span})", True, falls is None, cause=cause,
                              spread=per_round(lambda sc, ct: [-v for v in sc])))
    return rows


def _strip_floor_text(s: dict[str, Any], strips: list[str]) -> str:
    return "floor ablation at each strip (SC with `--time none`, no disk time): MB/s " + ", ".join(
        f"{st} {v:.1f}" for st, v in zip(strips, s[FLOOR]))


def _strip_floor_gain(s: dict[str, Any], strips: list[str]) -> str:
    """The CT-gain-grows row's floor ablation: MSC-CT over SC in the disks' shares at each strip
    (the timed MB/s less the floor's at the same strip), and whether the claim holds there. ""
    where the floor did not run at every strip."""
    if FLOOR not in s:
        return ""
    shares = [floor_share({"msc_ct": c, "sc": x, FLOOR: f}, "msc_ct", "sc", "MB/s")
              for c, x, f in zip(s["msc_ct"], s["sc"], s[FLOOR])]
    got = [sh["share"] if sh else None for sh in shares]
    text = _strip_floor_text(s, strips) + "; the disks' shares alone give MSC-CT over SC " + ", ".join(
        f"{st} " + ("at the floor" if g is None else f"{g:.2f}x") for st, g in zip(strips, got))
    if any(g is None for g in got):
        return text + ": a driver at its floor there, so the trend cannot be read in the disks' shares"
    if _rising(got) is None:
        return text + ": the claim holds in the disks' shares, so what sets the timed trend apart is the mount's floor"
    return text + ": it does not hold there either (ruled out as the cause: the mount's floor); cause not found"


def _strip_floor_sc(s: dict[str, Any], strips: list[str]) -> str:
    """The SC-falls row's floor ablation: SC's MB/s in its disks' share at each strip (one MB's
    time less the floor's at the same strip), and whether it falls there. "" where the floor did
    not run at every strip."""
    if FLOOR not in s:
        return ""
    # per strip, SC's seconds per MB less the floor's, or None where none was measured or it is noise
    per = [None if not (x and f) or (share := disk_share(1.0 / x, 1.0 / f))[1] else share[0]
           for x, f in zip(s["sc"], s[FLOOR])]
    text = _strip_floor_text(s, strips) + "; SC's disks' share alone " + ", ".join(
        f"{st} " + ("at the floor" if t is None else f"{1 / t:.1f} MB/s") for st, t in zip(strips, per))
    if any(t is None for t in per):
        return text + ": at its floor at a strip, so the trend cannot be read in the disks' share"
    if _rising([1 / t for t in per]) is None and len(per) > 1:  # the disks' share rises with the strip too
        return text + ": it rises there too (ruled out as the cause: the mount's floor); cause not found"
    if _rising([-1 / t for t in per]) is None:
        return text + ": it falls there, so what sets the timed trend apart is the mount's floor"
    return text + ": neither rises nor falls throughout (ruled out as the cause: the mount's floor); cause not found"


def _rising(xs: Sequence[float]) -> int | None:
    """The first step ``i -> i + 1`` at which ``xs`` does not rise; None where it rises throughout."""
    return next((i for i in range(len(xs) - 1) if not xs[i + 1] > xs[i]), None)


def fig14_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    """Sec. IV-D: "The smaller the file, the better the throughput", from the aging runs."""
    a = m.get("aging", {})
    small, large = a.get("16k", {}), a.get("2048k", {})
    if not {"sc", "msc_ct"} <= set(small) or not {"sc", "msc_ct"} <= set(large):
        return [verdict.not_run(FIG14_SIZE, 1.0, NOT_MOUNTED, unit=YES)]

    def last(runs: dict[str, list[dict[str, Any]]]) -> tuple[int, dict[str, Any], dict[str, Any]]:
        n = min(len(runs["sc"]), len(runs["msc_ct"]))
        return n, runs["sc"][n - 1], runs["msc_ct"][n - 1]

    (n16, s16, c16), (n2, s2, c2) = last(small), last(large)
    g16, g2 = _ratio(c16["mb_s"], s16["mb_s"]), _ratio(c2["mb_s"], s2["mb_s"])
    rounds = _rounds(s16.get("runs"), c16.get("runs"), s2.get("runs"), c2.get("runs"))
    held = _held([c_a / s_a > c_b / s_b for s_a, c_a, s_b, c_b in rounds if s_a and s_b])

    def share(runs: dict[str, Any], n: int) -> float | None:
        f = floor_share({c: cyc[n - 1]["mb_s"] for c, cyc in runs.items() if len(cyc) >= n}, "msc_ct", "sc", "MB/s")
        return f["share"] if f else None

    sh16, sh2 = share(small, n16), share(large, n2)
    floored = sh16 is not None and sh2 is not None

    def note(runs: dict[str, Any], n: int) -> str:
        return disk_note({c: (cyc[n - 1].get("disks") if len(cyc) >= n else None) for c, cyc in runs.items()},
                         floor=floored)

    floor_text = ""
    if floored:  # the claim in the disks' shares alone (the floor ablation: SC with no disk time)
        floor_text = (f"floor ablation (SC with no disk time): the disks' share alone gives MSC-CT over SC 16 KiB "
                      f"{sh16:.2f}x, 2048 KiB {sh2:.2f}x" + (": the claim holds in the disks' shares, so what sets "
                                                             "the timed result apart is the mount's floor" if sh16 > sh2 else
                                                             "; cause not found (ruled out: the mount's floor)"))
    cause = "; ".join(x for x in (
        f"MSC-CT over SC at the last cycle run: 16 KiB {g16:.3f}x (cycle {n16}), 2048 KiB {g2:.3f}x (cycle {n2})",
        f"16 KiB: {note(small, n16)}" if note(small, n16) else "",
        f"2048 KiB: {note(large, n2)}" if note(large, n2) else "", floor_text) if x)
    return [verdict.holds(FIG14_SIZE + " (mount)", True, g16 > g2, cause=cause, spread=held)]


def more_rows(more: dict[str, Any], main_1gb: dict[str, Any]) -> list[verdict.Comparison]:
    """The simulated parts' rows beyond Fig. 11 (:mod:`.msc_ct_figs`' own and this module's), each
    trend row beside the rows of its figure: the ablations, eq. (1), Fig. 12 and its trends, Table
    II and its trend, the claims not run; ``main_1gb``: the 1 GB page-cache Fig. 11 runs by policy."""
    f = msc_ct_figs
    sc = (main_1gb.get("sc") or {}).get("mb_s")
    return (f.ablation_rows(more, main_1gb) + f.eq1_rows(more) + f.fig12_rows(more, sc) + fig12_rows(more)
            + f.table2_rows(more) + table2_rows(more) + f.not_run_rows())


def mount_rows(m: dict[str, Any]) -> list[verdict.Comparison]:
    """The mount part's rows (:func:`.msc_ct_mount_report.rows`' own), each trend row beside the rows
    of its figure: Table II (fs), Fig. 13 and its trends, Fig. 14 and its trend."""
    r = msc_ct_mount_report
    return r.table2_rows(m) + r.fig13_rows(m) + fig13_rows(m) + r.fig14_rows(m) + fig14_rows(m)


__all__ = ["FIG12_LATENCY", "FIG12_SATURATION", "FIG13_OUTPERFORMS", "FIG13_STRIP_GAIN", "FIG13_STRIP_SC", "FIG14_SIZE",
           "TABLE2_ITEM", "fig11_rows", "fig12_rows", "fig13_rows", "fig14_rows", "more_rows", "mount_rows",
           "table2_rows"]

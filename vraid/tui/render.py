"""Rich tables for the CLI: the layout picture, superblocks, status, the disk models, and
the plain tables (:class:`vraid.sim.table.TextTable`) the simulation layer reports in."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from vraid.core.geometry import Geometry
from vraid.ondisk.superblock import Superblock
from vraid.core.units import format_size
from vraid.sim.table import Strong, TextTable


def layout_table(g: Geometry, stripes: int, highlight: list[tuple[int, int]] | None = None) -> Table:
    """Which logical block lives where, and where parity is (the docs' first picture).

    ``highlight``: block ranges (first, last) to mark, e.g. a file's prefetch requests; the
    blocks of the i-th range get the letter a, b, c, ... (the docs' Fig. 3/4 picture)."""
    title = g.title
    mark: dict[int, str] = {}
    for i, (first, last) in enumerate(highlight or ()):
        for b in range(first, last + 1):
            mark[b] = chr(ord("a") + i % 26)
    caption = (f"strip {format_size(g.strip_size)} = {g.u} block(s) of {format_size(g.block_size)}; "
               "numbers are logical blocks, P is parity" + (", Q the RAID-6 syndrome" if "Q" in g.redundancy.check_names else ""))
    if highlight:
        caption += "; a letter marks the highlighted range a block belongs to"
    copied = {j: k for k in range(g.data_disks) for j in g.redundancy.copies(k)}  # check column -> the data it copies
    if copied:
        caption = caption.replace("P is parity", "a magenta number is a mirror copy")
    if g.depth > 1:
        caption += (f"; a stripe holds {g.depth} strips of every disk (md's near-2 on an odd count: its period of "
                    f"{g.depth} chunk rows), its rows numbered down the disk")
    t = Table(title=f"{title}, {g.ndisks} disks", caption=caption)
    t.add_column("stripe", justify="right")
    t.add_column("row", justify="right")
    for d in range(g.ndisks):
        t.add_column(f"disk{d}", justify="center")
    per_stripe = g.data_disks * g.u
    names = g.redundancy.check_names
    nd, depth = g.data_disks, g.depth
    for s in range(min(stripes, g.stripes)):
        at = {(d, lane): j for j, (d, lane) in enumerate(zip(g.columns(s), g.lanes(s)))}  # (disk, lane) -> column
        for lane in range(depth):
            for row in range(g.u):
                cells = []
                for d in range(g.ndisks):
                    j = at.get((d, lane))
                    if j is None:
                        cells.append("")
                    elif j >= nd and j - nd not in copied:
                        cells.append(f"[bold magenta]{names[j - nd]}[/]")
                    else:
                        copy = j >= nd
                        n = s * per_stripe + (copied[j - nd] if copy else j) * g.u + row
                        text = f"{n}{mark[n]}" if n in mark else str(n)
                        cells.append(f"[bold magenta]{text}[/]" if copy else f"[bold cyan]{text}[/]" if n in mark else text)
                last = lane == depth - 1 and row == g.u - 1
                t.add_row(str(s) if lane == row == 0 else "", str(lane * g.u + row), *cells, end_section=last)
    return t


def superblock_table(name: str, sb: Superblock | None, problem: str = "") -> Table:
    t = Table(title=name, show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value")
    if sb is None:
        t.add_row("problem", problem)
        return t
    g = sb.geometry()
    rows: list[tuple[str, Any]] = [
        ("magic/version", f"vraid v{sb.version}"),
        ("array uuid", sb.array_uuid),
        ("level", f"RAID-{sb.level}"),
        ("layout", sb.layout if g.redundancy.parity_columns else "-"),
        ("disks", sb.ndisks),
        ("this member's role", "spare" if sb.role < 0 else f"disk {sb.role}"),
        ("block size", format_size(sb.block_size)),
        ("strip size", format_size(sb.strip_size)),
        ("stripes", sb.stripes),
        ("data offset", format_size(sb.data_offset)),
        ("array size", format_size(g.capacity)),
        ("events", sb.events),
        ("state", "clean" if sb.clean else "dirty (not shut down cleanly)"),
        ("created", _time(sb.ctime)),
        ("updated", _time(sb.utime)),
    ]
    if sb.params:
        rows.append(("parameters", ", ".join(f"{k}={v}" for k, v in sorted(sb.params.items()))))
    for k, v in rows:
        t.add_row(k, str(v))
    return t


def _time(t: float) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S") if t else "-"


def fault_line(fault: dict[str, Any]) -> str:
    """One line of a policy fault (``status()["policy_faults"]``)."""
    return (f"{fault['family']} {fault['policy']} failed in {fault['call']}: {fault['error']}; "
            f"now {fault['fallback']}")


def status_tables(st: dict[str, Any]) -> list[Table]:
    g = st["geometry"]
    head = Table(title=f"vraid {st.get('directory', '')}", show_header=False)
    head.add_column("field", style="bold")
    head.add_column("value")
    level = f"RAID-{g['level']}" + (f" {g['layout']}" if g["layout"] != "-" else "")  # describe(): "-" without parity
    head.add_row("array", f"{level}, {g['disks']} disks, {format_size(g['strip_size'])} strip, {g['stripes']} stripes")
    head.add_row("image size", format_size(g["capacity"]))
    head.add_row("state", st["state"])
    if st.get("mountpoint"):
        head.add_row("mounted at", f"{st['mountpoint']}/{st['image']} (daemon pid {st['pid']})")
    policies = st.get("policies")
    if policies:
        from vraid.policies.registry import FAMILIES

        for key, fam in FAMILIES.items():  # one line per policy family in force
            if key in policies:
                source = (st.get("policy_sources") or {}).get(key)
                head.add_row(fam.title, Text(str(policies[key]) + (f" ({source})" if source else ""), overflow="fold"))
    elif st.get("ct"):
        head.add_row("contiguity transform", str(st["ct"]))
    for fault in st.get("policy_faults") or ():  # vraid.engine.guard: a policy disabled, its default runs
        head.add_row(Text("policy fault", style="red", no_wrap=True), Text(fault_line(fault), overflow="fold"))
    if "was_clean" in st and not st["was_clean"]:
        head.add_row("note", "[yellow]the previous shutdown was not clean[/]")
    resync = st.get("resync")
    if resync and resync.get("replayed_blocks"):
        head.add_row("at mount", f"replayed {resync['replayed_blocks']} blocks from {resync.get('source', 'NVRAM')}")
    if resync and (resync.get("stripes") or resync.get("reason")):
        head.add_row("at mount", f"resynced {resync['stripes']} stripes ({resync['reason']})")
    bitmap = st.get("bitmap")
    if bitmap:
        head.add_row("write-intent bitmap", f"{bitmap['set']} of {bitmap['bits']} bits set, "
                     f"{format_size(bitmap['chunk_bytes'])} per bit; {bitmap['set_writes']} set writes, "
                     f"{bitmap['clear_writes']} clear writes")
    _failure_rows(head, st)
    out = [head]
    m = st.get("metrics")
    if m:
        out += stacked_row("host requests and write cycles (paper 000 II-A)", [
            ("reads", str(m["host_reads"])), ("read bytes", format_size(m["host_read_bytes"])),
            ("writes", str(m["host_writes"])), ("write bytes", format_size(m["host_write_bytes"])),
            ("fsyncs", str(m["host_flushes"])), ("RCW PBGs", str(m["pbg_rcw"])), ("RMW PBGs", str(m["pbg_rmw"])),
            ("full PBGs", str(m["pbg_full"])), ("mean ms", f"{m['mean_response_ms']:.3f}"),
            ("p99 ms", f"{m['p99_response_ms']:.3f}"),
        ])
    reads = st.get("reads")
    if reads:  # the read cache and the prefetch policy (seed 001; docs/metrics.md)
        from .panels import prefetch_summary

        out += stacked_row("read cache and prefetch (paper 001)", prefetch_summary(reads))
    cache = st.get("cache")
    if cache and cache.get("organisation", "none") != "none":
        pct = lambda v: "-" if v is None else f"{100 * v:.0f}%"  # noqa: E731
        sched = cache["scheduler"]
        tables = stacked_row("write cache (paper 000 III-A, paper 003 2.1)", [
            ("unit", cache["organisation"]), ("order", cache["order"]),
            ("destage", sched.get("spec", sched.get("name", "")) if isinstance(sched, dict) else str(sched)),
            ("dirty/units", f"{cache['dirty_units']}/{cache['capacity_units']}"), ("occupancy", pct(cache["occupancy"])),
            ("HWM", pct(cache["hwm"])), ("LWM", pct(cache["lwm"])), ("read hits", pct(cache["read_hit_ratio"])),
            ("overwrites", pct(cache["overwrite_ratio"])), ("misses", str(cache["write_misses"])),
            ("destages", str(cache["destages_finished"])),
        ])
        if cache.get("bypass_whole_stripes"):  # a mount: whole stripes go around the cache (docs/cache.md)
            tables[-1].caption = f"{cache.get('bypassed_stripes', 0):,} whole stripes written around the cache"
        out += tables
    if st.get("log"):
        out.append(log_table(st["log"]))
    if st.get("placement"):
        out.append(placement_table(st["placement"]))
    members = (st.get("members") or []) + [
        {"disk": "spare", "store": sp["store"], "state": "spare"} for sp in st.get("spares", [])
    ]
    if members:
        folders = {str(Path(str(d.get("store", ""))).parent) for d in members if "/" in str(d.get("store", ""))}
        # the members' files by name, their one folder once above (a full path would fold)
        short = len(folders) == 1
        rows = [[str(d["disk"]), Path(str(d.get("store", ""))).name if short else str(d.get("store", "")),
                 d.get("state", "active"), str(d.get("errors", "-")), str(d.get("reads", "-")),
                 format_size(d["read_bytes"]) if "read_bytes" in d else "-",
                 str(d.get("writes", "-")), format_size(d["write_bytes"]) if "write_bytes" in d else "-"]
                for d in members]
        folder = folders.pop() if short else ""
        if short and folder != str(st.get("directory", "")).rstrip("/"):  # the title names the array's folder
            head.add_row("member files in", Text(f"{folder}/", overflow="fold"))
        headers = ["disk", "file", "state", "errors", "reads", "read bytes", "writes", "write bytes"]
        keep = [i for i in range(len(headers)) if i < 3 or any(r[i] != "-" for r in rows)]  # unmounted: no counters
        out += stacked_table("members", [headers[i] for i in keep], [[r[i] for i in keep] for r in rows], key=True,
                             left=("file", "state"), split_before=("reads",))
    return out


def stacked_row(title: str, cells: list[tuple[str, str]], width: int = 80) -> list[Table]:
    """One row of labelled values as tables of at most ``width`` columns each."""
    return stacked_table(title, [label for label, _ in cells], [[value for _, value in cells]], width=width)


def stacked_table(title: str, headers: list[str], rows: list[list[Any]], width: int = 80, key: bool = False,
                  left: tuple[str, ...] = (), split_before: tuple[str, ...] = ()) -> list[Table]:
    """A table stacked into as many tables of at most ``width`` columns as its columns need, so no
    header or value is split across lines (a value longer than the whole width still folds, never
    "…"). With ``key`` the first column (the row's name) starts every table of the stack; a
    table too wide for one starts a new table at each header in ``split_before``."""
    def need(i: int) -> int:  # a column's widest header or cell, with its padding and border
        return max([len(headers[i])] + [len(str(r[i])) for r in rows]) + 3

    groups: list[list[int]] = []
    first = [0] if key else []
    rest = range(1 if key else 0, len(headers))
    whole = 1 + sum(need(i) for i in range(len(headers))) <= width  # one table when it fits
    used = width
    for i in rest:
        if used + need(i) > width - 1 or (not whole and headers[i] in split_before and used > 0):
            groups.append(list(first))
            used = sum(need(j) for j in first)
        groups[-1].append(i)
        used += need(i)
    out = []
    for n, cols in enumerate(groups):
        t = Table(title=title if n == 0 else None)
        for i in cols:
            t.add_column(headers[i], justify="left" if headers[i] in left else "right", overflow="fold",
                         min_width=min(need(i) - 3, width - 4))  # fold, never "…"
        for r in rows:
            t.add_row(*(r[i] for i in cols))
        out.append(t)
    return out


def _failure_rows(head: Table, st: dict[str, Any]) -> None:
    """Degraded state, missing members and rebuild progress (docs/failures.md)."""
    missing = st.get("missing", [])
    if st.get("data_lost"):
        head.add_row("redundancy", f"[bold red]LOST: members {', '.join(map(str, missing))} are missing; their blocks read as EIO[/]")
    elif st.get("degraded"):
        head.add_row("redundancy", f"[bold yellow]DEGRADED: member {', '.join(map(str, missing))} missing; its blocks are reconstructed[/]")
    elif "degraded" in st:
        head.add_row("redundancy", "ok")
    rb = st.get("rebuild")
    if rb:
        eta = rb.get("eta_seconds")
        roles, spares = rb.get("roles") or [rb["role"]], rb.get("spares") or [rb["spare"]]
        who = ", ".join(f"member {r} onto {s}" for r, s in zip(roles, spares))  # RAID-6 rebuilds two at once
        text = (
            f"{who}: {rb['state']}, {100 * rb['progress']:.1f}% "
            f"({rb['stripe']}/{rb['stripes']} stripes), {rb['speed_mb_s']:.1f} MB/s"
            + (f", limit {rb['rate_limit_mb_s']:.0f} MB/s" if rb.get("rate_limit_mb_s") else "")
            + (f", about {eta:.0f} s left" if eta is not None else "")
            + (f" ({rb['error']})" if rb.get("error") else "")
        )
        head.add_row("rebuild", text)
    for note in st.get("notes", []):
        head.add_row("note", f"[yellow]{note}[/]")


def rich_table(t: TextTable) -> Table:
    """A :class:`TextTable` as a rich Table: cells are plain text (no markup), a
    :class:`Strong` cell is bold."""
    out = Table(title=Text(t.title) if t.title else None, title_justify="left", show_header=t.show_header,
                caption=Text(t.caption) if t.caption else None)
    for col in t.columns:
        out.add_column(col.name, justify=col.justify)
    for row in t.rows:
        out.add_row(*(Text(cell, style="bold" if isinstance(cell, Strong) else "") for cell in row))
    return out


def models_table(presets: list[dict[str, Any]]) -> Table:
    """``vraid models``: the presets of ``vraid.backends.models.describe_presets()``, their numbers.

    The spec is what a user types, so it is never cut; every value fits 80 columns. The drives
    and where their numbers come from are :func:`models_sources_table`."""
    t = Table(title="disk models (--disk-model)", title_justify="left")
    t.add_column("spec", no_wrap=True, min_width=max([4] + [len(d["spec"]) for d in presets]))
    for col, just, whole in (("rpm", "right", True), ("size", "right", False), ("seek r/w ms", "right", False),
                             ("media MB/s", "right", False), ("cache", "right", True), ("ahead", "left", False)):
        t.add_column(col, justify=just, no_wrap=whole, overflow="fold")  # type: ignore[arg-type]

    def fmt(x: float) -> str:
        return f"{x:g}"

    for d in presets:
        if d["kind"] == "hdd":
            t.add_row(d["spec"], fmt(d["rpm"]), f"{d['capacity'] / 1e9:.1f} GB",
                      f"{fmt(d['avg_seek_ms'])} / {fmt(d['write_seek_ms'])}",
                      f"{fmt(d['media_mb_s'][0])}-{fmt(d['media_mb_s'][1])}", format_size(d["cache"]), d["read_ahead"])
        else:
            t.add_row(d["spec"], "-", "-", f"read {fmt(d['read_us'])} us",
                      f"program {fmt(d['program_us'])} us", f"{d['channels']} ch", "-")
    t.caption = "override any key: hdd:st373454lc,write_cache=on  hdd:rpm=5400,avg_seek=9ms  ssd:read_us=80"
    return t


def models_sources_table(presets: list[dict[str, Any]]) -> Table:
    """``vraid models``: each preset's drive and where its numbers come from (text that may wrap)."""
    t = Table(title="drives and sources", title_justify="left")
    t.add_column("spec", no_wrap=True, min_width=max([4] + [len(d["spec"]) for d in presets]))
    t.add_column("drive", ratio=1, overflow="fold")
    t.add_column("native queue", no_wrap=True)
    t.add_column("source", ratio=2, overflow="fold")
    for d in presets:
        queue = "-" if d["kind"] != "hdd" else (
            f"{d['queue_depth']} {d['scheduling']}" if d["queue_depth"] > 1 else "none")
        t.add_row(d["spec"], d["drive"], queue, d["source"])
    t.caption = ("command queueing (tcq) is on by default at the native queue; "
                 "hdd:NAME,tcq=off serves one command at a time, queue_depth=N a queue of N")
    return t


def log_table(log: dict[str, Any]) -> Table:
    """The log disk (seed 002, docs/log-disk.md) of ``vraid status``: a running mount's
    log cache, or what the superblocks record when unmounted."""
    t = Table(title="log disk (paper 002: RAM buffer -> log -> array)", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", overflow="fold")
    if "head" not in log:  # not mounted: the record
        t.add_row("configuration", f"{log['spec']}, {format_size(log['size'])} per log store")
        t.add_row("stores", ", ".join(log.get("files") or []) or "a region at the end of every member")
        t.add_row("state", log.get("problem") or "present")
        return t
    t.add_row("configuration", f"{log['kind']} on {', '.join(log.get('stores') or [])}")
    t.add_row("RAM buffer", f"{log['ram_used_blocks']}/{log['ram_blocks']} blocks ({format_size(log['ram_bytes'])})")
    t.add_row("log", f"{log['log_used_segments']}/{log['log_segments']} segments in use "
              f"({format_size(log['log_bytes'])}), head {log['head']}, tail {log['tail']}")
    t.add_row("level 1 (RAM -> log)", f"{log['level1_destages']} destages, {log['level1_segments']} segments, "
              f"{log['level1_blocks']} blocks, {format_size(log['bytes_written'])} written")
    t.add_row("level 2 (log -> array)", f"{log['level2_destages']} segments, {log['level2_blocks']} blocks")
    t.add_row("hits", f"RAM {log['ram_hits']}, log {log['log_hits']} of {log['read_blocks']} blocks read")
    slots = log.get("slots") or {}
    t.add_row("slot states", ", ".join(f"{k} {v}" for k, v in slots.items() if k.isupper()))
    t.add_row("state", log.get("message") or ("failed" if log.get("failed") else "ok"))
    return t


def placement_table(pl: dict[str, Any]) -> Table:
    """The placement (seed 004, docs/multibuffer.md) of ``vraid status`` on a running mount."""
    t = Table(title="placement (paper 004: write buffers -> new stripes, stripe directory)", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", overflow="fold")
    stats = pl.get("stats") or {}
    sizes = stats.get("sizes") or {}
    t.add_row("policy", str(pl.get("spec", pl.get("policy", ""))))
    per = pl.get("buffered_per_disk") or {}
    t.add_row("buffered strips", f"{pl.get('buffered', 0)}" + (" (" + ", ".join(
        f"disk {k}: {v}" if int(k) >= 0 else f"shared: {v}" for k, v in sorted(per.items(), key=lambda kv: int(kv[0]))) + ")" if per else ""))
    t.add_row("stripes", f"{pl.get('free_stripes', 0)} free of {pl.get('stripes', 0)}; {pl.get('strips', 0)} logical strips")
    t.add_row("stripe writes", f"LW {stats.get('LW', 0)}, PW {stats.get('PW', 0)}; by size S: "
              + (", ".join(f"{k}: {sizes[k]}" for k in sorted(sizes, key=int)) or "none"))
    t.add_row("cleaner", f"{stats.get('swaps', 0)} swaps, {stats.get('releases', 0)} releases "
              f"({stats.get('background_cleanings', 0)} cleanings in idle time); "
              f"{stats.get('in_place', 0)} in-place writes, {stats.get('partial_in_place', 0)} writes of part of a strip in place")
    d = pl.get("directory") or {}
    t.add_row("directory", f"step {d.get('seq', 0)}, {d.get('commits', 0)} commits ({stats.get('forgets', 0)} stale copies "
              f"forgotten before a swap), {d.get('checkpoints', 0)} checkpoints, "
              f"journal {format_size(d.get('journal_bytes', 0))} of {format_size(d.get('journal_size', 0))}")
    if stats.get("lost"):
        t.add_row("last crash", f"{stats['lost']} strips written since the last flush lost their only copy")
    return t

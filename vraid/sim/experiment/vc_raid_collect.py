"""results.json of the ``vc-raid`` experiment, from every configuration's run.

Each number the report compares is a median over the runs where PostMark ran ``repeats`` times
(:func:`median`; one round of every configuration after another, each a run of its own, put
together by :func:`merge_rounds`), with every run kept beside it (``postmark_runs``), so that a ratio's range can
be formed (:func:`.verdict.ratio_spread`). The log disk's counters (read from ``vraid status
--json`` after each part, :meth:`~.vc_raid_mount.Rig.log_status`) become, per part, the
counters' growth during it and the fullest the log was seen (:func:`log_growth`).
"""

from __future__ import annotations

import statistics
from typing import Any

from .vc_raid_mount import CYCLE_COUNTERS
from .vc_raid_paper import PROGRAMS

NOT_AVAILABLE = "not available"
#: the log counters the report shows (``LogMetrics``)
LOG_COUNTERS = ("host_write_blocks", "level1_destages", "level1_segments", "level1_blocks", "level2_destages",
                "level2_blocks", "log_full_waits", "ram_full_waits")


def median(values: list[float]) -> float:
    """The median of the runs, rounded as the tables print it."""
    return round(float(statistics.median(values)), 2)


def _runs(value: Any) -> list[dict[str, Any]]:
    """PostMark's runs of one size: a list (repeated runs), or one run (sim mode, older results)."""
    return list(value) if isinstance(value, list) else [value]


def log_growth(before: dict[str, Any] | None, after: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The counters' growth from ``before`` to the last of ``after`` and the most segments seen in
    use (None: no log)."""
    snaps = [a for a in after if a]
    if not before or not snaps:
        return None
    last = snaps[-1]
    out: dict[str, Any] = {k: (last["counters"].get(k, 0) or 0) - (before["counters"].get(k, 0) or 0)
                           for k in LOG_COUNTERS}
    out["log_segments"] = last.get("log_segments")
    out["max_used_segments"] = max(a.get("log_used_segments") or 0 for a in snaps)
    return out


def _log(o: dict[str, Any]) -> dict[str, Any]:
    """Per part, the log's growth during it (the parts run one after another on one mount)."""
    snaps = o.get("log") or {}
    out: dict[str, Any] = {}
    prev = snaps.get("start")
    for part in ("postmark", "bonnie", "async", "sync"):
        if part not in snaps:
            continue
        after = snaps[part] if isinstance(snaps[part], list) else [snaps[part]]
        grown = log_growth(prev, after)
        if grown is not None:
            out[part] = grown
        prev = next((a for a in reversed(after) if a), prev)
    return out


def cycle_growth(o: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per part, the growth of the array's write cycles during it (:data:`.vc_raid_mount.CYCLE_COUNTERS`,
    read after each part; runs made before 2026-11-29's evening have none: empty)."""
    snaps = o.get("cycles") or {}
    out: dict[str, dict[str, int]] = {}
    prev = snaps.get("start")
    for part in ("postmark", "bonnie", "async", "sync"):
        cur = snaps.get(part)
        if prev and cur:
            out[part] = {k: (cur.get(k) or 0) - (prev.get(k) or 0) for k in CYCLE_COUNTERS}
        prev = cur or prev
    return out


def size_writes(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, dict[str, list[list[float]]]]:
    """Per PostMark size and configuration, ``[TPS, blocks]`` of each PostMark run: its TPS beside
    the blocks the host wrote to the array during it (the growth of the log's
    ``host_write_blocks`` from the status read before the run to the one read after it; the
    runs go size by size, repetition after repetition). A configuration with no log (RAID-0,
    RAID-5) has none. A PostMark run that meets ext4's commits and writeback hands the array
    its files' blocks; one that ends in memory does not, so these pairs are the measured cause
    of the small size's spread."""
    out: dict[str, dict[str, list[list[float]]]] = {}
    for spec, o in results:
        snaps, pm = o.get("log") or {}, o.get("postmark") or {}
        after = snaps.get("postmark") if isinstance(snaps.get("postmark"), list) else None
        sizes = [s["name"] for s in spec.get("postmark", [])]
        if not o.get("available") or not snaps.get("start") or not after or not sizes or len(after) % len(sizes):
            continue
        before = snaps["start"]
        for k, snap in enumerate(after):
            size, rep = sizes[k % len(sizes)], k // len(sizes)
            runs_ = _runs(pm[size]) if pm.get(size) is not None else []
            grown = log_growth(before, [snap])
            if grown is not None and rep < len(runs_):
                out.setdefault(size, {}).setdefault(spec["config"], []).append(
                    [runs_[rep]["tps"], grown["host_write_blocks"]])
            before = snap or before
    return out


def _add_growth(into: dict[str, Any], more: dict[str, Any]) -> None:
    """``into`` += ``more``, two rounds' growth of one part (counters add, the fullest is the larger)."""
    for k in LOG_COUNTERS:
        into[k] = (into.get(k) or 0) + (more.get(k) or 0)
    into["max_used_segments"] = max(into.get("max_used_segments") or 0, more.get("max_used_segments") or 0)


def settings_of(specs: list[dict[str, Any]]) -> dict[str, Any]:
    """The settings of a sweep from its runs' specs: each key as the first spec that has it gives it
    (a PostMark round holds no tree, a run of the other parts no PostMark)."""
    out: dict[str, Any] = {}
    for spec in specs:
        for k, v in spec.items():
            out.setdefault(k, v)
    return out


def merge_rounds(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """One (spec, output) per configuration from its runs (PostMark's rounds ``CONFIG-rN`` and the
    run of its other parts, each a mount of its own): PostMark's runs in round order, the other
    parts from the run that made them, the log's growth per part summed over the runs
    (``"log_parts"``, already formed). A configuration any of whose runs could not be built is
    that run's "not available". A configuration's whole run in one (id ``CONFIG``: an older
    store's, or a sim run) passes through as it is."""
    by_config: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for spec, out in results:
        by_config.setdefault(spec["config"], []).append((spec, out))
    merged = []
    for name, pairs in by_config.items():
        if len(pairs) == 1 and pairs[0][0].get("id") == name:
            merged.append(pairs[0])
            continue
        pairs = sorted(pairs, key=lambda p: p[0].get("round", 0))
        parts = [p for p in ("postmark", "bonnie", "async", "sync") if any(p in s.get("parts", []) for s, _ in pairs)]
        spec = {**{k: v for k, v in settings_of([s for s, _ in pairs]).items() if k not in ("id", "round")},
                "id": name, "parts": parts, "rounds": [s["round"] for s, _ in pairs if "round" in s]}
        missing = next((o for _, o in pairs if not o.get("available")), None)
        if missing is not None:
            merged.append((spec, missing))
            continue
        out: dict[str, Any] = {"config": name, "available": True, "parts": parts}
        logs: dict[str, Any] = {}
        cycles: dict[str, dict[str, int]] = {}
        for s, o in pairs:
            for key, value in o.items():
                if key == "postmark":
                    for size, runs_ in value.items():
                        out.setdefault("postmark", {}).setdefault(size, []).extend(_runs(runs_))
                elif key not in ("log", "cycles", "parts", "available", "config") and key not in out:
                    out[key] = value
            for part, grown in _log(o).items():
                if part in logs:
                    _add_growth(logs[part], grown)
                else:
                    logs[part] = dict(grown)
            for part, grown in cycle_growth(o).items():
                into = cycles.setdefault(part, {})
                for k, v in grown.items():
                    into[k] = into.get(k, 0) + v
        out["log_parts"] = logs
        out["cycle_parts"] = cycles
        merged.append((spec, out))
    return merged


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """results.json: ``postmark`` {size: {config: median TPS}}, ``postmark_runs`` {size: {config:
    [TPS of each run]}}, ``postmark_log_writes`` (:func:`size_writes`, where the runs read the log
    after each size), ``untar_s``/``copy_s``/``remove_s`` (-o sync) and ``untar_async_s``...
    (asynchronous), ``bonnie`` {config: {block_write_kBps, seeks_per_s}}, ``log`` {config: {part:
    growth}}, ``cycles`` {config: {part: growth of the array's write cycles}} (:func:`cycle_growth`;
    runs that read them only), ``seeks_sim`` (the simulated ablation of bonnie++'s random seeks,
    :func:`.vc_raid_seeks.from_specs`; runs with a bonnie++ result only), ``paper_vs_vraid``; a configuration that could not be built has "not available" in
    its place, a part a configuration does not run (the ablation's) is left out."""
    from . import vc_raid_rows
    from .vc_raid_seeks import from_specs as seeks_ablation

    writes = size_writes(results)
    seeks = seeks_ablation([s for s, o in results if o.get("available") and isinstance(o.get("bonnie"), dict)
                            and "error" not in o["bonnie"]])
    results = merge_rounds(results)
    sizes = [s["name"] for s in results[0][0]["postmark"]] if results else []
    postmark: dict[str, dict[str, Any]] = {size: {} for size in sizes}
    pm_runs: dict[str, dict[str, list[float]]] = {size: {} for size in sizes}
    times: dict[str, dict[str, Any]] = {f"{p}_s": {} for p in PROGRAMS} | {f"{p}_async_s": {} for p in PROGRAMS}
    bonnie: dict[str, Any] = {}
    logs: dict[str, Any] = {}
    cycles: dict[str, Any] = {}
    for spec, o in results:
        name = spec["config"]
        parts = spec.get("parts", ["postmark", "sync"])
        ok = bool(o.get("available"))
        if "postmark" in parts:
            for size in sizes:
                if not ok:
                    postmark[size][name] = NOT_AVAILABLE
                    continue
                tps = [r["tps"] for r in _runs(o["postmark"][size])]
                pm_runs[size][name] = tps
                postmark[size][name] = median(tps)
        for mode, suffix in (("sync", "_s"), ("async", "_async_s")):
            if mode in parts:
                for p in PROGRAMS:
                    done = ok and mode in o and "error" not in o[mode]
                    times[f"{p}{suffix}"][name] = o[mode][f"{p}_s"] if done else NOT_AVAILABLE
        if "bonnie" in parts:
            b = o.get("bonnie") if ok else None
            bonnie[name] = ({k: b.get(k) for k in ("block_write_kBps", "rewrite_kBps", "block_read_kBps", "seeks_per_s")}
                            if b and "error" not in b else NOT_AVAILABLE)
        grown = o["log_parts"] if "log_parts" in o else _log(o)
        if ok and grown:
            logs[name] = grown
        counted = o["cycle_parts"] if "cycle_parts" in o else cycle_growth(o)
        if ok and counted:
            cycles[name] = counted
    res: dict[str, Any] = {"postmark": postmark, "postmark_runs": pm_runs, **times, "bonnie": bonnie, "log": logs,
                           **({"postmark_log_writes": writes} if writes else {}),
                           **({"cycles": cycles} if cycles else {}),
                           **({"seeks_sim": seeks} if seeks else {}),
                           # PostMark's runs per configuration (the rounds made; an older run's repeats)
                           "repeats": max((len(v) for by in pm_runs.values() for v in by.values()), default=0),
                           "ram_mb": (results[0][0].get("ram") or 0) >> 20 if results else 0}
    res["paper_vs_vraid"] = vc_raid_rows.comparisons(res)
    return res


__all__ = ["LOG_COUNTERS", "NOT_AVAILABLE", "collect", "cycle_growth", "log_growth", "median", "merge_rounds", "settings_of", "size_writes"]

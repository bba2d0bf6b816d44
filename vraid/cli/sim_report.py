"""The parts of ``vraid sim``'s text output that explain a run (issue 35 item 3).

* :func:`policy_line`: one header line naming every policy that ran, defaults included
  (write cache and size, destage scheduler and order, CT, queue order, prefetch and read cache,
  placement, log disk), resolved the way the engine resolves them (``EngineConfig.spec``).
* :func:`write_cache_rows`: the write cache's own counters, read from the array the run used
  (``run_sim``'s ``observe`` hands it over); the JSON output is left as it is.
* :func:`log_rows`, :func:`placement_rows`: the ``log`` and ``placement`` blocks of the JSON.
* :func:`drain_note`: what the drain time is and why it is not in the throughput.

Counter names follow docs/simulator.md (after the sample output): a *write miss* is a host
write that waited for a clean unit; *overwrites* are blocks written onto blocks already dirty.
"""

from __future__ import annotations

from typing import Any


def policy_line(cfg: dict[str, Any]) -> str:
    """``policies: cache stripe 4M (destage hlwm:..., order lrw), ct none, ...`` for a run's config."""
    from vraid.core.units import format_size, parse_size
    from vraid.sim.simulator import SimConfig

    known = set(SimConfig.__dataclass_fields__)
    config = SimConfig(**{k: v for k, v in cfg.items() if k in known})
    engine = config.engine_config()
    cache = engine.spec("cache")
    parts = []
    if cache != "none":
        parts.append(f"write cache {cache} {format_size(engine.cache_size)} (destage {engine.spec('destage')}, "
                     f"order {engine.spec('destage_order')})")
    elif engine.log is None:
        parts.append("write cache none (write-through)")
    if engine.log is not None:
        size = f" {format_size(parse_size(config.log_size, 'log size'))}" if config.log_size else ""
        parts.append(f"log disk {engine.log}{size} (its RAM is the write cache; paper 002)")
    parts.append(f"ct {engine.spec('ct')}")
    parts.append(f"queue {engine.spec('queue_order')}")
    prefetch = engine.spec("prefetch")
    parts.append(f"prefetch {prefetch}" + (f" (read cache {format_size(engine.read_cache_size)})"
                                           if engine.read_cache_size else ""))
    parts.append(f"placement {engine.spec('placement')}")
    return "policies: " + ", ".join(parts)


def write_cache_rows(array: Any) -> list[tuple[str, str]]:
    """(label, value) rows of the write cache of ``array`` (none without one)."""
    cache = getattr(array, "cache", None)
    if cache is None:
        return []
    m = cache.metrics
    rows = [("blocks written into the cache", f"{m.write_blocks:,}"),
            ("  onto blocks already dirty (overwrites)", f"{m.overwrites:,}"),
            ("writes that waited for room (misses)", f"{m.write_misses:,}"),
            ("blocks read", f"{m.read_blocks:,}"),
            ("  found in the cache (read hits)", f"{m.read_hit_blocks:,}"),
            ("destages", f"{m.destages_finished:,}"),
            ("units left dirty at the end", f"{len(cache.dirty_keys):,}")]
    if m.destage_errors:
        rows.append(("destages failed", f"{m.destage_errors:,}"))
    return rows


def log_rows(log: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, value) rows of the JSON's ``log`` block (seed 002's VC-RAID)."""
    if not log:
        return []
    from vraid.core.units import format_size

    return [("kind", f"{log['kind']} ({', '.join(log['stores'])})"),
            ("blocks the host wrote", f"{log['host_write_blocks']:,}"),
            ("log segments written", f"{log['segment_writes']:,} ({format_size(log['bytes_written'])})"),
            ("level-1 destages (RAM to log)", f"{log['level1_destages']:,}"),
            ("level-2 destages (to the array)", f"{log['level2_destages']:,} ({log['level2_blocks']:,} blocks)"),
            ("writes that waited for RAM / log room",
             f"{log['ram_full_waits']:,} / {log['log_full_waits']:,}"),
            ("reads from RAM / from the log", f"{log['ram_hits']:,} / {log['log_hits']:,}")]


def placement_rows(placement: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(label, value) rows of the JSON's ``placement`` block (seed 004)."""
    if not placement:
        return []
    ps = placement.get("policy_stats") or {}
    rows = [("buffer strips / buffered now", f"{placement.get('buffer_strips', 0):,} / {placement.get('buffered', 0):,}"),
            ("free stripes", f"{placement.get('free_stripes', 0):,} of {placement.get('stripes', 0):,}")]
    if ps:
        rows += [("stripe writes LW / PW", f"{ps.get('LW', 0):,} / {ps.get('PW', 0):,}"),
                 ("swaps / cleanings", f"{ps.get('swaps', 0):,} / {ps.get('cleanings', 0):,}"),
                 ("buffer write hits / misses", f"{ps.get('write_hits', 0):,} / {ps.get('write_misses', 0):,}")]
    directory = placement.get("directory") or {}
    if directory:
        rows.append(("directory records / commits", f"{directory.get('records', 0):,} / {directory.get('commits', 0):,}"))
    return rows


def drain_note(m: dict[str, Any]) -> str:
    """Why the drain time is separate (empty when nothing drained)."""
    drain = m.get("drain_seconds") or 0.0
    if not drain:
        return ""
    return (f"drain {drain:.6g} s: after the last host request the write cache (or log) was destaged to the "
            "members; virtual time, throughput and member busy % cover the host requests only")

"""Each layer's ``status()`` is a typed, frozen record (engine-layers issue, item 1), and its
``as_dict()`` is the dict ``vraid status`` showed before the records existed: the same keys
in the same order (the golden lists below were read from ``vraid status`` of commit 4900fb6,
before the records) and the same values as the layer's own state.
"""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, dataclass, fields
from typing import Any, Mapping

import pytest

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.engine.status import StatusRecord, flat, frozen_map, optional
from vraid.testing.session import Session

G = Geometry.for_disk_size(level=5, ndisks=4, disk_size=(1 << 20) + 32 * 16 * 1024, strip_size=16 * 1024)

MEMBER = ["disk", "store", "state", "reads", "writes", "read_bytes", "write_bytes", "errors", "busy_seconds",
          "max_queue", "contiguous", "queue"]
CACHE = ["organisation", "order", "scheduler", "capacity_units", "unit_bytes", "units", "dirty_units", "destaging",
         "occupancy", "hwm", "lwm", "paused", "draining", "nvram", "read_blocks", "read_hit_blocks", "write_blocks",
         "write_hits", "overwrites", "write_misses", "destages_started", "destages_finished", "destage_errors",
         "evictions", "nvram_replayed", "read_hit_ratio", "overwrite_ratio"]
READS = ["prefetch", "prefetching", "policy_state", "host_reads", "host_reads_to_members", "member_requests",
         "split_reads", "prefetch_member_requests", "prefetch_waits", "wait_seconds", "idle_member_seconds",
         "member_requests_per_read", "split_ratio", "parallelism_loss", "size", "blocks", "capacity_blocks",
         "fetching", "lookups", "hits", "prefetch_hits", "fills", "prefetched", "prefetches", "prefetch_skipped",
         "stale_drops", "evictions", "invalidations", "prefetch_evicted_unread", "prefetch_invalidated_unread",
         "hit_ratio", "prefetch_hit_ratio", "prefetch_used_ratio", "prefetch_unread", "prefetch_wasted"]
LOG = ["kind", "stores", "ram_bytes", "ram_used_blocks", "ram_blocks", "log_segments", "log_used_segments",
       "log_bytes", "head", "tail", "durable_tail", "slots", "scheduler", "failed", "segment_slots", "segment_bytes",
       "segment_writes", "bytes_written", "reads", "host_write_blocks", "overwrites", "read_blocks", "ram_hits",
       "log_hits", "level1_destages", "level1_segments", "level1_blocks", "level2_destages", "level2_blocks",
       "ram_full_waits", "log_full_waits", "checkpoints", "replayed_blocks", "lost_blocks"]
PLACEMENT = ["policy", "spec", "buffer_strips", "write_hit_ratio", "policy_stats", "buffered", "buffered_per_disk",
             "free_stripes", "stripes", "strips", "stats", "directory"]
FAILURES = ["members", "degraded", "failed", "missing", "data_lost", "spares", "rebuild", "degraded_plans"]
TOP = ["geometry", "cache", "log", "placement", "reads", "ct", "policies", "metrics", "bitmap", *FAILURES,
       "policy_faults"]

#: layer name in Array.status -> (engine config, the Array attribute holding the layer, golden keys)
LAYERS = {
    "cache": (dict(policies={"cache": "stripe"}), "cache", CACHE),
    "reads": (dict(policies={"prefetch": "msp"}, read_cache_size=1 << 20), "reads", READS),
    "log": (dict(log="scd", log_size=1 << 20, log_fresh=True), "log", LOG),
    "placement": (dict(policies={"placement": "multibuffer"}), "placed", PLACEMENT),
}


def _mapping_fields(record: StatusRecord) -> list[Mapping[str, Any]]:
    return [v for f in fields(record) if isinstance(v := getattr(record, f.name), Mapping)]


def _assert_frozen(record: StatusRecord) -> None:
    first = fields(record)[0].name
    with pytest.raises(FrozenInstanceError):
        setattr(record, first, None)
    for m in _mapping_fields(record):
        with pytest.raises(TypeError):
            m["x"] = 1  # type: ignore[index]


# -- the base -----------------------------------------------------------------------------------
@dataclass(frozen=True, kw_only=True)
class _Part(StatusRecord):
    a: int
    b: int | None = optional()


@dataclass(frozen=True, kw_only=True)
class _Whole(StatusRecord):
    name: str
    count: int
    note: str | None = optional()
    bag: Mapping[str, Any] = flat()
    items: tuple[_Part, ...]
    part: _Part | None = flat(optional=True)
    table: Mapping[str, int]


def test_as_dict_keeps_the_order_merges_bags_and_leaves_out_absent_keys():
    bag = {"x": 1, "count": 9}  # "count" already has its place: as {**a, **b}, it keeps it and takes 9
    rec = _Whole(name="n", count=2, bag=frozen_map(bag), items=(_Part(a=1), _Part(a=2, b=3)), part=_Part(a=5),
                 table=frozen_map({"t": 1}))
    d = rec.as_dict()
    assert d == {"name": "n", "count": 9, "x": 1, "items": [{"a": 1}, {"a": 2, "b": 3}], "a": 5, "table": {"t": 1}}
    assert list(d) == ["name", "count", "x", "items", "a", "table"]
    assert type(d["items"]) is list and type(d["table"]) is dict
    assert d == {"name": "n", "count": 2} | bag | {"items": [{"a": 1}, {"a": 2, "b": 3}], "a": 5, "table": {"t": 1}}
    none = _Whole(name="n", count=2, note="hi", bag=frozen_map(None), items=(), table=frozen_map({}))
    assert list(none.as_dict()) == ["name", "count", "note", "items", "table"]
    _assert_frozen(rec)


def test_a_frozen_map_is_a_copy():
    src = {"k": 1}
    m = frozen_map(src)
    src["k"] = 2
    assert m["k"] == 1


# -- each layer ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(LAYERS))
def test_each_layer_reports_a_frozen_record_with_the_keys_vraid_status_had(name):
    options, attr, keys = LAYERS[name]
    with Session(EngineConfig(G, **options)) as s:
        fresh = s.call_sync(lambda: getattr(s.array, attr).status())
        s.write(0, b"x" * 100_000)
        s.read(0, 50_000)
        s.read(0, 50_000)
        # both in one step of the engine's loop: background work (a log's timer) may run between calls
        rec, st = s.call_sync(lambda: (getattr(s.array, attr).status(), s.array.status()))
    for r in (fresh, rec):
        assert isinstance(r, StatusRecord)
        _assert_frozen(r)
        got = list(r.as_dict())
        if name == "reads" and "policy_state" not in got:
            got.insert(2, "policy_state")  # a policy's state is shown only when it has one
        assert got == keys
    assert rec.as_dict() == st[name]  # the array shows the layer's record as it is
    json.dumps(st[name])


def test_the_cache_record_holds_the_caches_state():
    with Session(EngineConfig(G, policies={"cache": "stripe"})) as s:
        s.pause()
        s.write(0, b"x" * 100_000)
        cache = s.array.cache
        rec = s.call_sync(cache.status)
        assert rec.dirty_units == len(cache.dirty_keys) > 0 and rec.paused
        assert dict(rec.counters) == cache.metrics.to_dict()
        s.call_sync(lambda: setattr(cache, "bypass_whole_stripes", True))
        s.write(4 * G.stripe_data_bytes, b"z" * 2 * G.stripe_data_bytes)
        d = s.call_sync(cache.status).as_dict()
    assert list(d) == [*CACHE, "bypass_whole_stripes", "bypassed_stripes"] and d["bypassed_stripes"] == 2


def test_the_log_record_names_the_failed_store_and_says_what_it_means():
    with Session(EngineConfig(G, log="scd", log_size=1 << 20, log_fresh=True)) as s:
        s.write(0, b"x" * 100_000)
        log = s.array.log
        s.call_sync(lambda: log.medium.fail(0, "EIO"))
        rec = s.call_sync(log.status)
    assert rec.failed == rec.stores == ("log0",)
    d = rec.as_dict()
    assert list(d) == [*LOG, "message"] and d["failed"] == ["log0"]
    # the message says what failed: the store when the failure was recorded first, or the log
    # segment whose write met the failed store when a destage got there first
    assert "log0" in d["message"] or "its cache disk has failed" in d["message"], d["message"]
    assert d["host_write_blocks"] == rec.counters["host_write_blocks"] > 0


def test_the_raid_record_holds_members_failures_ct_and_bitmap():
    with Session(EngineConfig(G, bitmap_chunk=2)) as s:
        s.write(0, b"x" * 100_000)
        raid = s.array.raid
        s.call_sync(lambda: raid.fail_member(2, "pulled"))
        rec, st = s.call_sync(lambda: (raid.status(), s.array.status()))
    _assert_frozen(rec)
    _assert_frozen(rec.failures)
    _assert_frozen(rec.failures.members[0])
    assert rec.ct == st["ct"] == "none"
    assert dict(rec.bitmap) == st["bitmap"] and rec.bitmap["chunk_stripes"] == 2
    f = rec.failures
    assert f.degraded and f.failed == f.missing == (2,) and not f.data_lost and f.spares == () and f.rebuild is None
    assert [m.disk for m in f.members] == list(range(G.ndisks))
    assert [m.reason for m in f.members] == [None, None, "pulled", None]
    members = st["members"]
    assert [list(m) for m in members] == [MEMBER, MEMBER, [*MEMBER, "reason"], MEMBER]
    assert members[2]["state"] == "failed" and members[2]["reason"] == "pulled"
    assert list(rec.as_dict()) == ["ct", "bitmap", *FAILURES]
    assert {k: st[k] for k in FAILURES} == f.as_dict()


# -- the host API -------------------------------------------------------------------------------
@pytest.mark.parametrize("options, shown", [
    (dict(), []),
    (dict(policies={"cache": "stripe"}, log="scd", log_size=1 << 20, log_fresh=True), ["log"]),
    (dict(policies={"placement": "multibuffer"}), ["placement"]),
    (dict(read_cache_size=1 << 20), ["reads"]),
])
def test_array_status_has_the_keys_it_had(options, shown):
    with Session(EngineConfig(G, **options)) as s:
        s.write(0, b"x" * 50_000)
        st = s.status()
    assert list(st) == [k for k in TOP if k not in ("log", "placement", "reads") or k in shown]
    if "cache" not in options.get("policies", {}):
        assert st["cache"] == {"organisation": "none"}
    assert [list(m) for m in st["members"]] == [MEMBER] * G.ndisks
    json.dumps(st)

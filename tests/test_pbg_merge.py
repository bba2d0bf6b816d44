"""PBGC with merged destages (``pbg:merge=true``, paper 000's md + the block layer's elevator):
adjacent dirty rows of one stripe are destaged together and their member requests become one
per member; never across a row that is not dirty (a gap), never with a row already being
destaged; a merged group is one destage of the scheduler's concurrency; data stays right."""

from __future__ import annotations

import random

import pytest
import trio
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from vraid.engine.build import EngineConfig
from vraid.engine.chain import CacheConfig
from vraid.engine.members.request import Priority
from vraid.policies.cache import PbgOrganisation
from vraid.testing.machines import GEOMETRY, CachedArrayMatchesModel

from support import members_image, random_writes, memory_stores, run_virtual, running, slow_stores, small_geometry, write_cache

K = 1024


class _Recorder:
    """Every member request the members are handed, with its priority class."""

    def __init__(self, members) -> None:
        self.seen: list[tuple[int, str, int, int, Priority]] = []
        run = members.run

        async def recording(requests, **kw):
            self.seen += [(r.disk, r.op, r.offset, r.length, r.priority) for r in requests]
            await run(requests, **kw)

        members.run = recording

    def writes(self, disk: int) -> list[tuple[int, int]]:
        return sorted((o, n) for d, op, o, n, _ in self.seen if d == disk and op == "write")


class _GroupWatch:
    """Every merged destage group the cache starts: groups whose units were not marked as taken
    when the task started, units found in two groups at once, and the peak of groups in flight."""

    def __init__(self, cache) -> None:
        self.unmarked: list[list[int]] = []
        self.overlaps: list[set[int]] = []
        self.peak = 0
        active: set[int] = set()
        groups = [0]
        original = cache._destage_group

        async def watched(units):
            keys = {u.span.key for u in units}
            if not all(u.destaging for u in units):
                self.unmarked.append(sorted(keys))
            if keys & active:
                self.overlaps.append(keys & active)
            active.update(keys)
            groups[0] += 1
            self.peak = max(self.peak, groups[0])
            try:
                await original(units)
            finally:
                active.difference_update(keys)
                groups[0] -= 1

        cache._destage_group = watched


async def _write_rows(a, g, stripe: int, rows: list[int]) -> bytes:
    """One block in data column 0 of each of ``rows`` of ``stripe``; returns what was written."""
    rng = random.Random(stripe)
    out = b""
    for row in rows:
        data = rng.randbytes(g.block_size)
        await a.write(stripe * g.stripe_data_bytes + row * g.block_size, data)
        out += data
    return out


@pytest.mark.parametrize("merge", [False, True])
def test_adjacent_rows_become_one_request_per_member_never_across_a_gap(merge):
    """Rows 0, 1 and 3 dirty, row 2 clean: merged, rows 0-1 are one request per member they
    touch, row 3 its own (the gap is never bridged); row by row, one request per row."""
    g = small_geometry()  # u = 4 rows of 4 KiB per 16 KiB strip

    async def main():
        stores = memory_stores(g)
        spec = "pbg:merge=true" if merge else "pbg"
        cfg = write_cache(spec, 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            assert a.cache.coalesce is merge
            rec = _Recorder(a.members)
            written = await _write_rows(a, g, 0, [0, 1, 3])
            await a.flush()
            col0, parity = g.data_disk(0, 0), g.parity_disk(0)
            base = g.member_offset(0)
            b = g.block_size
            for disk in (col0, parity):
                rows = [((o - base) // b, n // b) for o, n in rec.writes(disk)]
                assert rows == ([(0, 2), (3, 1)] if merge else [(0, 1), (1, 1), (3, 1)]), (disk, rows)
            # every destage request stays in the destage class (none joins a host request)
            assert {p for *_, p in rec.seen} == {Priority.DESTAGE}
            image = members_image(g, stores)
            assert image[0:b] + image[b : 2 * b] + image[3 * b : 4 * b] == written

    run_virtual(main)


def test_a_row_being_destaged_never_joins_a_group():
    """``_neighbours`` takes the dirty rows that continue the unit on either side and stops at
    the first row being destaged or not dirty."""
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.01)
        cfg = write_cache("pbg:merge=true", 1 << 20, destage="hlwm:high=1.0,low=0.9")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            a.cache.pause()
            await _write_rows(a, g, 1, [0, 1, 2, 3])
            c = a.cache
            keys = [s.key for s in c.organisation.units(1, 0, g.u - 1)]
            c.units[keys[1]].destaging = True  # row 1 is being destaged
            for k in keys:
                c.order.removed(k)
            group = c._neighbours(c.units[keys[2]])
            assert [u.span.row0 for u in group] == [2, 3]
            c.units[keys[1]].destaging = False
            c.in_flight -= len(group) - 1  # undo what _neighbours counted (the rows it added)
            for k in keys:
                c.order.dirtied(k)
            c.resume()
            await a.flush()

    run_virtual(main)


def test_a_merged_group_counts_as_one_destage():
    """With ``max_destages=1`` the merged PBGC still writes a whole run of dirty rows per
    destage: one write per member and stripe for a sequential write."""
    g = small_geometry()

    async def main():
        stores = memory_stores(g)
        cfg = write_cache("pbg:merge=true", 1 << 20, destage="hlwm:high=1.0,low=0.9,max_destages=1")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            data = random.Random(3).randbytes(2 * g.stripe_data_bytes)
            await a.write(0, data)
            await a.flush()
            assert members_image(g, stores)[: len(data)] == data
            assert sum(d.stats.writes for d in a.members.disks) == 2 * g.ndisks
            assert a.cache.groups_in_flight == 0 and a.cache.in_flight == 0

    run_virtual(main)


def test_merge_is_off_by_default_and_a_parameter():
    org = PbgOrganisation(small_geometry())
    assert org.merge is False
    assert PbgOrganisation(small_geometry(), merge=True).merge is True
    assert "merge" in PbgOrganisation.params


def test_random_writes_during_merged_destages_lose_nothing():
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.001)
        cfg = write_cache("pbg:merge=true", 1 << 20, destage="hlwm:high=0.3,low=0.1")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            model = await random_writes(a, g.capacity, 11)
            assert await a.read(0, g.capacity) == bytes(model)
            await a.flush()
            assert members_image(g, stores) == bytes(model)

    run_virtual(main)


def test_merged_pbgc_matches_the_model(tmp_path):
    """The cache model state machine with ``pbg:merge=true``: reads return what the model
    holds, the members hold it after a drain, every PBG's parity right."""
    unit = GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig("pbg:merge=true", size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(
        lambda: CachedArrayMatchesModel(cfg, "memory", tmp_path),
        settings=settings(max_examples=8, stateful_step_count=20, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]))


def test_a_pass_marks_its_groups_taken_before_their_destages_start():
    """Regression (a mount under DBench, 2026-11-28): the destage loop made its groups in one
    pass and the units were marked only when each group's task started. A later pass that ran
    first (trio does not promise which runs first) could take the same units into a second
    group once a write dirtied a row next to them: two destages of one unit at once, which
    ended with a unit in the clean list that was no longer held (KeyError, EIO to the host).
    Now every unit of a group is marked as it is taken, and no unit is in two groups."""
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.002)
        cfg = write_cache("pbg:merge=true", 1 << 20, destage="hlwm:high=0.3,low=0.1")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            c = a.cache
            watch = _GroupWatch(c)
            model = await random_writes(a, g.capacity, 5)
            await a.flush()
            assert members_image(g, stores) == bytes(model)
            assert not watch.unmarked and not watch.overlaps
            assert set(c.clean) <= set(c.units)

    run_virtual(main)


def test_merged_groups_in_flight_stay_within_max_destages():
    """Regression (2026-11-28): a merged group was counted in ``groups_in_flight`` only when its
    task started, so the destage loop's bound saw none of the groups it had just made and one
    pass started a group for every dirty run (13 at once with ``max_destages=4`` under DBench).
    Now a group counts from when it is made: never more than the scheduler asked for."""
    g = small_geometry()

    async def main():
        stores = slow_stores(g, 0.002)
        cfg = write_cache("pbg:merge=true", 1 << 20, destage="hlwm:high=0.3,low=0.1,max_destages=2")
        async with running(EngineConfig(g, stores, **cfg)) as a:
            c = a.cache
            watch = _GroupWatch(c)
            model = await random_writes(a, g.capacity, 7)
            assert 1 <= watch.peak <= 2
            await a.flush()
            assert members_image(g, stores) == bytes(model)
            assert c.groups_in_flight == 0 and c.in_flight == 0

    run_virtual(main)

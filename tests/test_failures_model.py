"""The array with failures, spares and rebuilds against the bytearray model.

A sibling of tests/test_array_model.py's machine: the same writes, reads,
flushes and remounts, plus rules that fail a member (by hand, or by breaking
its store so that the next request fails it), add a spare, run the rebuild a
few stripes at a time or to the end, and kill the spare mid-rebuild. At most
as many members are missing at a time as the level survives (RAID-5 one,
RAID-6 two), so every read must equal the model. At each flush the members
are checked directly with the test's own XOR (RAID-5): the survivors hold the
model's data and the missing member's blocks, recomputed from them, are the
model's too; a member being rebuilt already holds those blocks below the
rebuild position; and with nothing missing every PBG's parity is right. On
RAID-6 every surviving member (and a rebuilt one below the rebuild position)
holds byte for byte what vraid.testing.raid6_oracle makes of the model: data,
P and Q as md lays them out. Run write-through and with the stripe and PBG caches.
"""

from __future__ import annotations

import numpy as np
import pytest
import trio
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from portal import ArrayPortal
from test_array_model import K, ArrayMatchesModel, Config
from test_degraded import Breakable, check_degraded
from vraid.engine.chain import CacheConfig
from vraid.backends.memory import MemoryStore
from vraid.testing.raid6_oracle import expected_areas

GEOMETRIES = [Config(5, 4, 8 * K, 4 * K, 12), Config(5, 5, 4 * K, 512, 10, "right-asymmetric"), Config(5, 3, 4 * K, 4 * K, 16, "left-asymmetric"),
              Config(6, 5, 4 * K, 4 * K, 10), Config(6, 4, 8 * K, 512, 8, "right-asymmetric")]


def after_unmount(raid) -> tuple[list[int], list]:
    """The failed roles and the spares the next mount finds if the array is unmounted now,
    as the superblocks record them (vraid.ondisk.failures): a spare becomes a member only when
    its rebuild pass is done, so *every* role of an unfinished pass is failed again and every
    spare of the pass (in the pass's order, first) is a spare again; the pass starts over from
    stripe 0. (A RAID-6 pass takes two roles when a spare died and left two failed: putting back
    only the first, ``rebuild.role``, made the second an active member on a spare holding
    nothing; tests/test_raid6_spares.py.)"""
    rb = raid.rebuild
    if rb is None:
        return raid.health.failed, list(raid.spares)
    return sorted(set(raid.health.failed) | set(rb.roles)), [*rb.spares, *raid.spares]


class FailuresMatchModel(ArrayMatchesModel):
    def __init__(self, config: Config, cache: CacheConfig, workdir) -> None:
        self.cache = cache
        self.spares: list[Breakable] = []
        self.failed: set[int] = set()
        super().__init__(config, "memory", workdir)
        self.stores = [Breakable(s) for s in self.stores]
        self.portal.close()
        self.portal = self._open()

    # -- the array ------------------------------------------------------------------------
    def _open(self) -> ArrayPortal:
        if not hasattr(self, "spares"):  # the base constructor's first open: plain stores
            return ArrayPortal(self.g, self.stores)
        portal = ArrayPortal(self.g, self.stores, cache=self.cache, failed=sorted(self.failed))
        a = portal.array

        async def setup():
            a.raid.rebuild_paused = True  # rebuilds advance only by the rules
            a.raid.spares.extend(self.spares)  # all at once, as a mount finds them: one pass takes
            a.raid.maybe_start_rebuild()       # every failed role a spare is there for

        portal.call(setup)
        return portal

    @property
    def array(self):
        return self.portal.array

    def _state(self) -> dict:
        async def status():
            return self.array.status()

        return self.portal.call(status)

    def _sync(self) -> None:
        """Follow the array: which roles are failed, which store holds each role, spares left."""
        a = self.array
        self.failed = set(a.health.failed)
        self.stores = [a.members[i].store for i in range(self.g.ndisks)]
        self.spares = list(a.raid.spares)

    def _missing(self) -> list[int]:
        return self.array.health.missing_roles

    def _redundant(self) -> bool:
        """One more failure is survivable: the missing members and those about to fail are
        fewer than the level survives (RAID-5: nothing missing; RAID-6: at most one)."""
        broken = sum(1 for i, s in enumerate(self.stores) if getattr(s, "broken", False) and i not in self._missing())
        return len(self._missing()) + broken < self.g.redundancy.tolerates

    def _draw_disk(self, data) -> int:
        """The member a failure rule fails (any: _redundant says one more is survivable)."""
        return data.draw(st.integers(0, self.g.ndisks - 1), label="disk")

    # -- failures -----------------------------------------------------------------------------
    @precondition(lambda self: self._redundant())
    @rule(data=st.data())
    def fail_member(self, data) -> None:
        disk = self._draw_disk(data)
        note(f"fail member {disk} (and scribble over it)")
        store = self.stores[disk]
        garbage = bytes(np.random.default_rng(disk).integers(0, 256, store.size, dtype=np.uint8))

        async def fail():
            # failed first, then its contents go: a read the engine had already issued to the
            # member may still return what the disk held, never garbage (a disk that dies
            # answers EIO, it does not invent data), and nothing reads it after the failure
            self.array.raid.fail_member(disk, "test")
            store.inner.write_sync(0, garbage)

        self.portal.call(fail)
        self._sync()

    @precondition(lambda self: self._redundant())
    @rule(data=st.data())
    def break_member(self, data) -> None:
        disk = data.draw(st.integers(0, self.g.ndisks - 1), label="disk")
        note(f"member {disk} starts failing every request")
        self.stores[disk].broken = True

    @precondition(lambda self: len(self.spares) < 2)
    @rule()
    def add_spare(self) -> None:
        note("add a spare")
        spare = Breakable(MemoryStore(self.g.member_size, f"spare{id(self) % 1000}-{len(self.spares)}"))

        async def add():
            self.array.raid.add_spare(spare)

        self.portal.call(add)
        self._sync()

    @precondition(lambda self: self.array.raid.rebuild is not None)
    @rule(n=st.integers(1, 5))
    def rebuild_steps(self, n: int) -> None:
        note(f"rebuild {n} stripe(s)")
        self.portal.call(self.array.raid.rebuild.step, n)
        self._finish_if_done()

    @precondition(lambda self: self.array.raid.rebuild is not None)
    @rule()
    def rebuild_to_the_end(self) -> None:
        note("rebuild to the end")
        a = self.array

        async def run():
            a.raid.rebuild_paused = False
            a.raid.rebuild._wakeup.set()
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)
            a.raid.rebuild_paused = True

        self.portal.call(run)
        self._sync()

    @precondition(lambda self: self.array.raid.rebuild is not None)
    @rule()
    def spare_dies_mid_rebuild(self) -> None:
        note("the spare being rebuilt starts failing")
        self.array.raid.rebuild.spare.broken = True
        self.portal.call(self.array.raid.rebuild.step, 1)
        self._sync()

    def _finish_if_done(self) -> None:
        a = self.array
        if a.raid.rebuild is not None and a.raid.rebuild.pos >= a.raid.rebuild.stripes:
            self.portal.call(a.raid.rebuild.step, 1)  # nothing left: the task finishes it
            self._wait_rebuild_task()
        self._sync()

    def _wait_rebuild_task(self) -> None:
        a = self.array

        async def wait():
            a.raid.rebuild_paused = False
            if a.raid.rebuild is not None:
                a.raid.rebuild._wakeup.set()
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)
            a.raid.rebuild_paused = True

        self.portal.call(wait)

    # -- the model's checks ----------------------------------------------------------------------
    @rule()
    def flush(self) -> None:
        note("flush" + (", drain the cache" if self.cache.enabled else "") + ", check the members")
        self.portal.flush()
        if self.cache.enabled:
            self.portal.call(self.array.shutdown)
        self._sync()
        self.check_members()

    @rule()
    def remount(self) -> None:
        note("remount")
        if self.cache.enabled:
            self.portal.call(self.array.shutdown)
        self._sync()
        failed, self.spares = after_unmount(self.array.raid)  # an interrupted rebuild starts again
        self.failed = set(failed)
        self.portal.close()
        self.portal = self._open()
        self._sync()

    def check_members(self) -> None:
        missing = self._missing()
        assert len(missing) <= self.g.redundancy.tolerates
        if self.g.redundancy.parity_columns == 2:
            return self._check_raid6(missing)
        if not missing:
            return super().check_members()  # data where the geometry says, every PBG's parity right
        check_degraded(self.g, self.stores, missing[0], bytes(self.model))
        rb = self.array.raid.rebuild
        if rb is not None and rb.pos:  # the new member already holds the rebuilt stripes
            g = self.g
            others = [s for i, s in enumerate(self.stores) if i != rb.role]
            n = rb.pos * g.strip_size
            want = np.bitwise_xor.reduce(np.stack([np.frombuffer(s.read_sync(g.data_offset, n), np.uint8) for s in others]), axis=0)
            got = np.frombuffer(self.stores[rb.role].read_sync(g.data_offset, n), np.uint8)
            assert np.array_equal(got, want), "the rebuilt stripes on the new member are wrong"

    def _check_raid6(self, missing: list[int]) -> None:
        """Every surviving member, and a member being rebuilt below its position, holds what
        md's RAID-6 makes of the model (the oracle's own P and Q)."""
        g = self.g
        want = expected_areas(g.layout, g.ndisks, g.stripes, g.strip_size, bytes(self.model))
        rb = self.array.raid.rebuild
        for d in range(g.ndisks):
            upto = g.stripes if d not in missing else rb.pos if rb is not None and d in rb.roles else 0
            if not upto:
                continue
            got = np.frombuffer(self.stores[d].read_sync(g.data_offset, upto * g.strip_size), np.uint8)
            if not np.array_equal(got, want[d, :upto].reshape(-1)):
                at = int(np.flatnonzero(got != want[d, :upto].reshape(-1))[0]) // g.strip_size
                raise AssertionError(f"member {d} differs from md's RAID-6 of the model in stripe {at} (missing {missing})")

    def _raw(self, disk: int) -> bytes:
        g = self.g
        return self.stores[disk].read_sync(g.data_offset, g.stripes * g.strip_size)

    def teardown(self) -> None:
        try:
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a full read differs from the model"
            if self.array.raid.rebuild is not None:
                self._wait_rebuild_task()
            self.portal.flush()
            if self.cache.enabled:
                self.portal.call(self.array.shutdown)
            self._sync()
            missing = self._missing()
            self.check_members()
        finally:
            self.portal.close()
        if not missing:
            super().check_members()


SETTINGS = settings(
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
@pytest.mark.parametrize("config", GEOMETRIES, ids=lambda c: c.id)
def test_failures_spares_and_rebuilds_match_the_model(config, cache, tmp_path):
    unit = config.geometry().stripe_data_bytes
    cfg = CacheConfig(cache, size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(lambda: FailuresMatchModel(config, cfg, tmp_path), settings=SETTINGS)

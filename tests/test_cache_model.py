"""The model state machine under every cache organisation x destage order x scheduler.

The array with a write-back cache must return exactly what a bytearray
model holds, whatever the destager does in the background, and after a
drain leave the data where the geometry puts it and every PBG's parity
right on the members. With NVRAM, a crash (the process state dropped
without a shutdown) followed by a replay loses nothing acknowledged.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
import trio
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule, run_state_machine_as_test

from portal import ArrayPortal
from test_array_model import K, ArrayMatchesModel, Config
from vraid.engine.array import CacheConfig
from test_readpath import fresh
from vraid.backends.base import StoreWrapper

ORGS = ("pbg", "stripe")
ORDERS = ("lrw", "lru", "fifo", "cscan")
SCHEDULERS = ("hlwm:high=0.6,low=0.3", "adaptive:period=0.05", "lt", "pi:target=0.4", "idle:idle=0.001,high=0.8")
GEOMETRY = Config(5, 4, 8 * K, 4 * K, 12)


class CachedArrayMatchesModel(ArrayMatchesModel):
    def __init__(self, cache: CacheConfig, backend: str, workdir: Path, nvram: bool = False) -> None:
        self.cache = cache
        self.nvram_path = workdir / f"nvram-{id(self)}" if nvram else None
        self.nvram = None
        super().__init__(GEOMETRY, backend, workdir)

    def _open(self, *, was_clean: bool = True) -> ArrayPortal:
        """The engine over the members, as a mount builds it: with NVRAM, what the file
        holds is replayed (``vraid.engine.recovery``) before the portal returns."""
        portal = ArrayPortal(self.g, self.stores, cache=self.cache, nvram=self.nvram_path, uuid=UUID, was_clean=was_clean)
        self.nvram = portal.engine.nvram
        return portal

    def _drain(self) -> None:
        self.portal.call(self.portal.array.shutdown)

    @rule()
    def flush(self) -> None:
        note("flush, then drain the cache and check the members")
        self.portal.flush()
        self._drain()
        self.check_members()

    @rule()
    def destage_one(self) -> None:
        note("destage one unit now")
        self.portal.call(self.portal.array.cache.destage_one)

    @rule()
    def remount(self) -> None:
        note("remount (clean: drain first)")
        self._drain()
        super().remount()

    @precondition(lambda self: self.nvram_path is not None)
    @rule()
    def crash(self) -> None:
        """kill -9: drop the cache without a drain; the next mount replays what NVRAM holds
        and resyncs (the array has no bitmap: every stripe), as the daemon does."""
        note("crash and replay NVRAM")
        self.portal.close()
        self.portal = self._open(was_clean=False)
        report = self.portal.engine.report
        note(f"  {report.message()}")
        assert report.stripes == self.g.stripes, "an unclean array without a bitmap resyncs every stripe"
        assert self.nvram.used() == 0, "NVRAM still holds blocks after the replay"

    def teardown(self) -> None:
        try:
            assert self.portal.read(0, self.capacity) == bytes(self.model), "a full read differs from the model"
            self._drain()
        finally:
            self.portal.close()
        try:
            self.check_members()
        finally:
            for s in self.stores:
                s.close()


UUID = "00000000-0000-4000-8000-000000000001"
SETTINGS = settings(
    max_examples=6,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("org, order, scheduler", list(itertools.product(ORGS, ORDERS, SCHEDULERS)))
def test_every_cache_combination_matches_the_model(org, order, scheduler, tmp_path):
    unit = GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, order=order, destage=scheduler)
    run_state_machine_as_test(lambda: CachedArrayMatchesModel(cfg, "memory", tmp_path), settings=SETTINGS)


@pytest.mark.parametrize("org", ORGS)
@pytest.mark.parametrize("scheduler", ["hlwm:high=0.9,low=0.5", "adaptive"])
def test_nvram_crash_loses_nothing_acknowledged(org, scheduler, tmp_path):
    unit = GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=4 * unit, destage=scheduler)
    run_state_machine_as_test(
        lambda: CachedArrayMatchesModel(cfg, "file", tmp_path, nvram=True),
        settings=settings(SETTINGS, max_examples=10),
    )


# -- the read path: a read cache and a prefetch policy under the same model ------------------
class JitterStore(StoreWrapper):
    """Each request takes 0 to 2 ms (seeded): prefetches stay in flight across host requests."""

    def __init__(self, inner, seed: int) -> None:
        super().__init__(inner)
        self.rng = random.Random(seed)

    async def read(self, offset, length):
        await trio.sleep(self.rng.choice((0, 0, 0.0005, 0.002)))
        return await self.inner.read(offset, length)

    async def write(self, offset, data):
        await trio.sleep(self.rng.choice((0, 0, 0.0005, 0.002)))
        await self.inner.write(offset, data)


def _read_cached(base, prefetch: str = "test_readpath:NextStrip"):
    class ReadCachedModel(base):
        """Reads always return the model, and the read cache never holds a stale block."""

        def _open(self) -> ArrayPortal:
            stores = [JitterStore(s, i) for i, s in enumerate(self.stores)]
            kw = {"cache": self.cache} if base is CachedArrayMatchesModel else {}
            return ArrayPortal(self.g, stores, read_cache_size=6 * self.g.block_size * self.g.u,
                               policies={"prefetch": prefetch}, **kw)  # NextStrip: a student's policy, by name

        def teardown(self) -> None:
            rc = self.portal.array.reads.read_cache
            PREFETCHED[prefetch] = PREFETCHED.get(prefetch, 0) + rc.metrics.prefetched
            super().teardown()

        @rule()
        def read_cache_is_fresh(self) -> None:
            note("check the read cache against the model")
            self.portal.call(trio.sleep, 0.005)  # let prefetches in flight land first
            fresh(self.portal.array, self.model)

        @rule(data=st.data())
        def read_sequential(self, data) -> None:
            """Strip after strip: what NextStrip prefetches is then read."""
            g = self.g
            first = data.draw(st.integers(0, self.capacity // g.strip_size - 1), label="strip")
            n = data.draw(st.integers(1, 4), label="strips")
            for s in range(first, min(first + n, self.capacity // g.strip_size)):
                got = self.portal.read(s * g.strip_size, g.strip_size)
                assert got == bytes(self.model[s * g.strip_size : (s + 1) * g.strip_size])

    ReadCachedModel.__name__ = f"ReadCached{base.__name__}"
    return ReadCachedModel


class _WriteThroughModel(ArrayMatchesModel):
    def __init__(self, cache, backend: str, workdir: Path) -> None:
        self.cache = cache
        super().__init__(GEOMETRY, backend, workdir)


#: blocks prefetched over a test's runs, by policy spec (the draws must reach prefetching)
PREFETCHED: dict[str, int] = {}
#: every built-in prefetch policy and a student's; MSP with thresholds a short run reaches
PREFETCHES = {"next-strip": ("test_readpath:NextStrip", 12), "msp": ("msp:sc_max=3,sc_thresh=2,sps_max=2", 10),
              "saseqp": ("saseqp:max_kb=16", 8), "none": ("none", 3)}


@pytest.mark.parametrize("prefetch", list(PREFETCHES))
@pytest.mark.parametrize("org", ["none", *ORGS])
def test_read_cache_and_prefetch_match_the_model(org, prefetch, tmp_path):
    unit = GEOMETRY.geometry().stripe_data_bytes
    spec, examples = PREFETCHES[prefetch]
    if org == "none":
        machine = _read_cached(_WriteThroughModel, spec)
        cfg = None
    else:
        machine = _read_cached(CachedArrayMatchesModel, spec)
        cfg = CacheConfig(org, size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    PREFETCHED.pop(spec, None)
    run_state_machine_as_test(lambda: machine(cfg, "memory", tmp_path),
                              settings=settings(SETTINGS, max_examples=examples))
    assert (PREFETCHED.get(spec, 0) > 0) == (prefetch != "none"), PREFETCHED


# -- the policy guard: a student's scheduler or order fails at a random step --------------------
#: runs where the broken policy did fail (the draws must reach the fault)
GUARD_FAULTS: dict[str, int] = {}


class GuardedCacheMatchesModel(CachedArrayMatchesModel):
    """The same model, with the running cache's scheduler or destage order swapped for one of
    tests/guard_policies.py that fails after a drawn number of calls: the guard replaces it
    by the family's default and nothing written may be lost."""

    def __init__(self, cache: CacheConfig, backend: str, workdir: Path, key: str) -> None:
        self.key = key
        super().__init__(cache, backend, workdir)

    @initialize(family=st.sampled_from(["destage", "destage_order"]), after=st.integers(0, 60),
                how=st.sampled_from(["raise", "bogus", "none"]))
    def break_a_policy(self, family: str, after: int, how: str) -> None:
        from guard_policies import FlakyOrder, FlakyScheduler

        note(f"{family} fails after {after} calls ({how})")
        cache = self.portal.array.cache
        self.portal.array.guard.stall_limit = 0.05
        async def swap() -> None:  # in the engine's loop: the destager is woken
            if family == "destage":
                cache.set_scheduler(FlakyScheduler(after=after, how=how))
            else:
                cache.set_order(FlakyOrder(after=after, how=how))

        self.portal.call(swap)

    def teardown(self) -> None:
        if self.portal.array.guard.faults:
            GUARD_FAULTS[self.key] = GUARD_FAULTS.get(self.key, 0) + 1
        super().teardown()


@pytest.mark.parametrize("org", ORGS)
def test_a_failing_policy_loses_nothing(org, tmp_path):
    unit = GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(lambda: GuardedCacheMatchesModel(cfg, "memory", tmp_path, org),
                              settings=settings(SETTINGS, max_examples=12))
    assert GUARD_FAULTS.get(org), "no run reached the policy's fault"

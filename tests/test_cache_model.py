"""The model state machine under every cache organisation x destage order x scheduler.

The array with a write-back cache must return exactly what a bytearray
model holds, whatever the destager does in the background, and after a
drain leave the data where the geometry puts it and every PBG's parity
right on the members. With NVRAM, a crash (the process state dropped
without a shutdown) followed by a replay loses nothing acknowledged.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, run_state_machine_as_test

from vraid.engine.chain import CacheConfig
from vraid.testing.machines import GEOMETRY, LEVEL_CONFIGS, ORDERS, ORGS, RAID6, RAID10_ODD, SCHEDULERS, UUID, CachedArrayMatchesModel  # noqa: F401
from vraid.testing.read_machines import WriteThroughModel, read_cached

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


#: whole stripes written around the cache over the runs of the test below, by organisation
BYPASSED: dict[str, int] = {}


class MountedCacheMatchesModel(CachedArrayMatchesModel):
    """The cache as a mount runs it (``as_mounted``), its bypasses counted."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, as_mounted=True, **kwargs)

    def _open(self, **kwargs):
        old = getattr(self, "portal", None)
        if old is not None and old.array.cache is not None:
            self._count(old)
        return super()._open(**kwargs)

    def _count(self, portal) -> None:
        cache = portal.array.cache
        key = cache.organisation.name
        BYPASSED[key] = BYPASSED.get(key, 0) + cache.bypassed_stripes - getattr(cache, "_counted", 0)
        cache._counted = cache.bypassed_stripes

    def teardown(self) -> None:
        self._count(self.portal)
        super().teardown()


@pytest.mark.parametrize("org", ORGS)
@pytest.mark.parametrize("nvram", [False, True], ids=["volatile", "nvram"])
def test_a_cache_as_a_mount_runs_it_matches_the_model(org, nvram, tmp_path):
    """Coalesced destages, no fill on read misses, whole stripes around the cache: the
    settings of every mount, with crashes and replays when there is NVRAM."""
    unit = GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=4 * unit, destage="hlwm:high=0.6,low=0.3")
    BYPASSED.pop(org, None)
    run_state_machine_as_test(lambda: MountedCacheMatchesModel(cfg, "file" if nvram else "memory", tmp_path, nvram=nvram),
                              settings=settings(SETTINGS, max_examples=10))
    assert BYPASSED.get(org, 0) > 0, "no run wrote a whole stripe around the cache"


# -- the read path: a read cache and a prefetch policy under the same model ------------------
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
        machine = read_cached(WriteThroughModel, spec, PREFETCHED)
        cfg = None
    else:
        machine = read_cached(CachedArrayMatchesModel, spec, PREFETCHED)
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




@pytest.mark.parametrize("org", ORGS)
@pytest.mark.parametrize("level", [1, 4, 10, "10-odd"])
def test_every_level_under_every_cache_matches_the_model(org, level, tmp_path):
    """RAID-1, 4 and 10 (4 members, and 5: md's near-2 on an odd count) under both cache
    organisations: destages of the mirrors write only the copies of the columns they write
    (docs/levels.md), and every member holds the model."""
    config = RAID10_ODD if level == "10-odd" else LEVEL_CONFIGS[level]
    cfg = CacheConfig(org, size=3 * config.geometry().stripe_data_bytes, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(lambda: CachedArrayMatchesModel(cfg, "memory", tmp_path, geometry=config),
                              settings=settings(SETTINGS, max_examples=12))


@pytest.mark.parametrize("org", ORGS)
@pytest.mark.parametrize("nvram", [False, True], ids=["volatile", "nvram"])
def test_raid6_under_every_cache_matches_the_model(org, nvram, tmp_path):
    unit = RAID6.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(
        lambda: CachedArrayMatchesModel(cfg, "file" if nvram else "memory", tmp_path, nvram=nvram, geometry=RAID6),
        settings=SETTINGS,
    )

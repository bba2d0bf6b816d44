"""The model state machines with the MSC contiguity transform on every plan.

With ``ct=load_ct("msc", random limits)`` the array must still return exactly what the
bytearray model holds, and leave the data and the parity of every PBG right on the members
(``check_members`` after each flush and at teardown: every PBG XORs to zero). The limits are
drawn by hypothesis at the start of each run (generous ones included, so every gap of a
stripe can be filled), for both cache organisations and for write-through.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule, run_state_machine_as_test

from portal import ArrayPortal
from test_array_model import CONFIGS, K, ArrayMatchesModel, Config
from test_cache_model import SETTINGS, CachedArrayMatchesModel
from vraid.engine.array import CacheConfig
from vraid.policies.ct import CtLimits
from vraid.policies.ct.spec import load_ct

regions = st.lists(st.tuples(st.integers(1, 8), st.integers(0, 4)).map(lambda t: (t[0], t[0] + t[1])), max_size=2)
limits = st.one_of(
    st.builds(CtLimits, sr_max=st.integers(1, 12), sw_max=st.integers(1, 12),
              sr_except=regions.map(tuple), sw_except=regions.map(tuple)),
    st.just(CtLimits(sr_max=1 << 20, sw_max=1 << 20)),
)


#: the cache machine's geometry has u = 2 rows (no gap to fill); this one has u = 8
CT_GEOMETRY = Config(5, 5, 4 * K, 512, 12)
#: plans the transform changed, per test (the limits drawn must transform something)
CHANGED: dict[str, int] = {}


class _WithCt:
    ct = None
    key = ""

    @initialize(lim=limits)
    def choose_limits(self, lim: CtLimits) -> None:
        self.ct = load_ct("msc", lim)
        note(f"ct = {self.ct.spec}")
        self.portal.array.ct = self.ct

    @rule(data=st.data())
    def write_scattered(self, data) -> None:
        """Fragmented writes (what MSC-CT is for): single blocks here and there in one stripe."""
        g = self.g
        stripe = data.draw(st.integers(0, g.stripes - 1), label="stripe")
        blocks = data.draw(st.lists(st.integers(0, g.data_disks * g.u - 1), min_size=1, max_size=12, unique=True),
                           label="blocks")
        for b in blocks:
            seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
            self._write(stripe * g.stripe_data_bytes + b * g.block_size, g.block_size, seed, "scattered")

    @rule(data=st.data())
    def read_scattered(self, data) -> None:
        """Single-block reads: read misses fill the cache with clean blocks (C in Z)."""
        g = self.g
        for b in data.draw(st.lists(st.integers(0, g.capacity // g.block_size - 1), min_size=1, max_size=8),
                           label="blocks"):
            assert self.portal.read(b * g.block_size, g.block_size) == bytes(
                self.model[b * g.block_size : (b + 1) * g.block_size])

    def _reopen_with_ct(self, portal: ArrayPortal) -> ArrayPortal:
        portal.array.ct = self.ct  # also after a remount

        def count(event) -> None:
            if event.kind == "plan" and event.plan.transformed != event.plan.basic:
                CHANGED[self.key] = CHANGED.get(self.key, 0) + 1

        portal.array.events.subscribe(count)
        return portal


class CtCachedMatchesModel(_WithCt, CachedArrayMatchesModel):
    def __init__(self, cache: CacheConfig, backend: str, workdir, key: str) -> None:
        self.cache = cache
        self.key = key
        self.nvram_path = None
        self.nvram = None
        ArrayMatchesModel.__init__(self, CT_GEOMETRY, backend, workdir)

    def _open(self) -> ArrayPortal:
        return self._reopen_with_ct(super()._open())


class CtArrayMatchesModel(_WithCt, ArrayMatchesModel):
    def __init__(self, config: Config, backend: str, workdir, key: str) -> None:
        self.key = key
        super().__init__(config, backend, workdir)

    def _open(self) -> ArrayPortal:
        return self._reopen_with_ct(super()._open())


@pytest.mark.parametrize("org", ["pbg", "stripe"])
@pytest.mark.parametrize("order", ["lrw", "cscan"])
def test_cached_array_with_ct_matches_the_model(org, order, tmp_path):
    unit = CT_GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, order=order, destage="hlwm:high=0.6,low=0.3")
    key = f"{org}-{order}"
    run_state_machine_as_test(lambda: CtCachedMatchesModel(cfg, "memory", tmp_path, key),
                              settings=settings(SETTINGS, max_examples=12))
    if org == "stripe":  # a PBG unit is one row: nothing to join
        assert CHANGED.get(key, 0) > 0, "no plan was transformed: the test exercised nothing"


#: write-through geometries with several rows per strip (u = 16, 16, 8; RAID-0 with u = 128)
WT_CONFIGS = [CONFIGS[1], CONFIGS[2], CONFIGS[4], CONFIGS[7]]
WT_SETTINGS = settings(max_examples=25, deadline=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("config", WT_CONFIGS, ids=lambda c: c.id)
def test_write_through_with_ct_matches_the_model(config, tmp_path):
    key = f"wt-{config.id}"
    run_state_machine_as_test(lambda: CtArrayMatchesModel(config, "memory", tmp_path, key), settings=WT_SETTINGS)
    if config.level == 5:  # RAID-0 write-through: dirty rows are contiguous, nothing to join
        assert CHANGED.get(key, 0) > 0, "no plan was transformed: the test exercised nothing"

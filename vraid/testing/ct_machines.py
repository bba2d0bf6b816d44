"""The model machines with a contiguity transform on every plan (tests and ``vraid fuzz --ct``).

With the transform ``ct_spec`` (MSC by default; a student's class in ``vraid fuzz``) built
with limits hypothesis draws at the start of each run (generous ones included, so every gap of
a stripe can be filled), the array must still return exactly what the bytearray model holds,
and leave the data and the parity of every PBG right on the members (``check_members`` after
each flush and at teardown), for both cache organisations and for write-through. The rules
the transform itself must keep (seed 000 eq. (6)/(7)) are checked on every plan by the policy
guard (:func:`vraid.core.rxw.transform_violation`); :meth:`_WithCt.on_plan` sees every plan.
"""

from __future__ import annotations

from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from vraid.engine.chain import CacheConfig
from vraid.policies.ct import CtLimits
from vraid.policies.ct.spec import load_ct
from vraid.testing.machines import CONFIGS, K, ArrayMatchesModel, CachedArrayMatchesModel, Config
from vraid.testing.portal import ArrayPortal

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
    #: the transform under test: a spec (``msc``, a student's ``mod:Class``); its keys
    #: override the drawn limits
    ct_spec = "msc"

    @initialize(lim=limits)
    def choose_limits(self, lim: CtLimits) -> None:
        self.ct = load_ct(self.ct_spec, lim)
        note(f"ct = {getattr(self.ct, 'spec', self.ct_spec)} ({lim})")
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
        if self.ct is not None:
            portal.array.ct = self.ct  # also after a remount

        def count(event) -> None:
            if event.kind == "plan" and event.plan.transformed != event.plan.basic:
                CHANGED[self.key] = CHANGED.get(self.key, 0) + 1
            if event.kind == "plan":
                self.on_plan(event.plan)

        portal.array.events.subscribe(count)
        return portal

    def on_plan(self, plan) -> None:
        """Every plan the engine ran (``vraid fuzz --ct`` checks its member requests)."""


class CtCachedMatchesModel(_WithCt, CachedArrayMatchesModel):
    def __init__(self, cache: CacheConfig, backend: str, workdir, key: str, *, options: dict | None = None) -> None:
        self.cache = cache
        self.key = key
        self.nvram_path = None
        self.nvram = None
        ArrayMatchesModel.__init__(self, CT_GEOMETRY, backend, workdir, options=options)

    def _open(self) -> ArrayPortal:
        return self._reopen_with_ct(super()._open())


class CtArrayMatchesModel(_WithCt, ArrayMatchesModel):
    def __init__(self, config: Config, backend: str, workdir, key: str, *, options: dict | None = None) -> None:
        self.key = key
        super().__init__(config, backend, workdir, options=options)

    def _open(self) -> ArrayPortal:
        return self._reopen_with_ct(super()._open())


#: write-through geometries with several rows per strip (u = 16, 16, 8; RAID-0 with u = 128)
WT_CONFIGS = [CONFIGS[1], CONFIGS[2], CONFIGS[4], CONFIGS[7]]

"""The one composition root: an :class:`EngineConfig` becomes a running engine.

Every place that runs the controller builds it here (an array on disk through
:meth:`EngineConfig.from_assembled`): the mount daemon
(``vraid.fuse.daemon``), ``vraid sim`` and ``vraid top --sim`` (``vraid.sim``,
``vraid.tui.top``), the experiments, the failure commands, ``bench/`` and the
tests' session (``vraid.testing.session``). What they differ in is data, not
code: member files or in-memory members, a clock scale, whether the trio loop
runs on the real clock or a ``MockClock``. So the same configuration gives the
same engine in real and in virtual time, NVRAM and the write-intent bitmap
included.

What building does, in order (:func:`build_engine`; nothing is opened before
every check has passed, :meth:`EngineConfig.check` in :mod:`vraid.engine.config`):

1. the members: the given stores, or in-memory ones from ``store_factory``;
   each behind the disk timing model (``backends.models``, its sleeps scaled by
   ``time_scale``), then behind the injected faults (``backends.faulty``);
   spares get the timing model, never faults;
2. NVRAM (``backends.nvram``): the file the cache journals into is opened (or
   made), and what it holds is read for replay; ``replay_nvram`` is a file only
   replayed (the last mount's, when this one runs without a cache);
3. the write-intent bitmap (``vraid.ondisk.bitmap``): its bits are loaded from
   the members (``bitmap_recorded``), giving the chunks to resync;
4. the log disk (``log``, seed 002: ``vraid.engine.log.cache``): its stores (given, made in
   memory, or per-disk windows over the members), each behind the members' timing model;
   their superblocks checked and the log scanned for replay (``vraid.engine.log.medium``);
5. the policies of every family through ``vraid.policies.registry``, each behind the
   policy guard (``vraid.engine.guard``: a failing policy falls back to its family's
   default, or stops a simulation);
6. the :class:`~vraid.engine.host.array.Array`.

Running (:func:`open_engine`, or :meth:`Engine.recover` inside the caller's
own nursery as the daemon does): the array's workers start, then recovery
(``vraid.engine.host.recovery``: NVRAM replay, bitmap resync) runs before anything
else is served.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator

import trio

from vraid.backends.base import Store
from vraid.engine.chain import assemble
from vraid.engine.host.array import Array
from vraid.policies.placement import needs_directory
from vraid.engine.assembled import EngineOptions, new_array_layout, parse_time
from .clock import TrioClock
from .config import CACHE_FAMILIES, EngineConfig
from .guard import PolicyGuard
from vraid.engine.host.recovery import ResyncReport, recover

log = logging.getLogger(__name__)

__all__ = ["Engine", "EngineConfig", "EngineOptions", "build_engine", "new_array_layout", "open_engine", "parse_time"]

#: the families built by name below; every other family of the registry is made from its row
#: and put in its slot (:meth:`Engine._install_from_table`)
BUILT_BY_NAME = (*CACHE_FAMILIES, "ct", "queue_order", "prefetch", "placement", "log")


# ---------------------------------------------------------------------- the engine
class Engine:
    """A built engine: the array and what was opened for it.

    ``stores``: the members as given or made; ``timed``: behind the timing model;
    ``members``: what the array runs on (``timed`` behind the faults).
    """

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.geometry = config.geometry
        #: the clock of the timing model and the faults (scaled); the array's runs unscaled
        self.model_clock = TrioClock(config.time_scale or 1.0)
        self.stores: list[Store] = []
        self.timed: list[Store] = []
        self.members: list[Store] = []
        self.nvram = None  # the cache's journal
        self.replay_file = None  # an NVRAM file only replayed
        self.replay: list[tuple[int, bytes]] = []
        self.bitmap = None
        #: the chunks the bitmap had set on the members (None: no bitmap was kept)
        self.bitmap_chunks: set[int] | None = None
        self.array: Array | None = None  # type: ignore[assignment]
        #: the log disk (seed 002): its medium and what the last mount left in it
        self.log_medium = None
        self.log_scan = None
        self.report: ResyncReport | None = None
        #: the stripe directory's durable copy (seed 004), and the mapping it is
        self.directory_store = None
        self.mapping = config.mapping

    # -- pieces ---------------------------------------------------------------------------
    def wrap_timing(self, store: Store) -> Store:
        """``store`` behind the configured timing model (a spare added later, too)."""
        cfg = self.config
        if not cfg.disk_model or cfg.time_scale is None:
            return store
        from vraid.backends.models import wrap

        return wrap(store, cfg.disk_model, self.model_clock)

    def _per_disk(self) -> bool:
        from vraid.policies.log import layout

        return self.config.log is not None and layout(self.config.log, self.geometry.ndisks)[0] == "per-disk"

    # -- the stripe directory (seed 004; vraid.engine.placement.writes) --------------------------------
    def _placement(self):
        from vraid.policies import registry

        return registry.create("placement", self.config.spec("placement"), registry.Context(geometry=self.geometry))

    def _directory_area(self):
        """(area, logical stripes) of the directory region; logical stripes None for an array
        on disk (its directory says)."""
        from vraid.ondisk.directory_area import PARAM, DirectoryArea, logical_stripes, spare_of

        cfg, g = self.config, self.geometry
        if cfg.params.get(PARAM) is not None:
            return DirectoryArea.from_param(cfg.params[PARAM]), None
        logical = logical_stripes(g.stripes, spare_of(self._placement()))
        return DirectoryArea.for_geometry(g, logical * g.data_disks), logical

    def _open_directory(self) -> None:
        cfg, g = self.config, self.geometry
        if not needs_directory(cfg.spec("placement")):
            return
        from .placement.directory_store import DirectoryStore

        area, logical = self._directory_area()
        if logical is None:  # an array's members: the newest directory any of them holds
            alive = [s for role, s in enumerate(self.stores) if role not in set(cfg.failed)]
            self.directory_store = DirectoryStore.load_sync(alive, area, g, force=cfg.force_recovery)
        else:  # a simulation's fresh members
            directory = self._placement().make_directory(g, logical)
            DirectoryStore.format_sync(self.stores, area, directory)
            self.directory_store = DirectoryStore(directory, area)
        self.mapping = self.directory_store.directory

    def placement_factory(self):
        """What the Array calls to make its placement layer (None: the static layout)."""
        if self.directory_store is None:
            return None
        from .placement.writes import PlacedWrites

        policy, store = self._placement(), self.directory_store
        return lambda array: PlacedWrites(array, policy, store)

    def _open_members(self) -> None:
        cfg, g = self.config, self.geometry
        extra = cfg.log_size if self._per_disk() and cfg.log_stores is None else 0  # the log region past the data
        if needs_directory(cfg.spec("placement")) and cfg.stores is None:  # the directory region past the data
            area, _ = self._directory_area()
            extra = area.offset + area.size - g.member_size
        self.stores = list(cfg.stores) if cfg.stores is not None else [
            cfg.store_factory(role, g.member_size + extra) for role in range(g.ndisks)]
        self.timed = [self.wrap_timing(s) for s in self.stores]
        self.members = list(self.timed)
        if cfg.faults:
            from vraid.backends.faulty import parse_faults, wrap_faults

            faults = parse_faults(cfg.faults, g.ndisks)
            self.members = wrap_faults(self.timed, faults, clock=self.model_clock, block_size=g.block_size,
                                       data_offset=g.data_offset)

    def _open_nvram(self) -> None:
        from vraid.backends.nvram import Nvram

        cfg, bs = self.config, self.geometry.block_size
        path = cfg.cache_config().nvram
        if path is not None:
            if cfg.nvram_fresh and path.exists():
                Nvram.open(path, array_uuid=cfg.uuid, block_size=bs).close()  # refuses another array's file
                path.unlink()
            if path.exists():
                self.nvram = Nvram.open(path, array_uuid=cfg.uuid, block_size=bs)
            else:
                slots = 2 * max(1, cfg.cache_size // bs)  # the cache's blocks, and as many again for DDIRTY shadows
                self.nvram = Nvram.create(path, slots=slots, block_size=bs, array_uuid=cfg.uuid)
            self.replay = self.nvram.replay()
        elif cfg.replay_nvram is not None:
            self.replay_file = Nvram.open(cfg.replay_nvram, array_uuid=cfg.uuid, block_size=bs)
            self.replay = self.replay_file.replay()

    def _open_log(self) -> None:
        cfg, g = self.config, self.geometry
        if cfg.log is None:
            return
        from vraid.ondisk.logsegment import LogLayout
        from vraid.policies.log import layout
        from .log.medium import LogMedium, WindowStore, format_stores

        kind, n = layout(cfg.log, g.ndisks)
        if cfg.log_stores is not None:
            raw = list(cfg.log_stores)
            stores = [self.wrap_timing(s) for s in raw] if kind != "per-disk" else raw
            size = min(s.size for s in raw)
        elif kind == "per-disk":
            stores = [WindowStore(self.timed[role], g.member_size, cfg.log_size, name=f"disk{role}.log")
                      for role in range(g.ndisks)]
            size = cfg.log_size
        else:
            from vraid.backends.memory import MemoryStore

            stores = [self.wrap_timing(MemoryStore(cfg.log_size, name=f"log{i}")) for i in range(n)]
            size = cfg.log_size
        layout = LogLayout.for_size(kind, len(stores), g.block_size, size)
        if cfg.log_fresh or cfg.log_stores is None and kind != "per-disk" or cfg.log_stores is None and cfg.stores is None:
            format_stores(stores, layout, cfg.uuid)
        self.log_medium = LogMedium(stores, layout, cfg.uuid)
        if kind == "per-disk":  # the region of a failed member is gone with it
            self.log_medium.failed.update(cfg.failed)
        self.log_scan = self.log_medium.scan_sync(force=cfg.force_recovery)

    def log_factory(self):
        """What the Array calls to make its log cache (None: no log)."""
        if self.log_medium is None:
            return None
        from vraid.policies import registry
        from .log.cache import LogCache

        cfg = self.config
        sched = registry.create("destage", cfg.log_destage, registry.Context(geometry=self.geometry))

        def make(target, guard):
            return LogCache(target, self.log_medium, ram_bytes=cfg.log_ram, scheduler=guard.wrap("destage", sched),
                            timer=cfg.log_timer, scan=self.log_scan, spec=registry.parse("log", cfg.log).text)

        return make

    def _open_bitmap(self) -> None:
        cfg = self.config
        if cfg.intent is not None:
            self.bitmap = cfg.intent
            return
        if not cfg.bitmap_chunk:
            return
        from vraid.ondisk.bitmap import WriteIntentBitmap

        self.bitmap = WriteIntentBitmap(self.geometry, cfg.bitmap_chunk, mapping=self.mapping)
        if cfg.bitmap_recorded:
            alive = [s for role, s in enumerate(self.stores) if role not in set(cfg.failed)]
            self.bitmap_chunks = self.bitmap.load_sync(alive)

    def _make_array(self) -> None:
        from vraid.policies import registry

        cfg, g = self.config, self.geometry
        from vraid.backends.models import disk_preset

        ctx = registry.Context(geometry=g, disk_model=cfg.disk_model, params=dict(cfg.params),
                               disk_preset=disk_preset(cfg.disk_model))

        def policy(family: str):
            if family in cfg.instances:
                return cfg.instances[family]
            return registry.create(family, cfg.spec(family), ctx)

        from vraid.backends.nvram import Nvram

        given = cfg.journal
        nvram, journal = (given, None) if isinstance(given, Nvram) else (self.nvram, given)
        self.array = assemble(g, self.members, clock=TrioClock(), cache=cfg.cache_config(), nvram=nvram, journal=journal,
                           ct=policy("ct"), intent=self.bitmap, failed=sorted(cfg.failed),
                           spares=[self.wrap_timing(s) for s in cfg.spares],
                           queue_order=policy("queue_order"),
                           read_cache_bytes=cfg.read_cache_size,
                           prefetch=policy("prefetch"), mapping=self.mapping,
                           guard=PolicyGuard(cfg.on_policy_fault), log=self.log_factory(),
                           placement=self.placement_factory())
        if cfg.rebuild_rate:
            self.array.raid.set_rebuild_rate(cfg.rebuild_rate * 1e6)
        self._install_from_table(ctx)

    def _install_from_table(self, ctx) -> None:
        """Every family not built by name above (a new family: one folder under ``policies/``
        and one registry row) made from its row and put in its ``slot`` behind the policy
        guard; the layer holding the slot calls it (docs/policies.md, "What a new family costs")."""
        from vraid.policies import registry, running

        for key, fam in registry.FAMILIES.items():
            if key in BUILT_BY_NAME or not fam.slot:
                continue
            holder, attr = running.holder(key, self.array)
            if holder is not None:
                policy = registry.create(key, self.config.spec(key), ctx)
                setattr(holder, attr, self.array.guard.wrap(key, policy))

    # -- running ----------------------------------------------------------------------------
    async def recover(self) -> ResyncReport:
        """NVRAM replay and resync (``vraid.engine.host.recovery``); the array must be serving.
        A clean engine with nothing to replay and no bit set is left alone."""
        cfg = self.config
        logc = self.array.log
        if logc is not None:
            self.replay = logc.replay()
        if cfg.was_clean and not self.replay and not self.bitmap_chunks:
            self.report = ResyncReport()
        elif logc is not None:
            scan = self.log_scan
            self.report = await recover(self.array, was_clean=cfg.was_clean, bitmap_chunks=self.bitmap_chunks,
                                        replay=self.replay, journal=logc,
                                        source=scan.describe() if scan is not None else None,
                                        lost=scan.loss_message() if scan is not None else "")
        else:
            self.report = await recover(self.array, was_clean=cfg.was_clean, bitmap_chunks=self.bitmap_chunks,
                                        replay=self.replay, nvram=self.nvram or self.replay_file)
        self.replay = []
        damage = getattr(self.directory_store, "damage", "")
        if damage:
            self.report.lost = "; ".join(x for x in (self.report.lost, damage) if x)
        if self.array.placed is not None:
            lost = await self.array.placed.restore_lost()
            if lost:
                log.warning("stripe directory: %d strips written since the last flush lost their only copy in the "
                            "crash (they read as zeros)", lost)
        return self.report

    def close(self) -> None:
        """Close the NVRAM files opened for the engine (the stores stay the caller's). Idempotent."""
        for nv in {id(n): n for n in (self.nvram, self.replay_file) if n is not None}.values():
            nv.close()


def build_engine(config: EngineConfig) -> Engine:
    """Check ``config``, then open and wire everything (see the module docstring); the
    array is not running yet. Close the engine when done.

    Raises:
        VraidError: a bad setting (before anything is opened), or an NVRAM file that
            cannot be used (NvramError).
    """
    config.check()
    engine = Engine(config)
    try:
        engine._open_members()
        engine._open_directory()
        engine._open_nvram()
        engine._open_log()
        engine._open_bitmap()
        engine._make_array()
    except BaseException:
        engine.close()
        raise
    return engine


@asynccontextmanager
async def open_engine(config: EngineConfig) -> AsyncIterator[Engine]:
    """Build ``config``'s engine, run its workers and recovery; inside the block it serves.
    Leaving cancels the workers (no shutdown: call ``engine.array.shutdown()`` first for a
    clean stop) and closes what was opened."""
    engine = build_engine(config)
    try:
        array = engine.array
        array.started_at = array.clock.now()
        async with trio.open_nursery() as nursery:
            await nursery.start(array.serve)
            try:
                await engine.recover()
                yield engine
            finally:
                nursery.cancel_scope.cancel()
    finally:
        engine.close()

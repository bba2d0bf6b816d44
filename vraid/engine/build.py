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
every check has passed, :meth:`EngineConfig.check`):

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable, Mapping, Sequence

import trio

from vraid.backends.base import Store
from vraid.core.geometry import Geometry
from vraid.core.limits import check_cache_sizes
from vraid.errors import VraidError
from vraid.engine.chain import CacheConfig, assemble
from vraid.engine.host.array import Array
from vraid.policies.placement import needs_directory
from vraid.engine.assembled import EngineOptions, config_fields, new_array_layout, parse_time
from .clock import TrioClock
from .guard import MODES, PolicyGuard
from vraid.engine.host.recovery import ResyncReport, recover

log = logging.getLogger(__name__)

__all__ = ["Engine", "EngineConfig", "EngineOptions", "build_engine", "new_array_layout", "open_engine", "parse_time"]

#: the array uuid of engines with no superblock (simulations, tests): their NVRAM files carry it
SIM_UUID = "5e5e5e5e-0000-4000-8000-000000000000"
#: write cache size when none is given
DEFAULT_CACHE_SIZE = CacheConfig().size
#: the policy families a CacheConfig carries (the Array builds these three itself)
CACHE_FAMILIES = ("cache", "destage_order", "destage")
#: the families built by name below; every other family of the registry is made from its row
#: and put in its slot (:meth:`Engine._install_from_table`)
BUILT_BY_NAME = (*CACHE_FAMILIES, "ct", "queue_order", "prefetch", "placement", "log")
#: the families whose policy object an EngineConfig may be given (``instances``)
GIVEN_FAMILIES = ("ct", "prefetch", "queue_order")


def memory_store(role: int, size: int) -> Store:
    """The default member of an in-memory engine."""
    from vraid.backends.memory import MemoryStore

    return MemoryStore(size, name=f"disk{role}")


@dataclass(frozen=True)
class EngineConfig:
    """Everything that determines an engine; no clock (the trio loop brings it).

    Members: ``stores`` in role order (member files, or any stores), or None for
    in-memory members made by ``store_factory(role, member_size)``.
    """

    geometry: Geometry
    stores: Sequence[Store] | None = None
    spares: Sequence[Store] = ()
    store_factory: Callable[[int, int], Store] = memory_store
    #: family key -> spec string (``vraid.policies.registry``); a family not named runs its default
    policies: Mapping[str, str] = field(default_factory=dict)
    cache_size: int = DEFAULT_CACHE_SIZE
    #: bytes of the clean-block read cache (0: none; a prefetch policy needs one)
    read_cache_size: int = 0
    #: the NVRAM file the write cache journals into (None: a volatile cache)
    nvram: Path | None = None
    #: make ``nvram`` anew, dropping what it holds (a simulation: its members start empty).
    #: Only a file made for the same uuid is replaced, never an array's NVRAM.
    nvram_fresh: bool = False
    #: an NVRAM file to replay and then reset, not used afterwards (ignored when ``nvram`` is set)
    replay_nvram: Path | None = None
    #: the array's uuid (NVRAM files are tied to it)
    uuid: str = SIM_UUID
    #: stripes per write-intent bitmap bit (None or 0: no bitmap)
    bitmap_chunk: int | None = None
    #: the members hold a bitmap of this chunk: load its set bits (False: none was kept,
    #: so after an unclean shutdown the whole array is resynced)
    bitmap_recorded: bool = True
    #: injected faults, ``backends.faulty`` spec strings (``disk2:eio=1000-1010``)
    faults: tuple[str, ...] = ()
    #: timing model of every member (``backends.models`` spec), None: none
    disk_model: str | None = None
    #: modelled time runs at this factor of the loop's clock; None: the model is ignored
    time_scale: float | None = 1.0
    #: rebuild rate limit in MB/s of the new member (None or 0: no limit)
    rebuild_rate: float | None = None
    #: roles that have failed (their stores may be placeholders)
    failed: Sequence[int] = ()
    #: False after an unclean shutdown: recovery resyncs what may be mid-write
    was_clean: bool = True
    #: the superblock's parameters (measured CT limits live here)
    params: Mapping[str, Any] = field(default_factory=dict)
    #: logical-to-physical translation (``vraid.core.mapping``); None: the geometry's static layout
    mapping: Any = None
    #: what a failing policy does (vraid.engine.guard): "fallback" (a mount: the family's
    #: default takes over) or "stop" (a simulation: PolicyFault ends the run)
    on_policy_fault: str = "fallback"
    #: the log disk (seed 002): "scd", "mcd:N", "mirrored" or "per-disk"; None: none
    log: str | None = None
    #: bytes of each log store (a per-disk region: of each member) when the engine makes them
    log_size: int = 16 << 20
    #: the log cache's RAM buffer (the paper's 4 MiB)
    log_ram: int = 4 << 20
    #: the log stores (``log0.img`` ...) in order; None: in-memory ones of ``log_size`` (or,
    #: per-disk, windows over the members past their data area)
    log_stores: Sequence[Store] | None = None
    #: write fresh log superblocks first (a simulation's in-memory log; never an array's files)
    log_fresh: bool = False
    #: recover from a damaged log or stripe directory anyway (``vraid mount --force``): every
    #: intact log segment replayed, the damaged ones reported as lost (vraid.engine.log.medium);
    #: a directory journal that stops short served as it is, the strips it may misplace named
    #: (vraid.engine.placement.directory_store)
    force_recovery: bool = False
    #: the destage scheduler of level 2 (``vraid.policies.destage`` spec)
    log_destage: str = "idle"
    #: level 1 runs when the oldest block in the RAM buffer has waited this long (seconds)
    log_timer: float = 0.2
    # -- hand-made parts (tests), each run in place of what the builder would make ---------
    #: family (one of :data:`GIVEN_FAMILIES`) -> a policy object run instead of the one its
    #: spec makes (a CT with given limits, a prefetch policy made by hand)
    instances: Mapping[str, Any] = field(default_factory=dict)
    #: a write-intent hook run instead of one made from ``bitmap_chunk`` (its bits are not loaded)
    intent: Any = None
    #: the write cache's journal, an open ``backends.nvram.Nvram`` or a journal object,
    #: instead of the NVRAM file ``nvram`` (the caller opens, replays and closes it)
    journal: Any = None

    @classmethod
    def from_assembled(cls, asm: Any, options: EngineOptions | None = None, *, opened: bool = True) -> "EngineConfig":
        """The engine of the assembled array ``asm`` (``vraid.ondisk.assemble``) run with
        ``options`` (``vraid.engine.assembled``: mount options over vraid.toml's defaults,
        the NVRAM, bitmap, log and placement the superblocks record). Nothing is opened or
        checked; ``opened=False`` (before the member files are opened) leaves the stores out."""
        return cls(asm.geometry, **config_fields(asm, options or EngineOptions(), opened=opened))

    # -- checks ---------------------------------------------------------------------------
    def spec(self, family: str) -> str:
        """The spec of ``family`` this engine runs (the family's default when not named)."""
        from vraid.policies import registry

        return registry.parse(family, self.policies.get(family)).text

    def cache_config(self) -> CacheConfig:
        """The write cache to run, as the Array takes it."""
        return CacheConfig(self.spec("cache"), self.cache_size, self.spec("destage_order"), self.spec("destage"),
                           Path(self.nvram) if self.nvram is not None and self.spec("cache") != "none" else None)

    def check(self) -> None:
        """Every check that can fail, before anything is opened or changed.

        Raises:
            VraidError: naming the setting and what to give instead.
        """
        from vraid.policies import registry

        g = self.geometry
        for key in self.policies:
            registry.parse(key, self.policies[key])  # an unknown family or a bad spec
        cache = self.spec("cache")
        if self.spec("ct") != "none":  # its limits come from the superblock too: build it (pure) to check them
            from vraid.backends.models import disk_preset

            registry.create("ct", self.spec("ct"), registry.Context(
                geometry=g, disk_model=self.disk_model, params=dict(self.params), disk_preset=disk_preset(self.disk_model)))
        if needs_directory(self.spec("placement")):  # seed 004: a stripe directory (vraid.engine.placement)
            if cache != "none" or self.nvram is not None or self.log is not None:
                raise VraidError(f"placement {self.spec('placement')} keeps its own write buffers: it runs without "
                                 "a write-back cache, NVRAM or a log disk",
                                 "drop --cache/--nvram/--log, or use --placement static")
            if g.redundancy.parity_columns != 1:
                raise VraidError(f"placement {self.spec('placement')} needs RAID-5 (one parity strip per stripe)",
                                 "use --level 5, or --placement static")
            if self.mapping is not None:
                raise VraidError("a placement makes its own mapping (the stripe directory)", "give no mapping")
            registry.create("placement", self.spec("placement"), registry.Context(geometry=g))
        if self.stores is not None and len(self.stores) != g.ndisks:
            raise VraidError(f"{len(self.stores)} member stores for {g.ndisks} disks", "give one store per member")
        if cache != "none":  # room for one unit of the organisation (a stripe, or a pbg's row)
            unit = registry.create("cache", cache, registry.Context(geometry=g)).unit_blocks() * g.block_size
            if self.cache_size < unit:
                what = "one stripe" if unit == g.stripe_data_bytes else f"one unit of the {cache} cache"
                raise VraidError(f"cache size {self.cache_size} bytes is smaller than {what} ({unit} bytes)",
                                 "use a cache size of at least a few stripes, e.g. 64M")
        if self.read_cache_size < 0:
            raise VraidError(f"read cache size {self.read_cache_size} is negative", "give 0 (none) or a size, e.g. 16M")
        check_cache_sizes(g, cache != "none" and self.cache_size, self.read_cache_size)
        if self.spec("prefetch") != "none" and not self.read_cache_size:
            raise VraidError(f"prefetch policy {self.spec('prefetch')} needs a read cache to prefetch into",
                             "add --read-cache-size SIZE, e.g. 16M")
        if self.nvram is not None and cache == "none":
            raise VraidError("NVRAM needs a write-back cache", "add --cache stripe (or pbg)")
        if self.log is not None:
            from vraid.ondisk.logsegment import LogLayout
            from vraid.policies.log import layout

            kind, n = layout(self.log, g.ndisks)
            if self.nvram is not None or self.replay_nvram is not None:
                raise VraidError("a log disk and NVRAM are two journals for one write cache",
                                 "use --log (seed 002's virtual NVRAM) or --nvram FILE, not both")
            if self.log_ram < g.block_size * 16:
                raise VraidError(f"log RAM buffer of {self.log_ram} bytes is too small", "give at least 64K, e.g. 4M")
            registry.parse("destage", self.log_destage)
            if not self.log_timer > 0:
                raise VraidError(f"log timer {self.log_timer} is not positive", "e.g. 0.2 (seconds)")
            if self.log_stores is not None:
                if len(self.log_stores) != n:
                    raise VraidError(f"{len(self.log_stores)} log stores for a {self.log} log", f"give {n}")
            else:
                registry.setting_value("log_size", self.log_size)
                LogLayout.for_size(kind, n, g.block_size, self.log_size)
        if self.bitmap_chunk:
            from vraid.ondisk.bitmap import check_chunk

            check_chunk(g, self.bitmap_chunk)
        if self.faults:
            from vraid.backends.faulty import parse_faults

            parse_faults(self.faults, g.ndisks)
        if self.disk_model:
            from vraid.backends.models import parse_model

            parse_model(self.disk_model)
        if self.time_scale is not None and not self.time_scale > 0:
            raise VraidError(f"time scale {self.time_scale} is not positive", "e.g. 1.0 (real time) or 0.1")
        if self.rebuild_rate is not None and self.rebuild_rate < 0:
            raise VraidError(f"rebuild rate {self.rebuild_rate} is negative", "give MB/s, or 0 for no limit")
        for key in self.instances:
            if key not in GIVEN_FAMILIES:
                raise VraidError(f"no policy object can be given for {key!r}", f"give one of {', '.join(GIVEN_FAMILIES)}")
        if self.journal is not None and (cache == "none" or self.nvram is not None or self.log is not None):
            raise VraidError("a given journal needs a write-back cache and no other journal",
                             "add a cache policy, and drop nvram and log")
        if self.on_policy_fault not in MODES:
            raise VraidError(f"unknown policy-fault mode {self.on_policy_fault!r}", f"use {' or '.join(MODES)}")
        for role in self.failed:
            if not 0 <= role < g.ndisks:
                raise VraidError(f"failed role {role} is not a member", f"roles are 0..{g.ndisks - 1}")


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


def policies_of(cache: CacheConfig | None) -> dict[str, str]:
    """The policy specs a :class:`CacheConfig` names (for callers that hold one)."""
    if cache is None:
        return {}
    return {"cache": cache.organisation, "destage_order": cache.order, "destage": cache.destage}

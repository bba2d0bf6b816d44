"""The engine's configuration: :class:`EngineConfig`, everything that determines an engine
(members, policies, write and read cache, NVRAM, write-intent bitmap, log disk, faults, timing
model), and its checks (:meth:`EngineConfig.check`: every setting that can be wrong is refused
here, before the builder, :mod:`vraid.engine.build`, opens or changes anything).

An array on disk gets its configuration from its superblocks and the mount options
(:meth:`EngineConfig.from_assembled`, ``vraid.engine.assembled``); a simulation and the tests
write one directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from vraid.backends.base import Store
from vraid.core.geometry import Geometry
from vraid.core.limits import check_cache_sizes
from vraid.errors import VraidError
from vraid.engine.chain import CacheConfig
from vraid.policies.placement import needs_directory
from vraid.engine.assembled import EngineOptions, config_fields
from .guard import MODES

__all__ = ["CACHE_FAMILIES", "DEFAULT_CACHE_SIZE", "EngineConfig", "GIVEN_FAMILIES", "SIM_UUID", "memory_store",
           "policies_of"]

#: the array uuid of engines with no superblock (simulations, tests): their NVRAM files carry it
SIM_UUID = "5e5e5e5e-0000-4000-8000-000000000000"
#: write cache size when none is given
DEFAULT_CACHE_SIZE = CacheConfig().size
#: the policy families a CacheConfig carries (the Array builds these three itself)
CACHE_FAMILIES = ("cache", "destage_order", "destage")
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
        copies = g.redundancy.coverage(g.data_disks) is not None  # a mirror: each check column one data column's copy
        if self.spec("ct") != "none" and copies:
            raise VraidError(f"the contiguity transform (--ct {self.spec('ct')}) fills gaps by reading and rewriting "
                             f"parity (seed 000, Fig. 10); {g.redundancy.name}'s check columns are copies, which a "
                             "write never reads", "use --ct none on RAID-1 and RAID-10")
        if self.spec("ct") != "none":  # its limits come from the superblock too: build it (pure) to check them
            from vraid.backends.models import disk_preset

            registry.create("ct", self.spec("ct"), registry.Context(
                geometry=g, disk_model=self.disk_model, params=dict(self.params), disk_preset=disk_preset(self.disk_model)))
        if needs_directory(self.spec("placement")):  # seed 004: a stripe directory (vraid.engine.placement)
            if cache != "none" or self.nvram is not None or self.log is not None:
                raise VraidError(f"placement {self.spec('placement')} keeps its own write buffers: it runs without "
                                 "a write-back cache, NVRAM or a log disk",
                                 "drop --cache/--nvram/--log, or use --placement static")
            if g.redundancy.parity_columns != 1 or copies:
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
                                 "use --log (paper 002's virtual NVRAM) or --nvram FILE, not both")
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


def policies_of(cache: CacheConfig | None) -> dict[str, str]:
    """The policy specs a :class:`CacheConfig` names (for callers that hold one)."""
    if cache is None:
        return {}
    return {"cache": cache.organisation, "destage_order": cache.order, "destage": cache.destage}

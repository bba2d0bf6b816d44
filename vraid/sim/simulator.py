"""The simulator: the real engine, driven by a workload, in virtual time.

``run_sim(SimConfig(...))`` builds the engine its :meth:`SimConfig.engine_config` describes
(``vraid.engine.build``, the builder a mount uses too): an :class:`~vraid.engine.host.array.Array`
over in-memory members, each behind the timing model of ``disk_model``, with the policies,
faults, NVRAM and write-intent bitmap asked for; and runs it inside
``trio.run(..., clock=loop_clock())``: whenever every task is blocked, the clock jumps to
the next deadline, so a disk's modelled 5 ms seek costs no wall time. The clock is
:class:`vraid.engine.clock.VirtualClock`: the times and the order of tasks of trio's
``MockClock(autojump_threshold=0)``, with fewer passes of trio's scheduler (a sleep that
would wake its task alone does not pass through it at all); ``tests/test_clock.py`` checks
that both give the same results. (From 2026-11-23 to 11-26 the simulator ran on MockClock
because an msc-ct run hung under VirtualClock; the cause was a float rounding in its jump,
fixed, see that module.) Nothing here is a second implementation of the controller: the code
that serves a FUSE mount in real time is the code that runs here; only the clock differs
(``vraid.engine.clock``).

Requests come from :func:`vraid.sim.workload.parse_workload`:

* **open loop** (the workload stamps arrival times ``at``): each request starts at its
  arrival in a task of its own; at most ``max_in_flight`` run at once (a request arriving
  while the limit is reached waits for a slot, and its response time still counts from its
  arrival; ``throttled`` counts how often that happened);
* **closed loop** (``workload.closed_loop`` = N): N workers each issue a request, wait for it
  and issue the next, until ``requests`` have been issued.

``op="flush"`` requests (trace replay) call :meth:`Array.flush`.

Determinism: the same :class:`SimConfig` gives a byte-identical :meth:`SimResult.to_json`.
Workloads draw from ``PCG64(seed)``; write data is sliced from one pattern buffer made from
the seed; and trio's scheduler, which normally reverses each batch of runnable tasks at
random, is switched to its deterministic mode (the one trio offers Hypothesis: a batch is
sorted by task creation and shuffled by a seeded generator) for the duration of the run, so
tasks that become runnable at the same virtual instant run in a reproducible order.
See docs/simulator.md and docs/metrics.md.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterator

import trio

from vraid.engine.host.array import Array
from vraid.engine.build import open_engine
from vraid.engine.config import DEFAULT_CACHE_SIZE, EngineConfig
from vraid.engine.clock import VirtualClock
from vraid.engine.guard import PolicyFault
from vraid.backends.memory import NullStore
from vraid.backends.models import ModelSpec, parse_model
from vraid.errors import MemberIOError, VraidError
from vraid.core.geometry import DEFAULT_BLOCK, DEFAULT_STRIP, RESERVED, Geometry
from vraid.engine.metrics import ResponseTimes
from vraid.core.units import format_size, parse_size
from vraid.policies import registry
from .host import HostModel, parse_readahead
from .driver import Pattern, Recorder, closed_loop, deterministic_trio, open_loop
from .workload import HostRequest, Workload, parse_workload

#: member size when neither ``disk_size`` nor ``capacity`` is given
DEFAULT_DISK_SIZE = 64 << 20
#: open loop: requests allowed in flight at once
DEFAULT_MAX_IN_FLIGHT = 4096
#: policy keys run_sim understands: every family of vraid.policies.registry and its settings, but
#: those chosen at create (the log disk: SimConfig.log and log_size)
POLICY_KEYS: dict[str, str] = {key: doc for key, (_default, doc) in registry.settings(at_create=False).items()}


@dataclass(frozen=True)
class SimConfig:
    """Everything that determines a simulation run (and so its result).

    ``disk_size`` is the size of each member; ``capacity`` instead asks for an array of at
    least that many data bytes (whole stripes). Give one or neither (default: 64 MiB members).
    ``disk_model`` and ``workload`` are the spec strings of ``--disk-model`` and
    ``--workload``. ``policies`` carries the future ``--cache``/``--destage``/``--ct`` choices
    (key -> spec string) through unchanged.
    """

    level: int = 5
    disks: int = 5
    strip: int = DEFAULT_STRIP
    block: int = DEFAULT_BLOCK
    layout: str = "left-symmetric"
    disk_size: int | None = None
    capacity: int | None = None
    disk_model: str = "hdd:st373454lc"
    workload: str = "random-write"
    requests: int = 10_000
    seed: int = 0
    policies: dict[str, str] = field(default_factory=dict)
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    #: injected faults (``--fault``, backends.faulty syntax); host requests that fail count as host_errors
    faults: tuple[str, ...] = ()
    #: ``--nvram FILE``: the write cache journals into this NVRAM file (made anew for the run)
    nvram: str | None = None
    #: ``--bitmap-chunk SIZE``: a write-intent bitmap on the members, SIZE of data per bit (None: none)
    bitmap_chunk: str | None = None
    #: ``--on-policy-fault``: "stop" (a failing policy ends the run with PolicyFault) or "fallback"
    on_policy_fault: str = "stop"
    #: ``--host-readahead``: the host's file read-ahead in front of each stream, seed 001's
    #: SEQP or SASEQP (vraid.sim.host; None: requests go straight to the array, as before)
    host_readahead: str | None = None
    #: ``--no-data``: metadata only; members store nothing and parity is not computed, while
    #: plans, timing and metrics stay those of the full run (docs/simulator.md)
    no_data: bool = False
    #: ``--log``: a log disk in front of the array (seed 002: scd, mcd:N, mirrored, per-disk;
    #: in-memory log stores behind the same disk model as the members); None: none
    log: str | None = None
    #: ``--log-size``: bytes of each log store (None: the engine's default)
    log_size: str | None = None
    #: ``--log-destage``: the destage scheduler of level 2 (None: the engine's default, idle)
    log_destage: str | None = None

    def geometry(self) -> Geometry:
        """The array geometry these settings describe.

        Raises:
            VraidError: for impossible settings (a GeometryError names the fix).
        """
        if self.disk_size is not None and self.capacity is not None:
            raise VraidError("give either a disk size or a capacity, not both",
                             "use --disk-size for the member size or --capacity for the array size")
        disk_size = self.disk_size
        if self.capacity is not None:
            if self.capacity <= 0:
                raise VraidError(f"capacity {self.capacity} is not positive", "e.g. --capacity 1G")
            probe = Geometry.for_disk_size(level=self.level, ndisks=self.disks, disk_size=2 * max(RESERVED, self.strip) + self.strip,
                                           block_size=self.block, strip_size=self.strip, layout=self.layout)
            stripes = -(-self.capacity // probe.stripe_data_bytes)
            disk_size = probe.data_offset + stripes * probe.depth * self.strip
        return Geometry.for_disk_size(level=self.level, ndisks=self.disks,
                                      disk_size=DEFAULT_DISK_SIZE if disk_size is None else disk_size,
                                      block_size=self.block, strip_size=self.strip, layout=self.layout)

    def engine_config(self, geometry: Geometry | None = None) -> EngineConfig:
        """The engine these settings run (``vraid.engine.build``): in-memory members behind
        the disk model, the policies, faults, NVRAM and bitmap; nothing checked yet."""
        from vraid.core.units import parse_size
        from vraid.ondisk.bitmap import parse_chunk

        g = geometry or self.geometry()
        policies = {k: v for k, v in self.policies.items() if k in registry.FAMILIES}
        size = parse_size(self.policies.get("cache_size", DEFAULT_CACHE_SIZE), "cache size")
        read_cache = parse_size(self.policies.get("read_cache_size", "0"), "read cache size")
        if "read_cache_size" not in self.policies and str(policies.get("prefetch", "none")).partition(":")[0].lower() != "none":
            from vraid.policies.prefetch.base import default_read_cache_size

            read_cache = default_read_cache_size(g)  # --prefetch alone: a read cache to prefetch into
        extra: dict[str, Any] = {"store_factory": null_store} if self.no_data else {}
        if self.log is not None:
            extra |= {"log": self.log, "log_fresh": True}
            if self.log_size is not None:
                extra["log_size"] = registry.setting_value("log_size", self.log_size)
            if self.log_destage is not None:
                extra["log_destage"] = self.log_destage
        return EngineConfig(g, policies=policies, cache_size=size, read_cache_size=read_cache, **extra,
                            disk_model=self.disk_model, faults=tuple(self.faults),
                            nvram=Path(self.nvram) if self.nvram else None, nvram_fresh=True,
                            bitmap_chunk=parse_chunk(g, self.bitmap_chunk) if self.bitmap_chunk else None,
                            on_policy_fault=self.on_policy_fault)

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values, specs in canonical spelling where they parse."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["policies"] = dict(sorted(self.policies.items()))
        if not self.faults:
            del out["faults"]  # the same JSON as before fault injection existed
        else:
            out["faults"] = list(self.faults)
        for key in ("nvram", "bitmap_chunk", "log", "log_size", "log_destage"):
            if out[key] is None:
                del out[key]  # likewise: only runs that use them show them
        if self.on_policy_fault == "stop":
            del out["on_policy_fault"]  # the default; only a run that falls back says so
        if self.host_readahead is None:
            del out["host_readahead"]  # likewise: only runs with a host model show it
        if not self.no_data:
            del out["no_data"]  # likewise: only a metadata-only run says so
        try:
            out["disk_model"] = parse_model(self.disk_model).text
            out["workload"] = parse_workload(self.workload).spec
            if self.host_readahead is not None:
                ra = parse_readahead(self.host_readahead)
                out["host_readahead"] = ra.text if ra is not None else None
        except VraidError:
            pass
        return out


@dataclass
class SimResult:
    """What a run produced: its config, the metrics map (docs/metrics.md) and per-disk rows.

    ``wall_seconds`` is how long the run took on this machine; it is not part of the JSON
    (which must be identical for identical configs).
    """

    config: SimConfig
    metrics: dict[str, Any]
    wall_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.config.to_dict(), "metrics": self.metrics}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


# ---------------------------------------------------------------------- the run
def loop_clock() -> trio.abc.Clock:
    """The trio clock a simulation runs on (see the module docstring)."""
    return VirtualClock()


def run_sim(config: SimConfig, *, observe: Callable[[Array], None] | None = None) -> SimResult:
    """Run ``config`` to completion in virtual time and return its metrics.

    ``observe(array)``, if given, is called once the array is open and before the first
    request, e.g. to subscribe to its events (``array.events``); it must not do I/O.

    Raises:
        VraidError: for a bad workload or disk-model spec, impossible geometry, unknown
            policy, or a workload that does not fit the array (before anything runs).
    """
    check_policies(config.policies)
    if config.requests < 0:
        raise VraidError(f"requests {config.requests} is negative", "ask for zero or more requests")
    if config.max_in_flight < 1:
        raise VraidError("max_in_flight must be at least 1", "e.g. 4096")
    geometry = config.geometry()
    config.engine_config(geometry).check()  # a bad policy, fault or bitmap chunk fails before anything runs
    model = parse_model(config.disk_model)
    workload = parse_workload(config.workload)
    readahead = parse_readahead(config.host_readahead)
    if readahead is not None:
        readahead.pages(geometry.block_size)  # a size that is not whole pages fails now
    requests = workload.requests(host_capacity(config, geometry), geometry.block_size, config.requests, config.seed)
    pattern = Pattern(config.seed)
    started = time.perf_counter()
    with deterministic_trio(config.seed):
        try:
            metrics = trio.run(_simulate, config, geometry, model, workload, requests, pattern, observe,
                               clock=loop_clock())
        except BaseExceptionGroup as group:  # a policy fault in stop mode ends the run: raise it alone
            fault = _first_policy_fault(group)
            if fault is None:
                raise
            raise fault from None
    return SimResult(config, metrics, time.perf_counter() - started)


def null_store(role: int, size: int) -> NullStore:
    """A member of the metadata-only simulation (``no_data``)."""
    return NullStore(size, name=f"disk{role}")


def _first_policy_fault(exc: BaseException) -> PolicyFault | None:
    if isinstance(exc, PolicyFault):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _first_policy_fault(inner)
        if found is not None:
            return found
    return None


def check_policies(policies: dict[str, str]) -> None:
    """Every key a family or setting of the registry, every spec parses (nothing is built)."""
    for key in sorted(policies):
        if key not in POLICY_KEYS:
            raise VraidError(f"unknown policy {key!r}", f"known policies: {', '.join(POLICY_KEYS)}")
    for key, value in policies.items():
        if key in registry.FAMILIES:
            registry.parse(key, value)
    for key in ("cache_size", "read_cache_size"):
        if key in policies:
            parse_size(policies[key], key.replace("_", " "))


def host_capacity(config: SimConfig, geometry: Geometry) -> int:
    """The image size the host sees: the geometry's, or less with a placement that keeps
    free stripes (seed 004: ``spare``; ``vraid.ondisk.directory_area``)."""
    engine = config.engine_config(geometry)
    from vraid.policies.placement import needs_directory

    if not needs_directory(engine.spec("placement")):
        return geometry.capacity
    from vraid.ondisk.directory_area import logical_stripes, spare_of
    from vraid.policies import registry

    policy = registry.create("placement", engine.spec("placement"), registry.Context(geometry=geometry))
    return logical_stripes(geometry.stripes, spare_of(policy)) * geometry.stripe_data_bytes


async def _simulate(config: SimConfig, geometry: Geometry, model: ModelSpec, workload: Workload,
                    requests: Iterator[HostRequest], pattern: Pattern,
                    observe: Callable[[Array], None] | None = None) -> dict[str, Any]:
    rec = Recorder()
    async with open_engine(config.engine_config(geometry)) as engine:
        array = engine.array
        if config.no_data:
            array.members.no_data = True  # vraid.engine.raid.stripe: no parity computed from bytes never kept
        if observe is not None:
            observe(array)
        t0 = trio.current_time()
        rec.end = t0
        outstanding = workload.closed_loop
        host = _host_model(config, geometry, workload, array)
        if host is not None:
            await host.run(requests, pattern, rec)
        elif outstanding is None:
            await open_loop(array, requests, pattern, rec, t0, config.max_in_flight)
        else:
            await closed_loop(array, requests, pattern, rec, outstanding)
        drain_start = trio.current_time()
        try:
            await array.shutdown()  # destage what a write cache still holds: disk traffic is complete
        except MemberIOError:
            if not config.faults:
                raise
            rec.errors += 1
        drain = trio.current_time() - drain_start
        out = _collect(config, geometry, model, array, engine.timed, rec, rec.end - t0)
        out["drain_seconds"] = _r(drain)
        if host is not None:
            out["host_readahead"] = host.metrics(rec.end - t0)
        if config.faults:
            out["host_errors"] = rec.errors
        if array.guard.faults:
            out["policy_faults"] = array.guard.status()
            out["faults_injected"] = [m.status() for m in engine.members if hasattr(m, "spec")]
        if engine.bitmap is not None:
            out["bitmap"] = engine.bitmap.stats.to_dict()
        if engine.nvram is not None:
            out["nvram_slots"] = engine.nvram.slots
        if array.log is not None:
            out["log"] = _log_block(array.log)
        if array.placed is not None:  # seed 004: stripe writes by kind and size, cleaner, directory
            out["placement"] = array.placed.status().as_dict()
        return out


def _log_block(logc) -> dict[str, Any]:
    """The ``log`` block of ``vraid sim --json`` (only with ``--log``): the log cache's
    counters and each log store's timing-model busy time."""
    st = logc.status().as_dict()
    keep = ("kind", "stores", "ram_bytes", "log_bytes", "log_segments", "segment_writes", "bytes_written", "reads",
            "failed", "lost_blocks")
    out: dict[str, Any] = {k: st[k] for k in keep}
    out |= logc.metrics.to_dict()
    out["store_busy_seconds"] = [_r(getattr(getattr(s, "stats", None), "busy_seconds", 0.0))
                                 for s in logc.medium.stores]
    return out


def _host_model(config: SimConfig, geometry: Geometry, workload: Workload, array: Array) -> HostModel | None:
    """The host read-ahead of ``--host-readahead`` in front of ``array`` (None: none)."""
    spec = parse_readahead(config.host_readahead)
    if spec is None:
        return None
    files = getattr(workload, "files", None)
    return HostModel(array, spec, geometry, files(array.capacity, geometry.block_size) if files else None,
                     reopens=getattr(workload, "reopens", False))


# ---------------------------------------------------------------------- metrics
def _collect(config: SimConfig, geometry: Geometry, model: ModelSpec, array: Array, stores: list,
             rec: Recorder, elapsed: float) -> dict[str, Any]:
    am = array.metrics
    block = geometry.block_size
    disks = array.members.disks
    host_bytes = am.host_read_bytes + am.host_write_bytes
    host_requests = am.host_reads + am.host_writes
    cache_metrics = array.cache.metrics.to_dict() if array.cache is not None else {}
    out: dict[str, Any] = {
        "host_reads": am.host_reads,
        "host_writes": am.host_writes,
        "host_flushes": am.host_flushes,
        "host_read_bytes": am.host_read_bytes,
        "host_write_bytes": am.host_write_bytes,
        "host_bytes": host_bytes,
        "read_hit_ratio": cache_metrics.get("read_hit_ratio", 0.0),
        "overwrite_ratio": cache_metrics.get("overwrite_ratio", 0.0),
        "disk_read_requests": sum(d.stats.reads for d in disks),
        "disk_write_requests": sum(d.stats.writes for d in disks),
        "disk_read_blocks": sum(d.stats.read_bytes for d in disks) // block,
        "disk_write_blocks": sum(d.stats.write_bytes for d in disks) // block,
        "virtual_seconds": _r(elapsed),
        "throughput_mb_s": _r(host_bytes / 1e6 / elapsed) if elapsed > 0 else 0.0,
        "iops": _r(host_requests / elapsed) if elapsed > 0 else 0.0,
        "mean_response_ms": _r(rec.response.mean * 1e3),
        "p99_response_ms": _r(rec.response.percentile(99) * 1e3),
        "max_response_ms": _r(rec.response.max * 1e3),
        "mean_flush_ms": _r(rec.flush.mean * 1e3),
        "pbg_rcw": am.pbg_rcw,
        "pbg_rmw": am.pbg_rmw,
        "pbg_full": am.pbg_full,
        "partial_block_writes": am.partial_block_writes,
        "throttled": rec.throttled,
        "max_outstanding": rec.max_in_flight,
        "disk_busy": [_r(min(1.0, d.stats.busy_seconds / elapsed)) if elapsed > 0 else 0.0 for d in disks],
        "disk_requests": [d.stats.reads + d.stats.writes for d in disks],
        "disk_max_queue": [d.stats.max_queue for d in disks],
    }
    out["disk_requests_per_host_request"] = (
        _r((out["disk_read_requests"] + out["disk_write_requests"]) / host_requests) if host_requests else 0.0)
    if model.kind == "hdd":
        st = [s.stats for s in stores]
        seeks = sum(s.seeks for s in st)
        seek_s = sum(s.seek_seconds for s in st)
        out.update({
            "seeks": seeks,
            "seek_seconds": _r(seek_s),
            "mean_seek_ms": _r(seek_s / seeks * 1e3) if seeks else 0.0,
            "rotation_waits": sum(s.rotation_waits for s in st),
            "rotation_wait_seconds": _r(sum(s.rotation_wait_seconds for s in st)),
            "missed_rotations": sum(s.missed_rotations for s in st),
            "disk_missed_rotations": [s.missed_rotations for s in st],
            "disk_cache_hits": sum(s.stream_hits + s.cache_hits for s in st),
        })
    if array.reads.read_cache is not None:  # seed 001: the read cache and the prefetch metrics
        out["prefetch"] = {k: (_r(v) if isinstance(v, float) else v) for k, v in array.reads.status().as_dict().items()}
    return out


def _r(x: float) -> float:
    """Round for the report: 9 significant digits (stable, readable JSON)."""
    if not math.isfinite(x) or x == 0:
        return float(x)
    return float(f"{x:.9g}")


# ---------------------------------------------------------------------- helpers for callers
def describe_config(config: SimConfig) -> str:
    """One line naming the array, model and workload of ``config``."""
    g = config.geometry()
    lvl = f"RAID-{g.level} {g.ndisks} x {format_size(g.member_size)}, strip {format_size(g.strip_size)}"
    return f"{lvl}, block {format_size(g.block_size)}; {config.disk_model}; {config.workload}"

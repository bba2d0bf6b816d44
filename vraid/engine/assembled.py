"""What is on disk, as the builder's settings: an assembled array's superblocks plus the
options of a mount become the fields of an ``EngineConfig`` (``vraid.engine.build``), and
a new array's shape and placement become its geometry and stripe directory.

Used through :meth:`vraid.engine.config.EngineConfig.from_assembled` by every place that
runs an array from its member files: the mount daemon (``vraid.fuse.daemon``), the model
state machines that assemble real files (``vraid.testing``), ``bench/`` and the tests; and
through :func:`vraid.engine.build.new_array_layout` by ``vraid create``. Nothing here opens
or changes a file; the builder checks what it is given (``EngineConfig.check``).

Precedence: a mount option over the array's ``vraid.toml`` default over the family's
default; what the superblocks record decides the rest (the NVRAM a crashed mount used, the
write-intent bitmap's chunk, the log disk, the placement chosen at create).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vraid.core.geometry import Geometry
from vraid.errors import MountError, VraidError

#: the policy families that have an option field of their own (the rest go in ``policies``)
POLICY_FIELDS = ("cache", "destage", "destage_order", "ct")


@dataclass
class EngineOptions:
    """The engine settings a mount is given (``vraid mount``'s options, none of the FUSE ones).

    A policy family left None runs the array's ``vraid.toml`` default."""

    #: a timing model for every member (``backends.models.parse_model`` syntax)
    disk_model: str | None = None
    #: "real" (modelled time passes), "real:F" (scaled by F), "none" (model ignored)
    time: str = "real"
    #: write cache; None = the array's vraid.toml default
    cache: str | None = None
    cache_size: str | None = None
    destage: str | None = None
    destage_order: str | None = None
    nvram: Path | None = None
    #: contiguity transform spec (``vraid.policies.ct``); None = the vraid.toml default
    ct: str | None = None
    #: injected faults, ``backends.faulty`` spec syntax (``--fault disk2:eio=1000-1010``)
    faults: tuple[str, ...] = ()
    #: rebuild rate limit, MB/s of the new member (None: no limit)
    rebuild_rate: float | None = None
    #: specs of policy families that have no field above (vraid.policies.registry), key -> spec
    policies: dict[str, str] = field(default_factory=dict)
    #: start anyway what recovery cannot restore whole (a dirty and degraded array, as md's
    #: start_dirty_degraded; a damaged log or stripe directory), saying what may be lost
    force: bool = False

    def policy(self, key: str) -> str | None:
        """The spec given for family ``key`` (None: the vraid.toml default)."""
        value = getattr(self, key, None) if key in POLICY_FIELDS else None
        return value if value is not None else self.policies.get(key)


def parse_time(text: str) -> float | None:
    """``real`` -> 1.0, ``real:0.1`` -> 0.1, ``none`` -> None (no model time).

    Raises:
        MountError: for anything else.
    """
    if text == "none":
        return None
    if text == "real":
        return 1.0
    if text.startswith("real:"):
        try:
            scale = float(text[5:])
        except ValueError:
            scale = -1.0
        if scale > 0:
            return scale
    raise MountError(f"--time {text!r} is not a time mode", "use real, real:FACTOR (e.g. real:0.1) or none")


def config_fields(asm: Any, opts: EngineOptions, *, opened: bool = True) -> dict[str, Any]:
    """The ``EngineConfig`` keyword fields (all but the geometry) of the assembled array
    ``asm`` (``vraid.ondisk.assemble.Assembled``) run with ``opts``. ``opened=False``
    (before the member files are opened) leaves the stores out, for checks.

    Raises:
        MountError: NVRAM named for an array that has a log disk, or another placement
            than the one chosen at create.
    """
    from vraid.core.units import parse_size
    from vraid.policies.registry import FAMILIES

    cfg = asm.config
    # every family: the mount option over vraid.toml's default
    policies = {key: opts.policy(key) or cfg.policy(key) for key, fam in FAMILIES.items() if not fam.at_create}
    policies["placement"] = recorded_placement(asm, opts.policy("placement"))
    cached = policies["cache"] != "none"
    # after a crash the NVRAM in use then is used again (with a cache) without being named,
    # or only replayed (without one)
    recorded = recorded_nvram(asm)
    nvram = opts.nvram or (recorded if cached else None)
    chunk, kept = bitmap_settings(asm)
    logrec = asm.log
    if logrec is not None and (nvram is not None or recorded is not None):
        raise MountError("this array has a log disk; --nvram would be a second journal", "mount without --nvram")
    fields: dict[str, Any] = dict(
        stores=tuple(asm.stores) if opened else None,
        spares=tuple(asm.spare_stores) if opened else (),
        policies=policies,
        cache_size=parse_size(opts.cache_size or cfg.cache_size, "cache size"),
        read_cache_size=read_cache_size(asm, opts, policies["prefetch"]),
        nvram=Path(nvram).resolve() if nvram else None,
        replay_nvram=recorded if nvram is None else None,
        uuid=asm.uuid,
        bitmap_chunk=chunk,
        bitmap_recorded=kept,
        faults=tuple(opts.faults),
        disk_model=opts.disk_model,
        time_scale=parse_time(opts.time),
        rebuild_rate=opts.rebuild_rate,
        failed=tuple(sorted(asm.failed)),
        was_clean=asm.was_clean,
        params=dict(asm.ref.params),
        force_recovery=opts.force,
    )
    if logrec is not None:
        fields.update(log=logrec.spec, log_size=logrec.size,
                      log_stores=tuple(asm.log_stores) if opened and logrec.kind != "per-disk" else None)
    return fields


def read_cache_size(asm: Any, opts: EngineOptions, prefetch: str) -> int:
    """The read cache: the mount option over vraid.toml's; a prefetch policy with none gets
    the default sized from the array (``vraid.policies.prefetch.base.default_read_cache_size``)."""
    from vraid.core.units import parse_size
    from vraid.policies.prefetch.base import default_read_cache_size

    given = opts.policies.get("read_cache_size")
    size = parse_size(given or asm.config.policy("read_cache_size"), "read cache size")
    if not size and given is None and str(prefetch).strip().partition(":")[0].lower() != "none":
        return default_read_cache_size(asm.geometry)
    return size


def recorded_placement(asm: Any, given: str | None) -> str:
    """The placement the superblocks record (seed 004; chosen at create): a mount may give
    other parameters of the same policy (``buffer``, ``order``), never another policy."""
    from vraid.ondisk.directory_area import PARAM, check_create_time
    from vraid.policies import registry

    recorded = (asm.ref.params.get(PARAM) or {}).get("spec", registry.family("placement").default)
    if given is None:
        return recorded
    if registry.parse("placement", given).name != registry.parse("placement", recorded).name:
        raise MountError(f"--placement {given}: this array was created with placement {recorded}",
                         "the placement is chosen at `vraid create`; mount without --placement")
    check_create_time(given, recorded)  # a create-time parameter (spare=...) is refused at mount
    return given


def bitmap_settings(asm: Any) -> tuple[int, bool]:
    """Stripes per write-intent bitmap bit (0: none), and whether the members hold that
    bitmap (False: an array made before the bitmap existed gets one now; after a crash
    it resyncs everything)."""
    from vraid.ondisk.bitmap import PARAM, default_chunk

    params = asm.ref.params
    if PARAM in params:
        return int(params[PARAM]), True
    return default_chunk(asm.geometry), False


def recorded_nvram(asm: Any) -> Path | None:
    """The NVRAM file the last mount used, if the array was not shut down cleanly:
    its dirty blocks must be replayed, so it is used again without being named."""
    recorded = asm.ref.params.get("nvram")
    if recorded and not asm.was_clean and Path(str(recorded)).exists():
        return Path(str(recorded))
    return None


def new_array_layout(shape: dict[str, Any], disk_size: int, placement: str | None, log: str | None,
                     log_size: int) -> tuple[Geometry, tuple[str, Any, Any] | None]:
    """The geometry of a new array of ``shape`` (``Geometry.for_disk_size``'s level, ndisks,
    block_size, strip_size, layout) on members of ``disk_size`` bytes, and its stripe
    directory (seed 004) when ``placement`` names a policy that keeps one: ``(spec, area,
    directory)`` for ``vraid.ondisk.create.create``, else None. A per-disk log keeps
    ``log_size`` at the end of every member.

    Raises:
        VraidError: a placement beside a log disk, or a shape the placement cannot run.
    """
    from vraid.policies import registry

    from vraid.policies.placement import needs_directory

    if needs_directory(placement):
        from vraid.ondisk.directory_area import remapped_geometry

        if log is not None:
            raise VraidError(f"--placement {placement} keeps its own write buffers; it runs without a log disk",
                             "drop --log, or use --placement static")
        spec = registry.parse("placement", placement).text
        policy = registry.create("placement", spec, registry.Context())
        g, area, logical = remapped_geometry(disk_size=disk_size, policy=policy, **shape)
        return g, (spec, area, policy.make_directory(g, logical))
    from vraid.ondisk.logfiles import geometry_disk_size

    return Geometry.for_disk_size(disk_size=geometry_disk_size(log, disk_size, log_size), **shape), None

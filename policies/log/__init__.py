"""The log family: which log disk configuration is in front of the array (seed 002, VC-RAID).

He & Yang's virtual NVRAM cache puts a RAM buffer and an append-only log on one or more
**cache disks** in front of a RAID-5 (sec. 3.2 for the log; the log layer is :mod:`vraid.engine.log`). A
configuration decides how many log stores there are and how segments are spread over them:

* ``scd``: one cache disk, ``log0.img``;
* ``mcd:N``: N cache disks, segment ``s`` on store ``s mod N`` (the paper's round robin);
* ``mirrored``: two stores, every segment on both (a failed copy loses nothing);
* ``per-disk``: a log region at the end of every member, round robin over the members.

A configuration is chosen at ``vraid create`` (``--log``; ``vraid sim --log``) and recorded in
the member superblocks (``params["log"]["spec"]``, :mod:`vraid.ondisk.logfiles`) and in every
log superblock (its :attr:`LogConfiguration.kind`, :mod:`vraid.ondisk.logsegment`, which says
where segment ``s`` lives). It answers only at create, assembly and build time, never on
the data path; what the log layer asks a policy while it runs is the level-2 destage
scheduler (a ``destage`` policy, ``vraid sim --log-destage``), which runs behind the destage
guard like any other.

Your own configuration subclasses a built-in (its :attr:`kind` names the on-disk layout) and
may add parameters; the registry checks it like every family (``vraid policies log``).
"""

from __future__ import annotations

from typing import Any

#: the on-disk layouts a log superblock can name (vraid.ondisk.logsegment)
KINDS = ("scd", "mcd", "mirrored", "per-disk")


class LogConfiguration:
    """Base of every log configuration (see the package docstring)."""

    name = "base"
    summary = ""
    source = ""
    params: dict[str, Any] = {}
    #: the on-disk layout (one of :data:`KINDS`) the log superblocks record
    kind = ""
    #: the parameter a bare ``NAME:VALUE`` spec gives (``mcd:2`` is ``mcd:disks=2``)
    positional: str | None = None

    def stores(self, members: int) -> int:
        """How many log stores an array of ``members`` members has."""
        raise NotImplementedError

    @property
    def spec(self) -> str:
        """The spec as recorded in the superblocks (every parameter written out: ``mcd:2``)."""
        from vraid.policies.registry import format_spec, schema

        values = {k: getattr(self, k) for k in self.params}
        return format_spec(self.name, values, schema(type(self)), positional=self.positional)


class SingleCacheDisk(LogConfiguration):
    """One log file in front of the array."""

    name = "scd"
    kind = "scd"
    summary = "one cache disk: one log file, log0.img"
    source = "paper 002, sec. 3.2"

    def stores(self, members: int) -> int:
        return 1


class MultipleCacheDisks(LogConfiguration):
    """N log files, segments round robin over them."""

    name = "mcd"
    kind = "mcd"
    summary = "N cache disks, segment s on log file s mod N (write mcd:N)"
    source = "paper 002, sec. 3.2"
    params = {"disks": (int, 2, "number of cache disks (log files)", (2, 256))}
    positional = "disks"

    def __init__(self, disks: int = 2) -> None:
        self.disks = disks

    def stores(self, members: int) -> int:
        return self.disks


class MirroredCacheDisks(LogConfiguration):
    """Two log files holding every segment."""

    name = "mirrored"
    kind = "mirrored"
    summary = "two cache disks, every segment on both (one may fail)"
    source = "paper 002's cache disks, mirrored"

    def stores(self, members: int) -> int:
        return 2


class PerDiskLog(LogConfiguration):
    """A log region at the end of every member."""

    name = "per-disk"
    kind = "per-disk"
    summary = "a log region at the end of every member, round robin over them"
    source = "paper 002's cache disks, on the members"

    def stores(self, members: int) -> int:
        return members


def layout(spec: str, members: int) -> tuple[str, int]:
    """(on-disk kind, number of log stores) of log spec ``spec`` on an array of ``members``
    members: what create, assembly and the engine builder ask of a configuration, in one
    place. A configuration whose answers break the layout's rules (a kind the log superblock
    cannot name, a store count out of range, a call that raises) is refused here, before
    anything is made: the log's layout is fixed on disk, so there is no default to fall back to.

    Raises:
        VraidError: a bad spec (from the registry) or a configuration that answers wrongly.
    """
    from vraid.errors import VraidError
    from vraid.policies.registry import create

    conf = create("log", spec)
    if conf is None:
        raise VraidError(f"log disk {spec!r} is no log", "give scd, mcd:N, mirrored or per-disk")
    name = type(conf).__name__
    try:
        kind, count = conf.kind, conf.stores(members)
    except Exception as exc:  # noqa: BLE001 - a student's class: refused, named
        raise VraidError(f"log disk {spec}: {name}.stores() failed: {type(exc).__name__}: {exc}",
                         "fix the class (see vraid.policies.log.LogConfiguration)") from exc
    if kind not in KINDS:
        raise VraidError(f"log disk {spec}: kind {kind!r} is not a log layout",
                         f"set kind to one of {', '.join(KINDS)} (subclass a built-in)")
    want = {"scd": (1, 1), "mirrored": (2, 2), "per-disk": (members, members)}.get(kind, (2, 256))
    if isinstance(count, bool) or not isinstance(count, int) or not want[0] <= count <= want[1]:
        raise VraidError(f"log disk {spec}: {name}.stores({members}) = {count!r} does not fit a {kind} log",
                         f"a {kind} log has {want[0]}..{want[1]} stores")
    return kind, count


__all__ = ["KINDS", "LogConfiguration", "MirroredCacheDisks", "MultipleCacheDisks", "PerDiskLog", "SingleCacheDisk", "layout"]

"""The log disk of an array on disk: which files (or member regions) hold it, and checks.

``vraid create --log scd|mcd:N|mirrored|per-disk [--log-size SIZE]`` records the log in
every member's superblock (``params["log"]``: the spec, the size of each log store, the
files, and for ``per-disk`` the byte offset of the log region on each member) and in
``vraid.toml`` (``log``, ``log_size``; informational: the superblocks are what assembly
trusts). The log files (``log0.img`` ...) sit next to the members with a log superblock
of their own (:mod:`vraid.ondisk.logsegment`). ``per-disk`` puts the region at the end of
every member, past the geometry's data area: the geometry is made for the member size
minus the log size, so the region is ``[member_size, member_size + log_size)`` of the
geometry.

Assembly (:func:`check_log`) finds the files and refuses to start without them, or with one
of another size than the superblocks record (a truncated copy): a log holds acknowledged
writes the data disks lack until it is drained. ``vraid mount --force`` drops a missing,
wrong-sized or unreadable log (:func:`drop_log`) after saying what that loses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from vraid.backends.file import FileStore
from vraid.core.geometry import Geometry
from vraid.core.units import format_size
from vraid.errors import VraidError
from vraid.policies.log import layout
from .logsegment import LogFormatError, LogLayout, LogSuperblock

PARAM = "log"
DEFAULT_SIZE = 16 << 20


@dataclass(frozen=True)
class LogRecord:
    """``params["log"]`` of the superblocks."""

    spec: str
    size: int
    files: tuple[str, ...] = ()
    offset: int = 0  # per-disk: where the region starts on each member

    @property
    def kind(self) -> str:
        """The on-disk layout of the recorded configuration (the log family, vraid.policies.log)."""
        from vraid.policies import registry

        return registry.create("log", self.spec).kind

    def to_param(self) -> dict[str, Any]:
        return {"spec": self.spec, "size": self.size, "files": list(self.files), "offset": self.offset}

    @classmethod
    def of(cls, params: dict) -> "LogRecord | None":
        p = params.get(PARAM)
        if not p:
            return None
        return cls(str(p["spec"]), int(p["size"]), tuple(p.get("files", ())), int(p.get("offset", 0)))

    def describe(self) -> str:
        where = ", ".join(self.files) if self.files else "a region at the end of every member"
        return f"{self.spec} log, {format_size(self.size)} per store ({where})"


def geometry_disk_size(spec: str | None, disk_size: int, log_size: int) -> int:
    """The member size the geometry is made for: per-disk keeps ``log_size`` at the end."""
    if spec is not None and layout(spec, 1)[0] == "per-disk":
        if disk_size <= log_size:
            raise VraidError(f"--log-size {format_size(log_size)} leaves no room for data on {format_size(disk_size)} members",
                             "give a smaller --log-size or a larger --disk-size")
        return disk_size - log_size
    return disk_size


def make_log(directory: Path, geometry: Geometry, uuid: str, spec: str, size: int, members: Sequence[Path]) -> LogRecord:
    """Create and format the log stores of a new array; returns what the superblocks record."""
    from .logformat import WindowStore, format_stores

    kind, n = layout(spec, geometry.ndisks)
    log_layout = LogLayout.for_size(kind, n, geometry.block_size, size)
    if kind == "per-disk":
        stores = [FileStore(p) for p in members]
        try:
            format_stores([WindowStore(s, geometry.member_size, size) for s in stores], log_layout, uuid)
        finally:
            for s in stores:
                s.close()
        return LogRecord(spec, size, (), geometry.member_size)
    files = [directory / f"log{i}.img" for i in range(n)]
    blocking = [p.name for p in files if p.exists()]
    if blocking:
        raise VraidError(f"{', '.join(blocking)} already exist in {directory}", "move them away first, or use --force")
    stores = [FileStore.create(p, size) for p in files]
    try:
        format_stores(stores, log_layout, uuid)
    finally:
        for s in stores:
            s.close()
    return LogRecord(spec, size, tuple(p.name for p in files))


def check_log(directory: Path, record: LogRecord, geometry: Geometry, uuid: str) -> tuple[list[Path], str]:
    """(log file paths, problem): "" when every log store is there and is this array's."""
    if record.kind == "per-disk":
        return [], ""
    paths = [directory / f for f in record.files]
    problems = []
    for p in paths:
        if not p.exists():
            problems.append(f"{p.name} is missing")
            continue
        size = p.stat().st_size
        if size != record.size:  # the engine would read another layout out of it: say what is wrong
            problems.append(f"{p.name} is {format_size(size)}, the array's log is {format_size(record.size)}: "
                            + ("truncated?" if size < record.size else "not this array's log file?"))
            continue
        try:
            with open(p, "rb") as f:
                raw = f.read(geometry.block_size)
            sb = LogSuperblock.unpack(raw, geometry.block_size, where=p.name)
            if sb.array_uuid != uuid:
                problems.append(f"{p.name} belongs to array {sb.array_uuid}")
        except (OSError, LogFormatError) as exc:
            problems.append(f"{p.name}: {getattr(exc, 'message', exc)}")
    return paths, "; ".join(problems)


def loss_message(record: LogRecord, was_clean: bool) -> str:
    """What dropping the log loses."""
    if was_clean:
        return ("the array was shut down cleanly, so the log held nothing the data disks lack: "
                "nothing is lost; a new empty log is made")
    return (f"the array was not shut down cleanly: every write the log held that had not reached the data disks "
            f"(up to {format_size(record.size)} per log store) is lost, and the filesystem on the image may be "
            "inconsistent: run e2fsck before trusting it; a new empty log is made")


def drop_log(directory: Path, record: LogRecord, geometry: Geometry, uuid: str, members: Sequence[Path]) -> None:
    """Make a new empty log in place of a missing or unusable one (``vraid mount --force``)."""
    for f in record.files:
        (directory / f).unlink(missing_ok=True)
    make_log(directory, geometry, uuid, record.spec, record.size, members)

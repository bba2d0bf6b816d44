"""Create an array in a directory, and assemble one from its members.

Assembly trusts superblocks, not file names: every regular file in the
directory whose first bytes carry the vraid magic is a candidate member; its
superblock says which array it belongs to and which role (position) it has.
Renamed or shuffled member files assemble in the right order.
"""

from __future__ import annotations

import os
import time
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

from .backends.file import FileStore
from .config import NAME as CONFIG_NAME, ArrayConfig
from .errors import AssemblyError, SuperblockError, VraidError
from .geometry import Geometry
from .superblock import MAGIC, SIZE as SB_SIZE, NotAMember, Superblock
from .units import format_size


@dataclass
class Candidate:
    path: Path
    superblock: Superblock | None = None
    problem: str = ""  # why it is not used


@dataclass
class Assembled:
    """A complete array: members in role order, their superblocks and config."""

    directory: Path
    geometry: Geometry
    uuid: str
    config: ArrayConfig
    paths: list[Path]
    superblocks: list[Superblock]
    stores: list[FileStore] = field(default_factory=list)
    #: whether every member said "clean" when the array was assembled (the
    #: daemon marks it dirty right after; this keeps what it found)
    was_clean: bool = field(init=False)

    def __post_init__(self) -> None:
        self.was_clean = all(sb.clean for sb in self.superblocks)

    @property
    def events(self) -> int:
        return max(sb.events for sb in self.superblocks)

    def open_stores(self) -> list[FileStore]:
        self.stores = [FileStore(p) for p in self.paths]
        return self.stores

    def close(self) -> None:
        for s in self.stores:
            s.close()
        self.stores = []

    def mark(self, *, clean: bool, params: dict | None = None) -> None:
        """Write every member's superblock with the new state and a higher event count."""
        events = self.events + 1
        now = time.time()
        changes: dict = {"clean": clean, "events": events, "utime": now}
        if params is not None:
            changes["params"] = params
        new = [sb.evolve(**changes) for sb in self.superblocks]
        stores = self.stores or [FileStore(p) for p in self.paths]
        try:
            for store, sb in zip(stores, new):
                store.write_sync(0, sb.pack())
        finally:
            if not self.stores:
                for s in stores:
                    s.close()
        self.superblocks = new

    def summary(self) -> str:
        g = self.geometry
        level = f"RAID-{g.level}" + (f" {g.layout}" if g.level == 5 else "")
        return f"{level}, {g.ndisks} disks, {format_size(g.strip_size)} strip, {format_size(g.capacity)} image"


def create(
    directory: Path,
    geometry: Geometry,
    disk_size: int,
    *,
    force: bool = False,
    image: str = "disk.img",
    bitmap_chunk: int | None = None,
) -> Assembled:
    """Write member files with superblocks and ``vraid.toml`` into ``directory``.

    Raises:
        VraidError: if the directory already holds an array and ``force`` is not set.
    """
    directory = Path(directory)
    from .bitmap import PARAM as BITMAP_PARAM, check_chunk, default_chunk

    if bitmap_chunk is None:
        bitmap_chunk = default_chunk(geometry)
    elif bitmap_chunk:
        check_chunk(geometry, bitmap_chunk)
    if directory.exists() and not directory.is_dir():
        raise VraidError(f"{directory} exists and is not a directory", "choose a directory path for the array")
    existing = _existing_array(directory)
    if existing and not force:
        raise VraidError(
            f"{directory} already holds a vraid array ({existing})",
            "use --force to overwrite it (its data is lost), or choose another directory",
        )
    directory.mkdir(parents=True, exist_ok=True)
    array_uuid = str(uuidlib.uuid4())
    now = time.time()
    paths = [directory / f"disk{i}.img" for i in range(geometry.ndisks)]
    if force:
        for c in _candidates(directory):
            if c.superblock is not None or c.problem.startswith("corrupt"):
                c.path.unlink()
        for p in paths:
            p.unlink(missing_ok=True)
    blocking = [p.name for p in paths if p.exists()]
    if blocking:
        raise VraidError(f"{', '.join(blocking)} already exist in {directory} and are not vraid members", "move them away first")
    superblocks = []
    for role, path in enumerate(paths):
        store = FileStore.create(path, disk_size)
        sb = Superblock.for_member(geometry, array_uuid, role, now).evolve(params={BITMAP_PARAM: bitmap_chunk})
        store.write_sync(0, sb.pack())
        store.close()
        superblocks.append(sb)
    config = ArrayConfig(uuid=array_uuid, image=image)
    result = Assembled(directory, geometry, array_uuid, config, paths, superblocks)
    config.save(directory, f"created {time.strftime('%Y-%m-%d %H:%M', time.localtime(now))}, {result.summary()}")
    return result


def _existing_array(directory: Path) -> str:
    if not directory.is_dir():
        return ""
    config = directory / CONFIG_NAME
    members = [c for c in _candidates(directory) if c.superblock is not None]
    if members:
        return f"{len(members)} member file(s), uuid {members[0].superblock.array_uuid}"
    return f"{config.name} exists" if config.exists() else ""


def _candidates(directory: Path) -> list[Candidate]:
    out = []
    for entry in sorted(os.scandir(directory), key=lambda e: e.name):
        if entry.name == CONFIG_NAME or not entry.is_file(follow_symlinks=True):
            continue
        path = Path(entry.path)
        try:
            with open(path, "rb") as f:
                raw = f.read(SB_SIZE)
        except OSError as exc:
            out.append(Candidate(path, problem=f"unreadable: {exc.strerror}"))
            continue
        if raw[: len(MAGIC)] != MAGIC:
            out.append(Candidate(path, problem="no vraid superblock"))
            continue
        if len(raw) < SB_SIZE:
            out.append(Candidate(path, problem=f"truncated: {len(raw)} bytes, shorter than its {SB_SIZE}-byte superblock"))
            continue
        try:
            out.append(Candidate(path, Superblock.unpack(raw, path.name)))
        except NotAMember:
            out.append(Candidate(path, problem="no vraid superblock"))
        except SuperblockError as exc:
            out.append(Candidate(path, problem=f"corrupt: {exc.message}"))
    return out


def examine(path: Path) -> list[tuple[Path, Superblock | None, str]]:
    """Superblocks of one member file, or of every candidate in a directory."""
    path = Path(path)
    if path.is_dir():
        return [(c.path, c.superblock, c.problem) for c in _candidates(path)]
    if not path.exists():
        raise VraidError(f"{path} does not exist", "give a member file or an array directory")
    with open(path, "rb") as f:
        raw = f.read(SB_SIZE)
    return [(path, Superblock.unpack(raw, str(path)), "")]


def assemble(directory: Path) -> Assembled:
    """Find the members of the array in ``directory`` and check they make one array.

    Raises:
        AssemblyError / SuperblockError: naming what is wrong and what to do.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise AssemblyError(f"{directory} is not a directory", "give the directory made by `vraid create`")
    config = ArrayConfig.load(directory)
    candidates = _candidates(directory)
    corrupt = [c for c in candidates if c.problem.startswith("corrupt")]
    if corrupt:
        raise SuperblockError(
            "; ".join(f"{c.path.name}: {c.problem[len('corrupt: '):]}" for c in corrupt),
            "a member's superblock failed its checksum: restore that file, or move it out of the directory",
        )
    truncated = [c for c in candidates if c.problem.startswith("truncated")]
    if truncated:
        raise AssemblyError(
            "; ".join(f"{c.path.name} is {c.problem}" for c in truncated),
            "restore the member file from a backup (a RAID-5 array can be rebuilt without it once degraded mode lands)",
        )
    members = [c for c in candidates if c.superblock is not None]
    if not members:
        raise AssemblyError(
            f"{directory} is not a vraid array: no member file with a vraid superblock"
            + (" (vraid.toml is there, but no members)" if config else ""),
            f"create one with `vraid create {directory}`",
        )
    by_uuid: dict[str, list[Candidate]] = {}
    for c in members:
        by_uuid.setdefault(c.superblock.array_uuid, []).append(c)
    if len(by_uuid) > 1 or (config and config.uuid and config.uuid not in by_uuid):
        groups = "; ".join(f"{', '.join(c.path.name for c in cs)} belong to array {u}" for u, cs in by_uuid.items())
        want = f" (vraid.toml names {config.uuid})" if config and config.uuid else ""
        raise AssemblyError(
            f"{directory} holds members of different arrays: {groups}{want}",
            "move the members of the other array into a directory of their own",
        )
    array_uuid = next(iter(by_uuid))
    sbs = [c.superblock for c in members]
    ref = max(sbs, key=lambda sb: sb.events)
    geometry = ref.geometry()
    roles: dict[int, Candidate] = {}
    for c in members:
        sb = c.superblock
        if sb.geometry() != geometry:
            raise AssemblyError(f"{c.path.name} disagrees with the other members about the geometry", "restore it from a backup")
        if sb.role in roles:
            raise AssemblyError(
                f"{roles[sb.role].path.name} and {c.path.name} both claim role {sb.role} (a copied member?)",
                "move the copy out of the directory",
            )
        if not 0 <= sb.role < geometry.ndisks:
            raise AssemblyError(f"{c.path.name} has role {sb.role}, outside 0..{geometry.ndisks - 1}", "restore it")
        roles[sb.role] = c
    missing = [r for r in range(geometry.ndisks) if r not in roles]
    if missing:
        others = [f"{c.path.name} ({c.problem})" for c in candidates if c.superblock is None]
        seen = f"; other files there: {', '.join(others)}" if others else ""
        level = "RAID-0 cannot run without every member" if geometry.level == 0 else (
            "vraid does not run RAID-5 degraded yet"
        )
        raise AssemblyError(
            f"member{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of {geometry.ndisks} "
            f"missing from {directory} (found {len(members)}{seen}); {level}",
            "put the missing member file back into the directory (any name works)",
        )
    paths = [roles[r].path for r in range(geometry.ndisks)]
    for p in paths:
        size = p.stat().st_size
        if size < geometry.member_size:
            raise AssemblyError(
                f"{p.name} is truncated: {size} bytes, the array needs {geometry.member_size}",
                f"restore the member, or extend it with `truncate -s {geometry.member_size} {p}` if only the tail was cut",
            )
    config = config or ArrayConfig(uuid=array_uuid)
    return Assembled(directory, geometry, array_uuid, config, paths, [roles[r].superblock for r in range(geometry.ndisks)])

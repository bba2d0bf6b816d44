"""Assemble an array from the members in its directory (creating one: vraid.ondisk.create).

Assembly trusts superblocks, not file names: every regular file in the
directory whose first bytes carry the vraid magic is a candidate member; its
superblock says which array it belongs to and which role (position) it has.
Renamed or shuffled member files assemble in the right order.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vraid.backends.base import Store
from vraid.backends.file import FileStore
from vraid.backends.missing import MissingStore
from .config import NAME as CONFIG_NAME, ArrayConfig
from vraid.errors import AssemblyError, SuperblockError, VraidError
from vraid.core.geometry import Geometry
from vraid.core.redundancy import count_word
from .superblock import MAGIC, SIZE as SB_SIZE, SPARE, NotAMember, Superblock
from vraid.core.units import format_size




@dataclass
class Candidate:
    path: Path
    superblock: Superblock | None = None
    problem: str = ""  # why it is not used


@dataclass
class Assembled:
    """An array ready to run: members in role order, their superblocks, spares and config.

    A degraded RAID-5 array has one role in ``failed``: its entry in ``paths``
    is the file that held it (None when absent) and its superblock is None;
    nothing is written to it.
    """

    directory: Path
    geometry: Geometry
    uuid: str
    config: ArrayConfig
    paths: list[Path | None]
    superblocks: list[Superblock | None]
    stores: list[Store] = field(default_factory=list)
    #: member files with no role yet (superblock role SPARE)
    spares: list[Path] = field(default_factory=list)
    spare_superblocks: list[Superblock] = field(default_factory=list)
    spare_stores: list[Store] = field(default_factory=list)
    #: role -> why it is not in use (missing, failed, stale, truncated)
    failed: dict[int, str] = field(default_factory=dict)
    #: warnings for the user (degraded, stale or superseded files)
    notes: list[str] = field(default_factory=list)
    #: whether every member said "clean" when the array was assembled (the
    #: daemon marks it dirty right after; this keeps what it found)
    was_clean: bool = field(init=False)
    #: the log disk the superblocks record (seed 002, vraid.ondisk.logfiles), its files,
    #: their stores once opened, and why it cannot be used ("" when it can)
    log: Any = None
    log_paths: list[Path] = field(default_factory=list)
    log_stores: list[Store] = field(default_factory=list)
    log_problem: str = ""

    def __post_init__(self) -> None:
        self.was_clean = all(sb.clean for sb in self.superblocks if sb is not None)

    @property
    def present(self) -> list[int]:
        """Roles whose member is in use."""
        return [r for r, sb in enumerate(self.superblocks) if sb is not None]

    @property
    def degraded(self) -> bool:
        return bool(self.failed)

    @property
    def ref(self) -> Superblock:
        """The newest superblock of a member in use (its params are the array's)."""
        return max((sb for sb in self.superblocks if sb is not None), key=lambda sb: sb.events)

    @property
    def events(self) -> int:
        return max(sb.events for sb in [*self.superblocks, *self.spare_superblocks] if sb is not None)

    def open_stores(self) -> list[Store]:
        size = self.geometry.member_size
        self.stores = [
            FileStore(p) if sb is not None else MissingStore(size, str(p) if p else f"(role {r} missing)")
            for r, (p, sb) in enumerate(zip(self.paths, self.superblocks))
        ]
        self.spare_stores = [FileStore(p) for p in self.spares]
        self.log_stores = [FileStore(p) for p in self.log_paths] if not self.log_problem else []
        return self.stores

    def close(self) -> None:
        for s in [*self.stores, *self.spare_stores, *self.log_stores]:
            s.close()
        self.stores = []
        self.spare_stores = []
        self.log_stores = []

    def mark(self, *, clean: bool, params: dict | None = None) -> None:
        """Write the superblock of every member in use and every spare with the new
        state (clean flag, failed roles) and a higher event count."""
        events = self.events + 1
        now = time.time()
        params = dict(self.ref.params if params is None else params)
        if self.failed:
            params["failed"] = sorted(self.failed)
        else:
            params.pop("failed", None)
        changes: dict = {"clean": clean, "events": events, "utime": now, "params": params}
        targets: list[tuple[int, Path, Superblock]] = [
            (r, p, sb) for r, (p, sb) in enumerate(zip(self.paths, self.superblocks)) if sb is not None and p is not None
        ]
        targets += [(-1 - i, p, sb) for i, (p, sb) in enumerate(zip(self.spares, self.spare_superblocks))]
        for key, path, sb in targets:
            new = sb.evolve(**changes)
            store = self._store_of(key)
            if store is not None:
                store.write_sync(0, new.pack())
            else:
                with_store = FileStore(path)
                try:
                    with_store.write_sync(0, new.pack())
                finally:
                    with_store.close()
            if key >= 0:
                self.superblocks[key] = new
            else:
                self.spare_superblocks[-1 - key] = new

    def _store_of(self, key: int) -> Store | None:
        if key >= 0:
            return self.stores[key] if self.stores else None
        return self.spare_stores[-1 - key] if self.spare_stores else None

    def drop_role(self, role: int, reason: str) -> None:
        """Stop using ``role``'s member (it failed): no superblock is written to it again."""
        self.failed[role] = reason
        self.superblocks[role] = None

    def promote_spare(self, index: int, role: int) -> None:
        """Spare ``index`` becomes the member in ``role`` (after a rebuild)."""
        path = self.spares.pop(index)
        sb = self.spare_superblocks.pop(index)
        store = self.spare_stores.pop(index) if self.spare_stores else None
        old = self.stores[role] if self.stores else None
        self.paths[role] = path
        self.superblocks[role] = sb.evolve(role=role)
        if store is not None:
            self.stores[role] = store
            if old is not None:
                old.close()
        self.failed.pop(role, None)

    def summary(self) -> str:
        g = self.geometry
        level = g.title
        extra = f", {len(self.spares)} spare(s)" if self.spares else ""
        state = f", DEGRADED (member {', '.join(map(str, sorted(self.failed)))} failed)" if self.failed else ""
        placed = self.ref.params.get("placement") if any(sb is not None for sb in self.superblocks) else None
        capacity = int(placed.get("capacity", g.capacity)) if isinstance(placed, dict) else g.capacity
        how = f", placement {placed['spec']}" if isinstance(placed, dict) and "spec" in placed else ""
        return (f"{level}, {g.ndisks} disks{extra}, {format_size(g.strip_size)} strip{how}, "
                f"{format_size(capacity)} image{state}")


def find_candidates(directory: Path) -> list[Candidate]:
    """Every regular file in ``directory`` (but vraid.toml) with its superblock, or why it has none."""
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
        return [(c.path, c.superblock, _log_store(c.path) or c.problem) for c in find_candidates(path)]
    if not path.exists():
        raise VraidError(f"{path} does not exist", "give a member file or an array directory")
    with open(path, "rb") as f:
        raw = f.read(SB_SIZE)
    return [(path, Superblock.unpack(raw, str(path)), "")]


def _log_store(path: Path) -> str:
    """What a log store's superblock says (vraid.ondisk.logsegment), "" if it is none."""
    from .logsegment import SB_MAGIC, LogFormatError, LogSuperblock

    try:
        with open(path, "rb") as f:
            raw = f.read(64 << 10)
        if raw[:8] != SB_MAGIC:
            return ""
        for bs in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):  # the array's block size
            try:
                sb = LogSuperblock.unpack(raw, bs, where=path.name)
                break
            except LogFormatError:
                continue
        else:
            return "log store: superblock corrupt"
    except OSError:
        return ""
    return (f"log store {sb.index + 1} of {sb.count} ({sb.kind}) of array {sb.array_uuid}: {sb.slots} segments of "
            f"{sb.segment_blocks} blocks, tail {sb.tail}")


def assemble(directory: Path) -> Assembled:
    """Find the members of the array in ``directory`` and check they make one array.

    Raises:
        AssemblyError / SuperblockError: naming what is wrong and what to do.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise AssemblyError(f"{directory} is not a directory", "give the directory made by `vraid create`")
    config = ArrayConfig.load(directory)
    candidates = find_candidates(directory)
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
    role_members = [c for c in members if c.superblock.role != SPARE]
    spare_members = [c for c in members if c.superblock.role == SPARE]
    ref = max((c.superblock for c in role_members or members), key=lambda sb: sb.events)
    geometry = ref.geometry()
    notes: list[str] = []
    by_role: dict[int, list[Candidate]] = {}
    for c in members:
        sb = c.superblock
        if sb.geometry() != geometry:
            raise AssemblyError(f"{c.path.name} disagrees with the other members about the geometry", "restore it from a backup")
        if sb.role == SPARE:
            continue
        if not 0 <= sb.role < geometry.ndisks:
            raise AssemblyError(f"{c.path.name} has role {sb.role}, outside 0..{geometry.ndisks - 1}", "restore it")
        by_role.setdefault(sb.role, []).append(c)
    roles: dict[int, Candidate] = {}
    for role, cs in sorted(by_role.items()):
        cs.sort(key=lambda c: -c.superblock.events)
        if len(cs) > 1 and cs[0].superblock.events == cs[1].superblock.events:
            raise AssemblyError(
                f"{cs[0].path.name} and {cs[1].path.name} both claim role {role} (a copied member?)",
                "move the copy out of the directory",
            )
        for old in cs[1:]:  # a member replaced by a rebuild: its counter stopped when it failed
            notes.append(
                f"{old.path.name} is an old member {role} (events {old.superblock.events}, replaced by "
                f"{cs[0].path.name}); not used: delete it, or make it a spare with `vraid add`"
            )
        roles[role] = cs[0]
    for c in [c for c in spare_members if c.superblock.events < ref.events]:
        # every superblock write (Assembled.mark) covers the spares, but not one that failed while it
        # was rebuilding (vraid.ondisk.failures.attach drops it): its counter stopped there
        spare_members.remove(c)
        notes.append(f"{c.path.name} is a spare that failed (events {c.superblock.events}, the members "
                     f"{ref.events}); not used: delete it, or make it a spare again with `vraid add`")
    recorded = {int(r) for r in ref.params.get("failed", [])}
    failed: dict[int, str] = {}
    for role in range(geometry.ndisks):
        c = roles.get(role)
        if c is None:
            failed[role] = "missing"
            continue
        sb = c.superblock
        if role in recorded:
            failed[role] = f"{c.path.name} was failed: the other members' superblocks record it"
        elif sb.events < ref.events:
            failed[role] = f"{c.path.name} is stale: events {sb.events}, the others {ref.events}; not trusted"
        elif c.path.stat().st_size < geometry.member_size:
            size = c.path.stat().st_size
            failed[role] = f"{c.path.name} is truncated: {size} bytes, the array needs {geometry.member_size}"
    from .logfiles import LogRecord, check_log

    log_record = LogRecord.of(ref.params)
    log_paths, log_problem = check_log(directory, log_record, geometry, array_uuid) if log_record else ([], "")
    log_names = {p.name for p in log_paths}
    others = [f"{c.path.name} ({c.problem})" for c in candidates
              if c.superblock is None and c.path.name not in ("vraid.log", "vraid.lock") and c.path.name not in log_names]
    seen = f"; other files there: {', '.join(others)}" if others else ""
    scheme = geometry.redundancy
    if failed and not scheme.tolerates:
        truncated = [why for why in failed.values() if "truncated" in why]
        if truncated:
            path = roles[next(r for r, why in failed.items() if "truncated" in why)].path
            raise AssemblyError(
                "; ".join(truncated),
                f"restore the member, or extend it with `truncate -s {geometry.member_size} {path}` if only the tail was cut",
            )
        missing = sorted(failed)
        raise AssemblyError(
            f"member{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of {geometry.ndisks} "
            f"missing from {directory} (found {len(role_members)}{seen}); RAID-0 cannot run without every member"
            + "".join(f"; {failed[r]}" for r in missing if failed[r] != "missing"),
            "put the missing member file back into the directory (any name works)",
        )
    if not geometry.survives_members(failed):
        missing = sorted(failed)
        why = "; ".join(f"member {r}: {failed[r]}" for r in missing)
        raise AssemblyError(
            f"members {', '.join(map(str, missing))} of {geometry.ndisks} missing from {directory} ({why}{seen}); "
            f"{scheme.name} {scheme.survival_text()}, not {count_word(len(missing))} like these: the array is not "
            "started and nothing was modified",
            "put a missing member file back into the directory (any name works); the data of a stale member "
            "may be older than the rest",
        )
    for role, why in failed.items():
        notes.insert(0, f"warning: {scheme.name} runs DEGRADED without member {role} ({why}); its blocks are "
                     "reconstructed from the others" + ("; a spare takes its place" if spare_members else
                                                       f": add a spare with `vraid add` to rebuild it{seen}"))
    paths: list[Path | None] = [roles[r].path if r in roles else None for r in range(geometry.ndisks)]
    sbs: list[Superblock | None] = [None if r in failed else roles[r].superblock for r in range(geometry.ndisks)]
    config = config or ArrayConfig(uuid=array_uuid)
    return Assembled(
        directory, geometry, array_uuid, config, paths, sbs,
        spares=[c.path for c in spare_members], spare_superblocks=[c.superblock for c in spare_members],
        failed=failed, notes=notes, log=log_record, log_paths=log_paths, log_problem=log_problem,
    )

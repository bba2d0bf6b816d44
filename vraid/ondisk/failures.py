"""Member states, and what a failure or a finished rebuild writes to the superblocks.

A role (member position in the layout) is *active*, *failed* (its blocks are
reconstructed from the others), or *rebuilding* (a spare is taking it over:
stripes below the rebuild position are on the new member, the rest are
still reconstructed). A *spare* is a member file with no role yet.

The superblocks of the members in use record the failed roles
(``params["failed"]``) and every state change bumps their event counter, so
the next assembly knows a failed or stale member (one whose counter is behind
the others') and does not trust it: Linux md's ``dev_roles`` and ``events``
(md-1.2 superblock) in vraid's simpler form.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .assemble import Assembled

log = logging.getLogger(__name__)



# -- superblocks -------------------------------------------------------------------------
def record_failed(asm: "Assembled", role: int, reason: str) -> None:
    """A member failed while mounted: the others' superblocks say so (events + 1)."""
    if role in asm.failed:
        return
    asm.drop_role(role, reason)
    asm.mark(clean=False)
    log.warning("member %d failed (%s); superblocks of the others updated (events %d)", role, reason, asm.events)


def record_rebuilt(asm: "Assembled", role: int, spare_index: int) -> None:
    """A spare took over ``role``: it becomes that member; superblocks updated (events + 1)."""
    asm.promote_spare(spare_index, role)
    asm.mark(clean=False)
    log.info("role %d is now %s (events %d)", role, asm.paths[role], asm.events)


# -- commands: fail a member, add a spare ----------------------------------------------------
def resolve_disk(asm: "Assembled", disk: str | int) -> int:
    """The role ``disk`` names: a member index, or a member file's name or path.

    Raises:
        VraidError: naming the members there are.
    """
    from vraid.errors import VraidError

    n = asm.geometry.ndisks
    text = str(disk)
    if text.isdigit():
        role = int(text)
        if role < n:
            return role
        raise VraidError(f"there is no member {role}: the array has members 0..{n - 1}", "give a member index or file name")
    for role, path in enumerate(asm.paths):
        if path is not None and (path.name == text or str(path) == text or str(path.resolve()) == str(Path(text).resolve())):
            return role
    names = ", ".join(f"{r}={p.name}" for r, p in enumerate(asm.paths) if p is not None)
    raise VraidError(f"{text} is not a member of the array in {asm.directory}", f"members: {names}")


def check_can_fail(asm: "Assembled", role: int, *, force: bool = False, missing: Iterable[int] = ()) -> None:
    """Refuse to fail a member of RAID-0, a failed one, or one more than the
    redundancy survives (RAID-5: a second one, RAID-6 a third; RAID-10: the other of a pair;
    unless ``force``)."""
    from vraid.core.redundancy import count_word
    from vraid.errors import VraidError

    scheme = asm.geometry.redundancy
    if not scheme.tolerates:
        raise VraidError("RAID-0 has no redundancy: failing a member would lose its data",
                         "RAID-1, 4, 5, 6 and 10 run degraded")
    missing = set(missing) | set(asm.failed)
    if role in missing:
        raise VraidError(f"member {role} is already failed", "see `vraid status`")
    if not asm.geometry.survives_members(missing | {role}) and not force:
        gone = sorted(missing)
        if scheme.by_count:
            t = scheme.tolerates
            what = (f"is more than {scheme.name} survives ({count_word(t)}) and would make the blocks of "
                    f"{'all ' + count_word(len(gone) + 1) if len(gone) > 1 else 'both'} unreadable")
        else:
            what = f"would make blocks unreadable ({scheme.name} {scheme.survival_text()})"
        raise VraidError(
            f"member{'s' if len(gone) > 1 else ''} {', '.join(map(str, gone))} "
            f"{'are' if len(gone) > 1 else 'is'} already missing: failing member {role} as well {what}",
            "rebuild first (`vraid add` a spare, `vraid rebuild --wait`), or use --force to see the array fail",
        )


def fail_offline(asm: "Assembled", role: int, reason: str = "failed by `vraid fail`") -> None:
    """Record ``role`` as failed in the other members' superblocks (array not mounted)."""
    asm.drop_role(role, reason)
    asm.mark(clean=asm.was_clean)


def add_spare(asm: "Assembled", path: Path) -> Path:
    """Make ``path`` (inside the array directory) a spare: create it at member size if
    missing, write a spare superblock, and bump the others' event counters.

    Raises:
        VraidError: outside the directory, in use by this or another array, or too small.
    """
    from vraid.backends.file import FileStore
    from vraid.errors import VraidError
    from .superblock import MAGIC, SPARE, Superblock

    path = Path(path)
    directory = asm.directory.resolve()
    if path.parent.resolve() != directory:
        raise VraidError(
            f"{path} is not in the array directory {directory}: assembly finds members there",
            f"give a file name inside it, e.g. {directory / 'spare9.img'}",
        )
    path = directory / path.name
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise VraidError(f"{path} is {'a directory' if path.is_dir() else 'not a regular file'}: a spare is a file",
                         f"give the name of a new file, e.g. {directory / 'spare9.img'}")
    in_use = [p for p in asm.paths if p is not None] + list(asm.spares)
    active = {p.resolve() for r, p in enumerate(asm.paths) if p is not None and r not in asm.failed} | {p.resolve() for p in asm.spares}
    if path.exists() and path.resolve() in active:
        raise VraidError(f"{path.name} is in use by the array already", "give the name of a new file")
    need = asm.geometry.member_size
    placement = asm.ref.params.get("placement")  # seed 004: the stripe directory's region past the data
    if placement:
        from .directory_area import DirectoryArea

        area = DirectoryArea.from_param(placement)
        need = max(need, area.offset + area.size)
    if path.exists():
        with open(path, "rb") as f:
            head = f.read(len(MAGIC))
        if head != MAGIC:
            raise VraidError(f"{path.name} exists and is not a member of this array; vraid would overwrite it", "give the name of a new file (vraid creates it), or remove this one first")
        size = path.stat().st_size
        if size < need:
            raise VraidError(f"{path.name} is too small: {size} bytes, a member needs {need}", f"use `truncate -s {need} {path}` or a new file name")
        with open(path, "rb") as f:
            raw = f.read(4096)
        try:
            old = Superblock.unpack(raw, path.name)
        except VraidError:
            old = None
        if old is not None and old.array_uuid != asm.uuid:
            raise VraidError(f"{path.name} is a member of another array ({old.array_uuid})", "give the name of a new file")
        store = FileStore(path)
    else:
        store = FileStore.create(path, need)
    try:
        sb = asm.ref.evolve(role=SPARE, events=asm.events)
        store.write_sync(0, sb.pack())
    finally:
        store.close()
    if path in {p.resolve() for p in in_use}:  # an old member re-added: it is a spare now
        for r, p in enumerate(asm.paths):
            if p is not None and p.resolve() == path and r in asm.failed:
                asm.paths[r] = None
    asm.spares.append(path)
    asm.spare_superblocks.append(sb)
    if asm.stores:
        asm.spare_stores.append(FileStore(path))
    asm.mark(clean=asm.ref.clean if not asm.stores else False)
    return path


def attach(asm: "Assembled", array) -> None:
    """Hook ``array``'s failures and finished rebuilds to ``asm``'s superblocks (the daemon)."""

    def on_failure(role: int, reason: str, spare: str | None) -> None:
        if spare is not None:  # the new member died during the rebuild: no longer a spare
            for i, p in enumerate(asm.spares):
                if str(p) == spare:
                    asm.spares.pop(i)
                    asm.spare_superblocks.pop(i)
                    if asm.spare_stores:
                        asm.spare_stores.pop(i).close()
                    break
        if role in asm.failed:
            asm.mark(clean=False)
        else:
            record_failed(asm, role, reason)

    def on_rebuilt(role: int, spare: str) -> None:
        index = next(i for i, p in enumerate(asm.spares) if str(p) == spare)
        record_rebuilt(asm, role, index)

    array.raid.on_failure = on_failure
    array.raid.on_rebuilt = on_rebuilt

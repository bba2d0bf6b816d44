"""Create an array in a directory: member files with superblocks, spares, a log, ``vraid.toml``.

``vraid create``'s work on disk: the checks before anything is written (image name, bitmap
chunk, spares, log configuration and size, room in the directory, an array already there),
then every member file with its superblock (role, geometry, uuid, the bitmap chunk, the log
record of seed 002's cache disks, a remapped array's directory area of seed 004), the
spares, the log stores and ``vraid.toml``; a failed create leaves nothing behind
(:func:`vraid.ondisk.room.undo_on_failure`). Reading an array back is
:mod:`vraid.ondisk.assemble`.
"""

from __future__ import annotations

import os
import time
import uuid as uuidlib
from pathlib import Path
from typing import Any

from vraid.backends.file import FileStore
from .assemble import Assembled, find_candidates
from .config import NAME as CONFIG_NAME, ArrayConfig
from vraid.errors import VraidError
from vraid.core.geometry import Geometry
from .superblock import SPARE, Superblock
from .logfiles import DEFAULT_SIZE as LOG_DEFAULT_SIZE
from .room import check_new_array, undo_on_failure


def create(
    directory: Path,
    geometry: Geometry,
    disk_size: int,
    *,
    force: bool = False,
    image: str = "disk.img",
    bitmap_chunk: int | None = None,
    spares: int = 0,
    log: str | None = None,
    log_size: int | None = None,
    placement: Any = None,
) -> Assembled:
    """Write member files with superblocks and ``vraid.toml`` into ``directory``;
    ``spares`` more files (``spare0.img`` ...) are spares (role SPARE). ``log``: a log
    disk (seed 002, ``scd``, ``mcd:N``, ``mirrored``, ``per-disk``) of ``log_size`` bytes
    per store (:mod:`vraid.ondisk.logfiles`; per-disk: ``geometry`` must leave that much
    at the end of each member). ``placement``: ``(spec, area, directory)`` of a remapped
    array (seed 004, :mod:`vraid.ondisk.directory_area`): the directory goes into every
    member's region and the superblocks record it.

    Raises:
        VraidError: if the directory already holds an array and ``force`` is not set.
    """
    directory = Path(directory)
    from .bitmap import PARAM as BITMAP_PARAM, check_chunk, default_chunk
    from .config import image_name_problem

    problem = image_name_problem(image)
    if problem:
        raise VraidError(f"--image {image!r} {problem}: the mount exposes MOUNTPOINT/IMAGE",
                         "give a plain file name such as disk.img")

    if bitmap_chunk is None:
        bitmap_chunk = default_chunk(geometry)
    elif bitmap_chunk:
        check_chunk(geometry, bitmap_chunk)
    if directory.exists() and not directory.is_dir():
        raise VraidError(f"{directory} exists and is not a directory", "choose a directory path for the array")
    if spares < 0 or (spares and not geometry.redundancy.tolerates):
        raise VraidError(
            f"--spares {spares}: " + ("a negative count" if spares < 0 else "RAID-0 has no redundancy to rebuild"),
            "use --spares 0 or more with --level 5",
        )
    if log is not None:
        from vraid.policies import registry
        from vraid.policies.log import layout
        from .logsegment import LogLayout

        log = registry.parse("log", log).text  # canonical, as the superblocks record it (mcd: mcd:2)
        kind, n = layout(log, geometry.ndisks)
        log_size = log_size or LOG_DEFAULT_SIZE
        LogLayout.for_size(kind, n, geometry.block_size, log_size)  # too small: say so now
        if kind == "per-disk" and geometry.member_size + log_size > disk_size:
            raise VraidError(f"members of {disk_size} bytes have no room for a {log_size}-byte log region",
                             "make the geometry for the member size minus --log-size (vraid create does)")
    check_new_array(directory, geometry.ndisks, disk_size, spares, log, log_size or LOG_DEFAULT_SIZE)
    existing = _existing_array(directory)
    if existing and not force:
        raise VraidError(
            f"{directory} already holds a vraid array ({existing})",
            "use --force to overwrite it (its data is lost), or choose another directory",
        )
    if existing:  # --force: never under a running mount
        from .lock import ArrayLock

        with ArrayLock.acquire(directory, what="overwrite the array in"):
            return undo_on_failure(directory, lambda: _create(
                directory, geometry, disk_size, force=force, image=image, bitmap_chunk=bitmap_chunk, spares=spares,
                log=log, log_size=log_size, placement=placement))
    return undo_on_failure(directory, lambda: _create(directory, geometry, disk_size, force=force, image=image,
                                                      bitmap_chunk=bitmap_chunk, spares=spares, log=log,
                                                      log_size=log_size, placement=placement))


def _create(directory: Path, geometry: Geometry, disk_size: int, *, force: bool, image: str, bitmap_chunk: int,
            spares: int, log: str | None = None, log_size: int | None = None, placement: Any = None) -> Assembled:
    from .bitmap import PARAM as BITMAP_PARAM

    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # its owner's: others could swap members
        probe = directory / f".vraid-create-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        probe.unlink()
    except OSError as exc:
        raise VraidError(f"cannot create the array in {directory}: {exc.strerror}",
                         "choose a directory on a writable filesystem (not /proc or /sys) that you may write") from exc
    array_uuid = str(uuidlib.uuid4())
    now = time.time()
    paths = [directory / f"disk{i}.img" for i in range(geometry.ndisks)]
    spare_paths = [directory / f"spare{i}.img" for i in range(spares)]
    if force:
        for c in find_candidates(directory):
            if c.superblock is not None or c.problem.startswith("corrupt"):
                c.path.unlink()
        for p in paths + spare_paths + list(directory.glob("log*.img")):
            p.unlink(missing_ok=True)
    blocking = [p.name for p in paths + spare_paths if p.exists()]
    if blocking:
        raise VraidError(f"{', '.join(blocking)} already exist in {directory} and are not vraid members", "move them away first")
    for path in paths:
        FileStore.create(path, disk_size).close()
    params: dict = {BITMAP_PARAM: bitmap_chunk}
    record = None
    if log is not None:
        from .logfiles import PARAM as LOG_PARAM, make_log

        record = make_log(directory, geometry, array_uuid, log, log_size, paths)
        params[LOG_PARAM] = record.to_param()
    if placement is not None:
        from .directory_area import PARAM as PLACEMENT_PARAM, format_members

        spec, area, table = placement
        params[PLACEMENT_PARAM] = area.to_param(spec) | {"capacity": table.capacity}
    superblocks = []
    for role, path in enumerate(paths):
        store = FileStore(path)
        sb = Superblock.for_member(geometry, array_uuid, role, now).evolve(params=dict(params))
        store.write_sync(0, sb.pack())
        if placement is not None:
            format_members([store], area, table)
        store.close()
        superblocks.append(sb)
    spare_sbs = []
    for path in spare_paths:
        store = FileStore.create(path, disk_size)
        sb = Superblock.for_member(geometry, array_uuid, SPARE, now)
        store.write_sync(0, sb.pack())
        store.close()
        spare_sbs.append(sb)
    config = ArrayConfig(uuid=array_uuid, image=image)
    if record is not None:
        from vraid.core.units import format_size as _fs

        config = ArrayConfig(uuid=array_uuid, image=image, log=record.spec, log_size=_fs(record.size))
    result = Assembled(directory, geometry, array_uuid, config, list(paths), list(superblocks), spares=spare_paths,
                       spare_superblocks=spare_sbs, log=record, log_paths=[directory / f for f in record.files] if record else [])
    config.save(directory, f"created {time.strftime('%Y-%m-%d %H:%M', time.localtime(now))}, {result.summary()}")
    os.chmod(directory / CONFIG_NAME, 0o600)  # like the members: the array directory is its owner's
    return result


def _existing_array(directory: Path) -> str:
    if not directory.is_dir():
        return ""
    config = directory / CONFIG_NAME
    members = [c for c in find_candidates(directory) if c.superblock is not None]
    if members:
        return f"{len(members)} member file(s), uuid {members[0].superblock.array_uuid}"
    return f"{config.name} exists" if config.exists() else ""

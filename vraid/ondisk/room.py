"""The array directory as a place: room for a new array, checked before anything is created;
nothing left behind after a refusal; and who else may write there (hardening issue 33, item 5).

``vraid create`` makes sparse files: a 100T member is "created" in an instant and fails only
later (EFBIG, or ENOSPC the first time the filesystem fills). :func:`check_room` refuses up
front what the filesystem or the process cannot hold: more bytes than the filesystem has
free (the array would fill it long before the array is full), or a file larger than the
process may write (``ulimit -f``). :class:`Leftovers` removes what a failed create made: the
files that were not there before, and the array directory when the create made it.

The create makes the directory 0700: a user who may write in it could replace a member file.
:func:`open_to_others` is the warning ``vraid mount`` gives for a directory others may write.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Callable, Mapping, TypeVar

from vraid.core.limits import approx_size as format_size
from vraid.errors import VraidError


def _existing(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def free_bytes(directory: Path) -> int | None:
    """Bytes an unprivileged writer may still use on the filesystem of ``directory`` (or of
    its nearest existing parent); None for one that counts no blocks at all (/proc, /sys:
    the create itself says why it cannot write there)."""
    st = os.statvfs(_existing(directory))
    return st.f_bavail * st.f_frsize if st.f_blocks else None


def check_new_array(directory: Path, ndisks: int, disk_size: int, spares: int, log: str | None,
                    log_size: int) -> None:
    """:func:`check_room` for every file ``vraid create`` makes: members, spares, log files."""
    files = {f"disk{i}.img": disk_size for i in range(ndisks)}
    files |= {f"spare{i}.img": disk_size for i in range(max(spares, 0))}
    if log is not None:
        from vraid.policies.log import layout

        kind, n = layout(log, ndisks)
        if kind != "per-disk":  # per-disk: the log regions are inside the members
            files |= {f"log{i}.img": log_size for i in range(n)}
    check_room(directory, files)


def open_to_others(directory: Path) -> str:
    """A warning when users other than the owner may write in ``directory`` (else "")."""
    try:
        mode = os.stat(directory).st_mode
    except OSError:
        return ""
    who = [w for w, bit in (("its group", 0o020), ("every user", 0o002)) if mode & bit]
    if not who:
        return ""
    return (f"warning: {' and '.join(who)} may write in {directory} (mode {mode & 0o7777:04o}): "
            f"they could replace a member file; `chmod 700 {directory}`")


def check_room(directory: Path, files: Mapping[str, int]) -> None:
    """Refuse a new array whose files (name -> size) the filesystem or the process cannot hold.

    Raises:
        VraidError: naming the sizes, before anything is created.
    """
    total = sum(files.values())
    try:
        free = free_bytes(directory)
    except OSError:
        free = None  # no filesystem to ask: the create's own errors say what is wrong
    if free is not None and total > free:
        biggest = max(files, key=files.__getitem__)
        raise VraidError(f"the array needs {format_size(total)} ({len(files)} files, {biggest} is "
                         f"{format_size(files[biggest])}) and the filesystem of {_existing(directory)} has "
                         f"{format_size(free)} free",
                         "give a smaller --disk-size or --log-size, or another directory")
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    too_big = [name for name, size in files.items() if limit != resource.RLIM_INFINITY and size > limit]
    if too_big:
        raise VraidError(f"{too_big[0]} would be {format_size(files[too_big[0]])}, larger than this process may "
                         f"write ({format_size(limit)}, ulimit -f)",
                         "give a smaller --disk-size or --log-size, or raise the limit (ulimit -f)")


class Leftovers:
    """``with Leftovers(directory):`` around a create: on an error, the files that appeared
    in ``directory`` are removed, and the directory itself when it did not exist before."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.made_directory = not self.directory.exists()
        self.before = set(os.listdir(self.directory)) if not self.made_directory else set()

    def __enter__(self) -> "Leftovers":
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if exc is None or not self.directory.is_dir():
            return
        for name in set(os.listdir(self.directory)) - self.before:
            try:
                (self.directory / name).unlink()
            except OSError:
                pass
        if self.made_directory:
            try:
                self.directory.rmdir()
            except OSError:
                pass


T = TypeVar("T")


def undo_on_failure(directory: Path, make: Callable[[], T]) -> T:
    """``make()`` (a create in ``directory``); on any error what it made is removed
    (:class:`Leftovers`), and an OSError becomes a message."""
    with Leftovers(directory):
        try:
            return make()
        except OSError as exc:
            raise VraidError(f"cannot create the array in {directory}: {exc.strerror or exc}",
                             "check the free space and the size limits of that filesystem; nothing was left "
                             "behind") from exc

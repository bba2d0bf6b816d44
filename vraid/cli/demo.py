"""``vraid demo``: the main job, end to end on a built-in default array.

Create a RAID-5 array of 5 members, mount it, attach the image to a loop
device, make ext4 on it, copy a directory onto it, show ``vraid status``,
unmount everything, mount again and check every file against its checksum
and the filesystem with e2fsck. Whatever happens, everything it mounted or
attached is taken down again, in the order FUSE-NOTES item 7 requires.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console

from vraid.fuse import loopdev
from vraid.ondisk.create import create
from vraid.fuse.daemon import MountOptions, mount
from vraid.errors import VraidError
from vraid.core.geometry import Geometry
from vraid.tui.render import status_tables
from .status import gather


def _run(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise VraidError(f"`{' '.join(cmd)}` failed: {result.stderr.strip() or result.stdout.strip()}")


def _checksums(root: Path) -> dict[str, str]:
    sums = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and "lost+found" not in path.parts:
            sums[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def _unmount_vraid(mountpoint: Path) -> None:
    from .common import console
    from .umount import unmount

    console.print(unmount(mountpoint), highlight=False)


def run_demo(args, console: Console) -> int:
    source = Path(args.copy) if args.copy else Path(shutil.__file__).parent / "json"
    if not source.is_dir():
        raise VraidError(f"{source} is not a directory", "give --copy a directory to copy onto the filesystem")
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="vraid-demo-"))
    array_dir, fuse_mnt, ext4_mnt = work / "array", work / "mnt", work / "ext4"
    for d in (fuse_mnt, ext4_mnt):
        d.mkdir(parents=True, exist_ok=True)
    step = lambda text: console.print(f"[bold cyan]==>[/] {text}", highlight=False)  # noqa: E731
    try:
        step(f"vraid create {array_dir} --level 5 --disks 5 --disk-size {args.disk_size >> 20}M --strip 64K")
        g = Geometry.for_disk_size(level=5, ndisks=5, disk_size=args.disk_size)
        asm = create(array_dir, g, args.disk_size, force=True)
        console.print(f"    {asm.summary()}", highlight=False)
        sums = _ext4_session(array_dir, fuse_mnt, ext4_mnt, console, step, source=source)
        step("mount again, e2fsck -fn and compare every checksum")
        again = _ext4_session(array_dir, fuse_mnt, ext4_mnt, console, step, verify=sums)
        console.print(f"[bold green]ok:[/] {len(again)} files read back identical after remount; e2fsck clean", highlight=False)
        return 0
    finally:
        if not args.dir and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        elif args.keep:
            console.print(f"array kept in {array_dir}", highlight=False)


def _ext4_session(array_dir, fuse_mnt, ext4_mnt, console, step, *, source: Path | None = None, verify=None):
    with ExitStack() as stack:
        step(f"vraid mount {array_dir} {fuse_mnt}")
        console.print("    " + mount(array_dir, fuse_mnt, MountOptions()), highlight=False)
        stack.callback(_unmount_vraid, fuse_mnt)
        image = fuse_mnt / "disk.img"
        dev = loopdev.attach(image)
        step(f"losetup -f --show {image} -> {dev}")
        stack.callback(loopdev.detach, dev)
        if source is not None:
            step(f"mkfs.ext4 {dev}")
            _run(["mkfs.ext4", "-q", "-F", dev])
        else:
            _run(["e2fsck", "-fn", dev])
        _run(["mount", dev, str(ext4_mnt)])
        stack.callback(_run, ["umount", str(ext4_mnt)])
        if source is not None:
            step(f"copy {source} onto the filesystem, and a 16 MiB file of random bytes")
            shutil.copytree(source, ext4_mnt / source.name, dirs_exist_ok=True)
            (ext4_mnt / "random.bin").write_bytes(os.urandom(16 << 20))
            _run(["sync", "-f", str(ext4_mnt)])  # this file system only
        sums = _checksums(ext4_mnt)
        if verify is not None and sums != verify:
            bad = sorted(k for k in verify.keys() | sums.keys() if verify.get(k) != sums.get(k))
            raise VraidError(f"{len(bad)} files differ after remount, e.g. {bad[:5]}")
        step("vraid status")
        for table in status_tables(gather(fuse_mnt)):
            console.print(table)
        step("unmount ext4, losetup -d, vraid umount")
    return sums

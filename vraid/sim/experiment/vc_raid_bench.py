"""The benchmarks of the ``vc-raid`` experiment, run on an ext4 that a :class:`~.vc_raid_mount.Rig` mounted.

* :func:`run_postmark`: Debian's ``postmark`` on one configuration of
  :mod:`.vc_raid_postmark`, its transaction phase timed from its own progress output.
* :func:`make_tree_tar`: the source tree of the untar/copy/remove test as one deterministic
  tar file (sorted names, fixed mtime and owners), made once per experiment run: ``quick`` and
  ``full`` from the Python standard library Debian installs on every machine
  (``/usr/lib/python3.X``, without ``__pycache__``, ``site-packages``, ``dist-packages`` and
  ``config-*``, which depend on what else is installed; 723 files, 14 MB whole), ``paper``
  synthesized with the paper's counts (:mod:`.vc_raid_tree`). The paper (sec. 4.2.4) untarred
  ZDNet's web-bench test suites, doubled: 952 directories, 12322 files of 9.9 KB on average,
  122 MB; that tar is not available.
* :func:`untar_copy_remove`: ``tar xf`` into the ext4, ``cp -r`` of that tree, ``rm -rf`` of
  the untarred tree, each timed as the user waits for it (the paper's "user response time"),
  with ext4 mounted ``-o sync`` (synchronous mode) or as by default, the programs held to the
  paper's file-cache size by a memory cap (asynchronous mode).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from .vc_raid_mount import sh, sync_fs
from .vc_raid_postmark import PhaseClock, Setting, command_file, parse_report

#: the quick run's subtree of the standard library (a few packages of small source files)
QUICK_PACKAGES = ("email", "json", "http", "asyncio", "xml")
_SKIP_DIRS = {"__pycache__", "site-packages", "dist-packages"}


def stdlib_root() -> Path:
    """``/usr/lib/python3.X`` of the interpreter running vraid (Debian's standard library)."""
    return Path(f"/usr/lib/python{sys.version_info.major}.{sys.version_info.minor}")


def tree_files(root: Path, packages: tuple[str, ...] | None = None) -> list[Path]:
    """The tree's files and directories, relative to ``root``, sorted (``packages``: only these top-level ones)."""
    out: list[Path] = []
    tops = sorted(packages) if packages else sorted(os.listdir(root))
    for top in tops:
        if top in _SKIP_DIRS or top.startswith("config-"):
            continue
        base = root / top
        if base.is_symlink():
            continue
        if base.is_file():
            out.append(Path(top))
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
            rel = Path(dirpath).relative_to(root)
            out.append(rel)
            out += [rel / f for f in sorted(filenames) if not (Path(dirpath) / f).is_symlink()]
    return out


#: the trees of the untar/copy/remove test: a few standard-library packages, the whole standard
#: library, and the paper's counts and size synthesized (:mod:`.vc_raid_tree`)
TREES = ("quick", "full", "paper")


def check_tree(tree: str) -> str:
    """``tree`` if it is one of :data:`TREES`.

    Raises:
        VraidError: for any other name.
    """
    if tree not in TREES:
        from vraid.errors import VraidError

        raise VraidError(f"unknown tree {tree!r}", f"choose one of: {', '.join(TREES)} (--set tree=paper: the paper's "
                         "952 directories, 12322 files, 122 MB, synthesized)")
    return tree


def tree_file_count(tree: str) -> int:
    """How many files and directories the tree ``tree`` holds (0: no standard library here)."""
    if check_tree(tree) == "paper":
        from .vc_raid_tree import PAPER_TREE

        return PAPER_TREE["files"] + PAPER_TREE["dirs"]
    root = stdlib_root()
    return len(tree_files(root, QUICK_PACKAGES if tree == "quick" else None)) if root.is_dir() else 0


def make_tree_tar(tar_path: Path, tree: str) -> dict[str, Any]:
    """Write the tree ``tree`` (:data:`TREES`) as a tar to ``tar_path``; returns what it holds
    (source, files, dirs, MB)."""
    if check_tree(tree) == "paper":
        from .vc_raid_tree import write_tar

        return write_tar(tar_path)
    quick = tree == "quick"
    root = stdlib_root()
    if not root.is_dir():
        from vraid.errors import VraidError

        raise VraidError(f"{root} is missing", "the untar test uses the Python standard library Debian installs")
    names = tree_files(root, QUICK_PACKAGES if quick else None)
    files = dirs = size = 0

    def norm(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
        return info

    with tarfile.open(tar_path, "w", format=tarfile.GNU_FORMAT) as tar:
        for rel in names:
            path = root / rel
            tar.add(path, arcname=str(Path("src") / rel), recursive=False, filter=norm)
            if path.is_dir():
                dirs += 1
            else:
                files += 1
                size += path.stat().st_size
    what = f"{root} ({', '.join(QUICK_PACKAGES)})" if quick else f"{root} (standard library, no __pycache__/site-packages/config-*)"
    return {"source": what, "files": files, "dirs": dirs, "mb": round(size / 1e6, 2),
            "mean_kb": round(size / max(files, 1) / 1e3, 2)}


class MemoryCap:
    """A memory cgroup of our own that holds PostMark and its page cache to ``limit`` bytes.

    The paper's machine had 64 MB of RAM, "the RAM available for file cache is only about
    34MB" (sec. 4.3.2), less than PostMark's medium and large pools (20000 files of 500 to
    10000 bytes, about 105 MB): there PostMark waits for the disks. This machine's page cache
    would hold every pool, and PostMark, which never calls fsync, would not touch the disks at
    all. The cap (cgroup v1 ``memory.limit_in_bytes``, or v2 ``memory.max``) brings the
    paper's situation back: page cache beyond it must be written back and reclaimed while
    PostMark runs. ``limit=None`` or no memory controller: no cap (``self.path`` is None).
    """

    def __init__(self, limit: int | None, name: str) -> None:
        self.limit, self.path, self.procs = limit, None, None
        if not limit:
            return
        for base, key in ((Path("/sys/fs/cgroup/memory"), "memory.limit_in_bytes"),
                          (Path("/sys/fs/cgroup"), "memory.max"), (Path("/sys/fs/cgroup/unified"), "memory.max")):
            ctl = base / "cgroup.controllers"
            if (base / key).exists() or (key == "memory.max" and ctl.exists() and "memory" in ctl.read_text().split()):
                try:
                    path = base / name
                    path.mkdir(exist_ok=True)
                    (path / key).write_text(str(limit))
                except OSError:
                    continue
                self.path, self.procs = path, str(path / "cgroup.procs")
                return

    def enter(self) -> None:
        """preexec_fn of the child: move it into the cgroup."""
        if self.procs:
            with open(self.procs, "w") as f:
                f.write(str(os.getpid()))

    def close(self) -> None:
        if self.path is not None:
            for _ in range(50):
                try:
                    self.path.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
            self.path = None


def run_postmark(setting: Setting, location: Path, work: Path, *, ram: int | None = None) -> dict[str, Any]:
    """One PostMark run in ``location`` (created), its memory capped at ``ram`` bytes
    (:class:`MemoryCap`); TPS from its timed transaction phase."""
    location.mkdir(parents=True, exist_ok=True)
    cfg = (work / f"postmark-{setting.name}.cfg").resolve()
    # PostMark 1.51 keeps the location in a short fixed buffer and crashes on a long path: it
    # runs in the location and is told "."
    cfg.write_text(command_file(setting, "."))
    clock = PhaseClock()
    cap = MemoryCap(ram, f"vraid-vc-raid-{os.getpid()}")
    started = time.monotonic()
    try:
        proc = subprocess.Popen(["stdbuf", "-o0", "postmark", str(cfg)], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, preexec_fn=cap.enter, cwd=location)
    except BaseException:
        cap.close()
        raise
    assert proc.stdout is not None
    try:
        fd = proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            clock.feed(chunk.decode(errors="replace"), time.monotonic())
        proc.wait()
    finally:
        if proc.poll() is None:  # interrupted: stop the PostMark we started
            proc.kill()
            proc.wait()
        capped = cap.path is not None
        cap.close()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        from vraid.errors import VraidError

        raise VraidError(f"postmark exited {proc.returncode} in {location}: {clock.text.strip()[-300:]}",
                         "see the output above (a negative code is the signal that ended it)")
    report = parse_report(clock.text)
    seconds = clock.seconds() or float(report["seconds_transactions"]) or float("nan")
    out = {**setting.as_json(), **report, "transaction_seconds": round(seconds, 3), "wall_seconds": round(wall, 3),
           "create_seconds": round(clock.seconds("Creating files") or 0.0, 3),
           "delete_seconds": round(clock.seconds("Deleting files") or 0.0, 3), "ram": ram if capped else None}
    out["tps"] = round(setting.transactions / seconds, 2)
    out["ms_per_transaction"] = round(1000 * seconds / setting.transactions, 3)
    return out


def _timed(cmd: list[str | Path], cap: MemoryCap | None = None) -> float:
    started = time.monotonic()
    if cap is None or cap.procs is None:
        sh(cmd, timeout=7200)
    else:  # in the memory cgroup: the page cache it may fill is held to the cap
        done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=7200, preexec_fn=cap.enter)
        if done.returncode != 0:
            from vraid.errors import VraidError

            raise VraidError(f"`{' '.join(map(str, cmd))}` exited {done.returncode}: {done.stderr.strip()[-300:]}",
                             "see the message above")
    return round(time.monotonic() - started, 3)


def untar_copy_remove(tar_path: Path, ext4: Path, *, sync_after: bool, ram: int | None = None,
                      settle: bool = False) -> dict[str, float]:
    """``tar xf``, ``cp -r`` and ``rm -rf`` on ``ext4``, seconds each (``sync_after``: each
    includes the ``sync -f`` of ``ext4`` that makes it durable, for an ext4 mounted without
    ``-o sync``; only this file system, so other mounts of the machine are not waited for).

    ``ram``: each program runs in a memory cgroup of that many bytes (:class:`MemoryCap`, the
    paper's 34 MB of file cache), so that in asynchronous mode it waits for writeback once its
    dirty pages pass the cap. ``settle``: an untimed ``sync`` before each program, so that each
    starts with nothing dirty left by the one before (the paper timed each program on its own).
    """
    dest = ext4 / "untar"
    dest.mkdir(exist_ok=True)
    tail = [["sync", "-f", str(ext4)]] if sync_after else []  # this file system only (sync_fs)
    cap = MemoryCap(ram, f"vraid-vc-raid-tree-{os.getpid()}") if ram else None

    def step(cmd: list[str | Path]) -> float:
        if settle:
            sync_fs(ext4)
        t = _timed(cmd, cap)
        return round(t + sum(_timed(c) for c in tail), 3)

    try:
        out = {"untar_s": step(["tar", "xf", tar_path, "-C", dest]),
               "copy_s": step(["cp", "-r", dest / "src", ext4 / "copy"]),
               "remove_s": step(["rm", "-rf", dest / "src"])}
    finally:
        if cap is not None:
            cap.close()
    # untimed cleanup, as slow as the timed programs: under -o sync on RAID-5 the paper's tree took
    # more than the default 600 s to remove (raid5-fig7-8 at 1c58995 failed so, 2026-11-29)
    sh(["rm", "-rf", ext4 / "copy", dest], timeout=7200)
    sync_fs(ext4)
    return out


__all__ = ["MemoryCap", "QUICK_PACKAGES", "TREES", "check_tree", "make_tree_tar", "run_postmark", "stdlib_root", "tree_file_count", "tree_files",
           "untar_copy_remove"]

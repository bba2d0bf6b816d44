"""The real mount of the ``vc-raid`` experiment: create, mount, loop device, ext4, and teardown.

One :class:`Rig` is one array on this machine, built with the command line a user types::

    vraid create DIR --level L --disks 4 --disk-size S [--log scd|mcd:2]
    vraid mount DIR MNT --foreground --disk-model M --time real:F     (a child we started)
    losetup -f --show MNT/disk.img ; mkfs.ext4 ; mount DEV EXT4

and :meth:`Rig.close` takes it all down in the order FUSE-NOTES item 7 requires, whatever
happened (an error, Ctrl-C, SIGTERM): unmount ext4, ``losetup -d`` and wait until the kernel
let go, ``vraid umount`` (flush, mark clean; ``fusermount3 -u``, lazily as the last resort),
then wait for the daemon and, only if it is still there, signal it by the PID we started.

:func:`create_array` tells a configuration this branch cannot build (``vraid create`` rejects
``--log``) from a real failure: :class:`Unavailable` carries the message for the report.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

from vraid.errors import VraidError

VRAID = [sys.executable, "-m", "vraid"]
#: the array's counters :meth:`Rig.cycle_status` reads after each part (``Metrics``): what the
#: host wrote and how the array wrote it, per parity group (PBG) and cycle
CYCLE_COUNTERS = ("host_writes", "host_write_bytes", "pbg_full", "pbg_rmw", "pbg_rcw")


class Unavailable(Exception):
    """This vraid cannot build the configuration (e.g. ``--log`` is not on this branch)."""


def sh(cmd: Sequence[str], *, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``cmd``; a failure is a :class:`VraidError` with its stderr."""
    result = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise VraidError(f"`{' '.join(map(str, cmd))}` exited {result.returncode}: "
                         f"{(result.stderr or result.stdout).strip()[-600:]}",
                         "see the message above; `vraid experiment vc-raid` needs root, fuse3, losetup, mkfs.ext4")
    return result


def sync_fs(path: Path | str, *, timeout: float = 3600) -> subprocess.CompletedProcess:
    """Write back the file system holding ``path`` (``sync -f``, syncfs(2)): this file system
    only. A plain ``sync`` waits for every mount of the machine, so a timed step would also
    wait for other experiments' or tests' arrays to drain."""
    return sh(["sync", "-f", str(path)], timeout=timeout)


def create_array(array_dir: Path, create_args: Sequence[str]) -> str:
    """``vraid create ARRAY_DIR ARGS --force``; returns its summary line.

    Raises:
        Unavailable: the command line does not know an option of ``create_args`` (argparse's
            "unrecognized arguments" / "invalid choice"), so this configuration cannot run here.
        VraidError: any other failure.
    """
    result = sh([*VRAID, "create", array_dir, *create_args, "--force"], check=False)
    if result.returncode == 0:
        return result.stdout.strip()
    err = (result.stderr or "").strip()
    if result.returncode == 2 and ("unrecognized arguments" in err or "invalid choice" in err):
        raise Unavailable(f"`vraid create ... {' '.join(create_args)}` is not supported by this vraid: "
                          f"{err.splitlines()[-1]}")
    raise VraidError(f"vraid create failed ({result.returncode}): {err[-600:]}", "check the create arguments")


def _mounted(path: Path) -> bool:
    target = str(path.resolve())
    try:
        with open("/proc/self/mountinfo") as f:
            return any(line.split()[4].replace("\\040", " ") == target for line in f)
    except OSError:  # pragma: no cover
        return False


def _wait(pred: Callable[[], bool], timeout: float, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def disk_use(before: dict | None, after: dict | None, seconds: float) -> dict[str, Any] | None:
    """What the members did between two status snapshots of a step that took ``seconds``: their
    requests, the MB (10^6 bytes) they read and wrote, and ``busy``, the share of the step the
    members were busy (their busy seconds, on the mount's clock, over members x ``seconds``);
    None without both snapshots."""
    if not before or not after or "members" not in before or "members" not in after:
        return None
    was = {m["disk"]: m for m in before["members"]}
    delta = {k: 0.0 for k in ("reads", "writes", "read_bytes", "write_bytes", "busy_seconds")}
    for m in after["members"]:
        old = was.get(m["disk"], {})
        for k in delta:
            delta[k] += (m.get(k) or 0) - (old.get(k) or 0)
    n = max(1, len(after["members"]))
    return {"requests": int(delta["reads"] + delta["writes"]), "read_mb": round(delta["read_bytes"] / 1e6, 2),
            "write_mb": round(delta["write_bytes"] / 1e6, 2),
            "busy": round(delta["busy_seconds"] / (n * seconds), 3) if seconds > 0 else None}


class Rig:
    """One array mounted with ext4 on it; :meth:`close` undoes everything :meth:`open` did."""

    def __init__(self, work: Path, *, disk_model: str, time_scale: float, log: Callable[[str], None] = print,
                 mount_args: Sequence[str] = (), mkfs: Sequence[str] = ("mkfs.ext4", "-q", "-F", "-b", "4096")):
        self.work = Path(work)
        self.array = self.work / "array"
        self.fuse = self.work / "mnt"
        self.ext4 = self.work / "ext4"
        self.disk_model = disk_model
        self.time_scale = time_scale
        self.log = log
        self.mount_args = list(mount_args)  # more `vraid mount` options (e.g. --cache stripe)
        self.mkfs = list(mkfs)
        self.mkfs_seconds = 0.0  # how long the mkfs of open() took
        self.mkfs_disks: dict | None = None  # what the members did during it (disk_use)
        self.daemon: subprocess.Popen | None = None
        self.device: str | None = None
        self.ext4_mounted = False

    @property
    def time_mode(self) -> str:
        """``vraid mount --time``: ``real:F``, or ``none`` at a time scale of 0 (no disk time)."""
        return "none" if self.time_scale == 0 else f"real:{self.time_scale:g}"

    # -- build -----------------------------------------------------------------------------
    def open(self, create_args: Sequence[str]) -> str:
        """Create, mount (daemon in the foreground, our child, with ``mount_args``), attach, ``mkfs``
        (mkfs.ext4 unless given; timed: :attr:`mkfs_seconds`), mount it."""
        for d in (self.fuse, self.ext4):
            d.mkdir(parents=True, exist_ok=True)
        summary = create_array(self.array, create_args)
        self.log(f"vraid create {' '.join(create_args)}: {summary.splitlines()[0] if summary else ''}")
        daemon_log = open(self.work / "daemon.log", "wb")
        # a session of its own: Ctrl-C reaches us (and our teardown), never the daemon mid-flush
        self.daemon = subprocess.Popen(
            [*VRAID, "mount", str(self.array), str(self.fuse), "--foreground",
             "--disk-model", self.disk_model, "--time", self.time_mode, *self.mount_args],
            stdout=daemon_log, stderr=subprocess.STDOUT, start_new_session=True)
        daemon_log.close()
        image = self.fuse / "disk.img"
        ok = _wait(lambda: self.daemon.poll() is not None or (_mounted(self.fuse) and image.exists()), 120)
        if not ok or self.daemon.poll() is not None:
            raise VraidError(f"vraid mount did not come up: {self._daemon_tail()}", f"see {self.work / 'daemon.log'}")
        self.device = sh(["losetup", "-f", "--show", image]).stdout.strip()
        before = self.status()
        started = time.monotonic()
        sh([*self.mkfs, self.device], timeout=3600)
        self.mkfs_seconds = time.monotonic() - started
        self.mkfs_disks = disk_use(before, self.status(), self.mkfs_seconds)
        self.mount_ext4()
        return summary

    def mount_ext4(self, options: str = "") -> None:
        """Mount ext4 (always ``noinit_itable``: no inode-table zeroing in the background while we measure)."""
        sh(["mount", "-o", ",".join(["noinit_itable", *([options] if options else [])]), self.device, self.ext4])
        self.ext4_mounted = True

    def remount(self, options: str) -> None:
        """Remount ext4 with ``options`` (e.g. ``sync``): unmount, flush, mount again."""
        self.unmount_ext4()
        self.mount_ext4(options)

    def unmount_ext4(self) -> None:
        if not self.ext4_mounted:
            return
        for attempt in range(20):
            if sh(["umount", self.ext4], check=False, timeout=1200).returncode == 0 or not _mounted(self.ext4):
                self.ext4_mounted = False
                return
            time.sleep(0.5)
        self.log(f"warning: {self.ext4} stays busy; unmounting lazily")
        sh(["umount", "-l", self.ext4], check=False)
        self.ext4_mounted = False

    def _daemon_tail(self) -> str:
        try:
            return (self.work / "daemon.log").read_text(errors="replace").strip()[-600:]
        except OSError:
            return "(no log)"

    def status(self) -> dict:
        """``vraid status --json`` of the running mount, as a dict."""
        import json

        return json.loads(sh([*VRAID, "status", "--json", self.fuse], timeout=120).stdout)

    def cycle_status(self, status: dict | None = None) -> dict | None:
        """The array's write cycles so far from ``vraid status --json`` of the running mount (None:
        no metrics): the host's written bytes and the parity groups written by each cycle of paper
        000 sec. II-A, full stripe, read-modify-write and reconstruct-write (:data:`CYCLE_COUNTERS`).
        ``status``: one :meth:`status` already read (so the log and the cycles share one call)."""
        m = (status if status is not None else self.status()).get("metrics")
        return {k: m.get(k) for k in CYCLE_COUNTERS} if isinstance(m, dict) else None

    def log_status(self, status: dict | None = None) -> dict | None:
        """The log disk's occupancy and counters from ``vraid status --json`` of the running mount
        (None: the array has no log): segments in all and in use, segment writes, and the
        ``LogMetrics`` counters (level-2 destages, level-1 destages that waited for a full log...).
        ``status``: as :meth:`cycle_status`'s."""
        log = (status if status is not None else self.status()).get("log")
        if not isinstance(log, dict):
            return None
        keep = ("log_segments", "log_used_segments", "segment_writes", "ram_blocks", "ram_used_blocks")
        # the LogMetrics counters are merged into the log's record (LogStatus.counters is flat)
        counters = ("host_write_blocks", "overwrites", "level1_destages", "level1_segments", "level1_blocks",
                    "level2_destages", "level2_blocks", "ram_full_waits", "log_full_waits")
        return {**{k: log.get(k) for k in keep}, "counters": {k: log[k] for k in counters if k in log}}

    # -- teardown --------------------------------------------------------------------------
    def close(self) -> list[str]:
        """Take everything down (never raises); returns the warnings on the way."""
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
        warnings: list[str] = []
        try:
            self._close(warnings)
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)
        for w in warnings:
            self.log(f"warning: {w}")
        return warnings

    def _close(self, warnings: list[str]) -> None:
        try:
            self.unmount_ext4()
        except Exception as exc:  # noqa: BLE001 - teardown goes on
            warnings.append(f"umount {self.ext4}: {exc}")
        if self.device:
            from vraid.fuse import loopdev

            try:
                loopdev.detach(self.device, timeout=120)
                self.device = None
            except Exception as exc:  # noqa: BLE001
                warnings.append(f"losetup -d {self.device}: {exc}")
        if _mounted(self.fuse):
            done = sh([*VRAID, "umount", self.fuse, "--timeout", "1200"], check=False, timeout=1300)
            if done.returncode != 0 and _mounted(self.fuse):
                warnings.append(f"vraid umount: {(done.stderr or done.stdout).strip()[-300:]}")
                if sh(["fusermount3", "-u", self.fuse], check=False).returncode != 0:
                    sh(["fusermount3", "-u", "-z", self.fuse], check=False)
        if self.daemon is not None:
            try:
                self.daemon.wait(timeout=600)
            except subprocess.TimeoutExpired:
                warnings.append(f"daemon {self.daemon.pid} still running after the unmount: SIGTERM")
                self.daemon.send_signal(signal.SIGTERM)
                try:
                    self.daemon.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    self.daemon.kill()
                    self.daemon.wait()
            self.daemon = None

    def __enter__(self) -> "Rig":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


@contextmanager
def session(rig: Rig, work: Path, out: dict[str, Any]) -> Iterator[Rig]:
    """One experiment run's time on ``rig``: SIGTERM tears down like Ctrl-C while it lasts (in
    the main thread, where signals can be handled); at the end the rig is closed, its teardown
    warnings go to ``out["teardown_warnings"]``, and ``work`` is removed."""
    old_term = signal.getsignal(signal.SIGTERM) if _main_thread() else None

    def on_term(signum, frame):
        raise KeyboardInterrupt

    if old_term is not None:
        signal.signal(signal.SIGTERM, on_term)
    try:
        yield rig
    finally:
        warnings = rig.close()
        if warnings:
            out["teardown_warnings"] = warnings
        remove_work(work)
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def remove_work(work: Path) -> None:
    """Remove the member files (hundreds of MiB) once nothing is mounted over them."""
    if not _mounted(work / "mnt") and not _mounted(work / "ext4"):
        shutil.rmtree(work, ignore_errors=True)


def check_tools() -> None:
    """Everything the real run needs, or a :class:`VraidError` naming what is missing."""
    if os.geteuid() != 0:
        raise VraidError("vc-raid mounts a real array and needs root (mount, losetup)", "run it as root")
    missing = [t for t in ("postmark", "bonnie++", "fusermount3", "losetup", "mkfs.ext4", "tar", "stdbuf") if shutil.which(t) is None]
    if missing:
        raise VraidError(f"vc-raid needs {', '.join(missing)}", "apt-get install postmark bonnie++ fuse3 mount e2fsprogs "
                         "(or run setup.sh)")


__all__ = ["Rig", "Unavailable", "VRAID", "check_tools", "create_array", "remove_work", "sh"]

"""Benchmark vraid's RAID-5 image against a one-file FUSE passthrough.

One run mounts (a) ``bench/passthrough.py`` over one sparse 1.25 GiB backing
file and (b) a vraid RAID-5 array of five 320 MiB members (the same 1.25 GiB
image), then runs four fio jobs on each, interleaved job by job so that
machine drift hits both sides alike:

* sequential write, 1 MiB blocks      * sequential read, 1 MiB blocks
* random write, 4 KiB blocks          * random read, 4 KiB blocks

each on two routes: directly on ``MOUNTPOINT/disk.img`` (buffered, direct=0)
and on a loop device attached to that image (``/dev/loopN``, direct=1 so the
loop device's own page cache cannot absorb the I/O). It prints MB/s and IOPS
and the vraid/passthrough ratio of every row against its target, and writes
everything to a JSON file. Every mount and loop device it creates is torn
down again, in order, whatever happens. See ``bench/README.md``.

Needs root, fio, fusermount3 and losetup. Run it with the repository's venv::

    .venv/bin/python bench/run.py [--quick] [--repeat N] [--only passthrough|vraid]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import importlib.metadata
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

KiB = 1024
MiB = 1024 * KiB
BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
IMAGE_NAME = "disk.img"

VRAID_DISKS = 5
VRAID_DISK_SIZE = "320M"
VRAID_STRIP = "64K"
IMAGE_BYTES = (VRAID_DISKS - 1) * 320 * MiB  # what the RAID-5 array exposes: 1.25 GiB

TARGETS = ("passthrough", "vraid", "vraid-stripe", "vraid-pbg")
#: the write-through configuration every cache configuration is compared with
WRITE_THROUGH = "vraid"


# --- what is measured ----------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One fio workload and the vraid/passthrough ratio it must reach (0: none set)."""

    name: str
    label: str
    rw: str
    block_size: int
    target_ratio: float
    time_based: bool
    #: bytes the job covers (None: --size); small random writes use a region that fits the cache
    region: int | None = None
    numjobs: int = 1
    iodepth: int = 1
    #: the routes it runs on (libaio at depth 16 is asynchronous only with direct=1: the loop route)
    routes: tuple[str, ...] = ("image", "loop")

    @property
    def writes(self) -> bool:
        return "write" in self.rw

    @property
    def direction(self) -> str:
        """The section of fio's JSON report that holds this job's figures."""
        return "write" if self.writes else "read"


# Reads run once over the region (not time_based): a second pass would be served
# from the page cache. Sequential writes are flushed by end_fsync, whose time fio
# counts; random writes loop for the whole runtime (write-through on FUSE).
#: the region of the small random writes: 48 MiB fits every cache configuration's 128 MiB
RAND_WRITE_REGION = 48 * MiB
JOBS: tuple[Job, ...] = (
    Job("seq-write", "seq write 1 MiB", "write", MiB, 0.6, time_based=False),
    Job("seq-read", "seq read 1 MiB", "read", MiB, 0.7, time_based=False),
    Job("rand-write", "rand write 4 KiB", "randwrite", 4 * KiB, 0.25, time_based=True, region=RAND_WRITE_REGION),
    Job("rand-read", "rand read 4 KiB", "randread", 4 * KiB, 0.8, time_based=False),
    Job("rand-write-4j", "rand write 4K 4 jobs", "randwrite", 4 * KiB, 0.0, time_based=True,
        region=RAND_WRITE_REGION, numjobs=4),
    Job("rand-read-4j", "rand read 4K 4 jobs", "randread", 4 * KiB, 0.0, time_based=True, numjobs=4),
    Job("rand-write-qd16", "rand write 4K qd16", "randwrite", 4 * KiB, 0.0, time_based=True,
        region=RAND_WRITE_REGION, iodepth=16, routes=("loop",)),
    Job("rand-read-qd16", "rand read 4K qd16", "randread", 4 * KiB, 0.0, time_based=True, iodepth=16,
        routes=("loop",)),
)
#: with a write-back cache (and NVRAM) small random writes must reach this ratio
CACHE_RAND_WRITE_TARGET = 0.5

#: vraid configurations (target name -> mount arguments; NVRAM files go in the work directory)
CACHE_SIZE = "128M"
CONFIGS: dict[str, tuple[str, ...]] = {
    "vraid": (),
    "vraid-stripe": ("--cache", "stripe", "--cache-size", CACHE_SIZE, "--nvram", "{workdir}/nvram-stripe.bin"),
    "vraid-pbg": ("--cache", "pbg", "--cache-size", CACHE_SIZE, "--nvram", "{workdir}/nvram-pbg.bin"),
}

# route name -> fio's --direct value ("ext4": dbench on ext4 over a loop device, not fio)
ROUTES: dict[str, int] = {"image": 0, "loop": 1, "ext4": 0}
DBENCH_JOB = Job("dbench", "dbench 4 clients", "dbench", 0, 0.7, time_based=True, routes=("ext4",))
DBENCH_CLIENTS = 4


@dataclass(frozen=True)
class Settings:
    """Everything that shapes one benchmark run."""

    size: int
    runtime: int
    repeat: int
    targets: tuple[str, ...]
    vraid: Path
    mount_args: tuple[str, ...]
    read_ahead_kb: int
    workdir: Path
    out: Path
    keep_workdir: bool
    #: seconds of dbench per target (0: no ext4 route)
    dbench: int = 0
    #: seconds of the memory soak (0: none; then nothing else runs)
    soak: int = 0
    #: simulated writes per vraid run of bench/sim_speed.py's floor case (0: not run)
    sim_requests: int = 0


@dataclass(frozen=True)
class Measurement:
    """The figures of one fio run."""

    bw_bytes: float
    iops: float
    lat_mean_us: float
    runtime_ms: int
    io_bytes: int
    #: CPU seconds the target's daemon used during the job (user + system; 0 if unknown)
    cpu_s: float = 0.0

    @property
    def mb_s(self) -> float:
        return self.bw_bytes / 1e6


@dataclass
class Series:
    """All runs of one job on one route of one target."""

    target: str
    route: str
    job: Job
    runs: list[Measurement] = field(default_factory=list)

    def median(self) -> Measurement:
        """The per-field median of the runs (median of N for ``--repeat N``)."""
        return Measurement(
            bw_bytes=statistics.median(r.bw_bytes for r in self.runs),
            iops=statistics.median(r.iops for r in self.runs),
            lat_mean_us=statistics.median(r.lat_mean_us for r in self.runs),
            runtime_ms=int(statistics.median(r.runtime_ms for r in self.runs)),
            io_bytes=int(statistics.median(r.io_bytes for r in self.runs)),
            cpu_s=statistics.median(r.cpu_s for r in self.runs),
        )


@dataclass(frozen=True)
class Mounted:
    """A mounted FUSE image under test."""

    target: str
    mountpoint: Path
    read_ahead_kb: int | None
    #: the daemon's PID (for its memory figures), if known
    pid: int | None = None

    @property
    def image(self) -> Path:
        return self.mountpoint / IMAGE_NAME


# --- small process and system helpers -----------------------------------------


def log(message: str) -> None:
    """Progress goes to stderr so stdout keeps only the result table."""
    print(message, file=sys.stderr, flush=True)


def run(cmd: list[str], *, timeout: float = 60, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command to completion, capturing its output.

    Raises:
        RuntimeError: when ``check`` is set and the command fails; the message
            carries the command line and its stderr.
    """
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def wait_until(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Poll ``predicate`` until it holds or ``timeout`` seconds pass; return its last value."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return predicate()
        time.sleep(interval)
    return True


def _unescape_mountinfo(field_text: str) -> str:
    """Undo the octal escapes (``\\040`` for a space) of /proc/self/mountinfo."""
    return field_text.encode().decode("unicode_escape")


def mount_points() -> set[str]:
    """Every mount point the kernel currently shows this process."""
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        return {_unescape_mountinfo(line.split()[4]) for line in f}


def is_mounted(mountpoint: Path) -> bool:
    return str(mountpoint) in mount_points()


def drop_caches() -> None:
    """Write back dirty pages and drop the page cache, dentries and inodes."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def fuse_bdi(mountpoint: Path) -> Path:
    """The sysfs directory of the backing-device info of a FUSE mount."""
    dev = os.stat(mountpoint).st_dev
    return Path(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}")


def set_read_ahead(mountpoint: Path, kb: int) -> int | None:
    """Set the mount's read-ahead (``kb < 0`` leaves it); return the value in force."""
    knob = fuse_bdi(mountpoint) / "read_ahead_kb"
    try:
        if kb >= 0:
            knob.write_text(f"{kb}\n")
        return int(knob.read_text())
    except OSError as exc:
        log(f"warning: read-ahead of {mountpoint}: {exc}")
        return None


# --- FUSE mounts and their teardown --------------------------------------------


def unmount_fuse(mountpoint: Path, busy_timeout: float = 10.0) -> None:
    """Unmount a FUSE mount, retrying while busy, and lazily as a last resort."""
    if not is_mounted(mountpoint):
        return

    def try_unmount() -> bool:
        run(["fusermount3", "-u", str(mountpoint)], check=False)
        return not is_mounted(mountpoint)

    if wait_until(try_unmount, busy_timeout, interval=0.5):
        return
    log(f"warning: {mountpoint} stays busy; unmounting lazily (fusermount3 -u -z)")
    run(["fusermount3", "-u", "-z", str(mountpoint)], check=False)


def stop_child(proc: subprocess.Popen[bytes], name: str, grace: float = 30.0) -> None:
    """Wait for a daemon we started to exit; terminate, then kill, our own PID only."""
    try:
        proc.wait(timeout=grace)
        return
    except subprocess.TimeoutExpired:
        log(f"warning: {name} (pid {proc.pid}) did not exit; sending SIGTERM")
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log(f"warning: {name} (pid {proc.pid}) ignores SIGTERM; sending SIGKILL")
        proc.kill()
        proc.wait(timeout=10)


@dataclass(frozen=True)
class ProcessId:
    """A process we did not fork directly, pinned by its start time against PID reuse."""

    pid: int
    start_ticks: str

    @classmethod
    def of(cls, pid: int) -> ProcessId | None:
        ticks = _start_ticks(pid)
        return None if ticks is None else cls(pid, ticks)

    def alive(self) -> bool:
        return _start_ticks(self.pid) == self.start_ticks and _state(self.pid) not in ("Z", "X", None)

    def signal(self, signum: int) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)


def _proc_stat_fields(pid: int) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (field 3 onwards)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _start_ticks(pid: int) -> str | None:
    fields = _proc_stat_fields(pid)
    return None if fields is None else fields[19]


def _state(pid: int) -> str | None:
    fields = _proc_stat_fields(pid)
    return None if fields is None else fields[0]


def serves_mount(pid: int, mountpoint: Path) -> bool:
    """Whether process ``pid`` holds /dev/fuse and has ``mountpoint`` among its arguments.

    The mount point is a fresh temporary directory of this run, so a match can
    only be the daemon that our own ``vraid mount`` started.
    """
    proc = Path(f"/proc/{pid}")
    try:
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        if not any(os.fsdecode(a).rstrip("/") == str(mountpoint) for a in argv):
            return False
        return any(os.readlink(fd) == "/dev/fuse" for fd in (proc / "fd").iterdir())
    except OSError:
        return False


def find_fuse_daemon(mountpoint: Path, mount_output: str) -> ProcessId | None:
    """The daemon serving ``mountpoint``: the PID ``vraid mount`` announced, else a /proc scan.

    ``vraid mount`` prints "... (daemon pid N)"; the PID is trusted only if
    that process really serves this mount point.
    """
    announced = re.search(r"daemon pid (\d+)", mount_output)
    candidates = [int(announced.group(1))] if announced else []
    candidates += [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()]
    for pid in candidates:
        if pid != os.getpid() and serves_mount(pid, mountpoint):
            return ProcessId.of(pid)
    return None


def stop_foreign_daemon(daemon: ProcessId | None, name: str, grace: float = 30.0) -> None:
    """Wait for a daemon that our command started to exit; SIGTERM, then SIGKILL."""
    if daemon is None:
        return
    for signum, wait in ((0, grace), (signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        if signum:
            log(f"warning: {name} (pid {daemon.pid}) still running; sending {signal.Signals(signum).name}")
            daemon.signal(signum)
        if wait_until(lambda: not daemon.alive(), wait, interval=0.1):
            return


def wait_for_mount(mountpoint: Path, alive: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait until ``mountpoint`` is mounted and serves the image.

    Raises:
        RuntimeError: if the daemon dies first or the mount does not appear in time.
    """
    def ready() -> bool:
        if not alive():
            raise RuntimeError(f"the FUSE daemon for {mountpoint} exited before mounting")
        return is_mounted(mountpoint)

    if not wait_until(ready, timeout):
        raise RuntimeError(f"{mountpoint} was not mounted within {timeout:.0f} s")
    os.stat(mountpoint / IMAGE_NAME)  # blocks until the daemon answers


@contextlib.contextmanager
def mount_passthrough(workdir: Path, read_ahead_kb: int) -> Iterator[Mounted]:
    """Mount ``bench/passthrough.py`` over a fresh sparse 1.25 GiB backing file."""
    backing = workdir / "passthrough-backing.img"
    mountpoint = workdir / "passthrough-mnt"
    mountpoint.mkdir()
    with open(backing, "wb") as f:
        f.truncate(IMAGE_BYTES)
    cmd = [sys.executable, str(BENCH_DIR / "passthrough.py"), str(backing), str(mountpoint)]
    # Its own session: a Ctrl-C on the terminal must not stop it before the loop device is detached.
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_mount(mountpoint, lambda: proc.poll() is None)
        yield Mounted("passthrough", mountpoint, set_read_ahead(mountpoint, read_ahead_kb), proc.pid)
    finally:
        unmount_fuse(mountpoint)
        stop_child(proc, "passthrough daemon")


@contextlib.contextmanager
def mount_vraid(settings: Settings, name: str = "vraid") -> Iterator[Mounted]:
    """Create a five-member RAID-5 array with the vraid CLI and mount its image
    with the mount arguments of configuration ``name`` (:data:`CONFIGS`)."""
    vraid = str(settings.vraid)
    array = settings.workdir / f"{name}-array"
    mountpoint = settings.workdir / f"{name}-mnt"
    mountpoint.mkdir()
    config_args = [arg.format(workdir=settings.workdir) for arg in CONFIGS[name]]
    run([vraid, "create", str(array), "--level", "5", "--disks", str(VRAID_DISKS),
         "--disk-size", VRAID_DISK_SIZE, "--strip", VRAID_STRIP], timeout=300)
    daemon: ProcessId | None = None
    try:
        mounted = run([vraid, "mount", str(array), str(mountpoint), *config_args, *settings.mount_args], timeout=120)
        daemon = find_fuse_daemon(mountpoint, mounted.stdout)
        if daemon is None:
            log("note: vraid daemon PID not found (its argv should name the mount point)")
        wait_for_mount(mountpoint, lambda: daemon is None or daemon.alive())
        yield Mounted(name, mountpoint, set_read_ahead(mountpoint, settings.read_ahead_kb),
                      daemon.pid if daemon is not None else None)
    finally:
        if is_mounted(mountpoint):
            done = run([vraid, "umount", str(mountpoint)], timeout=600, check=False)
            if done.returncode != 0:
                log(f"warning: vraid umount failed ({done.returncode}): {done.stderr.strip()}")
        unmount_fuse(mountpoint)
        stop_foreign_daemon(daemon, "vraid daemon")


# --- loop devices --------------------------------------------------------------


def loop_backing_file(device: str) -> str | None:
    """The backing file the kernel shows for a loop device, or None once detached."""
    try:
        return (Path("/sys/block") / Path(device).name / "loop" / "backing_file").read_text().strip()
    except OSError:
        return None


@contextlib.contextmanager
def attach_loop(image: Path) -> Iterator[str]:
    """Attach ``image`` to a free loop device; detach it and wait until it is gone."""
    device = run(["losetup", "-f", "--show", str(image)]).stdout.strip()
    try:
        yield device
    finally:
        run(["losetup", "-d", device], check=False)
        # Another user may grab the freed device at once: compare the backing file.
        if not wait_until(lambda: loop_backing_file(device) != str(image), 30):
            log(f"warning: {device} still holds {image} after losetup -d")
        if shutil.which("udevadm"):
            run(["udevadm", "settle", "--timeout=10"], check=False, timeout=20)


# --- fio -----------------------------------------------------------------------


def fio_command(job: Job, filename: str, direct: int, settings: Settings, output: Path) -> list[str]:
    """The fio command line of one job (iodepth 1, synchronous engine)."""
    region = min(settings.size, job.region or settings.size)
    engine = ["--ioengine=libaio", f"--iodepth={job.iodepth}"] if job.iodepth > 1 else ["--ioengine=psync", "--iodepth=1"]
    cmd = [
        "fio", f"--name={job.name}", f"--filename={filename}", f"--rw={job.rw}",
        f"--bs={job.block_size}", f"--size={region}", f"--runtime={settings.runtime}",
        *engine, f"--numjobs={job.numjobs}", "--group_reporting", f"--direct={direct}", "--invalidate=1",
        "--allow_file_create=0", "--fallocate=none", "--randrepeat=0",
        "--output-format=json", f"--output={output}",
    ]
    if job.writes:
        cmd.append("--end_fsync=1")
    if job.time_based:
        cmd.append("--time_based")
    return cmd


def parse_fio(report: dict, job: Job) -> Measurement:
    """Pick one job's figures out of fio's ``--output-format=json`` report."""
    result = report["jobs"][0]
    if result.get("error"):
        raise RuntimeError(f"fio job {job.name} failed with error {result['error']}")
    side = result[job.direction]
    return Measurement(
        bw_bytes=float(side["bw_bytes"]),
        iops=float(side["iops"]),
        lat_mean_us=float(side["clat_ns"]["mean"]) / 1000,
        runtime_ms=int(side["runtime"]),
        io_bytes=int(side["io_bytes"]),
    )


def stop_group(proc: subprocess.Popen[str], grace: float = 15.0) -> None:
    """Stop a process group we created (fio forks its jobs): SIGTERM, then SIGKILL."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)

        def group_gone() -> bool:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return True
            return False

        if proc.poll() is not None and wait_until(group_gone, grace, interval=0.1):
            return
    log(f"warning: fio process group {proc.pid} did not exit (stuck in the kernel?)")


def run_in_own_group(cmd: list[str], timeout: float) -> None:
    """Run ``cmd`` in a new session so that an interruption stops all its processes.

    Raises:
        RuntimeError: if the command fails; the message carries its stderr.
    """
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        stop_group(proc)
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {stderr.strip()}")


def run_fio(job: Job, filename: str, direct: int, settings: Settings) -> Measurement:
    """Drop the caches, run one fio job and return its figures."""
    output = settings.workdir / f"fio-{job.name}.json"
    drop_caches()
    run_in_own_group(fio_command(job, filename, direct, settings, output), settings.runtime + 600)
    return parse_fio(json.loads(output.read_text()), job)


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of a process so far (0 if unknown)."""
    fields = _proc_stat_fields(pid) if pid is not None else None
    if not fields:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def measure_route(route: str, files: dict[str, str], settings: Settings,
                  series: dict[tuple[str, str, str], Series], pids: dict[str, int | None] | None = None) -> None:
    """Run every job on one route of every target, interleaving the targets job by job.

    Odd repetitions run the targets in order, even ones in reverse, so that
    whatever the previous job leaves behind (host-side writeback, for one)
    does not always hit the same target.
    """
    for rep in range(1, settings.repeat + 1):
        order = list(files.items()) if rep % 2 else list(reversed(files.items()))
        for job in JOBS:
            if route not in job.routes:
                continue
            for target, filename in order:
                key = (target, route, job.name)
                pid = (pids or {}).get(target)
                before = cpu_seconds(pid)
                result = run_fio(job, filename, ROUTES[route], settings)
                result = dataclasses.replace(result, cpu_s=cpu_seconds(pid) - before)
                series.setdefault(key, Series(target, route, job)).runs.append(result)
                log(f"  [{route} {rep}/{settings.repeat}] {job.label:<17} {target:<12}"
                    f"{result.mb_s:9.1f} MB/s {result.iops:10.0f} IOPS")


def run_benchmark(settings: Settings) -> tuple[list[Series], dict[str, Mounted], dict[str, dict[str, int]]]:
    """Mount every target, measure every route, read the daemons' memory figures, and tear
    everything down in order."""
    series: dict[tuple[str, str, str], Series] = {}
    with contextlib.ExitStack() as mounts:
        mounted: dict[str, Mounted] = {}
        for target in settings.targets:
            log(f"mounting {target} ...")
            if target == "passthrough":
                mounted[target] = mounts.enter_context(mount_passthrough(settings.workdir, settings.read_ahead_kb))
            else:
                mounted[target] = mounts.enter_context(mount_vraid(settings, target))
        log("route image: fio on MOUNTPOINT/disk.img (direct=0)")
        pids = {t: m.pid for t, m in mounted.items()}
        measure_route("image", {t: str(m.image) for t, m in mounted.items()}, settings, series, pids)
        with contextlib.ExitStack() as loops:
            devices = {t: loops.enter_context(attach_loop(m.image)) for t, m in mounted.items()}
            log("route loop: fio on " + ", ".join(f"{t}={d}" for t, d in devices.items()) + " (direct=1)")
            measure_route("loop", devices, settings, series, pids)
        if settings.dbench:
            log(f"route ext4: dbench {DBENCH_CLIENTS} clients, {settings.dbench} s, on ext4 over a loop device")
            measure_dbench(mounted, settings, series)
        memory = {t: m for t, m in ((t, memory_of(m.pid)) for t, m in mounted.items()) if m}
        log("tearing down ...")
    return list(series.values()), mounted, memory


# --- memory --------------------------------------------------------------------


def memory_of(pid: int | None) -> dict[str, int]:
    """A daemon's memory figures in KiB (VmHWM = peak RSS; RssFile includes a mapped NVRAM file)."""
    if pid is None:
        return {}
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    wanted = ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")
    return {k: int(v.split()[0]) for k, _, v in (line.partition(":") for line in text.splitlines()) if k in wanted}


# --- ext4 and dbench --------------------------------------------------------------


@contextlib.contextmanager
def mount_ext4(device: str, mountpoint: Path) -> Iterator[Path]:
    """A fresh ext4 on ``device`` mounted at ``mountpoint``; unmounted again afterwards."""
    run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device], timeout=600)
    mountpoint.mkdir(exist_ok=True)
    run(["mount", "-t", "ext4", device, str(mountpoint)], timeout=120)
    try:
        yield mountpoint
    finally:
        for _ in range(20):
            if run(["umount", str(mountpoint)], check=False, timeout=600).returncode == 0 or not is_mounted(mountpoint):
                break
            time.sleep(0.5)


def parse_dbench(text: str) -> float:
    """dbench's final "Throughput N MB/sec" (its MB = 10^6 bytes)."""
    found = re.findall(r"Throughput ([0-9.]+) MB/sec", text)
    if not found:
        raise RuntimeError(f"no throughput in dbench's output: {text[-500:]}")
    return float(found[-1])


def run_dbench(directory: Path, seconds: int, workdir: Path) -> Measurement:
    out = workdir / "dbench.txt"
    drop_caches()
    cmd = ["dbench", "-D", str(directory), "-t", str(seconds), str(DBENCH_CLIENTS)]
    with open(out, "w") as f:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=seconds + 600)
        except BaseException:
            stop_group(proc)  # type: ignore[arg-type]
            raise
    text = out.read_text(errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"dbench failed ({proc.returncode}): {text[-500:]}")
    mb = parse_dbench(text)
    return Measurement(bw_bytes=mb * 1e6, iops=0.0, lat_mean_us=0.0, runtime_ms=seconds * 1000, io_bytes=int(mb * 1e6 * seconds))


def measure_dbench(mounted: dict[str, Mounted], settings: Settings, series: dict[tuple[str, str, str], Series]) -> None:
    """dbench on a fresh ext4 over a loop device on each image, targets interleaved as the fio jobs."""
    for rep in range(1, settings.repeat + 1):
        order = list(mounted.items()) if rep % 2 else list(reversed(mounted.items()))
        for target, m in order:
            with attach_loop(m.image) as device, mount_ext4(device, settings.workdir / f"ext4-{target}") as fs:
                result = run_dbench(fs, settings.dbench, settings.workdir)
            series.setdefault((target, "ext4", DBENCH_JOB.name), Series(target, "ext4", DBENCH_JOB)).runs.append(result)
            log(f"  [ext4 {rep}/{settings.repeat}] {DBENCH_JOB.label:<17} {target:<12}{result.mb_s:9.1f} MB/s")


# --- memory soak -----------------------------------------------------------------


def run_soak(settings: Settings) -> dict[str, object]:
    """fio for ``settings.soak`` seconds (random 4 KiB reads and writes, 4 jobs, depth 16 on a
    loop device) against each vraid target, sampling its daemon's memory every second."""
    result: dict[str, object] = {}
    for target in settings.targets:
        if target == "passthrough":
            continue
        with contextlib.ExitStack() as stack:
            m = stack.enter_context(mount_vraid(settings, target))
            device = stack.enter_context(attach_loop(m.image))
            cmd = ["fio", "--name=soak", f"--filename={device}", "--rw=randrw", "--bs=4k", "--ioengine=libaio",
                   "--iodepth=16", "--numjobs=4", "--group_reporting", "--direct=1", "--time_based",
                   f"--runtime={settings.soak}", "--randrepeat=0", "--output-format=json",
                   f"--output={settings.workdir / 'fio-soak.json'}"]
            log(f"soak: {target}, {settings.soak} s of fio randrw 4k, 4 jobs x depth 16 on {device}")
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True, start_new_session=True)
            samples: list[dict[str, int]] = []
            try:
                while proc.poll() is None:
                    figures = memory_of(m.pid)
                    if figures:
                        samples.append(figures)
                    time.sleep(1.0)
            except BaseException:
                stop_group(proc)
                raise
            report = json.loads((settings.workdir / "fio-soak.json").read_text())["jobs"][0]
            final = memory_of(m.pid)
            peak = {k: max(s.get(k, 0) for s in samples) for k in ("VmRSS", "RssAnon", "RssFile")} if samples else {}
            result[target] = {"seconds": settings.soak, "samples": len(samples), "peak_kib": peak, "final_kib": final,
                              "first_kib": samples[0] if samples else {},
                              "read_iops": report["read"]["iops"], "write_iops": report["write"]["iops"],
                              "mount_args": list(CONFIGS[target])}
            log(f"  {target}: peak RSS {peak.get('VmRSS', 0) / 1024:.0f} MiB (anonymous {peak.get('RssAnon', 0) / 1024:.0f}, "
                f"file {peak.get('RssFile', 0) / 1024:.0f}), VmHWM {final.get('VmHWM', 0) / 1024:.0f} MiB")
    return result


# --- report --------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One line of the comparison: a job on a route, every target's runs."""

    route: str
    job: Job
    runs: dict[str, list[Measurement]]

    @property
    def figures(self) -> dict[str, Measurement]:
        """The median figures of each target."""
        return {target: Series(target, self.route, self.job, runs).median() for target, runs in self.runs.items()}

    def paired_ratios(self, target: str, base: str = "passthrough") -> list[float]:
        """``target``/``base`` throughput of each repetition (empty without both).

        The runs of one repetition ran back to back, so pairing them
        cancels most of the drift of the machine and its storage.
        """
        if target not in self.runs or base not in self.runs:
            return []
        pairs = zip(self.runs[base], self.runs[target])
        return [v.bw_bytes / p.bw_bytes for p, v in pairs if p.bw_bytes > 0]

    def ratio(self, target: str, base: str = "passthrough") -> float | None:
        """The median of the paired ratios."""
        ratios = self.paired_ratios(target, base)
        return statistics.median(ratios) if ratios else None

    def target_ratio(self, target: str) -> float:
        """The ratio to the passthrough ``target`` must reach on this row (0: none)."""
        if target == WRITE_THROUGH:
            return self.job.target_ratio
        # a cache configuration: small random writes that fit, and never below write-through
        return CACHE_RAND_WRITE_TARGET if self.job.name == "rand-write" else 0.0

    def verdict(self, target: str) -> str:
        """PASS/MISS against the passthrough target; a cache configuration must also
        not fall below write-through ("<wt" when it does)."""
        ratio, want = self.ratio(target), self.target_ratio(target)
        if ratio is None:
            return "-"
        failed = []
        if want and ratio < want:
            failed.append("MISS")
        if target != WRITE_THROUGH:
            to_wt = self.ratio(target, WRITE_THROUGH)
            if to_wt is not None and to_wt < 1.0:
                failed.append("<wt")
        if failed:
            return " ".join(failed)
        return "PASS" if want or target != WRITE_THROUGH else "-"


def build_rows(series: list[Series]) -> list[Row]:
    """Group the runs into one row per route and job, in run order."""
    rows = []
    for route in ROUTES:
        for job in (*JOBS, DBENCH_JOB):
            runs = {s.target: s.runs for s in series if s.route == route and s.job.name == job.name}
            if runs:
                rows.append(Row(route, job, runs))
    return rows


def _fmt(value: float | None, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def print_table(rows: list[Row], targets: tuple[str, ...], title: str) -> None:
    """One table: per row the passthrough's MB/s and IOPS, then per vraid configuration its
    MB/s, ratio to the passthrough (and to write-through) and verdict."""
    configs = [t for t in targets if t != "passthrough"]
    headers = ["route", "job", "pt MB/s", "pt IOPS"]
    for t in configs:
        short = t.removeprefix("vraid-") if t != WRITE_THROUGH else "wt"
        headers += [f"{short} MB/s", f"{short}/pt"] + ([f"{short}/wt"] if t != WRITE_THROUGH else []) + [f"{short} target", f"{short}"]
    lines = []
    for row in rows:
        fig = row.figures
        pt = fig.get("passthrough")
        cells = [row.route, row.job.label, _fmt(pt.mb_s if pt else None, ".1f"), _fmt(pt.iops if pt else None, ",.0f")]
        for t in configs:
            m = fig.get(t)
            want = row.target_ratio(t)
            cells += [_fmt(m.mb_s if m else None, ".1f"), _fmt(row.ratio(t))]
            if t != WRITE_THROUGH:
                cells.append(_fmt(row.ratio(t, WRITE_THROUGH)))
            cells += [f">= {want}" if want else "", row.verdict(t)]
        lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) if lines else len(h) for i, h in enumerate(headers)]
    print(title)
    for cells in [headers, *lines]:
        print("  ".join(c.rjust(w) if i >= 2 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))))


def print_cpu(rows: list[Row], targets: tuple[str, ...]) -> None:
    """The daemons' CPU time per request (us) and their CPU use (fraction of one core)
    during each job: on a CPU-bound machine a ratio follows the CPU per request."""
    print("daemon CPU per request, us (and cores busy during the job)")
    for row in rows:
        cells = []
        for t in targets:
            m = row.figures.get(t)
            if m is None or not m.cpu_s or not m.runtime_ms:
                continue
            requests = max(1.0, m.iops * m.runtime_ms / 1000)
            cells.append(f"{t} {m.cpu_s / requests * 1e6:7.0f} ({m.cpu_s / (m.runtime_ms / 1000):.2f})")
        if cells:
            print(f"  {row.route:<5} {row.job.label:<21} " + "   ".join(cells))


def print_memory(memory: dict[str, dict[str, int]]) -> None:
    if not memory:
        return
    print("daemon memory at the end (MiB): peak RSS (VmHWM), RSS = anonymous + file (a mapped NVRAM file counts as file)")
    for target, m in memory.items():
        args = " ".join(CONFIGS.get(target, ())) or "-"
        print(f"  {target:<13} peak {m.get('VmHWM', 0) / 1024:6.0f}  rss {m.get('VmRSS', 0) / 1024:6.0f}  "
              f"anon {m.get('RssAnon', 0) / 1024:6.0f}  file {m.get('RssFile', 0) / 1024:6.0f}   {args}")


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _command_version(cmd: list[str]) -> str | None:
    try:
        proc = run(cmd, check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (proc.stdout or proc.stderr).strip().splitlines()[0] if (proc.stdout or proc.stderr) else None


def _package_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def repo_commit() -> str | None:
    """The checked-out commit, read from .git without running git."""
    head = _read_text(REPO_DIR / ".git" / "HEAD")
    if head and head.startswith("ref: "):
        return _read_text(REPO_DIR / ".git" / head[5:])
    return head


def machine_facts() -> dict[str, object]:
    """What the figures depend on: CPUs, memory, kernel and software versions."""
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu,
        "mem_total_kib": int(meminfo["MemTotal"].split()[0]),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "pyfuse3": _package_version("pyfuse3"),
        "trio": _package_version("trio"),
        "numpy": _package_version("numpy"),
        "vraid": _package_version("vraid"),
        "repo_commit": repo_commit(),
        "fio": _command_version(["fio", "--version"]),
        "fuse": _command_version(["fusermount3", "--version"]),
        "hostname": platform.node(),
    }


def run_sim_speed(settings: Settings) -> dict[str, object]:
    """bench/sim_speed.py's floor case (``vraid sim``, hdd model, closed loop, one outstanding,
    each run between two heapq-floor runs; also ``--no-data``) in a child process, after the
    mounts are gone: its figures and the paired ratios vraid/floor."""
    out = settings.workdir / "sim_speed.json"
    cmd = [sys.executable, str(BENCH_DIR / "sim_speed.py"), "--only-floor-case", "--no-data",
           "--requests", str(settings.sim_requests), "--repeat", str(max(settings.repeat, 3)),
           "--floor-requests", "50000", "--json", str(out)]
    log("simulator: " + " ".join(cmd[1:]))
    run(cmd, timeout=3600)
    return json.loads(out.read_text())


def print_sim(sim: dict) -> None:
    if not sim:
        return
    target = sim.get("floor_target", 0.1)
    print(f"vraid sim speed against the heapq floor (bench/sim_speed.py, closed loop, one outstanding, "
          f"medians of paired ratios; target: hdd model >= {target})")
    for row in sim.get("rows", []):
        if "ratio_to_floor" not in row:
            continue
        name = row["model"] + (" --no-data" if row["no_data"] else "")
        ratio = row["ratio_to_floor"]
        verdict = ("PASS" if ratio >= target else "MISS") if row["model"].startswith("hdd") and not row["no_data"] else "-"
        print(f"  {name:28} {row['requests_per_s']:>8,} writes/s  floor {statistics.median(row['floor_rates']):>9,.0f}/s  "
              f"vraid/floor {ratio:.4f} = 1/{1 / ratio:.0f}  {verdict}")
    alone = sim.get("model_alone")
    if alone:
        print(f"  {alone['model'] + ' model alone':28} {round(alone['requests_per_s']):>8,} writes/s  (its member requests "
              f"replayed, no engine)  vraid/floor {alone['ratio_to_floor']:.4f} = 1/{1 / alone['ratio_to_floor']:.1f}")


def write_json(path: Path, settings: Settings, rows: list[Row], series: list[Series],
               mounted: dict[str, Mounted], started: dt.datetime, memory: dict | None = None,
               soak: dict | None = None, sim: dict | None = None) -> None:
    """Save settings, machine facts, every run, the medians and the verdicts."""
    document = {
        "schema": 2,
        "started": started.isoformat(timespec="seconds"),
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_facts(),
        "settings": {
            "size_bytes": settings.size, "runtime_s": settings.runtime, "repeat": settings.repeat,
            "targets": list(settings.targets), "vraid": str(settings.vraid),
            "vraid_create": {"level": 5, "disks": VRAID_DISKS, "disk_size": VRAID_DISK_SIZE, "strip": VRAID_STRIP},
            "vraid_mount_args": list(settings.mount_args), "image_bytes": IMAGE_BYTES,
            "configs": {t: list(CONFIGS[t]) for t in settings.targets if t in CONFIGS},
            "routes": {route: {"direct": direct} for route, direct in ROUTES.items()},
            "dbench_s": settings.dbench, "dbench_clients": DBENCH_CLIENTS, "soak_s": settings.soak,
            "sim_requests": settings.sim_requests,
        },
        "mounts": {t: {"read_ahead_kb": m.read_ahead_kb} for t, m in mounted.items()},
        "jobs": [asdict(job) for job in (*JOBS, DBENCH_JOB)],
        "memory_kib": memory or {},
        "soak": soak or {},
        "sim_speed": sim or {},
        "series": [
            {"target": s.target, "route": s.route, "job": s.job.name,
             "runs": [asdict(r) for r in s.runs], "median": asdict(s.median())}
            for s in series
        ],
        "comparison": [
            {"route": r.route, "job": r.job.name,
             **{f"{t}_mb_s": m.mb_s for t, m in r.figures.items()},
             **{f"{t}_iops": m.iops for t, m in r.figures.items()},
             "ratios": {t: {"target_ratio": r.target_ratio(t), "ratio": r.ratio(t), "paired_ratios": r.paired_ratios(t),
                            "to_write_through": r.ratio(t, WRITE_THROUGH) if t != WRITE_THROUGH else None,
                            "verdict": r.verdict(t)}
                        for t in r.runs if t != "passthrough"}}
            for r in rows
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")


# --- command line ---------------------------------------------------------------


def parse_size(text: str) -> int:
    """Parse ``256M``, ``1G``, ``4096`` (binary units) into bytes."""
    units = {"K": KiB, "M": MiB, "G": 1024 * MiB}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="64 MiB region, 3 s cap per job")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="run every job N times, report medians")
    parser.add_argument("--only", action="append", choices=TARGETS, metavar="TARGET",
                        help="measure only these targets (repeatable): " + ", ".join(TARGETS) + " (default: all)")
    parser.add_argument("--dbench", type=int, metavar="SECONDS",
                        help="seconds of dbench (4 clients) on ext4 over a loop device per target (default 30, quick 8; 0: skip)")
    parser.add_argument("--soak", type=int, default=0, metavar="SECONDS",
                        help="only the memory soak: fio randrw 4k, 4 jobs x depth 16, for this long on each vraid target, "
                             "sampling the daemon's RSS (the docs record a 600 s run)")
    parser.add_argument("--sim", type=int, metavar="REQUESTS",
                        help="simulated writes per run of bench/sim_speed.py's floor case, run after the mounts "
                             "(default 4000, quick 1000; 0 skips it)")
    parser.add_argument("--size", type=parse_size, help="region each job covers (default 256M, quick 64M)")
    parser.add_argument("--runtime", type=int, help="cap per job in seconds (default 10, quick 3)")
    parser.add_argument("--vraid", type=Path, default=REPO_DIR / ".venv" / "bin" / "vraid", help="vraid CLI")
    parser.add_argument("--mount-arg", action="append", default=[], metavar="ARG",
                        help="extra argument for `vraid mount` (repeatable), e.g. --mount-arg=--cache=stripe")
    parser.add_argument("--read-ahead-kb", type=int, default=1024,
                        help="read-ahead set on both FUSE mounts (default 1024; -1 leaves the kernel's)")
    parser.add_argument("--workdir", type=Path, help="parent of the temporary directory (default /tmp)")
    parser.add_argument("--keep-workdir", action="store_true", help="do not delete the temporary directory")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results.json", help="JSON results file")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def check_environment(settings: Settings) -> None:
    """Fail early, with a clear message, when something the run needs is missing."""
    if os.geteuid() != 0:
        raise SystemExit("run.py needs root (drop_caches, losetup, mounts)")
    tools = ["fio", "fusermount3", "losetup"] + (["dbench", "mkfs.ext4"] if settings.dbench else [])
    for tool in tools:
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} not found in PATH")
    if any(t in CONFIGS for t in settings.targets) and not os.access(settings.vraid, os.X_OK):
        raise SystemExit(f"vraid CLI {settings.vraid} not found; use --vraid PATH or --only passthrough")


@contextlib.contextmanager
def work_directory(parent: Path | None, keep: bool) -> Iterator[Path]:
    """A fresh temporary directory, deleted afterwards unless something is still mounted in it."""
    path = Path(tempfile.mkdtemp(prefix="vraid-bench-", dir=parent)).resolve()
    try:
        yield path
    finally:
        leftovers = sorted(m for m in mount_points() if m.startswith(f"{path}/"))
        if leftovers:
            log(f"warning: still mounted, keeping {path}: {', '.join(leftovers)}")
        elif not keep:
            shutil.rmtree(path, ignore_errors=True)


def _interrupt(signum: int, frame: object) -> None:
    """Stop at the first SIGINT/SIGTERM; ignore later ones so that teardown can finish.

    SIGINT becomes KeyboardInterrupt, SIGTERM SystemExit; either unwinds
    through every ``finally``, which detaches and unmounts in order.
    """
    for other in (signal.SIGINT, signal.SIGTERM):
        signal.signal(other, lambda *_: log("still cleaning up; please wait"))
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 on a failed step, 130 when interrupted."""
    args = parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)
    try:
        return benchmark(args)
    except RuntimeError as exc:
        log(f"error: {exc}")
        return 1
    except KeyboardInterrupt:
        log("interrupted")
        return 130


def benchmark(args: argparse.Namespace) -> int:
    """Measure, print the table and write the JSON file."""
    started = dt.datetime.now(dt.timezone.utc)
    with work_directory(args.workdir, args.keep_workdir) as workdir:
        settings = Settings(
            size=args.size or (64 * MiB if args.quick else 256 * MiB),
            runtime=args.runtime or (3 if args.quick else 10),
            repeat=args.repeat,
            targets=tuple(t for t in TARGETS if t in args.only) if args.only else TARGETS,
            vraid=args.vraid, mount_args=tuple(args.mount_arg),
            read_ahead_kb=args.read_ahead_kb, workdir=workdir,
            out=args.out, keep_workdir=args.keep_workdir,
            dbench=args.dbench if args.dbench is not None else (8 if args.quick else 30),
            soak=args.soak,
            sim_requests=args.sim if args.sim is not None else (1000 if args.quick else 4000),
        )
        check_environment(settings)
        if settings.soak:
            soak = run_soak(settings)
            write_json(settings.out, settings, [], [], {}, started, soak=soak)
            log(f"results written to {settings.out}")
            return 0
        series, mounted, memory = run_benchmark(settings)
        sim = run_sim_speed(settings) if settings.sim_requests else {}
    rows = build_rows(series)
    title = (f"fio psync iodepth 1 unless named, {settings.size // MiB} MiB region ({RAND_WRITE_REGION // MiB} MiB for "
             f"random writes), <= {settings.runtime} s per job, median of {settings.repeat}; vraid configurations: "
             + "; ".join(f"{t} = {' '.join(CONFIGS[t]) or 'write-through'}" for t in settings.targets if t in CONFIGS))
    print_table(rows, settings.targets, title)
    print_cpu(rows, settings.targets)
    print_memory(memory)
    print_sim(sim)
    write_json(settings.out, settings, rows, series, mounted, started, memory, sim=sim)
    log(f"results written to {settings.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""End to end: power cuts under ext4, a crash plus a member failure, faults under load.

A **power cut** here is ``kill -9`` of a daemon whose members are
``--fault all:volatile`` (backends/volatile.py): every member write since that
member's last flush lives only in the daemon's memory, so the kill loses it
as a power cut would, where a plain ``kill -9`` leaves it in the member
files' page cache. Each crash point: ext4 on a loop device on the image is
being written by a process that fsyncs every third file and reports it; the
daemon is killed right after the writer's k-th fsync (k random) plus a random
moment more. Then, as after a real power cut: the dead mounts are torn down,
the array is mounted again (NVRAM replay, resync), ext4 is mounted (journal
replay) and unmounted, ``e2fsck -fn`` must be clean, every fsynced file of
every point so far must read back (sha256), and ``vraid check`` must count 0
mismatches. Three cache modes: write-through, ``--cache stripe`` with NVRAM
(the NVRAM file is the battery-backed part: it is not behind the volatile
layer), and the volatile ``--cache pbg``.

The **write hole** (``test_a_crash_then_a_member_lost_before_resync...``): a
crash with one member slow (so that stripes are caught half written), then a
member removed before any resync, then a forced degraded mount. md would
lose exactly the missing member's blocks in the rows whose parity is stale
(reconstruction XORs the stale parity); the test computes those rows from
the member files and checks that the image differs from the crashed one in
exactly those blocks, and that every fsynced file not on them is intact.

The layers added since (issue 33): the log disk in each configuration, the log under a
write cache, multibuffer and DPSR, 3 cuts each (20 with --run-slow, and 20 plain kill -9s).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mountutil import is_mounted, pid_alive, requires_mount, run, vraid, wait_gone
from test_e2e_crash import _start_writer  # the same writer: prints "synced NAME SHA256" once fsync returned

pytestmark = [requires_mount, pytest.mark.mount]

VOLATILE = ("--fault", "all:volatile")
#: the cache modes of the power-cut tests (the NVRAM path is filled in per test)
MODES = {
    "write-through": (),
    "stripe-nvram": ("--cache", "stripe", "--cache-size", "8M", "--destage", "adaptive", "--nvram", "{nvram}"),
    "pbg-volatile": ("--cache", "pbg", "--cache-size", "8M"),
}


#: the layers added since (issue 33, item 6): ``vraid create`` options, then mount options
LAYERS = {
    "log-scd": (("--log", "scd", "--log-size", "8M"), ()),
    "log-mcd": (("--log", "mcd:2", "--log-size", "4M"), ()),
    "log-mirrored": (("--log", "mirrored", "--log-size", "4M"), ()),
    "log-per-disk": (("--log", "per-disk", "--log-size", "4M"), ()),
    "log-scd-cache": (("--log", "scd", "--log-size", "8M"), ("--cache", "stripe", "--cache-size", "8M")),
    "multibuffer": (("--placement", "multibuffer"), ()),
    "dpsr": (("--placement", "dpsr"), ()),
}
LAYER_MOUNT = {name: mount for name, (_create, mount) in LAYERS.items()}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wait_synced(proc: subprocess.Popen, count: int, timeout: float = 30) -> str:
    """Read the writer's report until ``count`` files were fsynced; the text read (its
    last line may be cut: :func:`_finish` joins it with the rest).
    (Raw reads of the pipe: a buffered readline could sit on lines select cannot see.)"""
    fd = proc.stdout.fileno()
    buf = b""
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while len(re.findall(rb"^synced \S+ [0-9a-f]{64}\n", buf, re.M)) < count and time.monotonic() < deadline:
            if sel.select(timeout=0.5):
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
    finally:
        sel.close()
    return buf.decode()


def _finish(proc: subprocess.Popen, head: str) -> dict[str, str]:
    """Kill our writer; every file it reported fsynced (``head``, read before, and the rest)."""
    if proc.poll() is None:
        proc.kill()
    rest, _ = proc.communicate(timeout=60)
    return _synced((head + rest).splitlines())


def _synced(lines: list[str]) -> dict[str, str]:
    out = {}
    for line in lines:
        parts = line.split()
        if len(parts) == 3 and parts[0] == "synced":
            out[parts[1]] = parts[2]
    return out


def _cut_power(session, pid: int, writer: subprocess.Popen, head: str, fs: Path, dev: str, mnt: Path) -> dict[str, str]:
    """The power goes: the writer and the daemon stop at once; then the dead mounts are
    torn down. Returns every file the writer reported fsynced before the cut.

    The writer is frozen (SIGSTOP) before the daemon is killed and is dead before
    anything is unmounted. Were it still running at ``umount -l``, the mountpoint's
    path would name the directory underneath, and the writer's next files would land
    there, on the test machine's own file system, where fsync succeeds: reported
    fsynced, and "gone" after the remount although vraid never saw them."""
    if writer.poll() is None:
        writer.send_signal(signal.SIGSTOP)  # reports nothing more from here on
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    synced = _finish(writer, head)
    run("umount", "-l", fs, check=False)  # the loop device now fails every I/O
    session.fs_mounts.remove(fs)
    session.detach(dev)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    session.pids.remove(pid)
    strays = sorted(p.name for p in fs.iterdir()) if fs.is_dir() else []
    assert not strays, f"files under the ext4 mountpoint, written after it was unmounted: {strays[:5]}"
    return synced


def _remount(session, arr: Path, mnt: Path, *extra: str) -> tuple[int, str]:
    """``vraid mount`` again (the daemon's pid from its own message: one CLI call fewer)."""
    mnt.mkdir(parents=True, exist_ok=True)
    result = vraid("mount", arr, mnt, *extra)
    session.fuse_mounts.append(mnt)
    text = " ".join(result.stdout.split())
    pid = int(re.search(r"\(daemon pid (\d+)\)", text).group(1))
    session.pids.append(pid)
    return pid, text


def _check(target: Path) -> dict:
    result = vraid("check", target, "--json", check=False)
    assert result.returncode in (0, 4), result.stdout + result.stderr
    return json.loads(result.stdout)


def _mkfs(session, mnt: Path, fs: Path) -> str:
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    return dev


def _power_cuts(tmp_path: Path, session, mode: str, points: int, seed: int, create: tuple[str, ...] = (),
                volatile: bool = True) -> dict:
    """``points`` power cuts of one array under ext4 in cache mode ``mode``; what was checked.
    ``create``: more ``vraid create`` options (a log disk, a placement), with ``mode`` the
    mount's options (from :data:`MODES`, or :data:`LAYERS`). ``volatile=False``: plain
    ``kill -9`` (the member files keep every write the daemon made)."""
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    extra = (VOLATILE if volatile else ()) + tuple(a.format(nvram=tmp_path / "nvram.bin") for a in {**MODES, **LAYER_MOUNT}[mode])
    vraid("create", arr, "--disks", "5", "--disk-size", "32M", "--strip", "16K", *create)
    rng = random.Random(seed)
    pid = session.mount(arr, mnt, *extra)
    dev = _mkfs(session, mnt, fs)
    synced: dict[str, str] = {}
    report = {"mode": mode, "volatile": volatile, "points": 0, "files_checked": 0, "resynced": [], "replayed": []}
    for point in range(points):
        writer = _start_writer(fs, f"p{point}", rng.randrange(1 << 30))
        head = _wait_synced(writer, rng.randint(1, 3))
        time.sleep(rng.uniform(0, 0.4))  # the crash lands a moment after the k-th fsync returned
        synced |= _cut_power(session, pid, writer, head, fs, dev, mnt)

        pid, text = _remount(session, arr, mnt, *extra)  # recovery: NVRAM replay, resync
        assert "not shut down cleanly" in text, text
        m = re.search(r"resynced (\d+) stripes?", text)
        report["resynced"].append(int(m.group(1)) if m else 0)
        r = re.search(r"replayed (\d+) dirty blocks", text)
        report["replayed"].append(int(r.group(1)) if r else 0)
        dev = session.losetup(mnt / "disk.img")
        session.mount_fs(dev, fs)  # the kernel replays the ext4 journal, as after a power loss
        session.umount_fs(fs)
        fsck = run("e2fsck", "-fn", dev, check=False)
        assert fsck.returncode == 0, f"{mode} point {point}: e2fsck -fn found problems\n{fsck.stdout}{fsck.stderr}"
        session.mount_fs(dev, fs)
        for name, digest in synced.items():
            assert (fs / name).exists(), f"{mode} point {point}: fsynced file {name} is gone"
            assert _sha(fs / name) == digest, f"{mode} point {point}: fsynced file {name} changed"
        report["files_checked"] += len(synced)
        found = _check(mnt)
        assert found["mismatches"] == 0 and found["done"] == found["total"], found
        report["points"] += 1
        # keep the filesystem from filling: drop what was not synced and the files of older points
        for p in fs.iterdir():
            if p.is_file() and (p.name not in synced or not p.name.startswith((f"p{point}-", f"p{point - 1}-"))):
                p.unlink()
                synced.pop(p.name, None)
        run("sync", "-f", fs)  # this file system only: os.sync() waits on every mount of the machine
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check(arr)["mismatches"] == 0  # offline, after a clean unmount
    print(f"\npower cuts: {json.dumps(report)}")
    return report


#: (branch durability) once in 5 runs after the harness fix, ``--cache pbg`` lost an fsynced file
#: (p2-00000, point 2) and the recovery after that cut found 0 dirty bitmap chunks. Unexplained;
#: the cache races found since (tests/test_cache_races.py) need sub-block writes, which ext4 on a
#: loop device does not send. 25 runs of the pbg case since then lost nothing: strict again
#: (docs/crash-and-scrub.md, section 4).
def _modes():
    """stripe-nvram in the quick suite, the other two with --run-slow."""
    return [m if m == "stripe-nvram" else pytest.param(m, marks=pytest.mark.slow) for m in MODES]


@pytest.mark.parametrize("mode", _modes())
def test_power_cuts_under_ext4_three_points(tmp_path, session, mode):
    report = _power_cuts(tmp_path, session, mode, points=3, seed={"write-through": 1, "stripe-nvram": 2, "pbg-volatile": 3}[mode])
    assert report["points"] == 3 and report["files_checked"] >= 3


@pytest.mark.slow
@pytest.mark.parametrize("mode", _modes())
def test_power_cuts_under_ext4_twenty_points(tmp_path, session, mode):
    report = _power_cuts(tmp_path, session, mode, points=20, seed=20 + list(MODES).index(mode))
    assert report["points"] == 20


#: a writer that outlives the power cut: it reports one file fsynced on ext4, then waits until
#: its directory is no longer a mount point (``umount -l`` of the dead ext4) and writes one
#: more; its open directory keeps the lazily unmounted ext4 and its loop device busy meanwhile
LATE_WRITER = r"""
import hashlib, os, sys, time
root = sys.argv[1]
def put(name, data):
    fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, data)
    os.fsync(fd)
    os.close(fd)
    print("synced", name, hashlib.sha256(data).hexdigest(), flush=True)
put("before", b"b" * 5000)
hold = os.open(root, os.O_RDONLY)
while os.path.ismount(root):
    time.sleep(0.002)
put("after", b"a" * 5000)
time.sleep(120)
"""


def test_a_writer_alive_after_the_cut_cannot_report_files_vraid_never_saw(tmp_path, session):
    """Regression (the harness, not vraid). The power-cut tests once killed the daemon, ran
    ``umount -l`` on ext4 and only then killed the writer. A writer still running then
    creates its next files under the mountpoint's path, which now names the plain
    directory underneath: fsync succeeds there, the file is reported fsynced, and after
    the remount it is "gone" (the write-back cache modes looked as if they lost fsynced
    files: p0-00006, p0-00018; every block vraid acknowledged before a completed fsync
    was in fact there). :func:`_cut_power` stops the writer before the daemon dies."""
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "3", "--disk-size", "16M", "--strip", "16K")
    pid = session.mount(arr, mnt, *VOLATILE)
    dev = _mkfs(session, mnt, fs)
    writer = subprocess.Popen([sys.executable, "-c", LATE_WRITER, str(fs)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    synced = _cut_power(session, pid, writer, _wait_synced(writer, 1), fs, dev, mnt)
    assert sorted(synced) == ["before"]
    _remount(session, arr, mnt, *VOLATILE)
    dev = session.losetup(mnt / "disk.img")
    session.mount_fs(dev, fs)
    for name, digest in synced.items():
        assert (fs / name).exists(), f"fsynced file {name} is gone"
        assert _sha(fs / name) == digest
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


def test_volatile_members_lose_exactly_what_was_not_flushed(tmp_path, session):
    """The backend on a real mount: after kill -9 a fsynced write is there and a write
    that was only acknowledged is gone; without ``volatile`` the same kill keeps both
    (the member files' page cache survives a daemon crash, not a power cut)."""
    results = {}
    for volatile in (True, False):
        arr, mnt = tmp_path / f"arr{volatile}", tmp_path / f"mnt{volatile}"
        vraid("create", arr, "--disks", "3", "--disk-size", "8M", "--strip", "16K")
        extra = VOLATILE if volatile else ()
        pid = session.mount(arr, mnt, *extra)
        fd = os.open(mnt / "disk.img", os.O_RDWR)
        try:
            os.pwrite(fd, b"F" * 65536, 0)
            os.fsync(fd)
            os.pwrite(fd, b"U" * 65536, 1 << 20)  # acknowledged by the daemon, never flushed
        finally:
            os.close(fd)
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid, 10)
        run("fusermount3", "-u", "-z", mnt, check=False)
        session.fuse_mounts.remove(mnt)
        session.pids.remove(pid)
        _remount(session, arr, mnt, *extra)
        with open(mnt / "disk.img", "rb") as f:
            results[volatile] = (f.read(65536), f.seek(1 << 20) and f.read(65536))
        assert _check(mnt)["mismatches"] == 0
        session.umount(mnt)
    assert results[True] == (b"F" * 65536, b"\0" * 65536)
    assert results[False] == (b"F" * 65536, b"U" * 65536)


# -- compound failures -------------------------------------------------------------
def _member_rows(arr: Path, g) -> tuple[list[np.ndarray], np.ndarray]:
    """Each member's data area as blocks, and which rows (member blocks) do not XOR to zero."""
    blocks = []
    for i in range(g.ndisks):
        raw = np.fromfile(arr / f"disk{i}.img", dtype=np.uint8)[g.data_offset : g.data_offset + g.stripes * g.strip_size]
        blocks.append(raw.reshape(-1, g.block_size))
    stale = np.bitwise_xor.reduce(np.stack(blocks), axis=0).any(axis=1)
    return blocks, stale


def _file_blocks(dev: str, names: list[str]) -> dict[str, set[int]]:
    """The image blocks of each file (ext4 block size = image block size), from debugfs."""
    out = {}
    for name in names:
        text = run("debugfs", "-R", f"blocks /{name}", dev, check=False).stdout
        out[name] = {int(x) for x in text.split() if x.isdigit()}
    return out


@pytest.mark.parametrize("points", [1, pytest.param(6, marks=pytest.mark.slow)])
def test_a_crash_then_a_member_lost_before_resync_loses_what_md_would(tmp_path, session, points):
    """The RAID-5 write hole, end to end. One member is slow (``latency``) so that a kill
    catches stripes whose other blocks landed and its did not. After the crash a member
    is removed before any resync and the array is mounted degraded with --force. What
    vraid then returns differs from the crashed image exactly in the removed member's
    data blocks whose row has stale parity (md's loss: its reconstruction is the same
    XOR); every fsynced file with no block there is intact."""
    from vraid.ondisk.assemble import assemble

    rng = random.Random(7)
    totals = {"points": 0, "stale_rows": 0, "lost_blocks": 0, "files_intact": 0, "files_on_lost_blocks": 0,
              "ext4_lost": 0}
    for point in range(points):
        arr, mnt, fs = tmp_path / f"arr{point}", tmp_path / f"mnt{point}", tmp_path / f"fs{point}"
        vraid("create", arr, "--disks", "4", "--disk-size", "16M", "--strip", "16K")
        slow = rng.randrange(4)
        pid = session.mount(arr, mnt, "--fault", f"disk{slow}:latency=100ms,p=0.5,seed={point}")
        dev = _mkfs(session, mnt, fs)
        writer = _start_writer(fs, f"c{point}", rng.randrange(1 << 30))
        head = _wait_synced(writer, rng.randint(2, 5))
        time.sleep(rng.uniform(0, 0.3))
        synced = _cut_power(session, pid, writer, head, fs, dev, mnt)

        asm = assemble(arr)
        g = asm.geometry
        blocks, stale = _member_rows(arr, g)
        lost_member = rng.choice([d for d in range(4) if d != slow])  # the slow one's writes are what lagged
        # the crashed image as md would read it with every member present, and the blocks md would lose
        nblocks = g.capacity // g.block_size
        where = [g.locate(b) for b in range(nblocks)]
        before = np.stack([blocks[w.disk][w.member_block] for w in where])
        expect_lost = {b for b, w in enumerate(where) if w.disk == lost_member and stale[w.member_block]}

        (arr / f"disk{lost_member}.img").rename(tmp_path / f"gone{point}.img")  # the member dies before the resync
        refused = vraid("mount", arr, mnt, check=False)
        assert refused.returncode == 1 and "write hole" in " ".join(refused.stderr.split()), refused.stderr
        pid, text = _remount(session, arr, mnt, "--force")
        after = np.fromfile(mnt / "disk.img", dtype=np.uint8).reshape(-1, g.block_size)
        differ = set(np.flatnonzero((after != before).any(axis=1)).tolist())
        assert differ == expect_lost, (sorted(differ)[:20], sorted(expect_lost)[:20])

        dev = session.losetup(mnt / "disk.img")
        try:
            session.mount_fs(dev, fs)  # journal replay; debugfs then sees where every file lives
        except AssertionError:  # ext4's own metadata was on a lost block: that is the loss md would have too
            assert expect_lost, "ext4 does not mount although no block was lost"
            totals["ext4_lost"] += 1
        else:
            owners = _file_blocks(dev, sorted(synced))
            for name, digest in synced.items():
                if owners[name] & expect_lost:
                    totals["files_on_lost_blocks"] += 1
                    continue
                assert _sha(fs / name) == digest, f"point {point}: fsynced file {name} changed, none of its blocks was lost"
                totals["files_intact"] += 1
            session.umount_fs(fs)
        session.detach(dev)
        session.umount(mnt)
        totals["points"] += 1
        totals["stale_rows"] += int(stale.sum())
        totals["lost_blocks"] += len(expect_lost)
    print(f"\nwrite hole: {json.dumps(totals)}")
    assert totals["files_intact"] + totals["files_on_lost_blocks"] > 0 or totals["ext4_lost"] == points


FAULTS = {
    "eio-range": ("disk1:eio=600-3500", True),  # of 3840 data blocks: ext4's writes reach it
    "latency": ("disk0:latency=10ms,p=0.05,seed=3", False),
    "fail-after": ("disk2:fail-after=150", True),  # a member sees about 250 requests in this test
}


@pytest.mark.parametrize("name", [n if n == "eio-range" else pytest.param(n, marks=pytest.mark.slow) for n in FAULTS])
def test_faults_injected_under_ext4_load_lose_nothing(tmp_path, session, name):
    """A bad range, a slow member or a member that dies, under ext4 writes: the daemon
    stays up, a failing member is failed (RAID-5 goes on degraded), every fsynced file
    verifies on the mount and after a clean remount without the fault, e2fsck is clean."""
    spec, fails = FAULTS[name]
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M", "--strip", "16K")
    pid = session.mount(arr, mnt, "--fault", spec)
    dev = _mkfs(session, mnt, fs)
    writer = _start_writer(fs, name, 11)
    head = ""
    try:
        head = _wait_synced(writer, 9, timeout=60)
    finally:
        synced = _finish(writer, head)
    assert len(synced) >= 9, f"only {len(synced)} files fsynced under the fault"
    for n, digest in synced.items():
        assert _sha(fs / n) == digest
    assert pid_alive(pid) and is_mounted(mnt)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["internal_errors"] == 0
    disk = int(spec[4])
    member = status["members"][disk]
    assert (member["state"] == "failed") == fails, member
    print(f"\n{name}: {len(synced)} fsynced files; member {disk}: {json.dumps(member)}")
    if not fails:
        assert _check(mnt)["mismatches"] == 0
    session.umount_fs(fs)
    fsck = run("e2fsck", "-fn", dev, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    session.detach(dev)
    session.umount(mnt)

    session.mount(arr, mnt)  # no fault now; a failed member stays failed (degraded)
    dev = session.losetup(mnt / "disk.img")
    session.mount_fs(dev, fs)
    for n, digest in synced.items():
        assert _sha(fs / n) == digest, f"{name}: {n} changed after the remount"
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


@pytest.mark.parametrize("layer", list(LAYERS))
def test_power_cuts_on_the_newer_layers_three_points(tmp_path, session, layer):
    """The log disk in every configuration, the log under a write cache, multibuffer and
    DPSR: members that lose what was not flushed, a cut a moment after an fsync returned,
    3 points each (20 with --run-slow): every fsynced file intact, e2fsck clean."""
    report = _power_cuts(tmp_path, session, layer, points=3, seed=40 + list(LAYERS).index(layer),
                         create=LAYERS[layer][0])
    assert report["points"] == 3 and report["files_checked"] >= 3


@pytest.mark.slow
@pytest.mark.parametrize("layer", list(LAYERS))
def test_power_cuts_on_the_newer_layers_twenty_points(tmp_path, session, layer):
    report = _power_cuts(tmp_path, session, layer, points=20, seed=60 + list(LAYERS).index(layer),
                         create=LAYERS[layer][0])
    assert report["points"] == 20


@pytest.mark.slow
@pytest.mark.parametrize("layer", list(LAYERS))
def test_kill_9_on_the_newer_layers_twenty_points(tmp_path, session, layer):
    """The same 20 points with ``kill -9`` alone: the daemon dies, the member files keep what
    it wrote (the page cache outlives a process), recovery must still lose nothing fsynced."""
    report = _power_cuts(tmp_path, session, layer, points=20, seed=80 + list(LAYERS).index(layer),
                         create=LAYERS[layer][0], volatile=False)
    assert report["points"] == 20

"""End to end: kill -9 during an ext4 workload, resync at the next mount; scrub on a live mount; faults.

Each crash point: an ext4 filesystem on a loop device on the image is being
written (files, some fsynced) when the daemon is killed with SIGKILL. Then,
as a user would: the dead mounts are torn down (ext4 lazily, the loop device
detached, the FUSE mount with ``fusermount3 -uz``), the array is mounted
again (the mount resyncs the stripes its write-intent bitmap names and says
how many), ext4 is mounted (the kernel replays its journal, as after a power
loss), unmounted, and ``e2fsck -fn`` must find nothing at all (not ``-fy``:
after the kernel's journal replay nothing may need fixing). Every file whose
fsync returned is intact (sha256), and ``vraid check`` counts 0 mismatches.
The three-point run goes on RAID-5 and on RAID-6 (issue 32 item 4; ``vraid check`` there
checks P and Q).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mountutil import is_mounted, pid_alive, requires_mount, run, tree_hash, vraid, wait_gone

pytestmark = [requires_mount, pytest.mark.mount]

#: a workload in a process of its own: files of random size, every third one fsynced
#: (with its directory); prints "synced NAME SHA256" once an fsync has returned
WRITER = r"""
import hashlib, os, random, sys
root, tag, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
d = os.open(root, os.O_RDONLY)
i = 0
while True:
    data = rng.randbytes(rng.choice([1, 4096, 5000, 70000, 300000, rng.randrange(1, 1 << 20)]))
    name = f"{tag}-{i:05d}"
    fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    view = memoryview(data)
    while view:  # a write may be short
        view = view[os.write(fd, view):]
    if i % 3 == 0:
        os.fsync(fd)
        os.fsync(d)
        print("synced", name, hashlib.sha256(data).hexdigest(), flush=True)
    os.close(fd)
    i += 1
"""


def _start_writer(root: Path, tag: str, seed: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(root), tag, str(seed)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _stop_writer(proc: subprocess.Popen) -> dict[str, str]:
    """Kill our writer and collect the files it reported synced."""
    if proc.poll() is None:
        proc.kill()
    out, _ = proc.communicate(timeout=60)
    synced = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "synced":
            synced[parts[1]] = parts[2]
    return synced


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_json(target: Path) -> dict:
    result = vraid("check", target, "--json", check=False)
    assert result.returncode in (0, 4), result.stdout + result.stderr
    return json.loads(result.stdout)


#: level -> members of the crash runs (RAID-10: an even count)
DISKS = {1: 3, 4: 5, 5: 5, 6: 5, 10: 4}


def _crash_points(tmp_path: Path, session, points: int, seed: int, extra: tuple[str, ...] = (), level: int = 5) -> list[int]:
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--level", str(level), "--disks", str(DISKS[level]), "--disk-size", "48M", "--strip", "16K")
    rng = random.Random(seed)
    pid = session.mount(arr, mnt, *extra)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    synced: dict[str, str] = {}
    resynced: list[int] = []
    for point in range(points):
        writer = _start_writer(fs, f"p{point}", rng.randrange(1 << 30))
        time.sleep(rng.uniform(0.3, 2.5))
        os.kill(pid, signal.SIGKILL)  # the daemon dies mid-workload
        assert wait_gone(pid, 10)
        synced.update(_stop_writer(writer))
        # tear down what the dead daemon leaves: ext4 (lazily), the loop device, the FUSE mount
        run("umount", "-l", fs, check=False)
        session.fs_mounts.remove(fs)
        session.detach(dev)
        run("fusermount3", "-u", "-z", mnt, check=False)
        session.fuse_mounts.remove(mnt)
        session.pids.remove(pid)
        assert json.loads(vraid("examine", arr, "--json").stdout)[0]["superblock"]["clean"] is False

        result = vraid("mount", arr, mnt, *extra)
        session.fuse_mounts.append(mnt)
        status = json.loads(vraid("status", mnt, "--json").stdout)
        pid = status["pid"]
        session.pids.append(pid)
        text = " ".join(result.stdout.split())
        assert "not shut down cleanly" in text, text
        m = re.search(r"resynced (\d+) stripes? \(([^)]*)\)", text)
        assert m, text
        assert "write-intent bitmap" in m.group(2)
        assert status["resync"]["stripes"] == int(m.group(1))
        resynced.append(int(m.group(1)))

        dev = session.losetup(mnt / "disk.img")
        session.mount_fs(dev, fs)  # the kernel replays the ext4 journal, as after a power loss
        session.umount_fs(fs)
        fsck = run("e2fsck", "-fn", dev, check=False)
        assert fsck.returncode == 0, f"crash point {point}: e2fsck -fn found problems\n{fsck.stdout}{fsck.stderr}"
        session.mount_fs(dev, fs)
        for name, digest in synced.items():
            assert _sha(fs / name) == digest, f"crash point {point}: fsynced file {name} changed"
        found = _check_json(mnt)
        assert found["mismatches"] == 0 and found["done"] == found["total"], found
        # keep the filesystem from filling up: drop what is not synced and the files of older points
        for p in fs.iterdir():
            if p.is_file() and (p.name not in synced or not p.name.startswith((f"p{point}-", f"p{point - 1}-"))):
                p.unlink()
                synced.pop(p.name, None)
        run("sync", "-f", fs)  # this file system only: os.sync() waits on every mount of the machine
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check_json(arr)["mismatches"] == 0  # offline, after a clean unmount
    return resynced


@pytest.mark.parametrize("level", [5, 6, 10] + [pytest.param(n, marks=pytest.mark.slow) for n in (1, 4)])
def test_kill_9_during_ext4_writes_three_points(tmp_path, session, level):
    resynced = _crash_points(tmp_path, session, points=3, seed=1, level=level)
    # 48M members, 16K strips: 3008 stripes; a bitmap chunk is 4 MiB of data: 64 stripes of
    # RAID-4/5's four data strips on five members, 85 of RAID-6's three, 128 of RAID-10's two
    # on four members, 256 of RAID-1's one (the last chunk short). The resync covers whole chunks
    # the bitmap had set (how many depends on where ext4 wrote in the last seconds: bits are
    # cleared only after 5 s without writes, so a busy filesystem may have them all set)
    chunk = json.loads(vraid("examine", tmp_path / "arr", "--json").stdout)[0]["superblock"]["params"]["bitmap_chunk"]
    assert chunk == {1: 256, 4: 64, 5: 64, 6: 85, 10: 128}[level]
    assert all(0 <= n <= 3008 and n % chunk in (0, 3008 % chunk) for n in resynced), resynced


@pytest.mark.slow
def test_kill_9_during_ext4_writes_twenty_points(tmp_path, session):
    _crash_points(tmp_path, session, points=20, seed=20)


@pytest.mark.slow
def test_kill_9_with_a_cache_and_nvram_five_points(tmp_path, session):
    nv = tmp_path / "nvram.bin"
    _crash_points(tmp_path, session, points=5, seed=5,
                  extra=("--cache", "stripe", "--cache-size", "8M", "--destage", "adaptive", "--nvram", str(nv)))


def test_kill_9_of_an_array_without_a_bitmap_resyncs_everything(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M", "--strip", "16K", "--bitmap-chunk", "none")
    pid = session.mount(arr, mnt)
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"q" * 100000)
        os.fsync(f.fileno())
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    session.pids.remove(pid)
    result = vraid("mount", arr, mnt)
    session.fuse_mounts.append(mnt)
    session.pids.append(json.loads(vraid("status", mnt, "--json").stdout)["pid"])
    text = " ".join(result.stdout.split())
    assert "resynced 448 stripes (no write-intent bitmap: the whole array)" in text, text
    assert (mnt / "disk.img").open("rb").read(100000) == b"q" * 100000
    session.umount(mnt)


def test_check_on_a_live_mount_while_files_are_written(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "32M", "--strip", "16K")
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    writer = _start_writer(fs, "live", 3)
    try:
        for _ in range(2):
            found = _check_json(mnt)
            assert found["mismatches"] == 0 and found["done"] == found["total"] and not found["error"], found
        text = " ".join(vraid("check", mnt).stdout.split())  # the progress bar and the summary line
        assert "0 mismatches (parity blocks) in 0 stripes" in text, text
    finally:
        synced = _stop_writer(writer)
    assert synced, "the writer made no progress while the checks ran"
    # a mounted array directory is refused: the check belongs to the daemon
    refused = vraid("check", arr, check=False)
    assert refused.returncode == 1 and f"vraid check {mnt}" in " ".join(refused.stderr.split())
    # damage one parity block behind the daemon's back: check finds exactly it, repair fixes it
    run("sync", "-f", fs)
    run("fsfreeze", "-f", fs)  # nothing writes while we look
    try:
        status = json.loads(vraid("status", mnt, "--json").stdout)
        g = status["geometry"]
        stripe = g["stripes"] - 3
        parity = g["disks"] - 1 - stripe % g["disks"]  # left-symmetric
        member = sorted(arr.glob("disk*.img"))[parity]
        before = _check_json(mnt)
        assert before["mismatches"] == 0, before
        with open(member, "r+b") as f:
            at = g["data_offset"] + stripe * g["strip_size"] + 2 * g["block_size"] + 99
            old = os.pread(f.fileno(), 1, at)
            os.pwrite(f.fileno(), bytes([old[0] ^ 0xFF]), at)
        found = _check_json(mnt)
        assert (found["mismatches"], found["stripes"]) == (1, [stripe]), found
        fixed = _check_json_repair(mnt)
        assert fixed["repaired"] == 1
        assert _check_json(mnt)["mismatches"] == 0
    finally:
        run("fsfreeze", "-u", fs)
    for name, digest in synced.items():
        assert _sha(fs / name) == digest
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


def _check_json_repair(target: Path) -> dict:
    return json.loads(vraid("check", target, "--repair", "--json").stdout)


def test_injected_eio_fails_the_member_and_raid5_reconstructs(tmp_path, session):
    """RAID-5: an EIO from a member fails it (degraded mode), and the read is served
    from the others; the daemon stays up and status names the failed member."""
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M", "--strip", "16K")
    from vraid.ondisk.assemble import assemble

    g = assemble(arr).geometry
    where = g.locate(100)  # logical block 100
    data = os.urandom(8 * 4096)
    session.mount(arr, mnt)
    fd = os.open(mnt / "disk.img", os.O_RDWR)
    try:
        os.pwrite(fd, data, 96 * 4096)
        os.fsync(fd)
    finally:
        os.close(fd)
    session.umount(mnt)
    pid = session.mount(arr, mnt, "--fault", f"disk{where.disk}:eio={where.member_block}")
    fd = os.open(mnt / "disk.img", os.O_RDONLY)
    try:
        assert os.pread(fd, 8 * 4096, 96 * 4096) == data  # block 100 reconstructed from the others
        assert os.pread(fd, 4096, 50 * 4096) == b"\0" * 4096
    finally:
        os.close(fd)
    assert pid_alive(pid) and is_mounted(mnt)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    member = status["members"][where.disk]
    assert member["state"] == "failed" and member["errors"] >= 1, member
    assert status["degraded"] and status["internal_errors"] == 0
    session.umount(mnt)


def test_injected_eio_reaches_the_host_on_raid0_and_the_daemon_stays_up(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--level", "0", "--disks", "3", "--disk-size", "8M", "--strip", "16K")
    from vraid.ondisk.assemble import assemble

    g = assemble(arr).geometry
    where = g.locate(100)
    pid = session.mount(arr, mnt, "--fault", f"disk{where.disk}:eio={where.member_block}")
    fd = os.open(mnt / "disk.img", os.O_RDONLY)
    try:
        with pytest.raises(OSError) as exc:
            os.pread(fd, 4096, 100 * 4096)
        assert exc.value.errno == 5  # EIO
        assert os.pread(fd, 4096, 50 * 4096) == b"\0" * 4096  # elsewhere the array serves
    finally:
        os.close(fd)
    assert pid_alive(pid) and is_mounted(mnt)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["members"][where.disk]["errors"] >= 1 and status["internal_errors"] == 0
    session.umount(mnt)


@pytest.mark.parametrize(
    "fault, expect",
    [
        ("disk9:eio=1", "members disk0..disk2, not disk9"),
        ("disk1:latency=3ms", "latency needs every=N or p="),
        ("disk1:boom=1", "unknown fault 'boom'"),
        ("eio=1", "does not start with a member"),
    ],
)
def test_a_bad_fault_spec_is_refused_before_mounting(tmp_path, fault, expect):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    mnt.mkdir()
    before = tree_hash(arr)
    result = vraid("mount", arr, mnt, "--fault", "disk0:eio=5", "--fault", fault, check=False)
    text = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1 and expect in text and "hint:" in text, text
    assert not is_mounted(mnt)
    assert tree_hash(arr) == before

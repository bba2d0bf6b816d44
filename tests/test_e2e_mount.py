"""End to end through a real mount: FUSE, loop device, ext4, remount.

These are the tests that prove the data path: a student's sequence of
create, mount, losetup, mkfs.ext4, write, unmount, mount again.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import socket
import stat
import time
from pathlib import Path

import pytest

from mountutil import file_sums, is_mounted, pid_alive, requires_mount, run, vraid, wait_gone

pytestmark = [requires_mount, pytest.mark.mount]


def _write_files(root: Path, rng: random.Random) -> None:
    small = root / "small"
    small.mkdir()
    for i in range(300):
        (small / f"f{i:03d}").write_bytes(rng.randbytes(rng.randint(0, 20000)))
    (root / "large.bin").write_bytes(rng.randbytes(24 << 20))
    run("sync", "-f", root)  # this file system only: os.sync() waits on every mount of the machine


def test_ext4_survives_unmount_remount_and_shuffled_members(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--level", "5", "--disks", "5", "--disk-size", "64M", "--strip", "64K")
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    _write_files(fs, random.Random(1))
    before = file_sums(fs)
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert json.loads(vraid("examine", arr, "--json").stdout)[0]["superblock"]["clean"] is True

    # rename the member files so that names and roles disagree
    members = sorted(p for p in arr.iterdir() if p.suffix == ".img")
    tmp_names = [p.with_name(f"tmp{i}") for i, p in enumerate(members)]
    for p, t in zip(members, tmp_names):
        p.rename(t)
    order = list(range(len(members)))
    random.Random(7).shuffle(order)
    for t, i in zip(tmp_names, order):
        t.rename(arr / f"member-{i}.raw")

    for round_ in range(2):
        session.mount(arr, mnt)
        dev = session.losetup(mnt / "disk.img")
        fsck = run("e2fsck", "-fn", dev, check=False)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        session.mount_fs(dev, fs)
        assert file_sums(fs) == before
        session.umount_fs(fs)
        session.detach(dev)
        session.umount(mnt)


def test_image_semantics_unaligned_io_and_bounds(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "8M", "--strip", "16K")
    session.mount(arr, mnt)
    image = mnt / "disk.img"
    assert os.listdir(mnt) == ["disk.img"]
    st = image.stat()
    size = st.st_size
    assert stat.S_ISREG(st.st_mode) and size == 3 * 448 * 16384  # 3 data disks, (8M-1M)/16K stripes
    model = bytearray(size)
    rng = random.Random(3)
    fd = os.open(image, os.O_RDWR)
    try:
        for _ in range(200):
            off = rng.randrange(size)
            n = min(rng.choice([1, 7, 511, 4095, 4097, 65537, rng.randrange(1, 300000)]), size - off)
            data = rng.randbytes(n)
            assert os.pwrite(fd, data, off) == n
            model[off : off + n] = data
        os.fsync(fd)
        for _ in range(100):
            off = rng.randrange(size)
            n = rng.randrange(1, 200000)
            assert os.pread(fd, n, off) == bytes(model[off : off + n])
        # reads past the end return short; at the end, nothing
        assert os.pread(fd, 10000, size - 100) == bytes(model[size - 100 :])
        assert os.pread(fd, 10, size) == b""
        # a write at the end fails with ENOSPC; one across it is short
        with pytest.raises(OSError) as exc:
            os.pwrite(fd, b"x" * 10, size)
        assert exc.value.errno == errno.ENOSPC
        assert os.pwrite(fd, b"y" * 100, size - 40) == 40
        model[size - 40 :] = b"y" * 40
        os.fsync(fd)
    finally:
        os.close(fd)
    assert image.stat().st_size == size
    with pytest.raises(PermissionError):
        os.truncate(image, size // 2)
    with pytest.raises(PermissionError):
        os.chmod(image, 0o600)
    with pytest.raises(OSError):
        (mnt / "other").write_bytes(b"no")
    with pytest.raises(PermissionError):
        image.unlink()
    # no extended attributes, and the kernel is told so (ENOSYS), so it stops asking for
    # security.capability before every write (docs/performance.md)
    for probe in (lambda: os.getxattr(image, "user.x"), lambda: os.setxattr(image, "user.x", b"1"),
                  lambda: os.listxattr(image)):
        with pytest.raises(OSError) as exc:
            probe()
        assert exc.value.errno == errno.EOPNOTSUPP
    assert image.stat().st_size == size
    session.umount(mnt)
    session.mount(arr, mnt)
    assert (mnt / "disk.img").read_bytes() == bytes(model)
    session.umount(mnt)


def test_umount_refuses_while_a_loop_device_holds_the_image(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    pid = session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    refused = vraid("umount", mnt, check=False)
    assert refused.returncode != 0
    assert dev in refused.stderr and "losetup -d" in refused.stderr
    assert is_mounted(mnt) and pid_alive(pid)
    # SIGTERM does the same: it refuses while the loop device is attached
    os.kill(pid, signal.SIGTERM)
    time.sleep(1.0)
    assert is_mounted(mnt) and pid_alive(pid)
    session.detach(dev)
    os.kill(pid, signal.SIGTERM)  # now it unmounts, flushes and marks clean
    assert wait_gone(pid, 30)
    session.fuse_mounts.remove(mnt)
    assert not is_mounted(mnt)
    assert json.loads(vraid("examine", arr, "--json").stdout)[0]["superblock"]["clean"] is True


def test_unclean_shutdown_is_noticed_at_the_next_mount(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    pid = session.mount(arr, mnt)
    (mnt / "disk.img").write_bytes(b"z" * 8192) if False else None
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"z" * 8192)
        f.flush()
        os.fsync(f.fileno())
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    assert json.loads(vraid("examine", arr, "--json").stdout)[0]["superblock"]["clean"] is False
    offline = json.loads(vraid("status", arr, "--json").stdout)
    assert "dirty" in offline["state"]
    result = vraid("mount", arr, mnt)
    session.fuse_mounts.append(mnt)
    session.pids.append(json.loads(vraid("status", mnt, "--json").stdout)["pid"])
    assert "not shut down cleanly" in result.stdout
    assert json.loads(vraid("status", mnt, "--json").stdout)["was_clean"] is False
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(8192) == b"z" * 8192  # fsynced data survived the kill
    session.umount(mnt)


def test_control_socket_is_private_and_survives_malformed_requests(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    session.mount(arr, mnt)
    sock_path = arr / "vraid.sock"
    assert stat.S_IMODE(sock_path.stat().st_mode) == 0o600
    for bad in (b"not json\n", b"[1,2]\n", b'{"cmd": "nope"}\n', b'{"nocmd": 1}\n', b"\xff\xfe\n"):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(str(sock_path))
            s.sendall(bad)
            answer = json.loads(s.makefile().readline())
            assert answer["ok"] is False and answer["error"]
    with socket.socket(socket.AF_UNIX) as s:  # a client that hangs up mid-line
        s.connect(str(sock_path))
        s.sendall(b'{"cmd": "sta')
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["state"] == "active" and status["geometry"]["disks"] == 3
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"still works")
    session.umount(mnt)


def test_disk_model_on_a_mount_takes_modelled_time_and_trace_records(tmp_path, session):
    """--disk-model makes member requests take their modelled time; --trace records host requests."""
    arr, mnt, trace = tmp_path / "arr", tmp_path / "mnt", tmp_path / "host.trace"
    vraid("create", arr, "--disks", "5", "--disk-size", "16M")
    session.mount(arr, mnt, "--disk-model", "hdd:st373454lc", "--time", "real:0.5", "--trace", str(trace))
    rng = random.Random(5)
    offsets = [rng.randrange(3000) * 4096 for _ in range(20)]
    fd = os.open(mnt / "disk.img", os.O_RDWR)
    try:
        start = time.monotonic()
        for off in offsets:
            os.pwrite(fd, off.to_bytes(8, "little") * 512, off)
        elapsed = time.monotonic() - start
        os.fsync(fd)
        for off in offsets:
            assert os.pread(fd, 4096, off) == off.to_bytes(8, "little") * 512
    finally:
        os.close(fd)
    # a random RAID-5 small write is a read phase and a write phase on a 15k rpm
    # disk: at half speed, well over a millisecond each (a page-cache file: ~0.1 ms)
    assert elapsed / len(offsets) > 0.002
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["metrics"]["host_writes"] >= len(offsets)
    session.umount(mnt)
    lines = trace.read_text().splitlines()
    assert lines[0].startswith("# vraid-trace v1")
    writes = [l.split() for l in lines[1:] if l.split()[1] == "W"]
    assert [int(w[2]) for w in writes[: len(offsets)]] == offsets


def test_bad_disk_model_or_time_mode_is_refused_before_mounting(tmp_path):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    mnt.mkdir()
    for args, expect in ((["--disk-model", "hdd:nope"], "unknown hdd preset"), (["--time", "fast"], "not a time mode")):
        result = vraid("mount", arr, mnt, *args, check=False)
        assert result.returncode == 1 and expect in result.stderr
        assert not is_mounted(mnt)


# pbg in the quick suite: it is the only ext4-on-pbg mount there (stripe has the stripe-nvram
# power cuts of test_e2e_powercut); stripe with --run-slow
@pytest.mark.parametrize("cache", ["pbg", pytest.param("stripe", marks=pytest.mark.slow)])
def test_ext4_on_a_write_back_cache(tmp_path, session, cache):
    """ext4 on a cached array: fsync destages, unmount drains, the data comes back."""
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "5", "--disk-size", "48M", "--strip", "16K")
    session.mount(arr, mnt, "--cache", cache, "--cache-size", "4M", "--destage", "adaptive", "--destage-order", "lrw")
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    _write_files(fs, random.Random(11))
    before = file_sums(fs)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["cache"]["organisation"] == cache
    assert status["cache"]["write_blocks"] > 0 and status["cache"]["destages_finished"] > 0
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    # mounted again write-through: everything was destaged at unmount
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before


def test_kill_9_with_nvram_loses_nothing_fsynced(tmp_path, session):
    arr, mnt, fs, nv = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs", tmp_path / "nvram.bin"
    vraid("create", arr, "--disks", "5", "--disk-size", "48M", "--strip", "16K")
    pid = session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "16M", "--destage", "adaptive", "--nvram", str(nv))
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    rng = random.Random(3)
    files = {}
    for i in range(40):
        data = rng.randbytes(rng.randint(1, 60000))
        path = fs / f"f{i}"
        with open(path, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        files[path.name] = data
    run("sync", "-f", fs)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["cache"]["nvram"] is True and status["cache"]["write_blocks"] > 0
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    # tear down what the dead daemon leaves: ext4 (lazily), the loop device, the FUSE mount
    run("umount", "-l", fs, check=False)
    session.fs_mounts.remove(fs)
    session.detach(dev)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    # mount again without naming the NVRAM: the superblocks remember it, and it is replayed
    result = vraid("mount", arr, mnt)
    session.fuse_mounts.append(mnt)
    session.pids.append(json.loads(vraid("status", mnt, "--json").stdout)["pid"])
    assert "replayed" in result.stdout
    dev = session.losetup(mnt / "disk.img")
    fsck = run("e2fsck", "-fy", dev, check=False)
    assert fsck.returncode in (0, 1), fsck.stdout  # 1: the journal was replayed
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    for name, data in files.items():
        assert (fs / name).read_bytes() == data


# hlwm and adaptive in the quick suite; the others (covered by the simulator's tests) with --run-slow
@pytest.mark.parametrize("scheduler", ["hlwm", "adaptive"] + [pytest.param(s, marks=pytest.mark.slow) for s in ("lt", "pi", "idle")])
def test_every_destage_scheduler_on_a_mount(tmp_path, session, scheduler):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M", "--strip", "16K")
    session.mount(arr, mnt, "--cache", "pbg", "--cache-size", "1M", "--destage", scheduler, "--destage-order", "cscan")
    rng = random.Random(scheduler)
    size = (mnt / "disk.img").stat().st_size
    model = {}
    with open(mnt / "disk.img", "r+b") as f:
        for _ in range(300):
            off = rng.randrange(size // 4096) * 4096
            data = rng.randbytes(4096)
            f.seek(off)
            f.write(data)
            model[off] = data
        f.flush()
        os.fsync(f.fileno())
        for off, data in model.items():
            f.seek(off)
            assert f.read(4096) == data
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["cache"]["scheduler"]["name"] == scheduler
    session.umount(mnt)
    session.mount(arr, mnt)  # write-through now: everything was destaged
    with open(mnt / "disk.img", "rb") as f:
        for off, data in model.items():
            f.seek(off)
            assert f.read(4096) == data
    session.umount(mnt)

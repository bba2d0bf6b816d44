"""End to end: ext4 on a RAID-5 image loses a member, runs degraded, rebuilds onto a spare.

Through the real path: FUSE mount, loop device, ext4; `vraid fail` in the
middle of a workload, `vraid add`, `vraid rebuild --wait`; the parity of
every stripe is then checked straight from the member files with this
file's own XOR, and every file's sha256 is unchanged, also after an unmount
and a new mount. A member file deleted under the mount is failed by itself.
"""

from __future__ import annotations

import errno
import json
import os
import random
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from mountutil import file_sums, requires_mount, run, settle, status_json, vraid, write_files

pytestmark = [requires_mount, pytest.mark.mount]


def parity_mismatches(status: dict) -> int:
    """PBGs whose blocks do not XOR to zero, read from the member files themselves."""
    g = status["geometry"]
    bs, strip, stripes = g["block_size"], g["strip_size"], g["stripes"]
    area = stripes * strip
    acc = np.zeros(area, dtype=np.uint8)
    for m in status["members"]:
        assert m["state"] == "active", m
        with open(m["store"], "rb") as f:
            acc ^= np.frombuffer(os.pread(f.fileno(), area, g["data_offset"]), dtype=np.uint8)
    return int(np.count_nonzero(acc.reshape(-1, bs).any(axis=1)))


def _fail_rebuild_every_position(tmp_path, session, disk_size: str, positions, cache_args=()):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "5", "--disk-size", disk_size, "--strip", "16K")
    session.mount(arr, mnt, *cache_args)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    rng = random.Random(5)
    write_files(fs, rng, "base", 60, 200_000)
    for k in positions:
        # fail member k while a workload runs
        worker = threading.Thread(target=write_files, args=(fs, random.Random(k), f"during{k}", 40, 100_000))
        worker.start()
        out = vraid("fail", mnt, str(k)).stdout
        worker.join()
        assert f"member {k}" in out
        st = status_json(mnt)
        assert st["degraded"] and st["failed"] == [k] and st["members"][k]["state"] == "failed"
        sums = file_sums(fs)
        write_files(fs, random.Random(100 + k), f"degraded{k}", 30, 100_000)  # writes while degraded
        run("sh", "-c", f"echo 3 > /proc/sys/vm/drop_caches")  # reads come from the array, reconstructed
        assert {p: s for p, s in file_sums(fs).items() if p in sums} == sums
        # a spare, and the rebuild onto it
        vraid("add", mnt, f"spare{k}.img")
        done = vraid("rebuild", mnt, "--wait")
        assert "the array is not degraded" in " ".join(done.stdout.split()) or "nothing to rebuild" in done.stdout
        st = status_json(mnt)
        assert not st["degraded"] and st["members"][k]["state"] == "active"
        assert Path(st["members"][k]["store"]).name == f"spare{k}.img"
        settle(fs, mnt / "disk.img")
        assert parity_mismatches(status_json(mnt)) == 0
        checked = json.loads(vraid("check", mnt, "--json").stdout)  # the scrub agrees
        assert checked["mismatches"] == 0 and checked["done"] == checked["total"], checked
    before = file_sums(fs)
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    # mount again: the spares are members now, the failed files are not used
    out = vraid("examine", arr, "--json").stdout
    roles = {Path(e["path"]).name: e["superblock"]["role"] for e in json.loads(out) if e["superblock"]}
    assert all(roles[f"spare{k}.img"] == k for k in positions)
    session.mount(arr, mnt)
    st = status_json(mnt)
    assert not st["degraded"] and [Path(m["store"]).name for m in st["members"]][positions[-1]] == f"spare{positions[-1]}.img"
    assert parity_mismatches(st) == 0
    assert "0 mismatches" in " ".join(vraid("check", mnt).stdout.split())
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before


@pytest.mark.slow  # every position; one failure and rebuild stays in the quick suite (test_e2e_placement, test_failures_cli)
def test_fail_add_rebuild_every_member_position(tmp_path, session):
    _fail_rebuild_every_position(tmp_path, session, "24M", [0, 1, 2, 3, 4])


@pytest.mark.slow
@pytest.mark.parametrize("cache", ["stripe", "pbg"])
def test_fail_add_rebuild_every_position_with_a_cache_and_rate_limit(tmp_path, session, cache):
    _fail_rebuild_every_position(
        tmp_path, session, "96M", [4, 0, 3, 1, 2],
        ("--cache", cache, "--cache-size", "8M", "--destage", "adaptive", "--rebuild-rate", "40"),
    )


def test_a_deleted_member_file_is_failed_and_the_image_keeps_working(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "24M", "--strip", "16K", "--spares", "1")
    session.mount(arr, mnt, "--rebuild-rate", "2")
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    write_files(fs, random.Random(1), "a", 50, 100_000)
    (arr / "disk2.img").unlink()  # the disk is gone; the daemon's open file still works, the watcher notices
    write_files(fs, random.Random(2), "b", 50, 100_000)
    settle(fs, mnt / "disk.img")
    deadline = time.monotonic() + 20
    while (st := status_json(mnt))["members"][2]["state"] == "active" and time.monotonic() < deadline:
        time.sleep(0.2)  # the watcher looks once a second
    assert st["members"][2]["state"] == "rebuilding" and "deleted" in st["members"][2]["reason"]
    # the spare took over at once, rate-limited: it is rebuilding while we read and write
    assert st["rebuild"]["role"] == 2 and st["rebuild"]["spare"].endswith("spare0.img")
    once = vraid("rebuild", mnt).stdout
    assert "rebuilding member 2" in once or "nothing to rebuild" in once
    sums = file_sums(fs)
    run("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches")
    assert file_sums(fs) == sums
    vraid("rebuild", mnt, "--rate", "0", "--wait")
    settle(fs, mnt / "disk.img")
    st = status_json(mnt)
    assert not st["degraded"] and parity_mismatches(st) == 0
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    session.mount_fs(dev, fs)
    assert file_sums(fs) == sums


def test_two_failures_on_a_mount_lose_only_the_missing_members_blocks(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "8M", "--strip", "16K")
    session.mount(arr, mnt)
    image = mnt / "disk.img"
    size = image.stat().st_size
    data = random.Random(4).randbytes(size)
    with open(image, "r+b") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    vraid("fail", mnt, "1")
    refused = vraid("fail", mnt, "2", check=False)
    assert refused.returncode == 1 and "--force" in " ".join(refused.stderr.split())
    vraid("fail", mnt, "2", "--force")
    st = status_json(mnt)
    assert st["missing"] == [1, 2] and st["data_lost"] is True
    assert "LOST: members 1, 2" in " ".join(vraid("status", mnt).stdout.split())
    g = st["geometry"]
    strip, nd = g["strip_size"], g["disks"] - 1
    members_before = {p.name: p.read_bytes() for p in arr.glob("disk*.img")}
    fd = os.open(image, os.O_RDWR)
    try:
        for stripe in range(4):
            parity = 3 - stripe % 4  # left-symmetric
            for k in range(nd):
                disk = (parity + 1 + k) % 4
                off = (stripe * nd + k) * strip
                if disk in (1, 2):
                    with pytest.raises(OSError) as exc:
                        os.pread(fd, 4096, off)
                    assert exc.value.errno == errno.EIO
                    with pytest.raises(OSError) as exc:  # would need a lost member: nothing written
                        os.pwrite(fd, b"\xee" * 4096, off)
                    assert exc.value.errno == errno.EIO
                else:
                    assert os.pread(fd, 4096, off) == data[off : off + 4096]
    finally:
        os.close(fd)
    after = {p.name: p.read_bytes() for p in arr.glob("disk*.img")}
    for name in ("disk0.img", "disk3.img"):  # the survivors' data areas are untouched (superblocks aside)
        assert after[name][1 << 20 :] == members_before[name][1 << 20 :]
    session.umount(mnt)
    refused = vraid("mount", arr, mnt, check=False)
    assert refused.returncode == 1 and "members 1, 2 of 4 missing" in " ".join(refused.stderr.split())

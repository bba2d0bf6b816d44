"""End to end: ext4 on a RAID-6 image (5 members) loses two members, runs degraded,
rebuilds both onto spares one after the other, and keeps every file.

Through the real path: FUSE mount, loop device, ext4; `vraid fail` of two members,
files read back identical with the page cache dropped (reconstructed through P and
Q), `vraid add` two spares and `vraid rebuild --wait`; then the member files'
P and Q are checked from the raw files alone with vraid.testing.raid6_oracle (a slow
md reference sharing no code with the engine), and after an unmount and a new mount
`e2fsck -fn` is clean and every file's sha256 is unchanged.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from mountutil import file_sums, requires_mount, run, settle, status_json, vraid, write_files
from vraid.testing.raid6_oracle import bad_stripes, member_areas

pytestmark = [requires_mount, pytest.mark.mount]


def _raw_pq_errors(status: dict, layout: str) -> list:
    g = status["geometry"]
    raw = []
    for m in status["members"]:
        assert m["state"] == "active", m
        with open(m["store"], "rb") as f:
            raw.append(os.pread(f.fileno(), g["data_offset"] + g["stripes"] * g["strip_size"], 0))
    return bad_stripes(member_areas(raw, g["data_offset"], g["stripes"], g["strip_size"]), layout)


def test_raid6_two_failures_rebuild_remount(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--level", "6", "--disks", "5", "--disk-size", "24M", "--strip", "16K")
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    write_files(fs, random.Random(6), "base", 50, 150_000)
    settle(fs, mnt / "disk.img")
    assert _raw_pq_errors(status_json(mnt), "left-symmetric") == []
    sums = file_sums(fs)
    for k in (1, 3):
        assert f"member {k}" in vraid("fail", mnt, str(k)).stdout
    st = status_json(mnt)
    assert st["degraded"] and sorted(st["failed"]) == [1, 3] and not st["data_lost"]
    third = vraid("fail", mnt, "0", check=False)  # a third is more than RAID-6 survives
    assert third.returncode == 1 and "--force" in third.stderr
    run("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches")  # reads come from the array, rebuilt from P and Q
    assert file_sums(fs) == sums
    write_files(fs, random.Random(7), "degraded", 30, 100_000)  # writes with two members gone
    run("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches")
    sums = file_sums(fs)
    vraid("add", mnt, "spare1.img")
    vraid("add", mnt, "spare3.img")
    done = vraid("rebuild", mnt, "--wait")
    assert "not degraded" in " ".join(done.stdout.split()) or "nothing to rebuild" in done.stdout
    st = status_json(mnt)
    if st["degraded"]:  # md rebuilds one after the other: wait for the second too
        vraid("rebuild", mnt, "--wait")
        st = status_json(mnt)
    assert not st["degraded"]
    assert sorted(Path(m["store"]).name for m in st["members"])[-2:] == ["spare1.img", "spare3.img"]
    settle(fs, mnt / "disk.img")
    assert _raw_pq_errors(status_json(mnt), "left-symmetric") == []
    checked = json.loads(vraid("check", mnt, "--json").stdout)
    assert checked["mismatches"] == 0 and checked["done"] == checked["total"], checked
    before = file_sums(fs)
    assert before == sums
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    session.mount(arr, mnt)
    st = status_json(mnt)
    assert not st["degraded"]
    assert _raw_pq_errors(st, "left-symmetric") == []
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before


def test_raid6_two_spares_rebuild_both_failed_members_in_one_pass(tmp_path, session):
    """Two members failed while unmounted and two spares there: the mount rebuilds both in one
    pass (md's recovery with two spares), and the image and md's P and Q are whole after it."""
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--level", "6", "--disks", "5", "--disk-size", "16M", "--strip", "16K", "--spares", "2")
    session.mount(arr, mnt)
    data = random.Random(62).randbytes(8 << 20)
    with open(mnt / "disk.img", "r+b") as f:
        f.write(data)
        os.fsync(f.fileno())
    session.umount(mnt)
    for k in (1, 3):
        vraid("fail", arr, str(k))
    session.mount(arr, mnt)
    vraid("rebuild", mnt, "--wait")
    st = status_json(mnt)
    assert not st["degraded"] and st["rebuild"]["state"] == "done", st
    assert st["rebuild"]["roles"] == [1, 3]  # one pass for both
    reads = [m["reads"] for m in st["members"]]
    assert reads[1] == reads[3] == 0  # the new members were only written
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(len(data)) == data
    assert _raw_pq_errors(status_json(mnt), "left-symmetric") == []
    session.umount(mnt)

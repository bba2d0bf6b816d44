"""End to end per level (RAID-1, RAID-4, RAID-10; issue 32): ext4 through a real mount.

`vraid create --level N`, mount, losetup, mkfs.ext4, files written; a member failed
(RAID-1 on three members: two, one after the other; RAID-10: one of each pair, or on three
members, md's near-2 on an odd count, one), every file
read back identical from the degraded array; spares added and rebuilt; `vraid check` finds
nothing; unmount, mount again, `e2fsck -fn` clean, files identical. The member files are
then checked with this file's own arithmetic: each copy equals its data strip (mirrors; on an
odd count at md's places: chunk i in the slots 2i and 2i+1, slot p member p mod n, chunk row
p div n), the parity is the XOR of the data (RAID-4).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from mountutil import file_sums, requires_mount, run, status_json, vraid, write_files

pytestmark = [requires_mount, pytest.mark.mount]


def _members(status: dict) -> list[np.ndarray]:
    g = status["geometry"]
    area = g["stripes"] * g.get("strips_per_member_per_stripe", 1) * g["strip_size"]
    out = []
    for m in status["members"]:
        with open(m["store"], "rb") as f:
            out.append(np.frombuffer(os.pread(f.fileno(), area, g["data_offset"]), np.uint8))
    return out


def _check_raw(level: int, status: dict) -> None:
    """The members as the level says, straight from the files (not through vraid)."""
    areas = _members(status)
    n = len(areas)
    if level == 1:  # every member the same bytes
        assert all(np.array_equal(a, areas[0]) for a in areas[1:])
    elif level == 10 and n % 2:  # md's near-2 on an odd count: both slots of every chunk the same bytes
        chunk = status["geometry"]["strip_size"]
        for c in range(status["geometry"]["capacity"] // chunk):
            (m0, r0), (m1, r1) = [(p % n, p // n) for p in (2 * c, 2 * c + 1)]
            assert np.array_equal(areas[m0][r0 * chunk : (r0 + 1) * chunk], areas[m1][r1 * chunk : (r1 + 1) * chunk]), c
    elif level == 10:  # members 2k and 2k+1 the same bytes
        assert all(np.array_equal(areas[2 * k], areas[2 * k + 1]) for k in range(n // 2))
    else:  # RAID-4 parity-last: the last member the XOR of the others
        assert np.array_equal(np.bitwise_xor.reduce(np.stack(areas[:-1]), axis=0), areas[-1])


@pytest.mark.parametrize("level, disks, fail", [(1, 3, (0, 2)), (4, 4, (1,)), (10, 4, (1, 2)), (10, 3, (2,))])
def test_ext4_through_failures_and_rebuilds(tmp_path, session, level, disks, fail):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--level", str(level), "--disks", str(disks), "--disk-size", "24M", "--strip", "16K")
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    write_files(fs, random.Random(level), "base", 40, 150_000)
    sums = file_sums(fs)
    for k in fail:
        assert f"member {k}" in vraid("fail", mnt, str(k)).stdout
        write_files(fs, random.Random(100 + k), f"degraded{k}", 10, 100_000)  # writes while degraded
        run("sh", "-c", "echo 3 > /proc/sys/vm/drop_caches")  # reads come from the array
        got = file_sums(fs)
        assert {p: s for p, s in got.items() if p in sums} == sums
        sums = got
    st = status_json(mnt)
    assert st["degraded"] and st["failed"] == sorted(fail) and not st["data_lost"]
    for k in fail:
        vraid("add", mnt, f"spare{k}.img")
    vraid("rebuild", mnt, "--wait")
    st = status_json(mnt)
    assert not st["degraded"], st["failed"]
    run("sync", "-f", fs)
    checked = json.loads(vraid("check", mnt, "--json").stdout)
    assert checked["mismatches"] == 0 and checked["done"] == checked["total"], checked
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    _check_raw(level, status_json(arr))
    session.mount(arr, mnt)
    assert not status_json(mnt)["degraded"]
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == sums

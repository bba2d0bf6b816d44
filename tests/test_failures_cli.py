"""Failures at assembly and on the command line: refusals change nothing, stale members are
told by their event counters, `vraid fail` and `vraid add` on an unmounted array, dirty and
degraded needs --force."""

from __future__ import annotations

import json
import os
import signal
import shutil
from pathlib import Path

import pytest

from mountutil import requires_mount, run, tree_hash, vraid, wait_gone
from vraid.ondisk.assemble import assemble
from vraid.errors import AssemblyError


def _array(tmp_path: Path, *extra: str) -> Path:
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "4", "--disk-size", "4M", "--strip", "16K", *extra)
    return arr


def _sbs(arr: Path) -> dict[str, dict]:
    return {Path(e["path"]).name: e["superblock"] for e in json.loads(vraid("examine", arr, "--json", check=False).stdout) if e["superblock"]}


def test_two_missing_members_are_refused_and_nothing_is_modified(tmp_path):
    arr = _array(tmp_path)
    shutil.move(arr / "disk1.img", tmp_path / "away1.img")
    shutil.move(arr / "disk3.img", tmp_path / "away3.img")
    before = tree_hash(arr)
    with pytest.raises(AssemblyError) as info:
        assemble(arr)
    assert "members 1, 3 of 4 missing" in info.value.message and "not two" in info.value.message
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    for args in (("mount", arr, mnt), ("status", arr), ("fail", arr, "0"), ("add", arr, "spare.img")):
        result = vraid(*args, check=False)
        assert result.returncode == 1 and "1, 3" in " ".join(result.stderr.split()), (args, result.stderr)
    assert tree_hash(arr) == before


def test_a_stale_member_is_told_by_its_event_counter(tmp_path):
    arr = _array(tmp_path)
    old = (arr / "disk2.img").read_bytes()[:4096]
    vraid("add", arr, "spare.img")  # a state change: every member's counter goes up
    with open(arr / "disk2.img", "r+b") as f:  # an old copy of member 2's superblock
        f.write(old)
    got = assemble(arr)
    assert list(got.failed) == [2] and "stale" in got.failed[2] and "events 0" in got.failed[2]
    assert any("DEGRADED" in n for n in got.notes)
    status = json.loads(vraid("status", arr, "--json").stdout)
    assert status["degraded"] and status["failed"] == [2]
    assert status["members"][2]["state"] == "failed" and "stale" in status["members"][2]["reason"]


def test_fail_and_add_on_an_unmounted_array(tmp_path):
    arr = _array(tmp_path)
    out = vraid("fail", arr, "disk1.img").stdout
    assert "member 1" in out and "recorded as failed" in out
    sbs = _sbs(arr)
    assert sbs["disk1.img"]["events"] == 0
    assert all(sbs[f"disk{i}.img"]["events"] == 1 and sbs[f"disk{i}.img"]["params"]["failed"] == [1] for i in (0, 2, 3))
    # a second failure is refused (it would lose data), naming why; nothing changes
    before = tree_hash(arr)
    refused = vraid("fail", arr, "2", check=False)
    assert refused.returncode == 1 and "already missing" in refused.stderr and "--force" in " ".join(refused.stderr.split())
    assert vraid("fail", arr, "1", check=False).returncode == 1
    assert vraid("fail", arr, "9", check=False).returncode == 1
    assert tree_hash(arr) == before
    # spares: a new file is created at member size; bad ones are refused
    (arr / "other.img").write_bytes(b"x" * 1000)
    for bad, why in (("other.img", "is not a member of this array"), ("disk0.img", "in use"), (str(tmp_path / "out.img"), "not in the array directory")):
        result = vraid("add", arr, bad, check=False)
        assert result.returncode == 1 and why in " ".join(result.stderr.split()), (bad, result.stderr)
    (arr / "other.img").unlink()
    vraid("add", arr, "new.img")
    sbs = _sbs(arr)
    assert sbs["new.img"]["role"] == -1 and (arr / "new.img").stat().st_size == (arr / "disk0.img").stat().st_size
    assert sbs["disk0.img"]["events"] == 2
    got = assemble(arr)
    assert list(got.failed) == [1] and got.spares == [arr / "new.img"]


def test_raid0_refuses_fail_and_spares(tmp_path):
    arr = tmp_path / "arr"
    refused = vraid("create", arr, "--level", "0", "--disks", "2", "--disk-size", "4M", "--spares", "1", check=False)
    assert refused.returncode == 1 and "RAID-0" in refused.stderr and not arr.exists()
    vraid("create", arr, "--level", "0", "--disks", "2", "--disk-size", "4M")
    result = vraid("fail", arr, "0", check=False)
    assert result.returncode == 1 and "no redundancy" in result.stderr


def test_create_with_spares(tmp_path):
    arr = _array(tmp_path, "--spares", "2")
    sbs = _sbs(arr)
    assert sbs["spare0.img"]["role"] == -1 and sbs["spare1.img"]["role"] == -1
    got = assemble(arr)
    assert len(got.spares) == 2 and not got.failed


@requires_mount
@pytest.mark.mount
def test_dirty_and_degraded_needs_force(tmp_path, session):
    arr, mnt = _array(tmp_path), tmp_path / "mnt"
    pid = session.mount(arr, mnt)
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"q" * 100000)
        f.flush()
        os.fsync(f.fileno())
    os.kill(pid, signal.SIGKILL)  # a crash: the array stays dirty
    assert wait_gone(pid, 10)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    shutil.move(arr / "disk0.img", tmp_path / "away.img")  # and a member is gone
    before = tree_hash(arr)
    refused = vraid("mount", arr, mnt, check=False)
    text = " ".join(refused.stderr.split())
    assert refused.returncode == 1 and "not shut down cleanly and is degraded" in text and "--force" in text
    assert tree_hash(arr) == before
    out = vraid("mount", arr, mnt, "--force").stdout
    session.fuse_mounts.append(mnt)
    session.pids.append(json.loads(vraid("status", mnt, "--json").stdout)["pid"])
    out = " ".join(out.split())
    assert "DEGRADED" in out and "not shut down cleanly" in out
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(100000) == b"q" * 100000
    session.umount(mnt)


def test_raid6_fails_two_members_and_refuses_a_third_unless_forced(tmp_path):
    arr = tmp_path / "arr6"
    vraid("create", arr, "--level", "6", "--disks", "5", "--disk-size", "4M", "--strip", "16K")
    vraid("fail", arr, "0")
    vraid("fail", arr, "3")
    assert "RAID-6 runs DEGRADED" in " ".join(vraid("status", arr).stdout.split() + vraid("status", arr).stderr.split())
    before = tree_hash(arr)
    third = vraid("fail", arr, "4", check=False)
    text = " ".join(third.stderr.split())
    assert third.returncode == 1 and "members 0, 3 are already missing" in text and "--force" in text
    assert tree_hash(arr) == before  # nothing modified
    forced = vraid("fail", arr, "4", "--force")
    assert "FAILED" in forced.stdout and "0, 3, 4" in " ".join(forced.stdout.split())
    with pytest.raises(AssemblyError) as info:
        assemble(arr)
    assert "RAID-6 survives the loss of two members, not three" in info.value.message
def test_raid10_fail_is_refused_for_the_second_of_a_pair_and_assembly_follows_the_pairs(tmp_path):
    """RAID-10 (near-2, members 2k and 2k+1 a pair) survives two failures in different pairs,
    not two of one pair: `vraid fail` refuses the second of a pair without --force, and an
    array missing a whole pair is not started."""
    arr = _array(tmp_path, "--level", "10")
    vraid("fail", arr, "0")
    before = tree_hash(arr)
    refused = vraid("fail", arr, "1", check=False)
    assert refused.returncode == 1 and "mirrored pair" in " ".join(refused.stderr.split()), refused.stderr
    assert tree_hash(arr) == before
    other = vraid("fail", arr, "3")  # the other pair: survivable, and said so
    assert "run degraded" in other.stdout and "FAILED" not in other.stdout, other.stdout
    status = json.loads(vraid("status", arr, "--json").stdout)
    assert status["failed"] == [0, 3] and not status["data_lost"]
    vraid("fail", arr, "1", "--force")
    with pytest.raises(AssemblyError, match="mirrored pair"):
        assemble(arr)


def test_raid10_on_five_members_refuses_the_neighbour_of_a_failed_member(tmp_path):
    """RAID-10 near-2 on an odd count: members m and m+1 mod n hold a chunk's two copies, so
    `vraid fail` refuses a neighbour (the wrap 4, 0 included) and takes any other."""
    arr = tmp_path / "arr"
    vraid("create", arr, "--level", "10", "--disks", "5", "--disk-size", "4M", "--strip", "16K")
    vraid("fail", arr, "0")
    before = tree_hash(arr)
    for neighbour in ("1", "4"):
        refused = vraid("fail", arr, neighbour, check=False)
        assert refused.returncode == 1 and "not neighbours" in " ".join(refused.stderr.split()), refused.stderr
    assert tree_hash(arr) == before
    other = vraid("fail", arr, "2")
    assert "run degraded" in other.stdout and "FAILED" not in other.stdout, other.stdout
    status = json.loads(vraid("status", arr, "--json").stdout)
    assert status["failed"] == [0, 2] and not status["data_lost"]
    forced = vraid("fail", arr, "3", "--force")
    assert "FAILED" in forced.stdout, forced.stdout
    with pytest.raises(AssemblyError, match="not neighbours"):
        assemble(arr)


def test_raid1_runs_with_all_but_one_member(tmp_path):
    arr = _array(tmp_path, "--level", "1")
    for d in ("0", "1", "3"):
        vraid("fail", arr, d)
    assert json.loads(vraid("status", arr, "--json").stdout)["failed"] == [0, 1, 3]
    refused = vraid("fail", arr, "2", check=False)
    assert refused.returncode == 1 and "three members" in " ".join(refused.stderr.split())

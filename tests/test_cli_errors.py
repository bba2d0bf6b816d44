"""Bad input through the CLI: a clear message, a non-zero exit, nothing modified."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mountutil import is_mounted, requires_mount, tree_hash, vraid


def _fails(*args, expect: str, code: int = 1) -> str:
    result = vraid(*args, check=False)
    assert result.returncode == code, result.stdout + result.stderr
    text = " ".join((result.stdout + result.stderr).split())
    assert expect in text, text
    return text


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--disks", "2"], "RAID-5 needs at least 3 disks"),
        (["--strip", "12K"], "not a power-of-two multiple of the 4K block"),
        (["--strip", "2K"], "not a power-of-two multiple"),
        (["--disk-size", "1M"], "smaller than one stripe"),
        (["--level", "0", "--disks", "0"], "RAID-0 needs at least 1 disk"),
    ],
)
def test_create_rejects_bad_geometry_and_writes_nothing(tmp_path, args, expect):
    target = tmp_path / "arr"
    text = _fails("create", target, *args, expect=expect)
    assert "hint:" in text
    assert not target.exists()


def test_create_rejects_a_size_that_is_not_a_size(tmp_path):
    _fails("create", tmp_path / "arr", "--disk-size", "lots", expect="is not a size", code=2)
    assert not (tmp_path / "arr").exists()


def test_create_refuses_an_existing_array_without_force(tmp_path):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    before = tree_hash(arr)
    _fails("create", arr, "--disks", "4", "--disk-size", "4M", expect="already holds a vraid array")
    assert tree_hash(arr) == before
    vraid("create", arr, "--disks", "4", "--disk-size", "4M", "--force")
    assert len(list(arr.glob("disk*.img"))) == 4


def test_examine_of_a_missing_path(tmp_path):
    _fails("examine", tmp_path / "nope", expect="does not exist")


def test_umount_of_something_that_is_not_a_vraid_mount(tmp_path):
    _fails("umount", tmp_path, expect="is not a vraid mount")


def _array(tmp_path: Path, *args: str) -> Path:
    arr = tmp_path / "arr"
    vraid("create", arr, "--disk-size", "4M", *args)
    return arr


def _mount_fails(arr: Path, mnt: Path, expect: str) -> None:
    before = tree_hash(arr) if arr.is_dir() else None
    mnt.mkdir(exist_ok=True)
    _fails("mount", arr, mnt, expect=expect)
    assert not is_mounted(mnt)
    if before is not None:
        assert tree_hash(arr) == before, "a refused mount modified the array"


@requires_mount
def test_mount_of_a_directory_that_is_not_an_array(tmp_path):
    d = tmp_path / "plain"
    d.mkdir()
    (d / "notes.txt").write_text("hello")
    _mount_fails(d, tmp_path / "mnt", "is not a vraid array")


@requires_mount
def test_mount_of_members_of_two_arrays(tmp_path):
    arr = _array(tmp_path, "--disks", "3")
    other = tmp_path / "other"
    vraid("create", other, "--disks", "3", "--disk-size", "4M")
    shutil.move(other / "disk1.img", arr / "stray.img")
    _mount_fails(arr, tmp_path / "mnt", "holds members of different arrays")


@requires_mount
@pytest.mark.parametrize("level, disks", [("0", "2"), ("5", "4")])
def test_mount_with_a_missing_member(tmp_path, level, disks):
    """RAID-0 without one member, RAID-5 without two (one runs degraded: tests/test_failures_cli.py)."""
    arr = _array(tmp_path, "--level", level, "--disks", disks)
    shutil.move(arr / "disk1.img", tmp_path / "away.img")
    if level == "5":
        shutil.move(arr / "disk2.img", tmp_path / "away2.img")
    text_expect = "missing from"
    _mount_fails(arr, tmp_path / "mnt", text_expect)


@requires_mount
def test_mount_with_a_truncated_member(tmp_path):
    arr = _array(tmp_path, "--level", "0", "--disks", "3")  # RAID-5 would run degraded without it
    os.truncate(arr / "disk2.img", 2 << 20)
    _mount_fails(arr, tmp_path / "mnt", "disk2.img is truncated")


@requires_mount
def test_mount_with_a_corrupted_superblock(tmp_path):
    arr = _array(tmp_path, "--disks", "3")
    with open(arr / "disk0.img", "r+b") as f:
        f.seek(100)
        byte = f.read(1)
        f.seek(100)
        f.write(bytes([byte[0] ^ 0xFF]))
    _mount_fails(arr, tmp_path / "mnt", "checksum mismatch")


@requires_mount
def test_mount_on_a_missing_mountpoint(tmp_path):
    arr = _array(tmp_path, "--disks", "3")
    before = tree_hash(arr)
    _fails("mount", arr, tmp_path / "nowhere", expect="does not exist")
    assert tree_hash(arr) == before


@requires_mount
def test_mount_on_a_busy_mountpoint_and_twice(tmp_path, session):
    arr = _array(tmp_path, "--disks", "3")
    mnt = tmp_path / "mnt"
    session.mount(arr, mnt)
    second = _array(tmp_path / "b", "--disks", "3")
    _fails("mount", second, mnt, expect="already a mountpoint")
    mnt2 = tmp_path / "mnt2"
    mnt2.mkdir()
    _fails("mount", arr, mnt2, expect="already mounted at")
    assert not is_mounted(mnt2)
    session.umount(mnt)


@pytest.mark.parametrize(
    "fault, expect",
    [("disk5:eio=1", "members disk0..disk4, not disk5"), ("disk1:eio=9-3", "ends before it starts"),
     ("disk0:latency=1ms,every=0", "every must be at least 1")],
)
def test_sim_refuses_a_bad_fault_spec(fault, expect):
    _fails("sim", "--requests", "10", "--fault", fault, expect=expect)


def test_check_of_a_file_that_is_not_an_array(tmp_path):
    (tmp_path / "f").write_text("x")
    _fails("check", tmp_path / "f", expect="is not a directory")

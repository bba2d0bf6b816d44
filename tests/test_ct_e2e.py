"""MSC-CT through the real paths: ``vraid mount --ct`` (ext4 on a loop device over the image,
unmount, mount again), ``ct`` in vraid.toml and in the superblock, ``vraid sim --ct``, and bad
specs refused before anything changes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mountutil import file_sums, is_mounted, requires_mount, run, tree_hash, vraid
from test_e2e_mount import _write_files
from vraid.ondisk.assemble import assemble
from vraid.policies.ct import CtLimits


def _status(mnt: Path) -> dict:
    return json.loads(vraid("status", mnt, "--json").stdout)


@requires_mount
@pytest.mark.mount
def test_ext4_on_a_stripe_cache_with_ct(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "5", "--disk-size", "48M", "--strip", "16K")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "4M", "--ct", "msc:sr_max=16,sw_max=16")
    st = _status(mnt)
    assert st["ct"] == "msc:sr_max=16,sw_max=16"
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", dev)
    session.mount_fs(dev, fs)
    _write_files(fs, random.Random(21))
    run("sync", "-f", fs)
    before = file_sums(fs)
    st = _status(mnt)
    assert st["cache"]["destages_finished"] > 0 and st["metrics"]["plans"] > 0
    assert st["cache"]["bypassed_stripes"] > 0  # the large file's whole stripes went around the cache
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)

    # again, with ct from vraid.toml and the limits of the disk model's preset; then the
    # limits a stride benchmark stored in the superblock win over the preset
    toml = arr / "vraid.toml"
    toml.write_text(toml.read_text().replace('ct = "none"', 'ct = "msc"'))
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "4M", "--disk-model", "hdd:st373454lc", "--time", "none")
    assert _status(mnt)["ct"] == "msc:sr_max=4,sw_max=4"
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before
    (fs / "more.bin").write_bytes(random.Random(5).randbytes(3 << 20))
    before = file_sums(fs)
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)

    asm = assemble(arr)
    params = dict(asm.superblocks[0].params)
    params["ct"] = CtLimits(sr_max=5, sw_max=7, sw_except=((3, 3),), source="test").to_params()
    asm.mark(clean=True, params=params)
    session.mount(arr, mnt, "--disk-model", "hdd:st373454lc", "--time", "none")  # write-through, toml ct
    assert _status(mnt)["ct"] == "msc:sr_max=5,sw_max=7,sw_except=3-3"
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before
    (fs / "wt").mkdir()
    _write_files(fs / "wt", random.Random(8))  # written through the members, with CT
    before = file_sums(fs)
    session.umount_fs(fs)
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert assemble(arr).superblocks[0].params["ct"]["sr_max"] == 5  # kept across mounts

    # and back from the members alone: no CT, no cache, a fresh loop device
    session.mount(arr, mnt, "--ct", "none")
    assert _status(mnt)["ct"] == "none"
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == before
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


def _mount_fails(arr: Path, mnt: Path, *args: str, expect: str) -> None:
    before = tree_hash(arr)
    mnt.mkdir(exist_ok=True)
    result = vraid("mount", arr, mnt, *args, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    text = " ".join(result.stderr.split())
    assert expect in text and "hint:" in text, text
    assert not is_mounted(mnt)
    assert tree_hash(arr) == before, "a refused mount modified the array"


@pytest.mark.parametrize(
    "spec, expect",
    [
        ("fast", "unknown contiguity transform 'fast'"),
        ("msc:sr_max=0", "sr_max=0 is below 1"),
        ("msc:sw_max=lots", "sw_max='lots' is not a whole number"),
        ("msc:sr_except=9-3", "has a > b"),
        ("msc:depth=3", "has no parameter 'depth'"),
    ],
)
def test_mount_refuses_a_bad_ct_spec(tmp_path, spec, expect):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    _mount_fails(arr, tmp_path / "mnt", "--ct", spec, expect=expect)


def test_mount_refuses_a_bad_ct_in_vraid_toml_and_superblock(tmp_path):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    toml = arr / "vraid.toml"
    good = toml.read_text()
    assert 'ct = "none"' in good
    toml.write_text(good.replace('ct = "none"', 'ct = "msc:sr_max=x"'))
    _mount_fails(arr, tmp_path / "mnt", expect="sr_max='x' is not a whole number")
    toml.write_text(good.replace('ct = "none"', "ct = 3"))
    _mount_fails(arr, tmp_path / "mnt", expect="ct = 3 is not a name")
    toml.write_text(good)
    asm = assemble(arr)
    asm.mark(clean=True, params=dict(asm.superblocks[0].params) | {"ct": {"sr_max": "many"}})
    _mount_fails(arr, tmp_path / "mnt", "--ct", "msc", expect="CT limits")


@pytest.mark.parametrize(
    "spec, expect",
    [("nope", "unknown contiguity transform 'nope'"), ("msc:sw_max=0", "sw_max=0 is below 1"),
     ("msc:x=1", "has no parameter 'x'")],
)
def test_sim_refuses_a_bad_ct_spec(spec, expect):
    result = vraid("sim", "--requests", "10", "--ct", spec, check=False)
    assert result.returncode == 1
    text = " ".join(result.stderr.split())
    assert expect in text and "hint:" in text, text
    assert result.stdout == ""


def test_sim_with_ct_runs_and_is_deterministic():
    args = ["sim", "--requests", "400", "--cache", "stripe", "--cache-size", "2M", "--workload", "random-write",
            "--ct", "msc", "--json"]
    a = json.loads(vraid(*args).stdout)
    assert a == json.loads(vraid(*args).stdout)
    assert a["config"]["policies"]["ct"] == "msc"
    assert a["metrics"]["host_writes"] == 400
    b = json.loads(vraid(*args[:-3], "--json").stdout)  # no CT: the same host work
    assert b["metrics"]["host_writes"] == 400

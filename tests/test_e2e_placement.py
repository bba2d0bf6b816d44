"""End to end on a remapped array (seed 004, docs/multibuffer.md): ``--placement multibuffer|dpsr``.

* ext4 on each placement: files written, the image unmounted (buffers drained, a
  checkpoint of the directory on every member) and mounted again: ``e2fsck -fn`` clean,
  the tree intact, ``vraid check`` counts 0 parity mismatches;
* kill -9 of the daemon under a writing ext4 workload (multibuffer): the next mount loads
  the directory from the members (checkpoint + journal), ext4 mounts, ``e2fsck -fn`` is
  clean, every file whose fsync returned is intact, 0 mismatches. Twice: with ext4 blocks
  of the strip's size (4 KiB: its writes go through the buffers) and of 1 KiB (writes of
  part of a strip: made in place, so that the strip's flushed blocks survive; before,
  this lost a fsynced file now and then);
* a member failed under ext4 and rebuilt onto a spare through the directory: the files
  intact while degraded and after, 0 mismatches, and the new member holds the directory
  (the array mounts with the old member's file gone).
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from mountutil import file_sums, requires_mount, run, tree_hash, vraid, wait_gone
from test_e2e_crash import _check_json, _sha, _start_writer, _stop_writer

pytestmark = [requires_mount, pytest.mark.mount]


def _ext4(session, mnt: Path, fs: Path, block: int = 4096) -> str:
    """ext4 on the image; 4 KiB blocks by default, the strip size of these arrays, so that
    its writes are whole strips and go through the write buffers (mke2fs would pick 1 KiB
    for a file system this small)."""
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-b", str(block), "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    return dev


def _fill(root: Path, seed: int, count: int, most: int) -> None:
    root.mkdir(exist_ok=True)
    rng = random.Random(seed)
    for i in range(count):
        (root / f"f{i}").write_bytes(rng.randbytes(rng.randrange(1, most)))


@pytest.mark.parametrize("spec", ["multibuffer:buffer=64", pytest.param("dpsr:buffer=32", marks=pytest.mark.slow)])
def test_ext4_on_a_remapped_array_survives_remount(tmp_path, session, spec):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    out = vraid("create", arr, "--disks", "5", "--disk-size", "32M", "--strip", "4K", "--placement", spec).stdout
    assert "stripe directory" in " ".join(out.split())
    examined = json.loads(vraid("examine", arr, "--json").stdout)
    assert all(e["superblock"]["params"]["placement"]["spec"] == spec for e in examined if e["superblock"])
    session.mount(arr, mnt)
    dev = _ext4(session, mnt, fs)
    _fill(fs / "data", 1, 40, 150_000)
    _fill(fs / "data", 2, 40, 150_000)  # overwrites: strips move to new stripes
    before = tree_hash(fs / "data")
    status = json.loads(vraid("status", mnt, "--json").stdout)
    placed = status["placement"]
    assert placed["policy"] == spec.split(":")[0]
    assert placed["stats"]["LW"] + placed["stats"]["PW"] > 0, placed
    assert "placement (paper 004" in " ".join(vraid("status", mnt).stdout.split())
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check_json(arr)["mismatches"] == 0
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    fsck = run("e2fsck", "-fn", dev, check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    session.mount_fs(dev, fs)
    assert tree_hash(fs / "data") == before
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


@pytest.mark.parametrize("block", [4096, 1024])
def test_kill_9_under_ext4_writes_on_a_multibuffer_array(tmp_path, session, block):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "40M", "--strip", "4K", "--placement", "multibuffer:buffer=128")
    rng = random.Random(11)
    pid = session.mount(arr, mnt)
    dev = _ext4(session, mnt, fs, block)
    synced: dict[str, str] = {}
    for point in range(2):
        writer = _start_writer(fs, f"p{point}", rng.randrange(1 << 30))
        time.sleep(rng.uniform(0.5, 2.0))
        stats = json.loads(vraid("status", mnt, "--json").stdout)["placement"]["stats"]
        assert stats["partial_in_place" if block < 4096 else "host_strips"] > 0, stats  # the path this run is for
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid, 10)
        synced.update(_stop_writer(writer))
        run("umount", "-l", fs, check=False)
        session.fs_mounts.remove(fs)
        session.detach(dev)
        run("fusermount3", "-u", "-z", mnt, check=False)
        session.fuse_mounts.remove(mnt)
        session.pids.remove(pid)
        result = vraid("mount", arr, mnt)
        session.fuse_mounts.append(mnt)
        status = json.loads(vraid("status", mnt, "--json").stdout)
        pid = status["pid"]
        session.pids.append(pid)
        assert "not shut down cleanly" in " ".join(result.stdout.split())
        assert status["placement"]["policy"] == "multibuffer"
        dev = session.losetup(mnt / "disk.img")
        session.mount_fs(dev, fs)  # ext4's journal replays
        session.umount_fs(fs)
        fsck = run("e2fsck", "-fn", dev, check=False)
        assert fsck.returncode == 0, f"point {point}: e2fsck -fn found problems\n{fsck.stdout}{fsck.stderr}"
        session.mount_fs(dev, fs)
        assert synced, "the writer fsynced nothing"
        for name, digest in synced.items():
            assert _sha(fs / name) == digest, f"point {point}: fsynced file {name} changed"
        assert _check_json(mnt)["mismatches"] == 0
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check_json(arr)["mismatches"] == 0


def test_a_failed_member_is_rebuilt_through_the_directory(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "32M", "--strip", "4K", "--placement", "multibuffer:buffer=64")
    session.mount(arr, mnt)
    dev = _ext4(session, mnt, fs)
    _fill(fs / "a", 3, 40, 150_000)
    _fill(fs / "a", 4, 20, 150_000)
    assert "member 1" in vraid("fail", mnt, "1").stdout
    _fill(fs / "b", 5, 20, 100_000)  # writes while degraded
    run("sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches")
    sums = file_sums(fs)
    vraid("add", mnt, "spare0.img")
    vraid("rebuild", mnt, "--wait")
    st = json.loads(vraid("status", mnt, "--json").stdout)
    assert not st["degraded"] and Path(st["members"][1]["store"]).name == "spare0.img"
    run("sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches")
    assert file_sums(fs) == sums
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check_json(arr)["mismatches"] == 0
    (arr / "disk1.img").unlink()  # the failed member's file: the rebuilt one must hold the directory
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert file_sums(fs) == sums
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


def test_a_directory_journal_damaged_on_every_member_is_refused_and_force_names_the_stripes(tmp_path, session):
    """Issue 33: the directory journal damaged on every member between a crash and the
    mount. The mount refuses (it would serve a stale map); ``--force`` mounts and names the
    stripes whose strips may be misplaced, in its output and in vraid.log."""
    from mountutil import daemon_pid
    from vraid.core.directory_format import decode_journal
    from vraid.ondisk.assemble import assemble
    from vraid.ondisk.directory_area import PARAM, DirectoryArea

    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "24M", "--strip", "16K", "--placement", "multibuffer")
    pid = session.mount(arr, mnt)
    fd = os.open(mnt / "disk.img", os.O_RDWR)
    try:
        for i in range(12):  # strips rewritten and fsynced: directory commits
            os.pwrite(fd, bytes([i + 1]) * 16384, (i % 4) * 16384)
            os.fsync(fd)
    finally:
        os.close(fd)
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    session.pids.remove(pid)
    area = DirectoryArea.from_param(assemble(arr).ref.params[PARAM])
    for disk in range(4):
        path = arr / f"disk{disk}.img"
        with open(path, "r+b") as f:
            f.seek(area.journal_offset)
            raw = f.read(area.journal)
            assert len(decode_journal(raw)[0]) >= 3, "the journal should hold several records"
            f.seek(area.journal_offset + 12)  # inside the first record: its CRC fails
            f.write(bytes(b ^ 0xFF for b in raw[12:28]))
    refused = vraid("mount", arr, mnt, check=False)
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0 and "damaged on every member" in said and "--force" in said, said
    assert "Traceback" not in refused.stderr
    result = vraid("mount", arr, mnt, "--force")
    session.fuse_mounts.append(mnt)
    session.pids.append(daemon_pid(mnt))
    text = " ".join(result.stdout.split())
    assert "may be misplaced" in text and "served as it is" in text, text
    assert "may be misplaced" in (arr / "vraid.log").read_text()
    session.umount(mnt)

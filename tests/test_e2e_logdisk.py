"""End to end with a log disk (seed 002, docs/log-disk.md): ext4 on a ``--log`` array.

* kill -9 of the daemon under a writing ext4 workload on a ``--log scd`` array, at two
  points: the next mount replays the log (up to the first torn segment) and resyncs what
  the bitmap names; ext4 mounts (its journal replays), ``e2fsck -fn`` finds nothing,
  every file whose fsync returned is intact, ``vraid check`` counts 0 mismatches;
* a clean remount of every configuration (scd, mcd:2, mirrored, per-disk) with the data
  intact, ``vraid status`` and ``vraid examine`` showing the log;
* a missing log file stops the mount, and ``--force`` drops the log after saying so.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from pathlib import Path

import pytest

from mountutil import daemon_pid, requires_mount, run, tree_hash, vraid, wait_gone
from test_e2e_crash import _check_json, _sha, _start_writer, _stop_writer

pytestmark = [requires_mount, pytest.mark.mount]


def _ext4(session, mnt: Path, fs: Path) -> str:
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    return dev


def test_kill_9_under_ext4_writes_with_a_log_disk(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "40M", "--strip", "16K", "--log", "scd", "--log-size", "8M")
    rng = random.Random(7)
    pid = session.mount(arr, mnt)
    dev = _ext4(session, mnt, fs)
    synced: dict[str, str] = {}
    for point in range(2):
        writer = _start_writer(fs, f"p{point}", rng.randrange(1 << 30))
        time.sleep(rng.uniform(0.5, 2.0))
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
        text = " ".join(result.stdout.split())
        assert "not shut down cleanly" in text, text
        assert status["log"]["kind"] == "scd"
        dev = session.losetup(mnt / "disk.img")
        session.mount_fs(dev, fs)  # ext4's journal replays
        session.umount_fs(fs)
        fsck = run("e2fsck", "-fn", dev, check=False)
        assert fsck.returncode == 0, f"point {point}: e2fsck -fn found problems\n{fsck.stdout}{fsck.stderr}"
        session.mount_fs(dev, fs)
        assert synced, "the writer fsynced nothing"
        for name, digest in synced.items():
            assert _sha(fs / name) == digest, f"point {point}: fsynced file {name} changed"
        found = _check_json(mnt)
        assert found["mismatches"] == 0, found
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert _check_json(arr)["mismatches"] == 0


# two of the four in the quick suite (tests/test_log_model.py runs all four against a model)
@pytest.mark.parametrize("kind", ["scd", "per-disk"] + [pytest.param(k, marks=pytest.mark.slow) for k in ("mcd:2", "mirrored")])
def test_clean_remount_of_every_configuration(tmp_path, session, kind):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--disks", "4", "--disk-size", "24M", "--strip", "16K", "--log", kind, "--log-size", "2M")
    examined = json.loads(vraid("examine", arr, "--json").stdout)
    members = [e for e in examined if e["superblock"]]
    assert all(e["superblock"]["params"]["log"]["spec"] == kind for e in members)
    session.mount(arr, mnt)
    dev = _ext4(session, mnt, fs)
    src = fs / "data"
    src.mkdir()
    for i in range(40):
        (src / f"f{i}").write_bytes(random.Random(i).randbytes(random.Random(i).randrange(1, 200_000)))
    before = tree_hash(src)
    status = json.loads(vraid("status", mnt, "--json").stdout)
    assert status["log"]["kind"] == kind.split(":")[0]
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)
    assert "log" in vraid("status", arr).stdout
    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    assert run("e2fsck", "-fn", dev, check=False).returncode == 0
    session.mount_fs(dev, fs)
    assert tree_hash(fs / "data") == before
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)


def test_a_missing_log_stops_the_mount_and_force_drops_it(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M", "--strip", "16K", "--log", "mcd:2", "--log-size", "1M")
    (arr / "log1.img").unlink()
    mnt.mkdir()
    refused = vraid("mount", arr, mnt, check=False)
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0 and "log1.img is missing" in said and "--force" in said and "nothing is lost" in said
    session.mount(arr, mnt, "--force")
    assert (arr / "log1.img").exists()
    session.umount(mnt)


WRITER_64K = """
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
for i in range(int(sys.argv[2])):
    os.pwrite(fd, bytes([i % 250 + 1]) * 65536, i * 65536)
    os.fsync(fd)
    print(i, flush=True)
"""


def test_a_log_damaged_in_the_middle_is_refused_and_force_reports_the_loss(tmp_path, session):
    """Issue 33: 16 bytes flipped in the middle of an scd log. The mount refuses, naming the
    damaged segments; ``--force`` replays every intact segment and says what was lost, in
    its output and in vraid.log; every fsynced chunk outside the damaged segment is back."""
    import subprocess
    import sys

    from vraid.ondisk.logsegment import LogLayout, LogSuperblock, SegmentHeader

    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "24M", "--strip", "16K", "--log", "scd", "--log-size", "8M")
    pid = session.mount(arr, mnt)
    writer = subprocess.Popen([sys.executable, "-c", WRITER_64K, str(mnt / "disk.img"), "200"],
                              stdout=subprocess.PIPE, text=True)
    done = [int(writer.stdout.readline()) for _ in range(40)]  # 40 chunks fsynced, the writer still going
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    writer.kill()
    writer.communicate(timeout=30)
    run("fusermount3", "-u", "-z", mnt, check=False)
    session.fuse_mounts.remove(mnt)
    session.pids.remove(pid)
    log = arr / "log0.img"
    lay = LogLayout.for_size("scd", 1, 4096, log.stat().st_size)
    raw = log.read_bytes()
    tail = LogSuperblock.unpack(raw[:4096], 4096).tail
    seqs = {}
    for slot in range(lay.slots):
        off = 4096 * (1 + slot * (1 + lay.segment_blocks))
        h = SegmentHeader.unpack(raw[off : off + 4096], 4096)
        if h is not None and h.seq >= tail:
            seqs[h.seq] = (off, h)
    assert len(seqs) >= 6, f"the log should hold the fsynced chunks: {sorted(seqs)}"
    # the middle segment (neither end: a torn tail is normal) that has a second data block for the
    # flip to land in (a segment of one block, which a loaded machine can write, has none: the
    # bytes would fall outside what its checksum covers)
    order = sorted(seqs)
    inner = [q for q in order[1:-1] if len(seqs[q][1].blocks) >= 2]
    assert inner, f"no segment in the middle holds two data blocks: {[len(seqs[q][1].blocks) for q in order]}"
    middle = min(inner, key=lambda q: abs(order.index(q) - len(order) // 2))
    off, header = seqs[middle]
    with open(log, "r+b") as f:  # 16 bytes flipped in its second data block
        f.seek(off + 2 * 4096 + 100)
        f.write(bytes(b ^ 0xFF for b in raw[off + 2 * 4096 + 100 : off + 2 * 4096 + 116]))
    refused = vraid("mount", arr, mnt, check=False)
    if refused.returncode == 0:  # it did not refuse: the session unmounts it when the test fails below
        session.fuse_mounts.append(mnt)
    said = " ".join(refused.stderr.split())
    assert refused.returncode != 0 and "damaged in the middle" in said and f"segments {middle} of" in said, said
    assert "--force" in said and "Traceback" not in refused.stderr
    result = vraid("mount", arr, mnt, "--force")
    session.fuse_mounts.append(mnt)
    session.pids.append(daemon_pid(mnt))
    text = " ".join(result.stdout.split())
    assert f"log segments {middle} were damaged" in text and "acknowledged blocks they held are lost" in text, text
    assert "replayed" in text and "segments" in text
    assert f"log segments {middle} were damaged" in (arr / "vraid.log").read_text()
    lost = {lba // 16 for lba in header.blocks}  # the 64 KiB chunks the damaged segment touched
    with open(mnt / "disk.img", "rb") as f:
        for i in done:
            if i not in lost:
                assert os.pread(f.fileno(), 65536, i * 65536) == bytes([i % 250 + 1]) * 65536, f"fsynced chunk {i}"
    session.umount(mnt)

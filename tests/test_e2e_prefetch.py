"""End to end: MSP and the read cache under ext4 on a mounted image (seed 001, issue 13).

The host side of seed 001 is Linux itself: the loop device's read-ahead (``read_ahead_kb``)
is the real SEQP above the image. The controller runs MSP over a RAID-0 of five modelled
ST373454LC disks with 128 KiB strips, as in the paper's Fig. 8a. One large file read alone
is one long sequential stream, which MSP detects (prefetch hits, over the three rounds); then several files read
concurrently must still come back exactly as written. Both with the kernel's read-ahead at
its default, at the strip size and at four times it.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from mountutil import requires_mount, run, vraid

pytestmark = [requires_mount, pytest.mark.mount]

MIB = 1 << 20
STRIP_KB = 128


def _drop_caches(fs: Path) -> None:
    run("sync", "-f", fs)  # this file system only: os.sync() waits on every mount of the machine
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def _reads(mnt: Path) -> dict:
    return json.loads(vraid("status", mnt, "--json").stdout)["reads"]


def _sha256sum(paths: list[Path]) -> dict[str, str]:
    """Read ``paths`` concurrently, one ``sha256sum`` process each."""
    procs = {p.name: subprocess.Popen(["sha256sum", str(p)], stdout=subprocess.PIPE, text=True) for p in paths}
    out = {}
    for name, proc in procs.items():
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, name
        out[name] = stdout.split()[0]
    return out


def test_msp_prefetches_under_ext4_with_kernel_read_ahead(tmp_path, session):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    vraid("create", arr, "--level", "0", "--disks", "5", "--disk-size", "48M", "--strip", f"{STRIP_KB}K")
    session.mount(arr, mnt, "--prefetch", "msp", "--read-cache-size", "8M",
                  "--disk-model", "hdd:st373454lc", "--time", "real:0.02")
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    rng = __import__("random").Random(13)
    files = {"alone.bin": 12 * MIB, **{f"c{i}.bin": 2 * MIB for i in range(3)}}
    want = {}
    for name, size in files.items():
        data = rng.randbytes(size)
        (fs / name).write_bytes(data)
        want[name] = hashlib.sha256(data).hexdigest()
    run("sync", "-f", fs)
    ra = Path("/sys/block") / Path(dev).name / "queue" / "read_ahead_kb"
    default_ra = ra.read_text().strip()
    st = _reads(mnt)
    assert st["prefetch"].startswith("msp") and st["size"] == 8 * MIB
    hits, reached = 0, []
    try:
        for kb in (default_ra, str(STRIP_KB), str(4 * STRIP_KB)):
            ra.write_text(kb + "\n")
            _drop_caches(fs)
            before = _reads(mnt)
            # one stream: MSP's sequential counter reaches SC_thresh within the first 38 strips
            assert _sha256sum([fs / "alone.bin"]) == {"alone.bin": want["alone.bin"]}, kb
            after = _reads(mnt)
            hits += after["prefetch_hits"] - before["prefetch_hits"]
            reached.append(after["policy_state"]["sc"])
            print(f"read_ahead_kb={kb}: +{after['prefetch_hits'] - before['prefetch_hits']} prefetch hits, "
                  f"{after['host_reads'] - before['host_reads']} host reads, "
                  f"{after['member_requests'] - before['member_requests']} member requests, "
                  f"{after['split_reads'] - before['split_reads']} split, SC {after['policy_state']['sc']}")
            # several streams at once: every byte as written, whatever MSP does meanwhile
            _drop_caches(fs)
            many = [fs / n for n in files if n != "alone.bin"]
            assert _sha256sum(many) == {p.name: want[p.name] for p in many}, kb
    finally:
        ra.write_text(default_ra + "\n")
    # the kernel may keep a sync and an async read of the stream in flight, and the daemon may
    # serve them in either order; each swap costs SC three steps (Fig. 7 line 23), so one round
    # may stay below SC_thresh; the detector's state carries over to the next round
    assert hits > 0 and max(reached) >= 38, (hits, reached)
    st = _reads(mnt)
    assert st["blocks"] <= st["capacity_blocks"] and st["stale_drops"] >= 0
    assert st["member_requests"] > 0 and st["host_reads"] > 0
    fsck_dev = dev
    session.umount_fs(fs)
    assert run("e2fsck", "-fn", fsck_dev, check=False).returncode == 0
    session.detach(dev)
    session.umount(mnt)

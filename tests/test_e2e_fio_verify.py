"""End to end: fio verifies everything it writes while members fail and are rebuilt mid-run.

fio writes random 16 KiB blocks with a crc32c header in each and reads back what it wrote
as it goes (``verify_backlog``) and at the end, with O_DIRECT on the mounted image, so every
read comes from the array. Meanwhile the level's tolerance of members is failed (RAID-5: one;
RAID-6: two, one after the other, as issue 32 item 4 asks), the array runs degraded under the
load, spares are added and rebuilt with ``vraid rebuild --wait`` (md's order: one after the
other). fio must end with 0 verify errors, the rebuild must have finished while fio still ran,
and afterwards ``vraid check`` counts 0 mismatches. fio runs in a process group of its own,
which the test ends whatever happens.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from mountutil import requires_mount, run, vraid

pytestmark = [requires_mount, pytest.mark.mount,
              pytest.mark.skipif(run("which", "fio", check=False).returncode != 0, reason="needs fio")]

#: level -> the members failed, in order: as many as the level survives (RAID-6: two, one after
#: the other; RAID-1 on three members: two of them; RAID-4: the parity member; RAID-10 on four
#: members: one of each mirrored pair)
FAILURES = {5: (2,), 6: (1, 3), 1: (0, 1), 4: (4,), 10: (0, 3)}
#: level -> members (RAID-10: an even count)
DISKS = {5: 5, 6: 5, 1: 3, 4: 5, 10: 4}


def _fio(image: Path, runtime: int, output: Path) -> subprocess.Popen:
    cmd = ["fio", "--name=verify", f"--filename={image}", "--size=24M", "--bs=16k", "--rw=randwrite",
           "--ioengine=psync", "--direct=1", "--verify=crc32c", "--verify_backlog=64", "--verify_fatal=1",
           "--do_verify=1", "--verify_state_save=0", "--time_based", f"--runtime={runtime}", "--output-format=json",
           f"--output={output}"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _end(proc: subprocess.Popen) -> None:
    """Stop fio's process group if it still runs (a failing test must not leave it behind)."""
    if proc.poll() is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(10)
                break
            except subprocess.TimeoutExpired:
                continue
    proc.communicate()


def _status(mnt: Path) -> dict:
    return json.loads(vraid("status", mnt, "--json").stdout)


@pytest.mark.parametrize("level", [5, 10] + [pytest.param(n, marks=pytest.mark.slow) for n in (6, 1, 4)])
def test_fio_verify_with_members_failed_and_rebuilt_mid_run(tmp_path, session, level):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    size = "32M" if level == 1 else "24M"  # the image (one member's data area on RAID-1) holds fio's 24M
    vraid("create", arr, "--level", str(level), "--disks", str(DISKS[level]), "--disk-size", size, "--strip", "16K")
    session.mount(arr, mnt)
    out = tmp_path / "fio.json"
    fio = _fio(mnt / "disk.img", 25 + 15 * (len(FAILURES[level]) - 1), out)
    try:
        time.sleep(3)  # fio has written a while on the whole array
        for k in FAILURES[level]:
            assert fio.poll() is None, fio.communicate()
            assert f"member {k}" in vraid("fail", mnt, str(k)).stdout
            time.sleep(2)  # fio writes and verifies on the degraded array
        st = _status(mnt)
        assert st["degraded"] and sorted(st["failed"]) == sorted(FAILURES[level]) and not st["data_lost"]
        for k in FAILURES[level]:
            vraid("add", mnt, f"spare{k}.img")
        for _ in FAILURES[level]:  # md rebuilds one after the other: wait for each
            vraid("rebuild", mnt, "--wait", timeout=600)
            if not _status(mnt)["degraded"]:
                break
        st = _status(mnt)
        assert not st["degraded"], st
        assert fio.poll() is None, "fio ended before the rebuild did: the test proved nothing (raise its runtime)"
        fio.wait(timeout=300)
        assert fio.returncode == 0, fio.communicate()
    finally:
        _end(fio)
    job = json.loads(out.read_text())["jobs"][0]
    assert job["error"] == 0, job["error"]
    assert job["write"]["io_bytes"] > 0 and job["read"]["io_bytes"] > 0  # it wrote and read back (verified)
    checked = json.loads(vraid("check", mnt, "--json").stdout)
    assert checked["mismatches"] == 0 and checked["done"] == checked["total"], checked
    session.umount(mnt)

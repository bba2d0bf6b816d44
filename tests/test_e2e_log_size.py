"""A log file of the wrong size on a real mount (hardening issue 33, item 3): the mount names
it ("log0.img is 4M, the array's log is 8M: truncated?"), and ``vraid mount --force`` drops it,
saying what is lost (nothing, after a clean shutdown), makes a new one of the recorded size,
and serves what the array held."""

from __future__ import annotations

import os

import pytest

from mountutil import is_mounted, requires_mount, vraid

pytestmark = [requires_mount, pytest.mark.mount]


def test_a_truncated_log_is_named_and_force_drops_it(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M", "--log", "scd", "--log-size", "8M")
    session.mount(arr, mnt)
    data = os.urandom(1 << 20)
    fd = os.open(mnt / "disk.img", os.O_RDWR)
    os.pwrite(fd, data, 0)
    os.fsync(fd)
    os.close(fd)
    session.umount(mnt)
    os.truncate(arr / "log0.img", 4 << 20)

    refused = vraid("mount", arr, mnt, check=False)
    text = " ".join((refused.stdout + refused.stderr).split())
    assert refused.returncode == 1 and "log0.img is 4M, the array's log is 8M: truncated?" in text, text
    assert "Traceback" not in text and not is_mounted(mnt)

    session.mount(arr, mnt, "--force")
    out = vraid("status", mnt).stdout  # the mount serves
    assert "active" in out
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(len(data)) == data
    session.umount(mnt)
    assert (arr / "log0.img").stat().st_size == 8 << 20
    log = (arr / "vraid.log").read_text()
    assert "dropped the log disk (log0.img is 4M, the array's log is 8M: truncated?)" in log
    assert "nothing is lost" in log

"""The control plane on a real mount (ISSUE-12 items 1-4): a hostile control request, a second
mount of the same array, refused mounts, a killed daemon, a comma in the array path."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from vraid.fuse import control
from vraid.ondisk.lock import holder_of

from mountutil import VRAID, daemon_pid, is_mounted, requires_mount, run, vraid, wait_gone

pytestmark = [requires_mount, pytest.mark.mount]


def members_hash(arr: Path) -> dict[str, str]:
    """sha256 of every member and spare file (superblocks included)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(arr.glob("*.img"))}


def raw_request(sock: Path, line: bytes) -> dict:
    return json.loads(control.exchange(sock, line, timeout=10))


def test_a_nested_request_is_refused_and_cached_writes_survive(tmp_path, session):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M")
    mnt = tmp_path / "mnt"
    pid = session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "8M")
    data = os.urandom(4 << 20)
    with open(mnt / "disk.img", "r+b") as f:  # written, not fsynced: it sits in the volatile cache
        f.seek(1 << 20)
        f.write(data)
    for line in (b"[" * 1000 + b"\n", b"{" * 100000 + b"\n", b'{"cmd": "rebuild-rate", "rate": NaN}\n',
                 b'{"cmd": "check_start", "repair": "false"}\n', b"\xff\xfe\n"):
        answer = raw_request(arr / "vraid.sock", line)
        assert answer["ok"] is False and answer["error"], answer
    check = json.loads(vraid("status", mnt, "--json").stdout)
    assert check["pid"] == pid and check["state"] == "active"
    session.umount(mnt)
    session.mount(arr, mnt)
    with open(mnt / "disk.img", "rb") as f:
        f.seek(1 << 20)
        assert f.read(len(data)) == data
    session.umount(mnt)


def test_two_mounts_of_one_array_started_together_one_is_refused(tmp_path, session):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    mnts = [tmp_path / "m1", tmp_path / "m2"]
    for m in mnts:
        m.mkdir()
    procs = [subprocess.Popen(VRAID + ["mount", str(arr), str(m)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for m in mnts]
    results = [(p.wait(120), *p.communicate()) for p in procs]
    mounted = [m for m in mnts if is_mounted(m)]
    for m in mounted:
        session.fuse_mounts.append(m)
        session.pids.append(daemon_pid(m))
    assert len(mounted) == 1, results
    refused = [r for r, m in zip(results, mnts) if m not in mounted][0]
    assert refused[0] == 1 and "Traceback" not in refused[2]
    text = " ".join(refused[2].split())
    assert f"mounted at {mounted[0]}" in text or f"the mount at {mounted[0]}" in text, text
    assert str(daemon_pid(mounted[0])) in text or "already mounted" in text, text
    assert holder_of(arr) == {"pid": str(daemon_pid(mounted[0])), "mountpoint": str(mounted[0])}
    assert stat.S_IMODE((arr / "vraid.lock").stat().st_mode) == 0o600
    # the first mount goes on serving, and its umount waits for the right daemon
    vraid("status", mounted[0])
    session.umount(mounted[0])
    assert "clean" in vraid("status", arr).stdout


@pytest.mark.parametrize("case", ["trace", "socket-dir", "nonempty", "log-dir"])
def test_a_refused_mount_leaves_the_superblocks_unchanged(tmp_path, case):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    extra: list[str] = []
    if case == "trace":
        extra, expect = ["--trace", "/nonexistent/x"], "does not exist"
    elif case == "socket-dir":
        (arr / "vraid.sock").mkdir()
        expect = "is a directory: the mount's control socket goes there"
    elif case == "log-dir":
        (arr / "vraid.log").mkdir()
        expect = "cannot write the daemon's log"
    else:
        (mnt / "file").write_text("x")
        expect = "is not empty"
    before = members_hash(arr)
    result = vraid("mount", arr, mnt, *extra, check=False)
    text = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 1 and expect in text and "Traceback" not in text, text
    assert "hint:" in text and "VraidError" not in text and "MountError" not in text
    assert not is_mounted(mnt)
    assert members_hash(arr) == before
    assert "clean" in vraid("status", arr).stdout


def test_a_killed_daemon_leaves_a_dead_mount_every_command_explains(tmp_path, session):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    mnt = tmp_path / "mnt"
    pid = session.mount(arr, mnt)
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    for args in (["status", mnt], ["status", mnt, "--json"], ["check", mnt], ["ctl", mnt, "get"],
                 ["ctl", mnt, "set", "destage=adaptive"], ["fail", mnt, "1"], ["add", mnt, "spare9.img"],
                 ["rebuild", mnt], ["top", mnt, "--once"], ["mount", arr, mnt], ["check", arr], ["fail", arr, "1"]):
        result = vraid(*args, check=False)
        text = " ".join((result.stdout + result.stderr).split())
        assert result.returncode == 1, (args, text)
        assert "dead" in text and "vraid umount" in text and "Traceback" not in text, (args, text)
    status = vraid("status", arr)
    assert "dead mount" in " ".join(status.stdout.split()) and "dirty" in status.stdout
    other = tmp_path / "mnt2"
    other.mkdir()
    text = " ".join(vraid("mount", arr, other, check=False).stderr.split())
    assert "dead" in text and "vraid umount" in text
    result = vraid("umount", mnt)
    text = " ".join(result.stdout.split())
    assert "dead mount" in text and "dirty" in text and "is clean" not in text, text
    session.fuse_mounts.remove(mnt)
    assert not is_mounted(mnt)
    session.mount(arr, mnt)  # recovers (resync)
    session.umount(mnt)
    assert "clean" in vraid("status", arr).stdout


def test_an_array_path_with_a_comma_mounts(tmp_path, session):
    arr = tmp_path / "a,b\\c"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    for p in arr.glob("*.img"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
    mnt = tmp_path / "mnt"
    session.mount(arr, mnt)
    st = json.loads(vraid("status", mnt, "--json").stdout)
    assert st["directory"] == str(arr.resolve())
    run("dd", "if=/dev/zero", f"of={mnt / 'disk.img'}", "bs=64K", "count=4", "conv=notrunc,fsync")
    session.umount(mnt)

"""The policy guard on a real mount (ISSUE-12 item 1): ext4 on the image, writes running, a
student's destage scheduler that raises and then one that never destages, set with
``vraid ctl``. The mount keeps serving, ``vraid status`` and ``vraid ctl get`` name each
fault, and after unmount and remount every file verifies and e2fsck is clean."""

from __future__ import annotations

import hashlib
import os
import json
import random
import threading
import time
from pathlib import Path

import pytest

from mountutil import requires_mount, run, vraid

pytestmark = [requires_mount, pytest.mark.mount]

STUDENT = '''
from vraid.policies.destage.base import Decision, DestageScheduler


class Broken(DestageScheduler):
    """Raises on every call."""

    def decide(self, state):
        raise ZeroDivisionError("student scheduler divides by zero")


class Never(DestageScheduler):
    """Never destages, however many writers wait."""

    def decide(self, state):
        return Decision(0)
'''


class Writer(threading.Thread):
    """Writes files of random sizes into ``root`` until stopped; remembers their sha256."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.sums: dict[str, str] = {}
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        rnd = random.Random(12)
        try:
            n = 0
            while not self.stop.is_set():
                data = rnd.randbytes(rnd.choice((16, 64, 256, 512)) << 10)
                name = f"f{n:05d}"
                (self.root / name).write_bytes(data)
                self.sums[name] = hashlib.sha256(data).hexdigest()
                n += 1
                if n % 40 == 0:  # keep the file system within the image: overwrite the oldest
                    for old in sorted(self.sums)[: len(self.sums) - 120]:
                        (self.root / old).unlink()
                        del self.sums[old]
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc


def faults(mnt: Path) -> list[dict]:
    return json.loads(vraid("status", mnt, "--json").stdout).get("policy_faults", [])


def wait_for_faults(mnt: Path, count: int, writer: Writer, timeout: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = faults(mnt)
        if len(found) >= count:
            return found
        assert writer.is_alive() and writer.error is None, writer.error
        time.sleep(0.5)
    raise AssertionError(f"no fault {count} after {timeout} s: {faults(mnt)}")


def test_a_raising_and_a_never_destaging_scheduler_leave_the_mount_serving(tmp_path, session, monkeypatch):
    arr, mnt, fs = tmp_path / "arr", tmp_path / "mnt", tmp_path / "fs"
    (tmp_path / "student.py").write_text(STUDENT)
    vraid("create", arr, "--disks", "4", "--disk-size", "40M")
    pid = session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "4M")
    dev = session.losetup(mnt / "disk.img")
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    session.mount_fs(dev, fs)
    writer = Writer(fs)
    writer.start()
    try:
        time.sleep(1.0)
        # a relative file path: vraid ctl sends it absolute (the daemon's directory is not ours)
        monkeypatch.chdir(tmp_path)
        vraid("ctl", mnt, "set", "destage=student.py:Broken")
        (first,) = wait_for_faults(mnt, 1, writer)
        assert first["family"] == "destage" and first["call"] == "decide"
        assert first["policy"].endswith("student.py:Broken")
        assert "ZeroDivisionError: student scheduler divides by zero" in first["error"]
        assert first["fallback"].startswith("hlwm")
        status = json.loads(vraid("status", mnt, "--json").stdout)
        assert status["pid"] == pid and status["policies"]["destage"].startswith("hlwm")
        monkeypatch.setenv("COLUMNS", "400")  # a table as wide as the fault's line
        text = vraid("status", mnt).stdout
        assert "policy fault" in text and "student.py:Broken failed in decide: ZeroDivisionError" in text
        get = json.loads(vraid("ctl", mnt, "get", "--json").stdout)
        assert get["faults"][0]["policy"] == first["policy"]

        vraid("ctl", mnt, "set", f"destage={tmp_path / 'student.py'}:Never")
        # a burst four times the cache, written back at once: host writes must wait for room, which
        # is what the stall rule judges (the writer alone may never fill the cache between two of
        # ext4's journal commits, whose flushes drain it, on a slow machine)
        burst = os.urandom(16 << 20)
        with open(fs / "burst.bin", "wb") as f:
            f.write(burst)
            f.flush()
            os.fsync(f.fileno())
        second = wait_for_faults(mnt, 2, writer)[1]
        assert second["policy"].endswith("student.py:Never") and "no destage" in second["error"]
        time.sleep(1.0)  # the default scheduler serves the writers again
        assert writer.is_alive() and writer.error is None, writer.error
    finally:
        writer.stop.set()
        writer.join(60)
    assert writer.error is None, writer.error
    assert len(writer.sums) > 20
    sums = dict(writer.sums)
    session.umount_fs(fs)
    fsck = run("e2fsck", "-fn", dev, check=False)
    assert fsck.returncode == 0, f"e2fsck -fn found problems\n{fsck.stdout}{fsck.stderr}"
    session.detach(dev)
    session.umount(mnt)

    session.mount(arr, mnt)
    dev = session.losetup(mnt / "disk.img")
    fsck = run("e2fsck", "-fn", dev, check=False)
    assert fsck.returncode == 0, f"e2fsck -fn after the remount\n{fsck.stdout}{fsck.stderr}"
    session.mount_fs(dev, fs)
    sums["burst.bin"] = hashlib.sha256(burst).hexdigest()
    bad = [n for n, h in sums.items() if hashlib.sha256((fs / n).read_bytes()).hexdigest() != h]
    assert not bad, f"{len(bad)} of {len(sums)} files differ: {bad[:5]}"
    session.umount_fs(fs)
    session.detach(dev)
    session.umount(mnt)

"""vraid top and vraid ctl against a real mount (and vraid top --sim without a terminal).

The TUI runs inside tmux on a private server (``tmux -L vraidtest-<pid>``), driven with
send-keys and read with capture-pane; the server is killed at the end whatever happens.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mountutil import VRAID, is_mounted, requires_mount, vraid

STRIPE = 4 * 64 * 1024  # data bytes of one stripe: 5 disks, 64K strips


def _status(mnt: Path) -> dict:
    return json.loads(vraid("status", mnt, "--json").stdout)


def _wait_for(what: str, pred, timeout: float = 30.0, show=None):
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}" + (f"; screen:\n{show()}" if show else ""))
        time.sleep(0.1)


class Tmux:
    """A private tmux server for one test."""

    def __init__(self) -> None:
        self.name = f"vraidtest-{os.getpid()}"

    def run(self, *args: str, check: bool = True) -> str:
        r = subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {r.stderr}")
        return r.stdout

    def start(self, command: str, width: int = 160, height: int = 50) -> None:
        self.run("new-session", "-d", "-x", str(width), "-y", str(height), command)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p")

    def kill(self) -> None:
        self.run("kill-server", check=False)


@pytest.fixture
def tmux():
    if shutil.which("tmux") is None:
        pytest.skip("needs tmux")
    t = Tmux()
    try:
        yield t
    finally:
        t.kill()


@requires_mount
@pytest.mark.mount
def test_top_on_a_mount_pause_step_resume_quit(tmp_path, session, tmux):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "5", "--disk-size", "32M")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "2M")
    image = mnt / "disk.img"
    rng = random.Random(11)
    model = bytearray(os.pread(fd0 := os.open(image, os.O_RDONLY), 101 * STRIPE, 0))
    os.close(fd0)
    fd = os.open(image, os.O_RDWR)
    try:
        # a workload before and while top attaches: partial stripes, so plans read and write
        for i in range(40):
            off = rng.randrange(100) * STRIPE + rng.randrange(64) * 4096
            data = rng.randbytes(4096 * rng.randint(1, 8))
            os.pwrite(fd, data, off)
            model[off : off + len(data)] = data
        # COLUMNS/LINES from pytest's environment would override the pane's size
        tmux.start(f"env -u COLUMNS -u LINES {' '.join(VRAID)} top {mnt}; echo TOP-EXITED rc=$?; sleep 600")
        _wait_for("the matrix and watermark panels",
                  lambda: "destage plan" in (s := tmux.screen()) and "watermarks" in s and "members" in s)
        os.fsync(fd)  # drain: every unit clean, so the writes below fit while destaging is paused
        tmux.keys("p")
        _wait_for("pause", lambda: _status(mnt)["cache"]["paused"])
        _wait_for("in-flight destages to end", lambda: _status(mnt)["cache"]["destaging"] == 0)
        for k, stripe in enumerate((3, 17, 42)):
            off = stripe * STRIPE + 4096 * k
            data = rng.randbytes(4096)
            os.pwrite(fd, data, off)
            model[off : off + len(data)] = data
        before = _status(mnt)["cache"]
        assert before["dirty_units"] == 3
        time.sleep(1.0)
        assert _status(mnt)["cache"]["destages_finished"] == before["destages_finished"]  # paused: none
        _wait_for("PAUSED on screen", lambda: "PAUSED" in tmux.screen(), show=tmux.screen)

        tmux.keys("s")
        _wait_for("the step", lambda: _status(mnt)["cache"]["destages_finished"] == before["destages_finished"] + 1)
        screen = _wait_for("the frozen plan", lambda: (lambda s: s if "STEP" in s else "")(tmux.screen()),
                           show=tmux.screen)
        assert "transformed M" in screen and "stepped: destaged stripe" in screen
        time.sleep(1.0)
        after = _status(mnt)["cache"]
        assert after["destages_finished"] == before["destages_finished"] + 1  # exactly one stripe
        assert after["dirty_units"] == 2 and after["paused"]

        tmux.keys("r")
        _wait_for("resume", lambda: not _status(mnt)["cache"]["paused"])
        tmux.keys("q")
        _wait_for("top to quit", lambda: "TOP-EXITED rc=0" in tmux.screen())
        # the mount is untouched and still serves
        assert is_mounted(mnt)
        os.pwrite(fd, b"after top", 5 * STRIPE)
        model[5 * STRIPE : 5 * STRIPE + 9] = b"after top"
        os.fsync(fd)
        assert os.pread(fd, len(model), 0) == bytes(model)
    finally:
        os.close(fd)
    assert not _status(mnt)["cache"]["paused"]
    session.umount(mnt)


@requires_mount
@pytest.mark.mount
def test_quitting_while_paused_leaves_it_paused_and_umount_still_destages(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "1M")
    sock = arr / "vraid.sock"
    _ask(sock, {"cmd": "pause"})
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"q" * 8192)
    assert _status(mnt)["cache"]["paused"] and _status(mnt)["cache"]["dirty_units"] == 1
    session.umount(mnt)  # shutdown resumes the destager and drains
    session.mount(arr, mnt)
    with open(mnt / "disk.img", "rb") as f:
        assert f.read(8192) == b"q" * 8192
    session.umount(mnt)


def _ask(sock: Path, request) -> dict:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(sock))
        s.sendall(request if isinstance(request, bytes) else json.dumps(request).encode() + b"\n")
        return json.loads(s.makefile().readline())


@requires_mount
@pytest.mark.mount
def test_ctl_switches_policies_on_a_live_mount_and_refuses_bad_ones(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "5", "--disk-size", "16M")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "4M", "--destage", "hlwm:high=0.95,low=0.85")
    got = json.loads(vraid("ctl", mnt, "get", "--json").stdout)
    assert got["policies"]["destage"].startswith("hlwm:high=0.95") and got["policies"]["destage_order"] == "lrw"
    assert got["policies"]["ct"] == "none"
    assert "destage" in vraid("ctl", mnt, "get").stdout

    image = mnt / "disk.img"
    with open(image, "r+b") as f:
        for s in range(6):
            f.seek(s * STRIPE)
            f.write(b"d" * 4096)
    cache = _status(mnt)["cache"]
    assert cache["dirty_units"] == 6 and cache["destages_finished"] == 0  # below the HWM: kept dirty

    out = vraid("ctl", mnt, "set", "destage=hlwm:high=0.1,low=0").stdout
    assert "hlwm:high=0.95" in out and "hlwm:high=0.1" in out
    # destaging continues under the new scheduler, without an fsync
    _wait_for("destages under the new scheduler", lambda: _status(mnt)["cache"]["dirty_units"] == 0)
    st = _status(mnt)["cache"]
    assert st["scheduler"]["spec"].startswith("hlwm:high=0.1") and st["destages_finished"] >= 6

    change = json.loads(vraid("ctl", mnt, "set", "destage=adaptive", "--json").stdout)
    assert change["key"] == "destage" and change["new"].startswith("adaptive")
    assert _status(mnt)["cache"]["scheduler"]["name"] == "adaptive"
    vraid("ctl", mnt, "set", "destage_order=cscan")
    vraid("ctl", mnt, "set", "ct=msc:sr_max=4,sw_max=4")
    got = json.loads(vraid("ctl", mnt, "get", "--json").stdout)["policies"]
    assert got["destage_order"] == "cscan" and _status(mnt)["cache"]["order"] == "cscan"
    assert got["ct"].startswith("msc:sr_max=4,sw_max=4")

    for bad, words in [("nokey=1", "unknown policy key"), ("destage=nonsense", "unknown destage scheduler"),
                       ("destage=hlwm:high=7", "high"), ("destage_order=random", "unknown destage order"),
                       ("ct=msc:sr_max=zero", "sr_max"), ("destage", "KEY=VALUE")]:
        r = vraid("ctl", mnt, "set", bad, check=False)
        assert r.returncode == 1 and words in r.stderr, (bad, r.stderr)
    assert json.loads(vraid("ctl", mnt, "get", "--json").stdout)["policies"] == got  # nothing changed
    # the data written under all these policies reads back after a remount
    with open(image, "r+b") as f:
        f.seek(9 * STRIPE + 4096)
        f.write(b"e" * 12288)
    session.umount(mnt)
    session.mount(arr, mnt)
    with open(mnt / "disk.img", "rb") as f:
        for s in range(6):
            f.seek(s * STRIPE)
            assert f.read(4096) == b"d" * 4096
        f.seek(9 * STRIPE + 4096)
        assert f.read(12288) == b"e" * 12288
    session.umount(mnt)


@requires_mount
@pytest.mark.mount
def test_control_socket_refuses_malformed_top_and_ctl_requests(tmp_path, session):
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "3", "--disk-size", "8M")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "1M")
    sock = arr / "vraid.sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    for bad in (b"garbage\n", b'{"cmd": "stepp"}\n', {"cmd": "step", "count": "one"}, {"cmd": "step", "count": -3},
                {"cmd": "step", "count": [1]}, {"cmd": "snapshot", "buckets": "many"},
                {"cmd": "snapshot", "window": -1}, {"cmd": "ctl_set", "key": "destage"},
                {"cmd": "ctl_set", "key": 5, "value": 6}, {"cmd": "ctl_set", "key": "destage", "value": "zzz"}):
        answer = _ask(sock, bad)
        assert answer["ok"] is False and answer["error"], bad
    snap = _ask(sock, {"cmd": "snapshot", "buckets": 20})
    assert snap["ok"] and len(snap["snapshot"]["history"]) == 20 and not snap["snapshot"]["paused"]
    with open(mnt / "disk.img", "r+b") as f:
        f.write(b"x" * 4096)
    step = _ask(sock, {"cmd": "step"})
    assert step["ok"] and step["destaged"] == 1 and step["paused"]
    assert _ask(sock, {"cmd": "resume"})["paused"] is False
    # one frame without a terminal
    r = vraid("top", mnt, "--once", "--width", "120")
    assert "destage plan" in r.stdout and "watermarks" in r.stdout and "members" in r.stdout
    status = _status(mnt)
    assert status["state"] == "active" and status["internal_errors"] == 0
    session.umount(mnt)


# -- without a mount ---------------------------------------------------------------
def test_top_sim_once_prints_one_frame_without_a_terminal():
    r = subprocess.run(VRAID + ["top", "--once", "--width", "100", "--sim", "--cache", "stripe", "--cache-size", "1M",
                                "--disk-size", "8M", "--requests", "300", "--seed", "2"],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    for word in ("destage plan", "transformed M", "watermarks", "counters", "members", "HWM"):
        assert word in r.stdout


def test_top_sim_runs_paced_for_a_duration_without_a_terminal():
    started = time.monotonic()
    r = subprocess.run(VRAID + ["top", "--duration", "1.5", "--width", "100", "--rate", "0.5", "--sim", "--cache",
                                "stripe", "--disk-size", "8M", "--requests", "100000"],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - started >= 1.5
    assert "no keys" in r.stdout and "watermarks" in r.stdout


def test_top_sim_fits_an_80x24_terminal_and_refits_when_resized(tmux):
    """In a real terminal of 80x24 the whole frame is on screen: status line on top, the
    key list at the bottom, no box cut open; a resized window gets a refitted frame."""
    tmux.start(f"env -u COLUMNS -u LINES {' '.join(VRAID)} top --rate 0.2 --sim --cache stripe --ct msc "
               "--disk-size 64M --requests 100000; echo TOP-EXITED rc=$?; sleep 600", 80, 24)

    def whole(width: int, height: int) -> str:
        screen = tmux.screen()
        lines = screen.splitlines()
        keys = [i for i, x in enumerate(lines) if "q quit" in x]
        ok = (len(lines) <= height and lines and lines[0].startswith("vraid top")
              and keys and keys[-1] >= height - 3  # the footer is at the bottom of this size
              and any(len(x) > width - 5 for x in lines)  # and the frame is as wide as this size
              and "q quit" in screen and "space" in screen and "stop time" in screen
              and "destage plan" in screen and "counters" in screen and "members" in screen
              and sum(x.count("╭") for x in lines) == sum(x.count("╰") for x in lines)
              and all(len(x) <= width for x in lines))
        return screen if ok else ""

    _wait_for("the whole frame at 80x24 with a plan", lambda: (lambda s: s if "member requests" in s
                                                                 else "")(whole(80, 24)), show=tmux.screen)
    tmux.run("resize-window", "-x", "120", "-y", "40")
    screen = _wait_for("the refitted frame at 120x40", lambda: (lambda s: s if "transformed M" in s else "")(
        whole(120, 40)), show=tmux.screen)
    assert "ops:" in screen  # room for the legend again
    tmux.run("resize-window", "-x", "80", "-y", "24")
    _wait_for("the frame shrunk back to 80x24", lambda: (lambda s: s if "ops:" not in s else "")(whole(80, 24)),
              show=tmux.screen)
    tmux.keys("q")
    _wait_for("top to quit", lambda: "TOP-EXITED rc=0" in tmux.screen(), show=tmux.screen)


def test_top_sim_once_with_a_height_fits_it():
    r = subprocess.run(VRAID + ["top", "--once", "--width", "80", "--height", "24", "--sim", "--cache", "stripe",
                                "--ct", "msc", "--disk-size", "64M", "--requests", "2000"],
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 24 and lines[0].startswith("vraid top") and "no keys" in lines[-1]
    assert all(len(x) <= 80 for x in lines)
    for word in ("destage plan", "watermarks", "counters", "members"):
        assert word in r.stdout


@pytest.mark.parametrize("args, words", [
    (["top", "--once", "--height", "0", "--sim"], "--height 0"),
    (["top", "--once", "--width", "-3", "--sim"], "--width -3"),
    (["top"], "needs a mountpoint"),
    (["top", "/", "--sim"], "not both"),
    (["top", "--once", "--sim", "--bogus"], "are not valid"),
    (["top", "--sim", "--cache", "stripe", "--json"], "--json"),
    (["top", "--rate", "0", "--sim"], "--rate"),
    (["top", "/"], "is not a vraid mount"),
    (["ctl", "/", "get"], "is not a vraid mount"),
])
def test_top_and_ctl_refuse_bad_arguments(args, words):
    r = subprocess.run(VRAID + args, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and words in r.stderr, r.stderr

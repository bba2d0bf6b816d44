"""vraid top's pieces without a mount: the key reader (terminal restored, also after an
error), the viewer's keys against a fake source, and the in-process simulation source."""

from __future__ import annotations

import os
import pty
import termios
import time

import pytest

from vraid.errors import VraidError
from vraid.tui.top import KeyReader, SimSource, Viewer


def test_key_reader_uses_cbreak_and_restores_the_terminal_even_after_an_error():
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "rb", buffering=0, closefd=False) as stream:
            before = termios.tcgetattr(slave)
            with pytest.raises(RuntimeError):
                with KeyReader(stream) as keys:
                    assert keys.active
                    assert not termios.tcgetattr(slave)[3] & termios.ICANON  # cbreak: no line editing
                    os.write(master, b"ps")
                    assert keys.get(5) == "p" and keys.get(5) == "s"
                    assert keys.get(0.05) is None
                    raise RuntimeError("boom")
            assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


def test_key_reader_without_a_terminal_reads_nothing():
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", closefd=False) as stream, KeyReader(stream) as keys:
            os.write(w, b"q")
            assert not keys.active and keys.get(0.01) is None
    finally:
        os.close(r)
        os.close(w)


class FakeSource:
    sim = False

    def __init__(self):
        self.calls = []

    def command(self, cmd, **args):
        self.calls.append(cmd)
        if cmd == "step":
            return {"destaged": 1, "plans": [{"stripe": 9, "requests": [1, 2, 3]}], "destages_finished": 4}
        if cmd == "resume":
            raise VraidError("cannot resume destaging: no cache", "mount with --cache stripe")
        return {}

    def speed(self):
        return ""


def test_viewer_keys():
    src = FakeSource()
    v = Viewer(src)
    assert v.key("p") and "paused" in v.message
    assert v.key("s") and "destaged stripe 9 (3 member requests); 4 destages" in v.message
    assert v.key("r") and "no cache" in v.message and "--cache stripe" in v.message  # refused, shown, not fatal
    assert v.key("+") and v.key("x")  # ignored on a mount
    assert src.calls == ["pause", "step", "resume"]
    assert v.key("q") is False


def test_sim_source_paces_steps_and_stops_time():
    from vraid.sim.simulator import SimConfig

    cfg = SimConfig(disks=5, disk_size=8 << 20, strip=16384, requests=100_000, workload="random-write",
                    policies={"cache": "stripe", "cache_size": "1M"})
    src = SimSource(cfg, rate=1.0)
    try:
        first = src.snapshot(40)
        assert first["source"].startswith("sim:") and len(first["history"]) == 40
        src.command("pause")
        deadline = time.monotonic() + 30
        # writes arrive in (paced) virtual time; destages started before the pause end
        while (c := src.snapshot(10)["cache"])["dirty_units"] == 0 or c["destaging"]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        src.toggle_time()  # time stopped: a step still gets its disk time
        assert src.speed() == "TIME STOPPED"
        before = src.snapshot(10)["cache"]["destages_finished"]
        answer = src.command("step")
        assert answer["paused"] is True and answer["destaged"] == 1
        assert answer["destages_finished"] == before + 1
        t = src.snapshot(10)["time"]
        assert src.snapshot(10)["time"] == t  # stopped
        src.toggle_time()
        src.faster()
        assert src.speed() == "speed x2"
        src.slower()
        src.slower()
        assert src.speed() == "speed x0.5"
        src.command("resume")
        change = src.command("ctl_set", key="destage_order", value="fifo")
        assert change["new"] == "fifo"
        with pytest.raises(VraidError, match="unknown policy key"):
            src.command("ctl_set", key="colour", value="red")
    finally:
        src.close()
    assert not src.session.alive

"""A student's policy on a real mount (ISSUE-18 item 1): ``pkg.mod:Class`` from the current
directory and ``path/to/file.py:Class`` in every family at mount time, then ``vraid ctl set``
loading new student modules (a file path, a module and a package module of the caller's
directory) into the running daemon. Data written before and after verifies. Quick: no
filesystem, a few MiB through the image file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mountutil import requires_mount, vraid

pytestmark = [requires_mount, pytest.mark.mount]

MODULE = '''
from vraid.policies.destage import Decision, DestageScheduler
from vraid.policies.prefetch import NoPrefetch


class Eager(DestageScheduler):
    """Destage whenever anything is dirty."""
    params = {"n": (int, 2, "destages in flight", (1, 8))}

    def decide(self, state):
        return Decision(self.values["n"] if state.dirty else 0)


class Quiet(NoPrefetch):
    """A student's prefetch policy that prefetches nothing."""
'''

FILE = '''
from vraid.policies.ct.base import ContiguityTransform
from vraid.policies.order import Fifo
from vraid.policies.queue.fifo import FifoOrder
from vraid.policies.cache import StripeOrganisation


class Backwards(Fifo):
    """FIFO, but a student's."""


class Same(ContiguityTransform):
    """A transform that changes nothing."""

    def __call__(self, plan):
        return plan


class MyQueue(FifoOrder):
    """A student's member queue order."""


class MyStripes(StripeOrganisation):
    """A student's stripe cache."""
'''

PACKAGE = '''
from vraid.policies.destage import Decision, DestageScheduler


class Steady(DestageScheduler):
    """One destage at a time while anything is dirty."""

    def decide(self, state):
        return Decision(1 if state.dirty else 0)
'''


def cli(capsys, *args) -> tuple[int, str, str]:
    """``vraid ARGS`` in this process (as quick as a function call; the mount is another process)."""
    from vraid.cli.main import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


def write_and_check(image: Path, seed: int, size: int = 3 << 20) -> bytes:
    data = os.urandom(size)
    fd = os.open(image, os.O_RDWR)
    try:
        os.pwrite(fd, data, seed * size)
        os.fsync(fd)
        assert os.pread(fd, size, seed * size) == data
    finally:
        os.close(fd)
    return data


def test_students_policies_load_at_mount_and_with_ctl_set(tmp_path, session, monkeypatch, capsys):
    (tmp_path / "mysched.py").write_text(MODULE)
    (tmp_path / "pol").mkdir()
    (tmp_path / "pol" / "mine.py").write_text(FILE)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sched.py").write_text(PACKAGE)
    monkeypatch.chdir(tmp_path)   # relative names resolve against the caller's directory
    monkeypatch.delenv("PYTHONPATH", raising=False)
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "24M")
    session.mount(arr, mnt, "--cache", "pol/mine.py:MyStripes", "--cache-size", "2M",
                  "--destage", "mysched:Eager:n=3", "--destage-order", "pol/mine.py:Backwards",
                  "--ct", "pol/mine.py:Same",
                  "--queue-order", "pol/mine.py:MyQueue", "--prefetch", "mysched:Quiet", "--read-cache-size", "1M")
    pol = json.loads(cli(capsys, "status", mnt, "--json")[1])["policies"]
    assert pol["cache"].endswith("mine.py:MyStripes") and pol["destage"].startswith("mysched:Eager")
    assert pol["destage_order"].endswith("mine.py:Backwards") and "pol/mine.py:Same:" in pol["ct"]  # with its limits
    assert pol["queue_order"].endswith("mine.py:MyQueue") and pol["prefetch"] == "mysched:Quiet"
    first = write_and_check(mnt / "disk.img", 0)

    # ctl set: a package module, a file path and a module of this directory, into the running daemon
    for key, value in (("destage", "pkg.sched:Steady"), ("ct", "pol/mine.py:Same"),
                       ("destage_order", "mysched:Eager")):
        code, _, err = cli(capsys, "ctl", mnt, "set", f"{key}={value}")
        if key == "destage_order":   # a scheduler is not a destage order: refused, nothing changes
            assert code == 1 and "is not a DestageOrder subclass" in err
        else:
            assert code == 0, err
    code, _, err = cli(capsys, "ctl", mnt, "set", "destage=nowhere/none.py:X")
    assert code == 1 and "there is no file" in err
    got = json.loads(cli(capsys, "ctl", mnt, "get", "--json")[1])["policies"]
    assert got["destage"].endswith("pkg/sched.py:Steady") and "pol/mine.py:Same" in got["ct"]
    assert got["destage_order"].endswith("mine.py:Backwards")
    assert not json.loads(cli(capsys, "status", mnt, "--json")[1]).get("policy_faults")
    write_and_check(mnt / "disk.img", 1)
    with open(mnt / "disk.img", "rb") as f:   # what the first policies wrote is still there
        assert f.read(len(first)) == first
    session.umount(mnt)

"""Student code on a real mount (issue 33 item 4, issue 35 item 1).

* A policy that raises ``SystemExit`` at import (``vraid ctl set``) is refused and the mount
  keeps serving; one that exits in a call is a policy fault (the default takes over, nothing
  written is lost); ``vraid mount --ct exits.py:X`` refuses with a message; after all that
  the array unmounts clean.
* ``vraid ctl set`` loads a policy file as it is now: an edited file runs its new code, the
  status names the file's hash, a file that no longer parses is refused with its syntax error
  while the old policy keeps running, and a class added to the file is found.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mountutil import is_mounted, requires_mount, vraid

pytestmark = [requires_mount, pytest.mark.mount]

EXITS = '''
import sys
from vraid.policies.destage.hlwm import HlwmScheduler
from vraid.policies.ct.base import ContiguityTransform


class X(HlwmScheduler):
    def decide(self, state):
        raise SystemExit(0)


class Ct(ContiguityTransform):
    def __call__(self, plan):
        sys.exit(0)
'''

EDIT = '''
from vraid.policies.destage import Decision, DestageScheduler


class HalfFull(DestageScheduler):
    def decide(self, state):
        return Decision(1 if state.dirty * 2 > state.capacity or state.waiters else 0)
'''

EDITED = EDIT.replace("        return Decision(1 if", "        raise RuntimeError('edited to fail')\n        return Decision(1 if")

ADDED = EDIT + '''

class Eager(DestageScheduler):
    def decide(self, state):
        return Decision(2 if state.dirty else 0)
'''


def cli(capsys, *args) -> tuple[int, str]:
    from vraid.cli.main import main

    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "Traceback" not in text, text
    return code, text


def write_and_check(image: Path, index: int, size: int = 1 << 20) -> bytes:
    data = os.urandom(size)
    fd = os.open(image, os.O_RDWR)
    try:
        os.pwrite(fd, data, index * size)
        os.fsync(fd)
        assert os.pread(fd, size, index * size) == data
    finally:
        os.close(fd)
    return data


def status(capsys, mnt: Path) -> dict:
    from vraid.cli.main import main

    capsys.readouterr()
    assert main(["status", str(mnt), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plugins_that_exit_are_faults_and_the_mount_goes_on(tmp_path, session, monkeypatch, capsys):
    (tmp_path / "exits.py").write_text(EXITS)
    (tmp_path / "at_import.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.chdir(tmp_path)
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M")
    mnt.mkdir()
    for spec, expect in (("at_import.py:X", "failed: SystemExit: 0"), ("exits.py:Nope", "has no 'Nope'")):
        code, text = cli(capsys, "mount", arr, mnt, "--ct", spec)
        assert code == 1 and expect in text and "hint:" in text, text
        assert not is_mounted(mnt)
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "2M")
    image = mnt / "disk.img"
    written = [write_and_check(image, 0)]

    code, text = cli(capsys, "ctl", mnt, "set", "destage=at_import.py:X")
    assert code == 1 and "loading" in text and "SystemExit: 0" in text, text
    assert status(capsys, mnt)["state"] == "active"

    for key, spec, call in (("destage", "exits.py:X", "decide"), ("ct", "exits.py:Ct", "__call__")):
        code, text = cli(capsys, "ctl", mnt, "set", f"{key}={spec}")
        assert code == 0, text
        written.append(write_and_check(image, len(written)))  # the exit happens here, in the daemon
        st = status(capsys, mnt)
        assert st["state"] == "active"
        fault = st["policy_faults"][-1]
        assert fault["family"] == key and fault["call"] == call and fault["error"] == "SystemExit: 0", fault
        assert spec not in st["policies"][key]  # the default runs now
    with open(image, "rb") as f:
        for i, data in enumerate(written):
            assert f.read(len(data)) == data, f"chunk {i} lost"
    session.umount(mnt)
    assert json.loads(vraid("status", arr, "--json").stdout)["state"] == "not mounted, clean"


def test_ctl_set_loads_the_policy_file_as_it_is_now(tmp_path, session, monkeypatch, capsys):
    edit = tmp_path / "edit.py"
    edit.write_text(EDIT)
    monkeypatch.chdir(tmp_path)
    arr, mnt = tmp_path / "arr", tmp_path / "mnt"
    vraid("create", arr, "--disks", "4", "--disk-size", "16M")
    session.mount(arr, mnt, "--cache", "stripe", "--cache-size", "2M", "--destage", "edit.py:HalfFull")
    image = mnt / "disk.img"
    write_and_check(image, 0)

    def source() -> str:
        return status(capsys, mnt).get("policy_sources", {}).get("destage", "")

    assert hashlib.sha256(EDIT.encode()).hexdigest()[:12] in source()
    edit.write_text(EDITED)  # decide now raises: the old code must not be what runs
    assert cli(capsys, "ctl", mnt, "set", "destage=hlwm")[0] == 0
    assert source() == ""
    code, text = cli(capsys, "ctl", mnt, "set", "destage=edit.py:HalfFull")
    assert code == 0 and hashlib.sha256(EDITED.encode()).hexdigest()[:12] in text, text
    write_and_check(image, 1)
    faults = status(capsys, mnt)["policy_faults"]
    assert faults and faults[-1]["error"] == "RuntimeError: edited to fail", faults

    edit.write_text(ADDED)
    code, text = cli(capsys, "ctl", mnt, "set", "destage=edit.py:Eager")  # a class added to the file
    assert code == 0, text
    assert status(capsys, mnt)["policies"]["destage"].endswith("edit.py:Eager")
    edit.write_text(ADDED + "\ndef broken(:\n")
    code, text = cli(capsys, "ctl", mnt, "set", "destage=edit.py:HalfFull")
    assert code == 1 and "does not parse: invalid syntax" in text, text
    st = status(capsys, mnt)
    assert st["policies"]["destage"].endswith("edit.py:Eager") and st["state"] == "active"
    assert hashlib.sha256(ADDED.encode()).hexdigest()[:12] in st["policy_sources"]["destage"]
    code, text = cli(capsys, "ctl", mnt, "get", "--json")
    assert code == 0 and hashlib.sha256(ADDED.encode()).hexdigest()[:12] in json.loads(text)["sources"]["destage"]
    code, text = cli(capsys, "ctl", mnt, "get")
    assert code == 0 and "(edit.py sha256" in text, text
    write_and_check(image, 2)
    session.umount(mnt)

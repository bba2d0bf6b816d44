"""The bad-input matrix (ISSUE-12 items 5 and 6): every command, and the control socket,
given something wrong.

Each case asserts a key phrase of the message, the exit status, that no traceback (nor a
bare exception class name) is printed, and that the member files are byte-identical
before and after. Cases that need a running mount share one mount (module fixture).

``{arr}`` is an unmounted RAID-5 array, ``{r0}`` a RAID-0 one, ``{live}`` a mounted
RAID-5 array at ``{mnt}``, ``{tmp}`` a scratch directory holding ``plain/`` (a directory
that is not an array), ``empty/``, ``full/`` (a non-empty directory), ``file`` (a
regular file) and ``mnt0/`` (an empty mountpoint).
"""

from __future__ import annotations

import hashlib
import json
import socket
from pathlib import Path

import pytest

from vraid.fuse import control

from mountutil import Session, is_mounted, requires_mount, vraid


def members_hash(*arrays: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for arr in arrays for p in sorted(arr.glob("*.img"))}


def clean_text(result) -> str:
    text = result.stdout + result.stderr
    assert "Traceback" not in text, text
    for name in ("VraidError:", "MountError:", "OSError", "FileNotFoundError", "RecursionError", "MemoryError",
                 "UnicodeDecodeError"):
        assert name not in text, text
    return " ".join(text.split())


# -- without a mount --------------------------------------------------------------
OFFLINE = [
    # create
    ("create-image-escape", ["create", "{tmp}/c", "--image", "../escape.img"], "not a plain file name", 1),
    ("create-image-empty", ["create", "{tmp}/c", "--image", ""], "is empty", 1),
    ("create-image-slash", ["create", "{tmp}/c", "--image", "a/b"], "not a plain file name", 1),
    ("create-image-dot", ["create", "{tmp}/c", "--image", ".."], "not a plain file name", 1),
    ("create-in-proc", ["create", "/proc/vraid-x", "--disks", "3", "--disk-size", "4M"], "cannot create the array", 1),
    ("create-over-array", ["create", "{arr}", "--disk-size", "4M"], "already holds a vraid array", 1),
    ("create-on-file", ["create", "{tmp}/file"], "exists and is not a directory", 1),
    ("create-two-disks", ["create", "{tmp}/c", "--disks", "2"], "RAID-5 needs at least 3 disks", 1),
    ("create-odd-strip", ["create", "{tmp}/c", "--strip", "12K"], "not a power-of-two", 1),
    ("create-tiny-disk", ["create", "{tmp}/c", "--disk-size", "1M"], "smaller than one stripe", 1),
    ("create-size-word", ["create", "{tmp}/c", "--disk-size", "lots"], "is not a size", 2),
    ("create-negative-spares", ["create", "{tmp}/c", "--spares", "-1"], "a negative count", 1),
    ("create-raid0-spares", ["create", "{tmp}/c", "--level", "0", "--spares", "1"], "RAID-0 has no redundancy", 1),
    ("create-tiny-bitmap", ["create", "{tmp}/c", "--bitmap-chunk", "1K"], "less than one stripe", 1),
    ("create-level-3", ["create", "{tmp}/c", "--level", "3"], "invalid choice", 2),
    # examine, layout
    ("examine-missing", ["examine", "{tmp}/nope"], "does not exist", 1),
    ("examine-empty", ["examine", "{tmp}/empty"], "holds no files", 1),
    ("layout-negative", ["layout", "--stripes", "-1"], "show from 1 to", 1),
    ("layout-zero", ["layout", "--stripes", "0"], "show from 1 to", 1),
    ("layout-huge", ["layout", "--stripes", "100000000"], "show from 1 to", 1),
    ("layout-two-disks", ["layout", "--disks", "2"], "RAID-5 needs at least 3 disks", 1),
    # mount, refused before anything changes
    ("mount-not-array", ["mount", "{tmp}/plain", "{tmp}/mnt0"], "is not a vraid array", 1),
    ("mount-no-mountpoint", ["mount", "{arr}", "{tmp}/nowhere"], "does not exist", 1),
    ("mount-nonempty", ["mount", "{arr}", "{tmp}/full"], "is not empty", 1),
    ("mount-on-file", ["mount", "{arr}", "{tmp}/file"], "is not a directory", 1),
    ("mount-bad-time", ["mount", "{arr}", "{tmp}/mnt0", "--time", "fast"], "is not a time mode", 1),
    ("mount-negative-rate", ["mount", "{arr}", "{tmp}/mnt0", "--rebuild-rate", "-1"], "is negative", 1),
    ("mount-tiny-rate", ["mount", "{arr}", "{tmp}/mnt0", "--rebuild-rate", "0.0000001"], "too slow", 1),
    ("mount-nan-rate", ["mount", "{arr}", "{tmp}/mnt0", "--rebuild-rate", "nan"], "not a number of MB/s", 1),
    ("mount-nvram-nodir", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "stripe", "--nvram", "/nonexistent/d/nv.bin"],
     "the directory /nonexistent/d does not exist", 1),
    ("mount-nvram-dir", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "stripe", "--nvram", "{tmp}/empty"], "is a directory", 1),
    ("mount-nvram-nocache", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "none", "--nvram", "{tmp}/nv.bin"],
     "needs a write-back cache", 1),
    ("mount-trace-nodir", ["mount", "{arr}", "{tmp}/mnt0", "--trace", "/nonexistent/x"], "does not exist", 1),
    ("mount-small-cache", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "stripe", "--cache-size", "4K"],
     "smaller than one stripe", 1),
    ("mount-bad-destage", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "stripe", "--destage", "nosuch"], "nosuch", 1),
    ("mount-bad-fault", ["mount", "{arr}", "{tmp}/mnt0", "--fault", "disk9:eio=1"], "not disk9", 1),
    ("mount-bad-model", ["mount", "{arr}", "{tmp}/mnt0", "--disk-model", "floppy"], "floppy", 1),
    ("mount-bad-ct", ["mount", "{arr}", "{tmp}/mnt0", "--ct", "zigzag"], "zigzag", 1),
    # umount, status, check
    ("umount-not-mount", ["umount", "{tmp}/empty"], "is not a vraid mount", 1),
    ("umount-negative-timeout", ["umount", "{tmp}/mnt0", "--timeout", "-1"], "is not a number of seconds", 1),
    ("status-missing", ["status", "{tmp}/nope"], "does not exist", 1),
    ("status-not-array", ["status", "{tmp}/plain"], "is not a vraid array", 1),
    ("check-missing", ["check", "{tmp}/nope"], "does not exist", 1),
    ("check-file", ["check", "{tmp}/file"], "is not a directory", 1),
    ("check-not-array", ["check", "{tmp}/plain"], "is not a vraid array", 1),
    # fail, add, rebuild
    ("fail-no-member", ["fail", "{arr}", "9"], "there is no member 9", 1),
    ("fail-bad-name", ["fail", "{arr}", "nosuch.img"], "is not a member", 1),
    ("fail-raid0", ["fail", "{r0}", "0"], "RAID-0 has no redundancy", 1),
    ("fail-nowhere", ["fail", "{tmp}/nope", "1"], "neither a vraid mountpoint", 1),
    ("add-directory", ["add", "{arr}", "{arr}/somedir"], "is a directory", 1),
    ("add-outside", ["add", "{arr}", "{tmp}/elsewhere.img"], "is not in the array directory", 1),
    ("add-member", ["add", "{arr}", "disk0.img"], "is in use by the array already", 1),
    ("add-raid0", ["add", "{r0}", "spare.img"], "RAID-0 has no redundancy", 1),
    ("rebuild-unmounted", ["rebuild", "{arr}"], "is not mounted", 1),
    ("rebuild-negative", ["rebuild", "{arr}", "--rate", "-5"], "is negative", 1),
    ("rebuild-tiny", ["rebuild", "{arr}", "--rate", "0.0000001"], "too slow", 1),
    ("rebuild-inf", ["rebuild", "{arr}", "--rate", "inf"], "not a number of MB/s", 1),
    # sim, top, ctl, experiment
    ("sim-terabyte", ["sim", "--capacity", "1T"], "of memory", 1),
    ("sim-trillion", ["sim", "--requests", "1000000000000"], "more than one run simulates", 1),
    ("sim-negative", ["sim", "--requests", "-1"], "is negative", 1),
    ("sim-cache-zero", ["sim", "--cache", "stripe", "--cache-size", "0"], "smaller than one stripe", 1),
    ("sim-bad-workload", ["sim", "--workload", "nosuch"], "nosuch", 1),
    ("sim-bad-model", ["sim", "--disk-model", "floppy"], "floppy", 1),
    ("sim-bad-destage", ["sim", "--cache", "stripe", "--destage", "nosuch"], "nosuch", 1),
    ("sim-bad-fault", ["sim", "--fault", "disk5:eio=1"], "not disk5", 1),
    ("sim-two-disks", ["sim", "--disks", "2"], "RAID-5 needs at least 3 disks", 1),
    ("sim-no-flight", ["sim", "--max-in-flight", "0"], "must be at least 1", 1),
    ("top-nothing", ["top"], "needs a mountpoint", 1),
    ("top-not-mount", ["top", "{tmp}/empty", "--once"], "is not a vraid mount", 1),
    ("top-zero-interval", ["top", "--interval", "0", "--sim"], "is not positive", 1),
    ("top-sim-terabyte", ["top", "--once", "--sim", "--capacity", "1T"], "of memory", 1),
    ("ctl-not-mount", ["ctl", "{tmp}/empty", "get"], "is not a vraid mount", 1),
    ("experiment-unknown", ["experiment", "nosuch"], "nosuch", 1),
    # hardening issue 33 item 5: sizes against the device and the machine, nothing left behind
    ("create-log-100T", ["create", "{tmp}/c", "--log", "scd", "--log-size", "100T"], "free", 1),
    ("create-disk-20T", ["create", "{tmp}/c", "--disks", "3", "--disk-size", "20T"], "the array needs 60T", 1),
    ("sim-buffer-huge", ["sim", "--placement", "multibuffer:buffer=99999999999"], "buffer=99999999999 is above 65536", 1),
    ("sim-dpsr-buffer-zero", ["sim", "--placement", "dpsr:buffer=0"], "buffer=0 is below 1", 1),
    ("sim-msp-huge", ["sim", "--prefetch", "msp:sps_max=1000000000", "--read-cache-size", "1M"],
     "sps_max=1000000000 is above 1024", 1),
    ("sim-seqp-huge", ["sim", "--prefetch", "seqp:max_kb=99999999999", "--read-cache-size", "1M"], "is above", 1),
    ("sim-read-cache-huge", ["sim", "--read-cache-size", "1000T"], "larger than the array", 1),
    ("mount-read-cache-huge", ["mount", "{arr}", "{tmp}/mnt0", "--read-cache-size", "1000T"], "larger than the array", 1),
    ("mount-cache-memory", ["mount", "{arr}", "{tmp}/mnt0", "--cache", "stripe", "--cache-size", "1000T"],
     "more than this machine's memory", 1),
    ("mount-placement-spare", ["mount", "{mb}", "{tmp}/mnt0", "--placement", "multibuffer:spare=0.5"],
     "spare is chosen when the array is created", 1),
    ("mount-placement-other", ["mount", "{arr}", "{tmp}/mnt0", "--placement", "multibuffer"],
     "was created with placement static", 1),
    # hardening issue 33 item 3: a log file of the wrong size
    ("mount-log-truncated", ["mount", "{lg}", "{tmp}/mnt0"], "log0.img is 4M, the array's log is 8M: truncated?", 1),
    # lab check reads answer files with a cap, a depth limit and a named encoding
    ("lab-check-deep", ["lab", "check", "rxw-matrix", "{tmp}/deep.json"], "nested deeper than 16 levels", 1),
    ("lab-check-utf16", ["lab", "check", "rxw-matrix", "{tmp}/utf16.json"], "is not UTF-8 text", 1),
    ("lab-check-zero", ["lab", "check", "rxw-matrix", "/dev/zero"], "larger than 1 MiB", 1),
    ("lab-check-dir", ["lab", "check", "rxw-matrix", "{tmp}/empty"], "cannot read the answer file", 1),
    # specs printed as written (rich markup and emoji off)
    ("sim-spec-emoji", ["sim", "--ct", "/x/nosuch.py:X"], "/x/nosuch.py:X: there is no file", 1),
    ("sim-spec-markup", ["sim", "--ct", "/x/[bold]no.py:X"], "/x/[bold]no.py:X: there is no file", 1),
    # hardening issue 33 item 4: a plugin that exits
    ("sim-plugin-exits", ["sim", "--cache", "stripe", "--destage", "{tmp}/exits.py:X"], "failed in decide: SystemExit", 1),
    ("sim-plugin-exits-import", ["sim", "--ct", "{tmp}/at_import.py:X"], "failed: SystemExit: 0", 1),
    ("mount-plugin-exits-import", ["mount", "{arr}", "{tmp}/mnt0", "--ct", "{tmp}/at_import.py:X"],
     "failed: SystemExit: 0", 1),
    ("fuzz-plugin-exits-import", ["fuzz", "--placement", "{tmp}/at_import.py:X"], "failed: SystemExit: 0", 1),
    # one per option added since the matrix was written
    ("create-log-unknown", ["create", "{tmp}/c", "--log", "zigzag"], "zigzag", 1),
    ("create-placement-unknown", ["create", "{tmp}/c", "--placement", "nosuch"], "nosuch", 1),
    ("layout-highlight", ["layout", "--highlight", "x-y"], "is not a block or block range", 1),
    ("mount-queue-order", ["mount", "{arr}", "{tmp}/mnt0", "--queue-order", "nosuch"], "nosuch", 1),
    ("mount-prefetch", ["mount", "{arr}", "{tmp}/mnt0", "--prefetch", "nosuch"], "nosuch", 1),
    ("mount-read-cache-word", ["mount", "{arr}", "{tmp}/mnt0", "--read-cache-size", "lots"], "is not a size", 1),
    ("sim-log-destage", ["sim", "--log", "scd", "--log-destage", "nosuch"], "nosuch", 1),
    ("sim-host-readahead", ["sim", "--host-readahead", "zigzag"], "unknown host read-ahead", 1),
    ("sim-on-policy-fault", ["sim", "--on-policy-fault", "ignore"], "invalid choice", 2),
    ("sim-no-data-workload", ["sim", "--no-data", "--workload", "nosuch"], "unknown workload", 1),
    ("rxw-difficulty", ["rxw", "--difficulty", "extreme"], "invalid choice", 2),
    ("stride-bench-depth", ["stride-bench", "--disk-model", "hdd:st373454lc", "--depth", "0"], "is below 1", 1),
    ("experiment-set", ["experiment", "stride", "--quick", "--set", "colour=red", "--out", "{tmp}/exp"], "colour", 1),
    ("fuzz-examples", ["fuzz", "--ct", "msc", "--examples", "0"], "give at least 1", 1),
    ("fuzz-steps", ["fuzz", "--ct", "msc", "--steps", "0"], "give at least 1", 1),
    ("fuzz-case", ["fuzz", "--ct", "msc", "--case", "nosuch"], "has no case 'nosuch'", 1),
    ("fuzz-replay", ["fuzz", "--ct", "msc", "--replay", "AAAA"], "--replay needs --case", 1),
    ("lab-mount", ["lab", "run", "rxw-matrix", "--batch", "--mount", "{tmp}/lm"], "takes no --mount", 1),
    ("lab-unknown", ["lab", "run", "nosuch", "--batch"], "nosuch", 1),
]

EXITS = """
from vraid.policies.destage.hlwm import HlwmScheduler


class X(HlwmScheduler):
    def decide(self, state):
        raise SystemExit(0)


class Init(HlwmScheduler):
    def __init__(self, **values):
        raise SystemExit(0)
"""


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad")
    arr, r0, mb, lg = tmp / "arr", tmp / "r0", tmp / "mb", tmp / "lg"
    vraid("create", arr, "--disks", "4", "--disk-size", "4M")
    vraid("create", r0, "--level", "0", "--disks", "2", "--disk-size", "4M")
    vraid("create", mb, "--disks", "4", "--disk-size", "16M", "--placement", "multibuffer")
    vraid("create", lg, "--disks", "3", "--disk-size", "4M", "--log", "scd", "--log-size", "8M")
    with open(lg / "log0.img", "r+b") as f:  # a copy cut short
        f.truncate(4 << 20)
    (tmp / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp / "utf16.json").write_text('{"answers": {}}', encoding="utf-16")
    (tmp / "exits.py").write_text(EXITS)
    (tmp / "at_import.py").write_text("import sys\nsys.exit(0)\n")
    (tmp / "broken.py").write_text("def broken(:\n")
    (arr / "somedir").mkdir()
    for d in ("plain", "empty", "full", "mnt0"):
        (tmp / d).mkdir()
    (tmp / "plain" / "notes.txt").write_text("not an array")
    (tmp / "full" / "keep.txt").write_text("mine")
    (tmp / "file").write_text("x")
    return {"tmp": tmp, "arr": arr, "r0": r0, "mb": mb, "lg": lg}


@pytest.mark.parametrize("args, expect, code", [c[1:] for c in OFFLINE], ids=[c[0] for c in OFFLINE])
def test_offline(offline, args, expect, code):
    tmp, arrays = offline["tmp"], [offline[k] for k in ("arr", "r0", "mb", "lg")]
    before = members_hash(*arrays)
    result = vraid(*[a.format(**offline) for a in args], check=False, timeout=300)
    try:
        text = clean_text(result)
        assert result.returncode == code, (result.returncode, text)
        assert expect in text, text
        if code == 1:
            assert "hint:" in text, text
    finally:
        if is_mounted(tmp / "mnt0"):  # a refusal that did not refuse: do not leave it behind
            vraid("umount", tmp / "mnt0", check=False)
    assert members_hash(*arrays) == before
    assert not (tmp / "c").exists() and not (tmp / "escape.img").exists()
    assert not (tmp / "exp").exists() and not (tmp / "lm").exists()


def test_there_are_at_least_sixty_cases():
    assert len(OFFLINE) + len(MOUNTED) + len(SOCKET) >= 60


# -- with a mount (shared) ------------------------------------------------------------
MOUNTED = [
    ("ctl-bad-destage", ["ctl", "{mnt}", "set", "destage=nosuch"], "nosuch", 1),
    ("ctl-bad-key", ["ctl", "{mnt}", "set", "colour=red"], "unknown policy key", 1),
    ("ctl-set-nothing", ["ctl", "{mnt}", "set"], "needs KEY=VALUE", 1),
    ("ctl-get-extra", ["ctl", "{mnt}", "get", "a=b"], "takes no KEY=VALUE", 1),
    ("ctl-bad-order", ["ctl", "{mnt}", "set", "destage_order=random"], "random", 1),
    ("rebuild-tiny-rate", ["rebuild", "{mnt}", "--rate", "0.0000001"], "too slow", 1),
    ("add-directory-mounted", ["add", "{mnt}", "{live}/somedir"], "is a directory", 1),
    ("add-member-mounted", ["add", "{mnt}", "disk1.img"], "is in use by the array already", 1),
    ("fail-no-member-mounted", ["fail", "{mnt}", "9"], "there is no member 9", 1),
    ("fail-dir-no-member", ["fail", "{live}", "7"], "there is no member 7", 1),
    ("mount-twice", ["mount", "{live}", "{tmp}/mnt0"], "already mounted at", 1),
    ("mount-onto-mount", ["mount", "{arr}", "{mnt}"], "already a mountpoint", 1),
    ("check-behind-daemon", ["check", "{live}"], "behind the daemon's back", 1),
    ("create-force-mounted", ["create", "{live}", "--disks", "3", "--disk-size", "4M", "--force"], "holds it", 1),
    ("umount-negative", ["umount", "{mnt}", "--timeout", "-1"], "is not a number of seconds", 1),
    # a student's policy file that exits or no longer parses: refused, the mount goes on
    ("ctl-plugin-exits-import", ["ctl", "{mnt}", "set", "destage={tmp}/at_import.py:X"], "failed: SystemExit: 0", 1),
    ("ctl-plugin-exits-init", ["ctl", "{mnt}", "set", "destage={tmp}/exits.py:Init"],
     "building it failed: SystemExit: 0", 1),
    ("ctl-plugin-syntax", ["ctl", "{mnt}", "set", "destage={tmp}/broken.py:X"], "does not parse: invalid syntax", 1),
]

SOCKET = [
    ("nested-1000", b"[" * 1000, "nested deeper"),
    ("nested-objects", b'{"cmd": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": {}}}}}}}}}}', "nested deeper"),
    ("not-json", b"not json", "not JSON"),
    ("binary", b"\xff\xfe\x00", "not JSON"),
    ("unknown-cmd", b'{"cmd": "format"}', "unknown command"),
    ("a-list", b"[1, 2]", 'expected {"cmd"'),
    ("cmd-number", b'{"cmd": 5}', 'expected {"cmd"'),
    ("rate-nan", b'{"cmd": "rebuild-rate", "rate": NaN}', "not a number vraid accepts"),
    ("rate-infinity", b'{"cmd": "rebuild-rate", "rate": Infinity}', "not a number vraid accepts"),
    ("rate-1e999", b'{"cmd": "rebuild-rate", "rate": 1e999}', "finite"),
    ("rate-1e-300", b'{"cmd": "rebuild-rate", "rate": 1e-300}', "too slow"),
    ("rate-negative", b'{"cmd": "rebuild-rate", "rate": -1}', "out of range"),
    ("rate-string", b'{"cmd": "rebuild-rate", "rate": "5"}', "must be a number"),
    ("repair-string", b'{"cmd": "check_start", "repair": "false"}', "must be true or false"),
    ("repair-typo", b'{"cmd": "check_start", "repiar": true}', "unknown field repiar"),
    ("buckets-zero", b'{"cmd": "snapshot", "buckets": 0}', "out of range"),
    ("window-negative", b'{"cmd": "snapshot", "window": -1}', "out of range"),
    ("step-many", b'{"cmd": "step", "count": 1000}', "out of range"),
    ("ctl-key-number", b'{"cmd": "ctl_set", "key": 5, "value": "lrw"}', "must be a string"),
    ("ctl-value-list", b'{"cmd": "ctl_set", "key": "destage", "value": ["hlwm"]}', "must be a string"),
    ("fail-bool", b'{"cmd": "fail", "disk": true}', "whole number or a string"),
    ("fail-no-disk", b'{"cmd": "fail"}', "disk is missing"),
    ("fail-force-string", b'{"cmd": "fail", "disk": 1, "force": "yes"}', "must be true or false"),
    ("add-number", b'{"cmd": "add", "file": 7}', "must be a string"),
    ("add-empty", b'{"cmd": "add", "file": ""}', "file"),
    ("ping-extra", b'{"cmd": "ping", "x": 1}', "unknown field x"),
    ("too-long", b'{"cmd": "ping", "pad": "' + b"x" * 70000 + b'"}', "request too long"),
]


@pytest.fixture(scope="module")
def mounted(offline):
    if requires_mount.args[0]:
        pytest.skip(requires_mount.kwargs["reason"])
    tmp = offline["tmp"]
    live, mnt = tmp / "live", tmp / "mnt"
    vraid("create", live, "--disks", "4", "--disk-size", "4M")
    (live / "somedir").mkdir()
    session = Session()
    try:
        session.mount(live, mnt, "--cache", "stripe", "--cache-size", "1M")
        yield offline | {"live": live, "mnt": mnt}
    finally:
        session.cleanup()


@pytest.mark.mount
@pytest.mark.parametrize("args, expect, code", [c[1:] for c in MOUNTED], ids=[c[0] for c in MOUNTED])
def test_mounted(mounted, args, expect, code):
    live, arr = mounted["live"], mounted["arr"]
    before = members_hash(live, arr)
    result = vraid(*[a.format(**mounted) for a in args], check=False)
    try:
        text = clean_text(result)
        assert result.returncode == code, (result.returncode, text)
        assert expect in text, text
        assert "hint:" in text, text
    finally:
        if is_mounted(mounted["tmp"] / "mnt0"):
            vraid("umount", mounted["tmp"] / "mnt0", check=False)
    assert members_hash(live, arr) == before
    assert json.loads(vraid("status", mounted["mnt"], "--json").stdout)["state"] == "active"


@pytest.mark.mount
@pytest.mark.parametrize("line, expect", [c[1:] for c in SOCKET], ids=[c[0] for c in SOCKET])
def test_socket(mounted, line, expect):
    live = mounted["live"]
    before = members_hash(live)
    answer = json.loads(control.exchange(live / "vraid.sock", line + b"\n", timeout=20))
    assert answer["ok"] is False, answer
    assert expect in answer["error"], answer
    assert answer.get("hint"), answer
    assert "Error:" not in answer["error"] and "Traceback" not in answer["error"], answer
    assert members_hash(live) == before
    status = json.loads(vraid("status", mounted["mnt"], "--json").stdout)
    assert status["state"] == "active" and status["internal_errors"] == 0
    assert status.get("rebuild") is None or status["rebuild"].get("rate_limit_mb_s") in (None, 0)


@pytest.mark.mount
def test_every_command_of_a_mount_has_a_schema(mounted):
    """An unknown field is refused by every command: none runs unchecked."""
    sock = mounted["live"] / "vraid.sock"

    def ask(line: bytes) -> dict:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(str(sock))
            s.sendall(line + b"\n")
            return json.loads(s.makefile("rb").readline())

    known = ask(b'{"cmd": "no-such-command"}')["hint"].removeprefix("known: ").split(", ")
    assert {"ping", "status", "snapshot", "ctl_set", "fail", "add", "rebuild-rate", "check_start"} <= set(known)
    for cmd in known:
        answer = ask(json.dumps({"cmd": cmd, "zz_unknown": 1}).encode())
        assert answer["ok"] is False and "unknown field zz_unknown" in answer["error"], (cmd, answer)

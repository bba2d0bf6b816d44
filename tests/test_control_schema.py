"""Control requests without a mount: parsing bounds, schemas, the server surviving its
handlers, and the array lock (vraid.core.schema, vraid.fuse.control, vraid.ondisk.lock)."""

from __future__ import annotations

import json
import os
import socket

import pytest
import trio

from vraid.core.schema import MAX_DEPTH, BadRequest, Bool, Int, IntOrStr, Num, Str, depth, parse, takes, validate
from vraid.errors import MountError, VraidError
from vraid.fuse import control
from vraid.ondisk.lock import NAME, ArrayLock, holder_of


@pytest.mark.parametrize("line, expect", [
    (b"[" * 1000, "nested deeper"),
    (b"[" * 100000 + b"]" * 100000, "request too long"),
    (b'{"cmd": "x", "a": NaN}', "not a number vraid accepts"),
    (b'{"cmd": "x", "a": -Infinity}', "not a number vraid accepts"),
    (b"{", "not JSON"),
    (b'"cmd"', 'expected {"cmd"'),
    (b'{"command": "ping"}', 'expected {"cmd"'),
    (b"\xff", "not JSON"),
])
def test_parse_refuses(line, expect):
    with pytest.raises(BadRequest, match=expect):
        parse(line)


def test_brackets_inside_strings_do_not_count_as_depth():
    line = json.dumps({"cmd": "ctl_set", "key": "destage", "value": "[" * 500 + '\\"{' * 50}).encode()
    assert depth(line) == 1
    assert parse(line)["value"].startswith("[[[")
    nested = b'{"cmd": "x", "a": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}"
    assert depth(nested) == MAX_DEPTH + 1
    with pytest.raises(BadRequest):
        parse(nested)


SCHEMA = {"n": Int(1, 64), "rate": Num(0, 100, nullable=True), "flag": Bool(), "name": Str(8), "disk": IntOrStr()}


@pytest.mark.parametrize("fields, expect", [
    ({"n": 0}, "out of range"), ({"n": 65}, "out of range"), ({"n": 1.5}, "whole number"), ({"n": True}, "whole number"),
    ({"rate": float("nan")}, "finite"), ({"rate": float("inf")}, "finite"), ({"rate": -1}, "out of range"),
    ({"rate": "1"}, "must be a number"), ({"flag": "false"}, "true or false"), ({"flag": 0}, "true or false"),
    ({"name": "x" * 9}, "more than 8"), ({"name": "a\0b"}, "NUL"), ({"name": 3}, "a string"),
    ({"disk": False}, "whole number or a string"), ({"disk": [1]}, "whole number or a string"),
    ({"bogus": 1}, "unknown field bogus"),
])
def test_validate_refuses(fields, expect):
    with pytest.raises(BadRequest, match=expect):
        validate({"cmd": "t"} | fields, SCHEMA)


def test_validate_accepts_good_fields():
    validate({"cmd": "t", "n": 64, "rate": None, "flag": False, "name": "abc", "disk": 2}, SCHEMA)
    validate({"cmd": "t", "rate": 0.5, "disk": "disk1.img"}, SCHEMA)
    validate({"cmd": "t"}, SCHEMA)


def test_a_server_answers_bad_requests_and_survives_a_raising_handler(tmp_path):
    path = tmp_path / "s.sock"
    calls = []

    @takes(repair=Bool())
    async def check(req):
        calls.append(req)
        return {"repair": req.get("repair", False)}

    @takes()
    async def boom(_req):
        raise RecursionError("maximum recursion depth exceeded")

    @takes()
    async def refuse(_req):
        raise VraidError("not now", "later")

    async def main():
        server = control.ControlServer(path, {"check": check, "boom": boom, "refuse": refuse}, control.bind(path))
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            answers = await trio.to_thread.run_sync(lambda: [_ask(path, line) for line in (
                b"[" * 1000, b'{"cmd": "boom"}', b'{"cmd": "refuse"}', b'{"cmd": "check", "repair": "false"}',
                b'{"cmd": "check", "repair": true}')])
            nursery.cancel_scope.cancel()
        return answers

    nested, boom_answer, refused, string, good = trio.run(main)
    assert nested["ok"] is False and "nested deeper" in nested["error"]
    assert boom_answer["ok"] is False and "internal error in boom" in boom_answer["error"] and boom_answer["hint"]
    assert refused == {"ok": False, "error": "not now", "hint": "later"}
    assert string["ok"] is False and "true or false" in string["error"]
    assert good == {"ok": True, "repair": True}
    assert calls == [{"cmd": "check", "repair": True}]
    assert not path.exists()


def _ask(path, line: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(line + b"\n")
        return json.loads(s.makefile("rb").readline())


def test_bind_refuses_a_directory_and_replaces_a_stale_socket(tmp_path):
    path = tmp_path / "vraid.sock"
    path.mkdir()
    with pytest.raises(MountError, match="is a directory"):
        control.bind(path)
    path.rmdir()
    control.bind(path).close()  # leaves a stale socket file behind
    sock = control.bind(path)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)
    sock.close()


def test_the_lock_is_exclusive_and_names_its_holder(tmp_path):
    first = ArrayLock.acquire(tmp_path)
    first.claim(4242, "/mnt/x")
    assert holder_of(tmp_path) == {"pid": "4242", "mountpoint": "/mnt/x"}
    with pytest.raises(MountError, match=r"the mount at /mnt/x \(daemon pid 4242\) holds it") as refused:
        ArrayLock.acquire(tmp_path)
    assert "vraid umount /mnt/x" in refused.value.hint
    assert oct(os.stat(tmp_path / NAME).st_mode & 0o777) == oct(0o600)
    first.release()
    assert holder_of(tmp_path) is None
    with ArrayLock.acquire(tmp_path, what="check"):
        with pytest.raises(MountError, match="cannot check"):
            ArrayLock.acquire(tmp_path, what="check")


def test_the_lock_survives_in_a_forked_child_after_the_parent_lets_go(tmp_path):
    lock = ArrayLock.acquire(tmp_path)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child holds the inherited lock until the parent has checked
        os.close(w)
        try:
            lock.claim(os.getpid(), "/m")
            os.read(r, 1)
        finally:
            os._exit(0)
    os.close(r)
    lock.release()
    try:
        for _ in range(200):
            if holder_of(tmp_path) == {"pid": str(pid), "mountpoint": "/m"}:
                break
            trio.run(trio.sleep, 0.01)
        with pytest.raises(MountError, match=f"daemon pid {pid}"):
            ArrayLock.acquire(tmp_path)
    finally:
        os.write(w, b"x")
        os.close(w)
        os.waitpid(pid, 0)
    ArrayLock.acquire(tmp_path).release()


def test_fuse_option_values_are_escaped():
    from vraid.fuse.daemon import fuse_escape

    assert fuse_escape("/a,b\\c") == "/a\\,b\\\\c"
    assert fuse_escape("/plain") == "/plain"

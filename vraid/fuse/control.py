"""The control socket of a running mount: ``DIR/vraid.sock``, mode 0600.

One JSON object per line in each direction. A request is
``{"cmd": NAME, ...}``; the answer is ``{"ok": true, ...}`` or
``{"ok": false, "error": TEXT, "hint": TEXT}``. A malformed request gets an
error answer and never disturbs the mount: every line is parsed with bounded
size and nesting depth and checked against its command's schema
(:mod:`vraid.core.schema`) before a handler runs, and an exception in a
handler becomes an error answer (logged with its traceback); the server keeps
serving whatever one client sends. ``vraid status`` uses ``status``; ``vraid top``
and ``vraid ctl`` use the commands of :mod:`vraid.engine.host.live` (snapshot, pause,
step, resume, ctl_get, ctl_set).
"""

from __future__ import annotations

import json
import logging
import os
import socket
from pathlib import Path
from typing import Any, Awaitable, Callable

import trio

from vraid.core.schema import MAX_LINE, BadRequest, parse, validate
from vraid.errors import MountError, VraidError

log = logging.getLogger(__name__)

SOCKET_NAME = "vraid.sock"
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def socket_path(directory: Path, array_uuid: str) -> Path:
    """``DIR/vraid.sock``, or a short path under /run when DIR's is too long for AF_UNIX."""
    path = Path(directory).resolve() / SOCKET_NAME
    if len(os.fsencode(str(path))) < 100:
        return path
    return Path("/run") / f"vraid-{array_uuid}.sock"


def bind(path: Path) -> socket.socket:
    """Bind and listen on ``path`` (mode 0600), before the mount changes anything.

    A stale socket file (no daemon answers) is replaced.

    Raises:
        MountError: when ``path`` is something other than a socket (a stray
            directory or file), or cannot be bound.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise MountError(f"cannot use the control socket path {path}: {exc.strerror}", "check the array directory") from exc
    if st is not None:
        import stat

        if not stat.S_ISSOCK(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a file that is not a socket"
            raise MountError(f"{path} is {kind}: the mount's control socket goes there",
                             f"move it away (`mv {path} {path}.old`), then mount again")
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise MountError(f"cannot bind the control socket {path}: {exc.strerror}", "is the array directory writable?") from exc
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(16)
    return sock


class ControlServer:
    """Serves ``handlers`` (command name -> async handler) on ``path``; a handler's
    ``schema`` attribute (:func:`vraid.core.schema.takes`) declares its fields."""

    def __init__(self, path: Path, handlers: dict[str, Handler], sock: socket.socket | None = None) -> None:
        self.path = path
        self.handlers = handlers
        self.sock = sock

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        raw = self.sock if self.sock is not None else bind(self.path)
        self.sock = None
        listener = trio.SocketListener(trio.socket.from_stdlib_socket(raw))
        try:
            async with trio.open_nursery() as nursery:
                task_status.started()
                while True:
                    stream = await listener.accept()
                    nursery.start_soon(self._client, stream)
        finally:
            self.path.unlink(missing_ok=True)

    async def _client(self, stream: trio.SocketStream) -> None:
        buf = b""
        try:
            async with stream:
                while True:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        return
                    buf += chunk
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        await stream.send_all(_encode(await self._answer(line)))
                    if len(buf) > MAX_LINE:
                        await stream.send_all(_encode(_refusal(BadRequest(
                            f"request too long: more than {MAX_LINE} bytes without a newline",
                            "send one short JSON object per line"))))
                        return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        except Exception:  # noqa: BLE001 - one client's trouble never ends the mount
            log.exception("control client failed")

    async def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = parse(line)
        except BadRequest as exc:
            return _refusal(exc)
        except Exception as exc:  # noqa: BLE001 - e.g. MemoryError on a pathological line
            log.exception("control request could not be parsed")
            return {"ok": False, "error": f"malformed request ({type(exc).__name__})", "hint": "send one JSON object per line"}
        cmd = request["cmd"]
        handler = self.handlers.get(cmd)
        if handler is None:
            return _refusal(BadRequest(f"unknown command {cmd[:60]!r}", f"known: {', '.join(sorted(self.handlers))}"))
        try:
            schema = getattr(handler, "schema", None)
            if schema is not None:
                validate(request, schema)
            answer = await handler(request)
            return {"ok": True} | answer if answer.get("ok", True) else answer
        except VraidError as exc:
            if not isinstance(exc, BadRequest):
                log.info("control command %s refused: %s", cmd, exc.message)
            return _refusal(exc)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a bad request (or a policy's sys.exit) must not end
            # the mount (GeneratorExit is left alone here: in a coroutine it is how the coroutine is closed)
            log.exception("control command %s failed", cmd)
            return {"ok": False, "error": f"internal error in {cmd}: {type(exc).__name__}: {exc}",
                    "hint": "the mount goes on serving; the traceback is in DIR/vraid.log"}


def _refusal(exc: VraidError) -> dict[str, Any]:
    return {"ok": False, "error": exc.message, "hint": exc.hint}


def _encode(obj: dict[str, Any]) -> bytes:
    try:
        return json.dumps(obj, default=str).encode() + b"\n"
    except (TypeError, ValueError) as exc:  # e.g. a circular structure in an answer
        log.exception("control answer could not be encoded")
        return json.dumps({"ok": False, "error": f"the answer could not be encoded: {exc}"}).encode() + b"\n"


def exchange(path: Path, line: bytes, timeout: float = 10.0) -> bytes:
    """Send ``line`` as it is to the socket at ``path`` and return the answer line (raw: the
    tests send malformed requests through it). Raises OSError when nothing answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(path))
        s.sendall(line)
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return data


def request(path: Path, cmd: str, timeout: float = 10.0, **args: Any) -> dict[str, Any]:
    """Send one command to a running mount (blocking client, for the CLI).

    Raises:
        MountError: if nothing answers on ``path``.
    """
    try:
        data = exchange(path, json.dumps({"cmd": cmd, **args}).encode() + b"\n", timeout)
    except OSError as exc:
        raise MountError(f"no running vraid mount answers on {path} ({exc.strerror or exc})", "is the array mounted?") from exc
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise MountError(f"the daemon on {path} closed the connection without an answer to {cmd!r}",
                         "see DIR/vraid.log; `vraid status` says whether the mount still runs")
    if not answer.get("ok"):
        raise MountError(f"the mount refused {cmd!r}: {answer.get('error')}", answer.get("hint") or "")
    return answer


def alive(path: Path) -> bool:
    try:
        request(path, "ping", timeout=2.0)
        return True
    except MountError:
        return False

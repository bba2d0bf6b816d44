"""The control socket of a running mount: ``DIR/vraid.sock``, mode 0600.

One JSON object per line in each direction. A request is
``{"cmd": NAME, ...}``; the answer is ``{"ok": true, ...}`` or
``{"ok": false, "error": TEXT}``. A malformed request gets an error answer
and never disturbs the mount. ``vraid status`` uses ``status``; ``vraid top``
and ``vraid ctl`` use the commands of :mod:`vraid.engine.live` (snapshot, pause,
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

from vraid.errors import MountError

log = logging.getLogger(__name__)

SOCKET_NAME = "vraid.sock"
MAX_LINE = 1 << 16
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def socket_path(directory: Path, array_uuid: str) -> Path:
    """``DIR/vraid.sock``, or a short path under /run when DIR's is too long for AF_UNIX."""
    path = Path(directory).resolve() / SOCKET_NAME
    if len(os.fsencode(str(path))) < 100:
        return path
    return Path("/run") / f"vraid-{array_uuid}.sock"


class ControlServer:
    def __init__(self, path: Path, handlers: dict[str, Handler]) -> None:
        self.path = path
        self.handlers = handlers

    async def serve(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.path.unlink(missing_ok=True)
        old = os.umask(0o177)
        try:
            await sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)
        sock.listen(16)
        listener = trio.SocketListener(sock)
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
        async with stream:
            try:
                while True:
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        return
                    buf += chunk
                    if len(buf) > MAX_LINE and b"\n" not in buf:
                        await stream.send_all(_encode({"ok": False, "error": "request too long"}))
                        return
                    while b"\n" in buf:
                        line, buf = buf.split(b"\n", 1)
                        await stream.send_all(_encode(await self._answer(line)))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return

    async def _answer(self, line: bytes) -> dict[str, Any]:
        try:
            request = json.loads(line)
        except ValueError:
            return {"ok": False, "error": "malformed request: not JSON"}
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            return {"ok": False, "error": 'malformed request: expected {"cmd": NAME, ...}'}
        handler = self.handlers.get(request["cmd"])
        if handler is None:
            return {"ok": False, "error": f"unknown command {request['cmd']!r}; known: {', '.join(sorted(self.handlers))}"}
        try:
            return {"ok": True} | await handler(request)
        except Exception as exc:  # noqa: BLE001 - a bad request must not end the mount
            log.exception("control command %s failed", request["cmd"])
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _encode(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, default=str).encode() + b"\n"


def request(path: Path, cmd: str, timeout: float = 10.0, **args: Any) -> dict[str, Any]:
    """Send one command to a running mount (blocking client, for the CLI).

    Raises:
        MountError: if nothing answers on ``path``.
    """
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps({"cmd": cmd, **args}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        raise MountError(f"no running vraid mount answers on {path} ({exc.strerror or exc})", "is the array mounted?") from exc
    answer = json.loads(data)
    if not answer.get("ok"):
        raise MountError(f"the mount refused {cmd!r}: {answer.get('error')}", answer.get("hint") or "")
    return answer


def alive(path: Path) -> bool:
    try:
        request(path, "ping", timeout=2.0)
        return True
    except MountError:
        return False

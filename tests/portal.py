"""Reach an async :class:`vraid.engine.array.Array` from synchronous code.

Hypothesis state machines cannot run async rules, so the array lives in a
trio loop on a helper thread, inside ``open_array(...)``, and the test thread
calls into it with ``trio.from_thread.run(..., trio_token=...)``::

    portal = ArrayPortal(geometry, stores)
    portal.write(0, b"hello")
    assert portal.read(0, 5) == b"hello"
    portal.close()          # leaves open_array, ends the loop, joins the thread

Exceptions raised by the array (``OutOfRange``, ``MemberIOError``) reach the
caller unchanged. If the loop itself dies, the next call and ``close()``
raise what killed it.
"""

from __future__ import annotations

import threading
from typing import Any, Awaitable, Callable, Sequence

import trio
import trio.lowlevel

from vraid.engine.array import Array, open_array
from vraid.backends.base import Store
from vraid.core.geometry import Geometry

START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0


class PortalError(RuntimeError):
    """The portal's trio loop is not running (closed, or it crashed)."""


class ArrayPortal:
    """An Array running in its own trio loop on a helper thread."""

    def __init__(self, geometry: Geometry, stores: Sequence[Store], **array_kwargs: Any) -> None:
        self.geometry = geometry
        self.stores = list(stores)
        self._kwargs = array_kwargs
        self.array: Array | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._thread_main, name="array-portal", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise PortalError(f"the array loop did not start within {START_TIMEOUT} s")
        if self._error is not None or self._token is None:
            self._thread.join(STOP_TIMEOUT)
            self._closed = True
            raise PortalError("the array loop failed to start") from self._error

    # -- the helper thread ------------------------------------------------------------
    def _thread_main(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # handed to the caller of close() or the next call
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._stop = trio.Event()
        async with open_array(self.geometry, self.stores, **self._kwargs) as array:
            self.array = array
            self._token = trio.lowlevel.current_trio_token()
            self._ready.set()
            await self._stop.wait()

    # -- calls from the test thread ------------------------------------------------------
    def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run ``await fn(*args)`` in the array's loop and return its result."""
        if self._closed:
            raise PortalError("the portal is closed")
        try:
            return trio.from_thread.run(fn, *args, trio_token=self._token)
        except trio.RunFinishedError as exc:
            self._thread.join(STOP_TIMEOUT)
            raise PortalError("the array loop has ended") from (self._error or exc)

    def write(self, offset: int, data: bytes) -> None:
        self.call(self.array.write, offset, data)

    def read(self, offset: int, length: int) -> bytes:
        return self.call(self.array.read, offset, length)

    def flush(self) -> None:
        self.call(self.array.flush)

    def close(self) -> None:
        """Leave ``open_array`` and stop the loop; idempotent. Stores stay open."""
        if self._closed:
            return
        self._closed = True
        try:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        except trio.RunFinishedError:
            pass  # the loop already ended; its error (if any) is raised below
        self._thread.join(STOP_TIMEOUT)
        if self._thread.is_alive():
            raise PortalError(f"the array loop did not stop within {STOP_TIMEOUT} s")
        if self._error is not None:
            raise PortalError("the array loop ended with an error") from self._error

    def __enter__(self) -> "ArrayPortal":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

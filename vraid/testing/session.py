"""A synchronous handle on an engine in virtual time.

Hypothesis state machines, labs, ``vraid fuzz`` and ``vraid top --sim`` drive the
async controller from ordinary synchronous code. A :class:`Session` builds the
engine of an :class:`~vraid.engine.config.EngineConfig` (``vraid.engine.build``)
inside a trio loop on a helper thread, whose clock is a
``trio.testing.MockClock``, and every call crosses over with
``trio.from_thread``::

    with Session(EngineConfig(geometry, policies={"cache": "stripe"})) as s:
        s.pause()                   # the destager starts nothing on its own
        s.write(0, b"x" * 4096)     # lands in the cache
        s.step()                    # destage one unit now
        plan = s.next_plan()        # the plans, oldest first, as the engine made them
        s.status()["cache"]

Time. By default (``rate=None``) virtual time stands still between calls and
runs during them: while a call is in progress the clock jumps to the next
deadline whenever every task waits (``autojump_threshold=0``), so a disk
model's 5 ms seek costs no wall time, and background work (the destager, the
bitmap's clearing task) advances only inside calls and :meth:`advance`. A call
returns only once every task of the engine waits, and trio's order of tasks ready
at one instant is seeded, so the same calls do the same thing every time (a
model test's example replays exactly). With
``rate=R`` virtual time instead flows R times as fast as real time whatever
the caller does (``vraid top --sim`` watches it that way); :meth:`set_rate`
changes R, 0 stops time.

Exceptions raised in the loop (``OutOfRange``, ``MemberIOError``) reach the
caller unchanged. If the loop itself dies, the next call and :meth:`close`
raise :class:`SessionError` from what killed it. ``close()`` drops the engine
as a crash would (no shutdown); :meth:`shutdown` first for a clean stop.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from typing import Any, Awaitable, Callable

import trio
import trio.lowlevel
import trio.testing

from vraid.engine.build import Engine, EngineConfig, open_engine
from vraid.engine.clock import deterministic_trio

START_TIMEOUT = 60.0
STOP_TIMEOUT = 60.0
#: plans kept for :meth:`Session.next_plan` before the oldest are dropped
PLAN_QUEUE = 100_000


class SessionError(RuntimeError):
    """The session's trio loop is not running (closed, or it crashed)."""


def _unwrap(exc: BaseException | None) -> BaseException | None:
    """The one exception inside nested single-member exception groups (trio's nurseries wrap)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


class Session:
    """An engine running in its own trio loop on a helper thread (see the module docstring)."""

    def __init__(self, config: EngineConfig, *, rate: float | None = None) -> None:
        self.config = config
        self.rate = rate
        self.clock = trio.testing.MockClock(rate=rate or 0.0)
        self.engine: Engine | None = None
        #: (virtual time, PlanEvent) of every plan not yet taken, oldest first
        self.plans: deque[tuple[float, Any]] = deque(maxlen=PLAN_QUEUE)
        self._token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._stop: trio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._closed = False
        self._calls = 0
        self._thread = threading.Thread(target=self._thread_main, name="vraid-session", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT):
            raise SessionError(f"the engine loop did not start within {START_TIMEOUT} s")
        if self._error is not None or self._token is None:
            self._thread.join(STOP_TIMEOUT)
            self._closed = True
            error = _unwrap(self._error)
            if isinstance(error, Exception):
                raise error  # a bad setting (VraidError) reaches the caller as it is
            raise SessionError("the engine loop failed to start") from error

    # -- the helper thread ------------------------------------------------------------------
    def _thread_main(self) -> None:
        try:
            with deterministic_trio(0):  # an example replays the same order of same-instant tasks
                trio.run(self._main, clock=self.clock)
        except BaseException as exc:  # handed to the caller of close() or the next call
            self._error = exc
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self._calls += 1
            self._sync_autojump()
            try:
                async with open_engine(self.config) as engine:  # recovery runs in virtual time too
                    self.engine = engine
                    engine.array.events.subscribe(self._on_event)
                    self._calls -= 1
                    self._sync_autojump()
                    await self._settled()  # the first call arrives in a loop with nothing to run
                    self._token = trio.lowlevel.current_trio_token()
                    self._ready.set()
                    await self._stop.wait()
            finally:
                nursery.cancel_scope.cancel()

    def _on_event(self, event) -> None:
        if event.kind == "plan":
            self.plans.append((event.time, event))

    def _sync_autojump(self) -> None:
        """Virtual time runs while a call is in progress (rate None), else stands still."""
        if self.rate is None:
            self.clock.autojump_threshold = 0.0 if self._calls > 0 else math.inf

    async def _settled(self) -> None:
        """Between calls virtual time stands still, but a background task that is ready (a
        destager woken by the last call) still runs; where the next call lands among its
        steps, and how trio's seeded scheduler order (:func:`deterministic_trio`) is spent,
        would then depend on the caller thread's timing. So a call returns only once every
        task waits, and the next one arrives in a loop with nothing to run: an example
        replays exactly (``vraid fuzz --replay``)."""
        if self.rate is None:
            await trio.testing.wait_all_tasks_blocked()

    async def _timed(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        await self._settled()
        self._calls += 1
        self._sync_autojump()
        try:
            return await fn(*args)
        finally:
            self._calls -= 1
            self._sync_autojump()
            await self._settled()

    # -- calls from the caller's thread ---------------------------------------------------------
    @property
    def alive(self) -> bool:
        """The engine's loop thread is running."""
        return self._thread.is_alive()

    @property
    def error(self) -> BaseException | None:
        """What ended the loop (None while it runs, or after a clean close)."""
        return _unwrap(self._error)

    @property
    def array(self):
        """The running :class:`~vraid.engine.host.array.Array` (touch it only through calls)."""
        return self.engine.array if self.engine is not None else None

    def _check(self) -> None:
        if self._closed:
            raise SessionError("the session is closed")

    def call(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Run ``await fn(*args)`` in the engine's loop (virtual time runs meanwhile); its result."""
        self._check()
        try:
            return trio.from_thread.run(self._timed, fn, *args, trio_token=self._token)
        except trio.RunFinishedError as exc:
            self._thread.join(STOP_TIMEOUT)
            raise SessionError("the engine loop has ended") from (self._error or exc)

    def call_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` in the engine's loop between two of its awaits, once every task
        waits (as :meth:`call`); its result."""
        self._check()
        try:
            return trio.from_thread.run(self._settled_sync, fn, *args, trio_token=self._token)
        except trio.RunFinishedError as exc:
            self._thread.join(STOP_TIMEOUT)
            raise SessionError("the engine loop has ended") from (self._error or exc)

    async def _settled_sync(self, fn: Callable[..., Any], *args: Any) -> Any:
        await self._settled()
        try:
            return fn(*args)
        finally:
            await self._settled()

    def start_soon(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``fn(*args)`` as a background task of the session (a workload driver); if it
        raises, the loop ends and the next call raises."""
        self.call_sync(self._nursery.start_soon, fn, *args)

    # -- host requests ------------------------------------------------------------------------
    def write(self, offset: int, data: bytes) -> None:
        self.call(self.array.write, offset, data)

    def read(self, offset: int, length: int) -> bytes:
        return self.call(self.array.read, offset, length)

    def flush(self) -> None:
        self.call(self.array.flush)

    # -- the destager -----------------------------------------------------------------------
    def _cache(self):
        from vraid.errors import VraidError

        if self.array.cache is None:
            raise VraidError("this engine runs without a write cache", 'give policies={"cache": "stripe"} (or "pbg")')
        return self.array.cache

    def pause(self) -> None:
        """The destager starts no destage on its own (writes fill the cache, then wait)."""
        self.call_sync(self._cache().pause)

    def resume(self) -> None:
        """The destage scheduler decides again."""
        self.call_sync(self._cache().resume)

    def step(self) -> bool:
        """Destage the next unit of the destage order now (pausing the scheduler first);
        False if nothing is dirty. Its plan is then in :meth:`next_plan`."""
        cache = self._cache()
        self.call_sync(cache.pause)
        return self.call(cache.destage_one)

    def next_plan(self, *, destage: bool | None = None):
        """The oldest plan the engine made that was not taken yet (a ``PlanEvent``), or
        None. ``destage=True``/``False`` skips (and drops) plans of the other kind."""
        while self.plans:
            _time, plan = self.plans.popleft()
            if destage is None or plan.cause.is_destage == destage:
                return plan
        return None

    # -- state and time -----------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """``Array.status()``: members, cache, policies, metrics (as ``vraid status`` shows)."""
        return self.call_sync(self.array.status)

    def metrics(self) -> dict[str, Any]:
        """The host and cache counters (``Array.metrics`` and the cache's), JSON-ready."""

        def collect() -> dict[str, Any]:
            a = self.array
            out: dict[str, Any] = dict(a.metrics.to_dict())
            if a.cache is not None:
                out["cache"] = a.cache.metrics.to_dict()
            return out

        return self.call_sync(collect)

    @property
    def now(self) -> float:
        """The virtual time of the engine's loop."""
        return self.clock.current_time()

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass with everything in the engine running."""
        self.call(trio.sleep, max(0.0, seconds))

    def set_rate(self, rate: float) -> None:
        """Virtual seconds per real second from now on (a session made with ``rate``)."""
        if self.rate is None:
            raise SessionError("this session runs time only during calls; make it with rate=R to pace it")

        def apply() -> None:
            self.clock.rate = rate

        self.call_sync(apply)

    # -- the end --------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Destage everything and flush the members (a clean stop; the session stays open)."""
        self.call(self.array.shutdown)

    def close(self) -> None:
        """Drop the engine (no shutdown: what a crash would leave) and end the loop;
        idempotent. The stores given in the config stay open; NVRAM files opened for
        the engine are closed."""
        if self._closed:
            return
        self._closed = True
        try:
            trio.from_thread.run_sync(self._stop.set, trio_token=self._token)
        except trio.RunFinishedError:
            pass  # the loop already ended; its error (if any) is raised below
        self._thread.join(STOP_TIMEOUT)
        if self._thread.is_alive():
            raise SessionError(f"the engine loop did not stop within {STOP_TIMEOUT} s")
        if self._error is not None:
            raise SessionError("the engine loop ended with an error") from self._error

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

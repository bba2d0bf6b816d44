"""The simulator's workload driver: host requests into an engine, and their response times.

Shared by ``vraid sim`` (:mod:`vraid.sim.simulator`) and ``vraid top --sim``
(:mod:`vraid.tui.top`), so both issue the same requests in the same way:

* **open loop** (the workload stamps arrival times ``at``): each request starts at its
  arrival in a task of its own; at most ``max_in_flight`` run at once (a request arriving
  while the limit is reached waits for a slot, and its response time still counts from its
  arrival; ``throttled`` counts how often that happened);
* **closed loop** (``workload.closed_loop`` = N): N workers each issue a request, wait for it
  and issue the next.

Write data is sliced from one seeded buffer (:class:`Pattern`); :func:`deterministic_trio`
makes trio's order of same-instant tasks reproducible (see the simulator's docstring).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np
import trio

from vraid.engine.clock import deterministic_trio  # noqa: F401 (re-exported: tests and vraid top use it here)
from vraid.engine.metrics import ResponseTimes
from vraid.errors import MemberIOError
from .workload import HostRequest, Workload

if TYPE_CHECKING:
    from vraid.engine.host.array import Array


async def run_workload(array: "Array", workload: Workload, requests: Iterator[HostRequest], pattern: "Pattern",
                       rec: "Recorder", max_in_flight: int) -> None:
    """Issue ``requests`` into ``array`` (open or closed loop, as ``workload`` says) until they run out."""
    if workload.closed_loop is None:
        await open_loop(array, requests, pattern, rec, trio.current_time(), max_in_flight)
    else:
        await closed_loop(array, requests, pattern, rec, workload.closed_loop)


class Pattern:
    """Write data: slices of one seeded random buffer (no per-request generation)."""

    def __init__(self, seed: int, size: int = 1 << 20) -> None:
        self._seed = seed
        self._make(size)

    def _make(self, size: int) -> None:
        rng = np.random.Generator(np.random.PCG64(self._seed))
        self._buf = memoryview(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
        self._room = size // 2

    def data(self, offset: int, length: int) -> memoryview:
        if length > self._room:
            self._make(4 * length)
        start = offset % self._room
        return self._buf[start : start + length]


class Recorder:
    """Response times and finish time of host requests, kept by the driver."""

    def __init__(self) -> None:
        self.response = ResponseTimes()
        self.flush = ResponseTimes()
        self.end = 0.0
        self.throttled = 0
        self.in_flight = 0
        self.max_in_flight = 0
        #: host requests that failed with a member error (fault injection)
        self.errors = 0

    def started(self) -> None:
        self.in_flight += 1
        if self.in_flight > self.max_in_flight:
            self.max_in_flight = self.in_flight

    def finished(self, op: str, seconds: float, now: float) -> None:
        self.in_flight -= 1
        (self.flush if op == "flush" else self.response).add(seconds)
        if now > self.end:
            self.end = now



def issuer(array: Array, pattern: Pattern, rec: "Recorder | None" = None) -> Callable[[HostRequest], Any]:
    write, read, flush, data = array.write, array.read, array.flush, pattern.data

    def issue(req: HostRequest):
        op = req.op
        if op == "write":
            return write(req.offset, data(req.offset, req.length))
        if op == "read":
            return read(req.offset, req.length)
        return flush()

    if rec is None:
        return issue

    async def issue_counting_errors(req: HostRequest):
        try:
            await issue(req)
        except MemberIOError:  # an injected fault: the host would see EIO
            rec.errors += 1

    return issue_counting_errors


async def open_loop(array: Array, requests: Iterator[HostRequest], pattern: Pattern, rec: Recorder,
                     t0: float, limit: int) -> None:
    issue = issuer(array, pattern, rec if faulty(array) else None)
    slots = trio.Semaphore(limit)

    async def one(req: HostRequest, arrival: float) -> None:
        rec.started()
        try:
            await issue(req)
        finally:
            slots.release()
        now = trio.current_time()
        rec.finished(req.op, now - arrival, now)

    async with trio.open_nursery() as nursery:
        for req in requests:
            arrival = t0 + (req.at or 0.0)
            if arrival > trio.current_time():
                await trio.sleep_until(arrival)
            try:
                slots.acquire_nowait()
            except trio.WouldBlock:
                rec.throttled += 1
                await slots.acquire()
            nursery.start_soon(one, req, arrival)


async def closed_loop(array: Array, requests: Iterator[HostRequest], pattern: Pattern, rec: Recorder,
                       outstanding: int) -> None:
    issue = issuer(array, pattern, rec if faulty(array) else None)

    async def worker() -> None:
        for req in requests:  # shared: each request goes to whichever worker is free
            start = trio.current_time()
            rec.started()
            await issue(req)
            now = trio.current_time()
            rec.finished(req.op, now - start, now)

    async with trio.open_nursery() as nursery:
        for _ in range(outstanding):
            nursery.start_soon(worker)


def faulty(array: Array) -> bool:
    return any(hasattr(d.store, "spec") and hasattr(d.store, "injected") for d in array.members.disks)

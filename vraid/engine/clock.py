"""The injected clock.

vraid never reads time directly: every component that needs "now" or a delay
gets a :class:`Clock`. :class:`TrioClock` defers to the clock of the running
trio loop, which is the real clock on a mount, :class:`VirtualClock` in the
simulator and ``trio.testing.MockClock(autojump_threshold=0)`` in tests.
So one engine runs in real and in virtual time; only ``trio.run(clock=...)``
differs.

:class:`VirtualClock` is the simulator's trio clock: pure virtual time that jumps to
the next deadline whenever no task can run, as ``MockClock(autojump_threshold=0)``
does, but cheaper in two ways (issue 17, simulator speed):

* the jump happens when trio asks how long to sleep, in the same pass of the run loop,
  where MockClock spends a whole pass noticing that the loop is idle and another
  one waking the sleeper;
* a sleep that trio would end by waking the sleeper alone (no other task runnable,
  no other deadline up to and including the wake-up time, no cancellation pending)
  just moves the time forward and returns, with no trip through the scheduler at all
  (:meth:`VirtualClock.advance_alone`; :meth:`TrioClock.sleep_until` uses it).

Both give the same times as MockClock, computed with the same float arithmetic, and the
same order of tasks: a pass that runs one task draws nothing from trio's scheduling random
generator (see the simulator's docstring on deterministic scheduling), so leaving such
passes out changes no later order.

The float arithmetic: MockClock's autojump moves the time by ``deadline - now``, and
``now + (deadline - now)`` can round to just *below* the deadline when the deadline is more
than twice ``now`` (``384.46496893048953 + (919.1861245949602 - 384.46496893048953)`` is one
ulp short). The deadline then has not expired, MockClock jumps again in the next pass, by
the now exact difference, and lands on the deadline. :func:`_jump` does the same in one
step. Until 2026-11-26 VirtualClock answered such a pass with "sleep for ever" (the deadline
had not come), and trio's loop waited in ``epoll`` for a day: the hang an msc-ct run over the
page-cache workload (long idle gaps, large jumps) met on 2026-11-23.
"""

from __future__ import annotations

import math
from time import perf_counter
from contextlib import contextmanager
from typing import Iterator, Protocol

import trio
from trio._core._run import GLOBAL_RUN_CONTEXT  # private: the runner's run queue and deadlines
from trio._core._run import SystemClock  # private: trio's real clock (a mount's), told apart from test clocks


#: advance_alone scans the tasks for the rest of trio's current batch only up to this many
_MAX_SCAN = 64


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary origin."""

    async def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass (a checkpoint even when 0)."""


def _jump(now: float, deadline: float) -> float:
    """The time MockClock(autojump_threshold=0) reaches when it jumps from ``now`` to the
    next deadline ``deadline`` (> now): ``now + (deadline - now)``, and if that rounds below
    the deadline, the second jump of its next pass, ``t + (deadline - t)``, which is the
    deadline exactly (``t`` is within an ulp of it, so the difference is exact)."""
    t = now + (deadline - now)
    return deadline if t < deadline else t


class VirtualClock(trio.abc.Clock):
    """Virtual time for ``trio.run(..., clock=VirtualClock())`` (see the module doc)."""

    def __init__(self) -> None:
        self.time = 0.0

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return self.time

    def deadline_to_sleep_time(self, deadline: float) -> float:
        # trio asks only when no task is runnable: jump to the next deadline now (as
        # MockClock's autojump would after an idle pass), unless a task waits for the loop
        # to go idle (trio.testing.wait_all_tasks_blocked), which has precedence
        now = self.time
        jump = deadline - now
        if 0 < jump < math.inf:
            runner = GLOBAL_RUN_CONTEXT.runner
            if runner.waiting_for_idle:
                return 999999999
            self.time = _jump(now, deadline)
        return 0 if deadline <= self.time else 999999999

    def advance_alone(self, deadline: float) -> bool:
        """Move the time to ``deadline`` at once if sleeping until then would only wake
        the calling task, alone: nothing else runnable now, no other deadline at or
        before it, no cancellation pending for the caller. False: sleep normally."""
        runner = GLOBAL_RUN_CONTEXT.runner
        if runner.runq or runner.waiting_for_idle:
            return False
        if runner.deadlines.next_deadline() <= deadline:
            return False
        tasks = runner.tasks
        if len(tasks) > _MAX_SCAN:  # many tasks (an open loop's requests): not worth the scan
            return False
        me = GLOBAL_RUN_CONTEXT.task
        if me._cancel_status.effectively_cancelled:
            return False
        for task in tasks:  # the rest of the batch being run (scheduled, not yet stepped)
            if task._next_send_fn is not None and task is not me:
                return False
        now = self.time
        if deadline > now:
            self.time = _jump(now, deadline)
        return True


class TrioClock:
    """Time of the running trio loop (real, a :class:`VirtualClock` or the MockClock it
    was run with).

    ``scale`` stretches every sleep: ``--time real:0.1`` runs a disk model ten
    times faster than modelled.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self._runner = None
        self._virtual: VirtualClock | None = None
        self._system = False
        #: SystemClock's offset (None under any other clock): its time is offset + perf_counter()
        self._offset: float | None = None

    def _clock(self) -> VirtualClock | None:
        """The loop's VirtualClock, or None for any other clock (looked up once per run)."""
        runner = GLOBAL_RUN_CONTEXT.runner
        if runner is not self._runner:
            self._runner = runner
            clock = runner.clock
            self._virtual = clock if isinstance(clock, VirtualClock) else None
            self._system = isinstance(clock, SystemClock)
            self._offset = clock.offset if type(clock) is SystemClock else None
            self._current_time = clock.current_time  # bound once: now() is called several times a request
        return self._virtual

    def now(self) -> float:
        try:
            runner = GLOBAL_RUN_CONTEXT.runner
        except AttributeError:  # outside trio.run: trio's own error
            return trio.current_time()
        if runner is self._runner:
            virtual = self._virtual
            if virtual is not None:
                return virtual.time
            offset = self._offset  # a mount reads the clock six times a host read: SystemClock.current_time inline
            return offset + perf_counter() if offset is not None else self._current_time()
        virtual = self._clock()
        return virtual.time if virtual is not None else trio.current_time()

    async def sleep(self, seconds: float) -> None:
        virtual = self._clock()
        if virtual is not None:
            if virtual.advance_alone(virtual.time + max(0.0, seconds * self.scale)):
                return
        await trio.sleep(max(0.0, seconds * self.scale))

    def alone(self) -> bool:
        """True when a checkpoint now would only run the calling task again, alone (under a
        VirtualClock, see :meth:`VirtualClock.advance_alone`): the caller may skip it."""
        virtual = self._clock()
        return virtual is not None and virtual.advance_alone(virtual.time)

    def real(self) -> bool:
        """True on trio's real clock (a mount), False under any other (the simulator's
        VirtualClock, MockClock in tests), whose recorded order of tasks must stay as it is."""
        self._clock()
        return self._system

    def may_skip_checkpoint(self) -> bool:
        """True when the caller may go on without a checkpoint where it would take one only
        to let other tasks run (an uncontended lock): under a VirtualClock when that
        checkpoint would resume the caller alone (:meth:`alone`: the order of tasks, and so
        a simulation's results, stay the same); always on trio's real clock (a mount), where
        no recorded order is kept and each write-through write otherwise passed once through
        trio's scheduler only to take a free stripe lock; never under any other clock
        (``MockClock`` in tests, whose interleavings the tests rely on)."""
        virtual = self._clock()
        if virtual is not None:
            return virtual.advance_alone(virtual.time)
        return self._system

    async def sleep_until(self, deadline: float) -> None:
        """Sleep until the loop's clock reads ``deadline`` (unscaled; a checkpoint, or
        under a VirtualClock nothing at all when no other task could run meanwhile)."""
        virtual = self._clock()
        if virtual is not None and virtual.advance_alone(deadline):
            return
        await trio.sleep_until(deadline)


@contextmanager
def deterministic_trio(seed: int) -> Iterator[None]:
    """Make trio's order of same-instant tasks reproducible for this run.

    trio runs the tasks that are ready at one instant in a random order (half the time
    reversed) to shake out ordering bugs; a simulation, and a model test replaying an
    example, must instead do exactly the same thing every time. trio's own switch for
    that (what pytest-trio sets under hypothesis) is private, so this sets it for the
    duration and seeds its generator with ``seed``."""
    from trio._core import _run as core  # private: trio has no public switch for this

    flag = getattr(core, "_ALLOW_DETERMINISTIC_SCHEDULING", None)
    rng = getattr(core, "_r", None)
    if flag is None or rng is None:  # pragma: no cover - a trio without the hook
        yield
        return
    state = rng.getstate()
    core._ALLOW_DETERMINISTIC_SCHEDULING = True  # type: ignore[misc]
    rng.seed(0x5EED ^ seed)
    try:
        yield
    finally:
        core._ALLOW_DETERMINISTIC_SCHEDULING = flag  # type: ignore[misc]
        rng.setstate(state)


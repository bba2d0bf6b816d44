"""The injected clock.

vraid never reads time directly: every component that needs "now" or a delay
gets a :class:`Clock`. :class:`TrioClock` defers to the clock of the running
trio loop, which is the real clock on a mount and
``trio.testing.MockClock(autojump_threshold=0)`` in the simulator and tests.
So one engine runs in real and in virtual time; only ``trio.run(clock=...)``
differs.
"""

from __future__ import annotations

from typing import Protocol

import trio


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary origin."""

    async def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass (a checkpoint even when 0)."""


class TrioClock:
    """Time of the running trio loop (real, or the MockClock it was run with).

    ``scale`` stretches every sleep: ``--time real:0.1`` runs a disk model ten
    times faster than modelled.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale

    def now(self) -> float:
        return trio.current_time()

    async def sleep(self, seconds: float) -> None:
        await trio.sleep(max(0.0, seconds * self.scale))

"""What the on-member structures of ``vraid.ondisk`` need from the engine, as protocols.

The write-intent bitmap (:mod:`vraid.ondisk.bitmap`) writes its pages through the
array's member queues and keeps its idle times on the array's clock. It names those
through the protocols here, which the engine's ``Members`` and clocks satisfy, so
``vraid.ondisk`` imports nothing from ``vraid.engine`` (the engine sits above it).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence


class Clock(Protocol):
    """The clock the engine injects (``vraid.engine.clock``)."""

    def now(self) -> float:
        """Seconds since an arbitrary origin."""

    async def sleep(self, seconds: float) -> None:
        """Let ``seconds`` pass."""


class MemberIO(Protocol):
    """The members of an array as the bitmap drives them (``vraid.engine.members.queues.Members``)."""

    #: one entry per member, each with ``index`` and ``store``
    disks: Sequence[Any]
    #: members that get nothing (failed ones)
    excluded: set[int]

    def __len__(self) -> int:
        """How many members."""

    def request(self, disk: int, op: str, offset: int, length: int, buffer: memoryview | None = None, *,
                durable: bool = False) -> Any:
        """A request for :meth:`run`."""

    async def run(self, requests: Sequence[Any], *, queued: bool = False) -> None:
        """Submit ``requests`` and wait for all of them (raises for the first that failed)."""

    async def flush(self) -> None:
        """Make every member's completed writes durable."""

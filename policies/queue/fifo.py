"""FIFO queue order: requests are served in the order they arrived (vraid's default).

Seed 003, section 3.1 places host requests into the host queue "in an FIFO manner"; for
the per-disk queues vraid keeps FIFO as its default too, so the head position is ignored
and the engine behaves as it did before queue orders were pluggable.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from .base import QueueOrder


class FifoOrder(QueueOrder):
    """First in, first out; ``head_position`` is not looked at."""

    name = "fifo"

    def __init__(self) -> None:
        self._queue: deque[Any] = deque()

    def add(self, request: Any) -> None:
        self._queue.append(request)

    def pop(self, head_position: int) -> Any:
        if not self._queue:
            raise IndexError("pop from an empty queue")
        return self._queue.popleft()

    def __len__(self) -> int:
        return len(self._queue)

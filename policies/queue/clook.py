"""C-LOOK queue order: the one-way elevator over member offsets.

Seed 003, section 3.1: "Each disk also contains its own IO scheduler ... we employ a simple
C-LOOK disk scheduling algorithm combined with a batching scheme." C-LOOK serves the
waiting request with the lowest offset at or above the head position; when none is left
above the head it wraps to the lowest offset waiting and sweeps up again. Requests at
the same offset are served in arrival order.

Where vraid differs: the paper's batching scheme (which the paper does not describe) is
left out; every ``pop`` sees every request waiting, so a request that arrives ahead of the
head joins the current sweep. The head position is where the member's last request
ended, which the engine tracks (a sequential stream is served back to back).
"""

from __future__ import annotations

import bisect
import itertools
from typing import Any

from .base import QueueOrder


class ClookOrder(QueueOrder):
    """Ascending offset from the head position, wrapping to the lowest offset."""

    name = "clook"

    def __init__(self) -> None:
        self._keys: list[tuple[int, int]] = []  # (offset, arrival number), sorted
        self._requests: dict[int, Any] = {}  # arrival number -> request
        self._arrivals = itertools.count()

    def add(self, request: Any) -> None:
        n = next(self._arrivals)
        self._requests[n] = request
        bisect.insort(self._keys, (request.offset, n))

    def pop(self, head_position: int) -> Any:
        if not self._keys:
            raise IndexError("pop from an empty queue")
        i = bisect.bisect_left(self._keys, (head_position,))  # (h,) sorts before every (h, n)
        if i == len(self._keys):
            i = 0  # nothing at or above the head: wrap to the lowest offset
        _, n = self._keys.pop(i)
        return self._requests.pop(n)

    def __len__(self) -> int:
        return len(self._keys)

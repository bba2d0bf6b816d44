"""The queue-order interface: in which order one member serves the requests of one priority class.

Seed 003, section 3.1: every disk of PosRAID has its own IO scheduler in front of its
request queues (the host queue is served before the destage queue, and each queue in
C-LOOK order). vraid keeps the two ideas apart: the priority classes are fixed by the
engine (:class:`vraid.engine.members.request.Priority`), and the order *inside* one class is a
policy of this family, one instance per member and class.

A queue order is pure and synchronous: it holds requests and hands back the next one.
It reads only ``request.offset`` (the byte offset on the member); the engine's requests
are opaque to it otherwise.
"""

from __future__ import annotations

from typing import Any


class QueueOrder:
    """One member's queue of one priority class.

    ``add`` a request, ``pop(head_position)`` the one to serve next (the head sits at
    ``head_position``, the byte offset where the member's last request ended; -1 before
    the first), ``len`` to ask how many wait. ``pop`` on an empty queue raises IndexError.
    """

    name = "base"

    def add(self, request: Any) -> None:
        raise NotImplementedError

    def pop(self, head_position: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def __bool__(self) -> bool:
        return len(self) > 0

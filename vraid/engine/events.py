"""The event bus: typed events flow up from the engine to whoever listens.

Publishing is synchronous and cheap when nobody listens. The TUI, the control
socket, labs and tests subscribe with a callback, or with a bounded trio
channel (:meth:`EventBus.channel`) that drops events rather than block the
data path when its reader falls behind (the drop is counted).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

import trio


@dataclass(frozen=True, slots=True)
class Event:
    kind: str  # "plan", "flush", "state", ... (see docs/architecture.md)
    time: float
    data: Any = None


@dataclass
class EventBus:
    #: the most recent event of each kind, for ``vraid status`` and the TUI
    latest: dict[str, Event] = field(default_factory=dict)
    dropped: int = 0
    _subscribers: list[Callable[[Event], None]] = field(default_factory=list)
    history: deque[Event] = field(default_factory=lambda: deque(maxlen=256))

    def publish(self, kind: str, time: float, data: Any = None) -> None:
        event = Event(kind, time, data)
        self.latest[kind] = event
        self.history.append(event)
        for subscriber in tuple(self._subscribers):
            subscriber(event)

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for every event; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def channel(self, size: int = 1024) -> tuple[trio.MemoryReceiveChannel[Event], Callable[[], None]]:
        """A receive channel of events; full means dropped, never blocked."""
        send, recv = trio.open_memory_channel[Event](size)

        def forward(event: Event) -> None:
            try:
                send.send_nowait(event)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self.dropped += 1

        return recv, self.subscribe(forward)

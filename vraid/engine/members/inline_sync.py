"""When a sync waits on the trio thread instead of in a worker thread.

A member flush or an NVRAM sync is an ``fdatasync``, which waits for the disk. In a worker
thread (``trio.to_thread``) the daemon keeps serving meanwhile, but each hand-off costs
more than the sync of a file with little to write out (FUSE-NOTES item 8: 250-300 us per
call); and ext4 on a loop device over the image asks for a flush every millisecond or two
with about half a MiB written in between. So a sync runs inline, on the calling thread,
when

* it has at most ``INLINE_SYNC_BYTES`` to write out (what the store counts as written since
  its last sync began; a store that cannot tell, such as a member file before its first
  flush, never syncs inline), and
* the syncs made inline lately were short: a running mean of their wall time, measured on
  the engine's clock, at most ``INLINE_SYNC_SECONDS``. Disks whose syncs take longer (one
  that must write its cache to the platters) are synced in threads, and one small sync in
  ``INLINE_SYNC_PROBE`` is made inline to measure them again.

Measured under dbench on this project's machine (docs/performance.md, "What changed on
2026-11-26 (afternoon)"): a flush's inline syncs took 0.6 ms at the median and the throughput rose
by half. A simulation's stores count nothing, so its timing never takes this path.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from vraid.engine.clock import Clock

#: a sync with at most this many bytes to write out may run inline ...
INLINE_SYNC_BYTES = 1 << 20
#: ... while the inline syncs take at most this long (a running mean of their wall time) ...
INLINE_SYNC_SECONDS = 0.002
#: ... and one small sync in this many is made inline when they took longer
INLINE_SYNC_PROBE = 64

T = TypeVar("T")


class InlineSyncRule:
    """The rule above for one kind of sync (the members' flush, the NVRAM's sync)."""

    def __init__(self, clock: Clock | None) -> None:
        #: the engine's clock, which times the inline syncs (None: not timed, bytes alone decide)
        self.clock = clock
        #: running mean of the inline syncs' wall time in seconds (None: none yet)
        self.mean: float | None = None
        #: small syncs sent to a worker thread since the last inline one
        self.deferred = 0
        self.inline_syncs = 0
        self.thread_syncs = 0

    def inline(self, pending: int | None) -> bool:
        """Whether a sync with ``pending`` bytes to write out (None: unknown) runs inline."""
        if pending is not None and pending <= INLINE_SYNC_BYTES:
            mean = self.mean
            if mean is None or mean <= INLINE_SYNC_SECONDS or self.deferred >= INLINE_SYNC_PROBE:
                return True
            self.deferred += 1
        self.thread_syncs += 1
        return False

    def run(self, sync: Callable[[], T]) -> T:
        """``sync()`` on this thread, timed into the running mean (even if it raises)."""
        self.inline_syncs += 1
        self.deferred = 0
        clock = self.clock
        if clock is None:
            return sync()
        start = clock.now()
        try:
            return sync()
        finally:
            took = clock.now() - start
            mean = self.mean
            self.mean = took if mean is None else mean + (took - mean) / 8

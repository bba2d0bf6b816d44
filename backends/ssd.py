"""``ssd`` timing model: a store wrapper that charges flash service times.

None of the five seed papers models flash; this is the plain contrast to the
mechanical disk of :mod:`backends.hdd`: no seek, no rotation, so stride distance
(seed 000 Fig. 8) costs nothing and the contiguity transform cannot win.

A request pays a command overhead, the bus transfer and the flash time. Its
pages are striped round robin over ``channels`` (page ``p`` on channel
``p % channels``); the channels work in parallel, each page one read or one
program, so the flash time is the latency times the pages of the busiest
channel. Deliberate simplifications: no garbage collection, erase or write
amplification, no internal DRAM write buffer, no overlap of bus and flash
time, channels idle at the start of every request (the wrapper serves one
request at a time).
"""

from __future__ import annotations

from dataclasses import dataclass

import trio

from .base import ModelStats, Store, TimedStore, check_range
from .base import acquire


@dataclass(frozen=True, slots=True)
class SsdParams:
    """Flash figures; times in seconds, the bus in MB/s (10^6).

    The defaults are plausible values for a SATA flash disk, not a particular drive.
    """

    name: str = "ssd"
    drive: str = "generic SATA flash disk"
    page_size: int = 4096
    read: float = 50e-6
    program: float = 200e-6
    channels: int = 8
    overhead: float = 10e-6
    bus_rate: float = 550.0
    source: str = ""


@dataclass(slots=True)
class SsdStats(ModelStats):
    """Counters of one modelled flash disk (model time, seconds)."""

    pages_read: int = 0
    pages_programmed: int = 0


class SsdModel(TimedStore):
    """A flash disk in front of ``inner``; see the module docstring.

    Args:
        inner: the store that holds the data.
        clock: the injected clock (only ``sleep`` is used).
        params: :class:`SsdParams`.
    """

    def __init__(self, inner: Store, clock, params: SsdParams) -> None:
        super().__init__(inner)
        self.clock = clock
        self.params = params
        self.stats = SsdStats()
        self._lock = trio.Lock()
        self._page = params.page_size
        self._channels = max(1, params.channels)
        self._bus_per_byte = 1.0 / (params.bus_rate * 1e6)

    def service_time(self, offset: int, length: int, write: bool) -> tuple[float, int]:
        """(seconds, pages) of one request."""
        if length <= 0:
            return 0.0, 0
        pages = (offset + length - 1) // self._page - offset // self._page + 1
        busiest = -(-pages // self._channels)
        lat = self.params.program if write else self.params.read
        return self.params.overhead + length * self._bus_per_byte + busiest * lat, pages

    def charge(self, op: str, offset: int, length: int) -> float:
        """Account a request that starts now; return its service time without sleeping."""
        check_range(self, offset, length)
        write = op != "read"
        dt, pages = self.service_time(offset, length, write)
        st = self.stats
        st.requests += 1
        if write:
            st.writes += 1
            st.write_bytes += length
            st.pages_programmed += pages
        else:
            st.reads += 1
            st.read_bytes += length
            st.pages_read += pages
        st.busy_seconds += dt
        return dt

    async def flush(self) -> None:
        """One command overhead (nothing is buffered)."""
        lock = self._lock
        await acquire(lock)
        try:
            self.stats.flushes += 1
            self.stats.busy_seconds += self.params.overhead
            await self.clock.sleep(self.params.overhead)
        finally:
            lock.release()
        await self.inner.flush()

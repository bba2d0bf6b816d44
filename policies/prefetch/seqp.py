"""Controller-level SEQP and SASEQP: Linux's read-ahead window on block streams (an extension).

Seed 001 (Baek & Park, IEEE TC 2009) puts SEQP and SASEQP in the *host*, per file: SEQP is
Linux's read-ahead (sec. 2.4, 5.2), SASEQP shrinks its ahead window at the first strip
boundary (sec. 3, Fig. 5). vraid's simulator models them there (``--host-readahead``; a real
mount has the kernel's own). This module is the extension issue 13 invites, *not the paper's
design*: the same window in the controller, where there are no files, so a stream is found by
address. Each host read either continues a known stream (it starts where the stream's last read
ended, or inside the window already read ahead for it) or starts a new one; at most ``streams``
streams are tracked, the least recently used forgotten first.

The window of one stream, as Linux's on-demand read-ahead keeps it (``start``, ``size``,
``async_size``):

* the first read of a stream is taken as random: nothing is read ahead;
* the second, sequential, read opens the initial window at its first block: ``size`` from
  the request size and the maximum (``get_init_ra_size``: the request rounded up to a power of
  two, x4 if at most max/32, x2 if at most max/4, else max); its marker is the block after the
  request (``async_size = size - request``);
* when a host read reaches the *marker*, the next window is read asynchronously right after
  the last one, ``size`` x4 while below max/16, else x2, up to max (``get_next_ra_size``), and
  its first block is the new marker (``async_size = size``).

SASEQP (``saseqp``) cuts every window at the end of the strip holding its first block (Fig. 5,
lines 7-12) so that no prefetch is split across two members; the window's nominal size still
grows as SEQP's, the next window starts where the cut one ended.

Differences from the host-side versions, by construction: streams are runs of block addresses,
so a fragmented file is several streams and two files laid end to end are one; the request
size is the host read's (after the kernel and FUSE cut it); the window counts blocks of the
array, not pages of a file.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

from .base import BlockRange, HostRead, PrefetchPolicy


@dataclass
class Stream:
    """One stream's read-ahead state (blocks of the array)."""

    next: int  # the block after the stream's last host read
    start: int = 0  # first block of the last window read ahead
    size: int = 0  # its nominal size (0: no window yet)
    issued: int = 0  # blocks actually read ahead for it (SASEQP: cut at the strip's end)
    marker: int = -1  # the block whose host read starts the next window (-1: none yet)


def _pow2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def init_size(request: int, max_blocks: int) -> int:
    """Linux's ``get_init_ra_size``: the first window for a request of ``request`` blocks."""
    size = _pow2(request)
    if size <= max_blocks // 32:
        size *= 4
    elif size <= max_blocks // 4:
        size *= 2
    else:
        size = max_blocks
    return min(size, max_blocks)


def next_size(size: int, max_blocks: int) -> int:
    """Linux's ``get_next_ra_size``: x4 below max/16, else x2, at most max."""
    return min(max_blocks, size * (4 if size < max_blocks // 16 else 2))


class SeqpPrefetch(PrefetchPolicy):
    """Linux-style sequential read-ahead on block streams found by address (extension)."""

    name = "seqp"
    summary = "Linux's read-ahead window (x4/x2 ramp, async on the marker) on block streams found by address"
    source = "paper 001 sec. 2.4, 5.2 (host-side there; controller-level here: an extension, issue 13)"
    params = {
        "max_kb": (int, 128, "largest read-ahead window, KiB", (4, 1 << 20)),
        "streams": (int, 32, "streams tracked at most (least recently used forgotten)", (1, 1 << 16)),
    }
    #: SASEQP cuts each window at the end of its first block's strip
    strip_aligned = False

    def __init__(self, geometry: Any = None, max_kb: int = 128, streams: int = 32) -> None:
        super().__init__(geometry)
        self.max_kb, self.streams = max_kb, streams
        self.max_blocks = max(1, max_kb * 1024 // geometry.block_size)
        self._streams: OrderedDict[int, Stream] = OrderedDict()  # keyed by the stream's next block
        self._last: Stream | None = None

    def _find(self, first: int) -> Stream | None:
        s = self._streams.pop(first, None)
        if s is not None:
            return s
        for key, s in self._streams.items():  # a read inside the window already read ahead
            if s.size and s.next <= first < s.start + s.issued:
                del self._streams[key]
                return s
        return None

    def _window(self, s: Stream, start: int, size: int) -> BlockRange:
        issued = size
        if self.strip_aligned:  # Fig. 5: shrink the ahead window to the strip of its first block
            u = self.geometry.u
            issued = min(size, (start // u + 1) * u - start)
        if self.geometry is not None:  # never past the array's last block (the policy guard's rule)
            issued = max(0, min(issued, self.geometry.capacity // self.geometry.block_size - start))
        s.start, s.size, s.issued = start, size, issued
        return (start, issued)

    def after_read(self, read: HostRead) -> Sequence[BlockRange]:
        first, count = read.first, max(1, read.count)
        end = first + count
        s = self._find(first)
        out: list[BlockRange] = []
        if s is None:  # a new stream: random until it continues
            s = Stream(next=end)
        else:
            s.next = max(s.next, end)
            if not s.size:  # the second sequential read: the initial window, from this read on
                out.append(self._window(s, first, init_size(count, self.max_blocks)))
                s.marker = min(end, s.start + s.issued)
            while first <= s.marker < end:  # the read reached the marker: the next window, async
                out.append(self._window(s, s.start + s.issued, next_size(s.size, self.max_blocks)))
                s.marker = s.start
        self._streams[s.next] = s
        while len(self._streams) > self.streams:
            self._streams.popitem(last=False)
        self._last = s
        return [r for r in out if r[1] > 0]  # a window at the array's end may have nothing left to read

    def state(self) -> dict[str, Any]:
        s = self._last
        return {"streams": len(self._streams), "window": s.issued if s else 0, "window_start": s.start if s else 0,
                "marker": s.marker if s else -1}

    def describe(self) -> str:
        return f"{self.name}:max_kb={self.max_kb},streams={self.streams}"


class SaseqpPrefetch(SeqpPrefetch):
    """SEQP whose windows stop at strip boundaries (seed 001 Fig. 5), on block streams (extension)."""

    name = "saseqp"
    summary = "SEQP with each read-ahead window cut at the end of its strip (Fig. 5), on block streams found by address"
    source = "paper 001 sec. 3, Fig. 5 (host-side there; controller-level here: an extension, issue 13)"
    strip_aligned = True

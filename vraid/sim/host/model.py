"""The simulated host above the array: per-stream file read-ahead and a page cache.

``vraid sim --host-readahead seqp|saseqp[:max=SIZE,init=SIZE]`` puts this between the
workload and the array. Each stream (a process reading one file, seed 001 sec. 5.2) gets a
:class:`~vraid.sim.host.readahead.FileReadahead`; its file reads are turned into the array
reads the block layer would send, one per read-ahead window, and the pages those reads
bring in are kept in a page cache, so a file read that hits the read-ahead does not reach
the array: it waits only for a window still in flight. Pages are array blocks.

What a stream's file is: the workload's ``files(capacity, block)`` (``readers``: one
contiguous extent per stream, as the paper's IOzone files) or, for any other workload, the
whole array (Linux reading a block device through its page cache uses the same read-ahead).

How a read runs, as Linux 2.6.18's ``do_generic_mapping_read``: read-ahead is called at the
read's first page and again whenever the reader reaches the page it named (``next_index``,
the first page of the ahead window: its marker); the windows it makes are read as one array
read each (synchronous ones waited for at once, asynchronous ones in the background); then
the reader waits for the pages up to that point. A page no window covers is read from the
array on its own (a miss; sequential readers make none).

The page cache forgets a window once a stream has read past it (a sequential reader never
returns; thrashing of a bounded page cache is not modelled: the paper's 1 GB holds every
stream's windows). Writes and flushes pass straight through to the array.

A workload whose threads read one file after another (``webserver``: ``reopens = True``)
gives the files but not which stream reads which: a stream's read at the first byte of a
file opens that file anew (a fresh read-ahead state, as ``open()`` gives a new
``file->f_ra``), and a read elsewhere stays in the file the stream has open.

With ``antic`` in the spec (``seqp:max=512K,antic=on``) the windows pass the host's
anticipatory scheduler (:mod:`.anticipatory`) on their way to the array; without it they
go at once, exactly as before the scheduler was modelled.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

import trio

from vraid.engine.events import Cause
from .anticipatory import AnticipatoryQueue
from .readahead import FileReadahead, ReadaheadEvent, ReadaheadSpec, Window, contiguous

if TYPE_CHECKING:
    from vraid.core.geometry import Geometry
    from vraid.engine.host.array import Array
    from vraid.sim.driver import Pattern, Recorder
    from vraid.sim.request import HostRequest

#: ramp sizes kept per stream for the JSON (the first windows show the ramp)
RAMP_SHOWN = 8
#: host CPU time to submit one request to the block device (orders same-instant submissions)
SUBMIT_SECONDS = 1e-6


@dataclass
class _Cached:
    """One window in the page cache: file pages [start, end), done once its array read is."""

    start: int
    end: int
    done: trio.Event = field(default_factory=trio.Event)


@dataclass
class Stream:
    """One reader: its file (array offset and pages), read-ahead state, cached windows."""

    id: int
    base: int  # array byte offset of the file's first page
    pages: int
    ra: FileReadahead
    cached: list[_Cached] = field(default_factory=list)
    sizes: Counter = field(default_factory=Counter)  # window pages -> windows
    ramp: list[int] = field(default_factory=list)  # pages of the first windows
    windows: int = 0
    sync_windows: int = 0
    file_reads: int = 0
    file_read_bytes: int = 0
    hit_pages: int = 0  # pages a window had already brought in when the reader got there
    wait_pages: int = 0  # pages whose window was still in flight
    miss_pages: int = 0  # pages no window covered
    opens: int = 1  # files opened (more than one only with reopening workloads)
    closed_shrunk: int = 0  # shrunk and crossing windows of the files it has closed
    closed_crossing: int = 0

    @property
    def shrunk(self) -> int:
        return self.closed_shrunk + self.ra.shrunk

    @property
    def crossing(self) -> int:
        return self.closed_crossing + self.ra.crossing

    def to_dict(self, page: int) -> dict[str, Any]:
        return {"stream": self.id, "file_offset": self.base, "file_bytes": self.pages * page,
                "file_reads": self.file_reads, "windows": self.windows, "sync_windows": self.sync_windows,
                "window_ramp": [p * page for p in self.ramp],
                "window_sizes": {str(p * page): n for p, n in sorted(self.sizes.items())},
                "shrunk_windows": self.shrunk, "crossing_windows": self.crossing,
                "hit_pages": self.hit_pages, "wait_pages": self.wait_pages, "miss_pages": self.miss_pages}


class HostModel:
    """Read-ahead and page cache of every stream, issuing array reads into ``array``."""

    def __init__(self, array: "Array", spec: ReadaheadSpec, geometry: "Geometry",
                 files: list[tuple[int, int]] | None = None, *, reopens: bool = False) -> None:
        self.array = array
        self.spec = spec
        self.page = geometry.block_size
        self.strip_pages = geometry.u
        spec.pages(self.page)  # a bad size fails now
        self.files = files
        self.reopens = reopens and bool(files)
        self._file_starts = sorted(f[0] for f in files) if self.reopens and files else []
        self._file_size = dict(files) if self.reopens and files else {}
        self.antic: AnticipatoryQueue | None = AnticipatoryQueue(spec.antic) if spec.antic is not None else None
        self.capacity = geometry.capacity
        self.streams: dict[int, Stream] = {}
        self.array_reads = 0
        self.array_read_bytes = 0
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------------ streams
    def stream(self, sid: int) -> Stream:
        s = self.streams.get(sid)
        if s is None:
            if self.reopens:  # a placeholder: read() opens the file of its first read
                base, size = self.files[0]
            elif self.files is not None and 0 <= sid < len(self.files):
                base, size = self.files[sid]
            else:
                base, size = 0, self.capacity
            pages = size // self.page
            ra = FileReadahead(self.spec, pages, self.page, contiguous(base // self.page), self.strip_pages)
            s = self.streams[sid] = Stream(sid, base, pages, ra, opens=0 if self.reopens else 1)
        return s

    # ------------------------------------------------------------------ one file read
    def _open(self, s: Stream, offset: int) -> None:
        """A reopening workload's stream reads at ``offset``: open the file starting there,
        if one does (a fresh read-ahead state), else stay in the one it has open."""
        size = self._file_size.get(offset)
        if size is None:
            return
        if s.opens:
            s.closed_shrunk, s.closed_crossing = s.shrunk, s.crossing
        s.base, s.pages = offset, size // self.page
        s.ra = FileReadahead(self.spec, s.pages, self.page, contiguous(offset // self.page), self.strip_pages)
        s.cached = []
        s.opens += 1

    async def read(self, req: "HostRequest") -> None:
        """Serve one file read of stream ``req.stream`` (array offset, as the workload gave it)."""
        s = self.stream(req.stream)
        if self.reopens:
            self._open(s, req.offset)
        first = (req.offset - s.base) // self.page
        last = min(s.pages, -(-(req.offset + req.length - s.base) // self.page))
        s.file_reads += 1
        s.file_read_bytes += req.length
        if not 0 <= first < last:  # outside the stream's file: straight to the array
            await self._array_read(req.offset, req.length)
            return
        index = next_index = first
        while index < last:
            if index == next_index:
                next_index, windows = s.ra.readahead(index, last - index)
                for w in windows:
                    self._issue(s, w)
            upto = max(index + 1, min(last, next_index))
            await self._pages(s, index, upto)
            index = upto
        self._forget(s, first)

    def _issue(self, s: Stream, w: Window) -> None:
        c = _Cached(w.start, w.end)
        starts = [x.start for x in s.cached]
        s.cached.insert(bisect_right(starts, w.start), c)
        s.windows += 1
        s.sync_windows += w.sync
        s.sizes[w.count] += 1
        if len(s.ramp) < RAMP_SHOWN:
            s.ramp.append(w.count)
        self.array.events.publish(ReadaheadEvent(time=self.array.clock.now(), cause=Cause.HOST, stream=s.id,
                                                 start=w.start, pages=w.count, ramp=w.ramp, sync=w.sync))
        self._submit.send_nowait((s, c))

    async def _submitter(self) -> None:
        """The block layer's queue: windows reach the array one after another, in the order
        the streams made them, :data:`SUBMIT_SECONDS` apart. Without this, two windows made at
        the same virtual instant would start in whatever order the scheduler runs tasks, and
        a controller watching the block sequence (MSP) would see a stream's strips swapped,
        which a process submitting its bios one by one never does."""
        assert self._nursery is not None
        async for s, c in self._pending:
            if self.antic is not None:
                self.antic.add(s.id, (s, c), self.array.clock.now())
                self._antic_changed()
            else:
                self._nursery.start_soon(self._fill, s, c)
            await trio.sleep(SUBMIT_SECONDS)
        self._antic_closed = True
        self._antic_changed()

    def _antic_changed(self) -> None:
        self._antic_event.set()
        self._antic_event = trio.Event()

    async def _dispatcher(self) -> None:
        """The anticipatory scheduler's dispatch loop (:mod:`.anticipatory`): hand the array
        each read the rule lets go, and sleep until an arrival, a completion or a timeout."""
        assert self._nursery is not None and self.antic is not None
        sched = self.antic
        while True:
            now = self.array.clock.now()
            item = sched.take(now)
            if item is not None:
                self._nursery.start_soon(self._fill, *item)
                continue
            if self._antic_closed and not sched.queue:
                return
            event = self._antic_event
            with trio.move_on_after(sched.wait(now)):
                await event.wait()

    async def _fill(self, s: Stream, c: _Cached) -> None:
        try:
            await self._array_read(s.base + c.start * self.page, (c.end - c.start) * self.page)
        finally:
            c.done.set()
            if self.antic is not None:
                self.antic.completed(s.id, self.array.clock.now())
                self._antic_changed()

    async def _array_read(self, offset: int, length: int) -> None:
        self.array_reads += 1
        self.array_read_bytes += length
        await self.array.read(offset, length)

    async def _pages(self, s: Stream, first: int, last: int) -> None:
        """Wait until file pages [first, last) are in the page cache, reading uncovered ones."""
        for c in s.cached:  # the usual case first: one window, already read, holds them all
            if c.end > first:
                if c.start <= first and last <= c.end and c.done.is_set():
                    s.hit_pages += last - first
                    return
                break
        pos = first
        for c in list(s.cached):
            if c.end <= pos:
                continue
            if c.start >= last:
                break
            if c.start > pos:  # a gap no window covers: a miss
                await self._miss(s, pos, c.start)
            n = min(c.end, last) - max(c.start, pos)
            if c.done.is_set():
                s.hit_pages += n
            else:
                s.wait_pages += n
                await c.done.wait()
            pos = min(c.end, last)
            if pos >= last:
                return
        if pos < last:
            await self._miss(s, pos, last)

    async def _miss(self, s: Stream, first: int, last: int) -> None:
        s.miss_pages += last - first
        await self._array_read(s.base + first * self.page, (last - first) * self.page)

    def _forget(self, s: Stream, first: int) -> None:
        """Drop windows wholly behind the read just done (the stream has passed them)."""
        cached = s.cached
        if cached and cached[0].end <= first:
            cached[:] = [c for c in cached if c.end > first or not c.done.is_set()]

    # ------------------------------------------------------------------ driving
    async def run(self, requests: Iterator["HostRequest"], pattern: "Pattern", rec: "Recorder") -> None:
        """Issue ``requests``, one outstanding per stream, each stream's in its order, until
        they run out; the streams are the ``stream`` tags of the workload's first round."""
        from vraid.sim.driver import issuer

        passthrough = issuer(self.array, pattern)
        queues: dict[int, deque] = {}
        it = iter(requests)

        def pull() -> "HostRequest | None":
            req = next(it, None)
            if req is not None:
                q = queues.get(req.stream)
                if q is None:
                    q = queues[req.stream] = deque()
                    nursery.start_soon(worker, req.stream)
                q.append(req)
            return req

        async def worker(sid: int) -> None:
            q = queues[sid]
            while True:
                while not q:
                    if pull() is None:
                        return
                req = q.popleft()
                start = trio.current_time()
                rec.started()
                if req.op == "read":
                    await self.read(req)
                else:
                    await passthrough(req)
                now = trio.current_time()
                rec.finished(req.op, now - start, now)

        self._submit, self._pending = trio.open_memory_channel(math.inf)
        self._antic_event, self._antic_closed = trio.Event(), False
        async with trio.open_nursery() as outer:  # the submitter and the array reads
            self._nursery = outer
            outer.start_soon(self._submitter)
            if self.antic is not None:
                outer.start_soon(self._dispatcher)
            async with trio.open_nursery() as nursery:  # the streams
                while True:  # the first round: every stream starts at once
                    req = pull()
                    if req is None or len(queues[req.stream]) > 1:
                        break
            self._submit.close()
        self._nursery = None

    def metrics(self, elapsed: float) -> dict[str, Any]:
        """The host's side of a run for ``vraid sim --json`` (``host_readahead``)."""
        streams = [self.streams[k] for k in sorted(self.streams)]
        file_bytes = sum(s.file_read_bytes for s in streams)
        return {
            "policy": self.spec.text,
            "label": self.spec.label,
            "file_reads": sum(s.file_reads for s in streams),
            "file_read_bytes": file_bytes,
            "file_mb_s": round(file_bytes / 1e6 / elapsed, 6) if elapsed > 0 else 0.0,
            "array_reads": self.array_reads,
            "array_read_bytes": self.array_read_bytes,
            "windows": sum(s.windows for s in streams),
            "shrunk_windows": sum(s.shrunk for s in streams),
            "crossing_windows": sum(s.crossing for s in streams),
            "hit_pages": sum(s.hit_pages for s in streams),
            "wait_pages": sum(s.wait_pages for s in streams),
            "miss_pages": sum(s.miss_pages for s in streams),
            "streams": [s.to_dict(self.page) for s in streams],
            **({"anticipation": self.antic.stats.to_dict(self.antic.window)} if self.antic is not None else {}),
            **({"file_opens": sum(s.opens for s in streams)} if self.reopens else {}),
        }

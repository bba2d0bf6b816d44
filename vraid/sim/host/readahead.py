"""Host read-ahead: SEQP (Linux 2.6.18 ``mm/readahead.c``) and SASEQP (seed 001, Fig. 5).

Seed 001 (Baek & Park, "Striping-aware sequential prefetching", sec. 2.4, 3 and 5.2) puts
SEQP and SASEQP on the host, at the file level: the kernel's read-ahead decides which pages
of a file to read before the process asks for them, and hands the block layer one request
per window. This module is that decision, per open file, as a pure state machine (no I/O,
no clock): :meth:`FileReadahead.readahead` is ``page_cache_readahead()`` and returns the
windows to read; :mod:`vraid.sim.host.model` issues them to the array and keeps the pages.

SEQP, the Linux read-ahead the paper modifies (sec. 5.2):

* two windows: the *current* window the reader is in and the *ahead* window read
  asynchronously after it;
* the first read at the start of the file reads an initial window synchronously, of
  ``get_init_ra_size(request, max)``: the request rounded up to a power of two, x4 if at most
  max/32, x2 if at most max/4, else max ("the greater the max, the greater the initial
  prefetch size");
* each next window is ``get_next_ra_size``: x4 while below max/16, else x2, up to max;
* the ahead window is created on the second sequential read, and when the reader reaches
  its first page (the marker of the ahead window) the windows shift: the ahead window
  becomes current and a new ahead window is read asynchronously after it;
* a non-sequential read turns read-ahead off and reads just what was asked (``ra_off``).

SASEQP (Fig. 5) is SEQP whose ahead window, once SEQP has made it, is shrunk to end before
the first page whose physical block lies in another strip than its first page, so one
prefetch request never crosses a strip. The window *size* SEQP ramps with is kept unshrunk:
the next ahead window starts right after the shrunk one and has SEQP's next size. This is
what the paper's Fig. 4 count needs (7 requests for the 20-block file: [B16], [B17, B18],
[B19] shrunk from four blocks, then [B20..B23] ... [B32..B35]); ramping from the shrunk size
would give 8. The initial window is not shrunk (Fig. 5 acts on the ahead window only).

``init=N`` overrides the initial window (pages) so the paper's Fig. 3/4 example, whose
window grows 1, 2, 4 blocks, can be replayed; by default it is Linux's function. Pages are
the array's blocks (4 KiB by default, Linux's page size). Where vraid differs: no
``RA_FLAG_MISS`` (a page evicted before use shrinks the next window in Linux; the page
cache here never evicts a page before it is read), and read-ahead never gives up on a
congested queue (Linux 2.6.18 may drop an async window when the queue is congested).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from vraid.core.units import format_size, parse_size
from vraid.engine.events import Event
from vraid.errors import VraidError
from .anticipatory import DEFAULT_ANTIC_EXPIRE

POLICIES = ("seqp", "saseqp")
#: Linux's default maximum read-ahead (VM_MAX_READAHEAD, 128 KiB), the paper's SEQP128
DEFAULT_MAX = 128 << 10


@dataclass(frozen=True, slots=True)
class ReadaheadSpec:
    """``--host-readahead seqp|saseqp[:max=SIZE,init=SIZE,antic=on|off|TIME]``: the policy and
    its sizes in bytes (``init`` None: Linux's ``get_init_ra_size``); ``antic``: the host's
    anticipatory scheduler window in seconds (:mod:`vraid.sim.host.anticipatory`; None: off,
    every window goes to the array at once, as before)."""

    policy: str
    max: int = DEFAULT_MAX
    init: int | None = None
    antic: float | None = None

    @property
    def text(self) -> str:
        extra = f",init={format_size(self.init)}" if self.init is not None else ""
        if self.antic is not None:
            extra += f",antic={self.antic * 1e3:g}ms"
        return f"{self.policy}:max={format_size(self.max)}{extra}"

    @property
    def label(self) -> str:
        """The paper's name: SEQP128, SASEQP512 (max in KiB)."""
        return f"{self.policy.upper()}{self.max >> 10}"

    def pages(self, page: int) -> tuple[int, int | None]:
        """(max, init) in pages of ``page`` bytes.

        Raises:
            VraidError: when a size is not a whole number of pages or init exceeds max.
        """
        for key, value in (("max", self.max), ("init", self.init)):
            if value is not None and (value <= 0 or value % page):
                raise VraidError(f"--host-readahead {key}={value} is not a positive multiple of the "
                                 f"{page}-byte page (the array block)", f"e.g. {key}={format_size(4 * page)}")
        if self.init is not None and self.init > self.max:
            raise VraidError(f"--host-readahead init={format_size(self.init)} is above max={format_size(self.max)}",
                             "give an initial window no larger than the maximum")
        return self.max // page, (None if self.init is None else self.init // page)


def parse_readahead(spec: str | None) -> ReadaheadSpec | None:
    """``seqp``, ``saseqp:max=512K``, ``seqp:max=16K,init=4K``, ``seqp:max=512K,antic=on``
    (``on``: Linux 2.6's 6 ms antic_expire; or a time, ``antic=4ms``; ``off``: none);
    ``none``/None/"": no host model.

    Raises:
        VraidError: for an unknown policy or key, or a bad size.
    """
    if spec is None or not str(spec).strip() or str(spec).strip() == "none":
        return None
    name, _, rest = str(spec).strip().partition(":")
    if name not in POLICIES:
        raise VraidError(f"unknown host read-ahead {name!r}",
                         "use --host-readahead none|seqp|saseqp[:max=SIZE,init=SIZE,antic=on|off|TIME]")
    values: dict[str, int] = {}
    antic: float | None = None
    seen: set[str] = set()
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or key not in ("max", "init", "antic") or key in seen:
            raise VraidError(f"--host-readahead {name}: bad item {item!r}",
                             "write e.g. seqp:max=512K,init=16K or seqp:max=512K,antic=on")
        seen.add(key)
        if key == "antic":
            antic = parse_antic(value)
        else:
            values[key] = parse_size(value, f"read-ahead {key}")
    return ReadaheadSpec(name, values.get("max", DEFAULT_MAX), values.get("init"), antic)


def parse_antic(value: str) -> float | None:
    """``on`` (Linux 2.6's default antic_expire), ``off`` (None) or a positive time (6ms, 4ms).

    Raises:
        VraidError: for anything else.
    """
    if value == "on":
        return DEFAULT_ANTIC_EXPIRE
    if value == "off":
        return None
    units = {"ms": 1e-3, "us": 1e-6, "s": 1.0}
    for unit in ("ms", "us", "s"):
        if value.endswith(unit):
            try:
                seconds = float(value[:-len(unit)]) * units[unit]
            except ValueError:
                break
            if seconds > 0:
                return seconds
            break
    raise VraidError(f"--host-readahead antic={value!r} is not on, off or a positive time",
                     "write e.g. antic=on (6 ms, Linux 2.6's default) or antic=4ms")


def roundup_pow_of_two(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def init_ra_size(size: int, max_pages: int) -> int:
    """Linux 2.6.18 ``get_init_ra_size``: the first window for a first read of ``size`` pages."""
    new = roundup_pow_of_two(size)
    if new <= max_pages // 32:
        return new * 4
    if new <= max_pages // 4:
        return new * 2
    return max_pages


def next_ra_size(cur: int, max_pages: int) -> int:
    """Linux 2.6.18 ``get_next_ra_size`` (no miss): x4 below max/16, else x2, at most max."""
    return min(4 * cur if cur < max_pages // 16 else 2 * cur, max_pages)


@dataclass(frozen=True, slots=True)
class Window:
    """Pages [start, start + count) of the file to read; ``sync``: the reader waits for them now."""

    start: int
    count: int
    sync: bool
    ramp: int  # the size SEQP gave the window (SASEQP may have shrunk ``count`` below it)

    @property
    def end(self) -> int:
        return self.start + self.count


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadaheadEvent(Event):
    """The host made a read-ahead window (``vraid sim --host-readahead``): stream, file pages,
    its size, the size SEQP ramped to (SASEQP shrinks below it) and whether the reader waits."""

    kind = "readahead"
    stream: int
    start: int
    pages: int
    ramp: int
    sync: bool


class FileReadahead:
    """The read-ahead state of one open file (Linux's ``struct file_ra_state``).

    ``file_pages`` is the file's size, ``physical(page)`` the array block of a file page and
    ``strip_pages`` the blocks per strip (SASEQP only). All numbers are pages.
    """

    def __init__(self, spec: ReadaheadSpec, file_pages: int, page: int,
                 physical: Callable[[int], int], strip_pages: int) -> None:
        self.spec = spec
        self.max, self.init = spec.pages(page)
        self.file_pages = file_pages
        self.physical = physical
        self.strip_pages = strip_pages
        self.aligned = spec.policy == "saseqp"
        self.start = 0  # current window
        self.size = 0
        self.ramp = 0
        self.ahead_start = 0  # ahead window (ahead_start 0: none)
        self.ahead_size = 0
        self.ahead_ramp = 0
        self.prev_page = -1
        #: windows shrunk by SASEQP, and windows (made by SEQP or not) that cross a strip
        self.shrunk = 0
        self.crossing = 0

    # ------------------------------------------------------------------ page_cache_readahead
    def readahead(self, offset: int, req_size: int) -> tuple[int, list[Window]]:
        """``page_cache_readahead(offset, req_size)``: the page the reader calls back at next
        (Linux's ``next_index``) and the windows to read now, in order."""
        out: list[Window] = []
        if offset == self.prev_page and req_size > 1:  # the rest of a page read before
            req_size -= 1
            offset += 1
        sequential = offset == self.prev_page + 1
        self.prev_page = offset
        newsize = min(req_size, self.max)
        if newsize <= 0:
            return self.prev_page + 1, out
        self.prev_page += newsize - 1
        if sequential and self.size == 0:  # first read of the file (or after ra_off)
            self.size = self.ramp = self.init or init_ra_size(newsize, self.max)
            self.start = offset
            self._emit(out, offset, self.size, self.size, sync=True)
            if req_size >= self.max:
                self._make_ahead(out, force=True)
            return self.prev_page + 1, out
        if not sequential:  # ra_off: random read, read only what is asked
            self.start = self.size = self.ramp = 0
            self.ahead_start = self.ahead_size = self.ahead_ramp = 0
            self._emit(out, offset, newsize, newsize, sync=True)
            return self.prev_page + 1, out
        if self.ahead_start == 0:
            self._make_ahead(out, force=False)
        if self.prev_page >= self.ahead_start:  # reached the ahead window's marker: shift
            self.start, self.size, self.ramp = self.ahead_start, self.ahead_size, self.ahead_ramp
            self._make_ahead(out, force=False)
            self.prev_page = min(self.prev_page, self.ahead_start + self.ahead_size - 1)
        return self.prev_page + 1, out

    def _make_ahead(self, out: list[Window], force: bool) -> None:
        ramp = next_ra_size(self.ramp, self.max)
        start = self.start + self.size
        size = self._strip_aligned(start, ramp) if self.aligned else ramp
        self.ahead_start, self.ahead_size, self.ahead_ramp = start, size, ramp
        self._emit(out, start, size, ramp, sync=force or self.prev_page >= start)

    def _strip_aligned(self, start: int, size: int) -> int:
        """Fig. 5 lines 7-12: the window up to the last page in the strip of its first page."""
        u = self.strip_pages
        strip = self.physical(start) // u
        end = min(start + size, self.file_pages)
        for pos in range(start + 1, end):
            if self.physical(pos) // u != strip:
                self.shrunk += 1
                return pos - start
        return size

    def _emit(self, out: list[Window], start: int, count: int, ramp: int, sync: bool) -> None:
        count = min(count, self.file_pages - start)  # nothing past the end of the file
        if count <= 0:
            return
        u = self.strip_pages
        if self.physical(start) // u != self.physical(start + count - 1) // u:
            self.crossing += 1
        out.append(Window(start, count, sync, ramp))


def contiguous(base_block: int) -> Callable[[int], int]:
    """``physical`` of a file stored contiguously from array block ``base_block``."""
    return lambda page: base_block + page


def file_windows(spec: ReadaheadSpec, file_pages: int, request_pages: int, *, base_block: int = 0,
                 strip_pages: int, page: int = 4096) -> list[Window]:
    """Every window a sequential read of a whole contiguous file makes, in order: the reader
    reads ``request_pages`` at a time from page 0 and calls back as Linux's
    ``do_generic_mapping_read`` does (at the first page of each read and at ``next_index``)."""
    ra = FileReadahead(spec, file_pages, page, contiguous(base_block), strip_pages)
    windows: list[Window] = []
    for first in range(0, file_pages, request_pages):
        last = min(file_pages, first + request_pages)
        index = next_index = first
        while index < last:
            if index == next_index:
                next_index, made = ra.readahead(index, last - index)
                windows += made
            index = max(index + 1, min(last, next_index))
    return windows

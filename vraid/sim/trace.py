"""The vraid trace format v1: record host requests on a mount, replay them in the simulator.

A trace is text, one request per line after a header (docs/trace-format.md)::

    # vraid-trace v1 capacity=1073741824 block=4096
    0.000000000 W 0 4096
    0.000153211 R 65536 131072
    0.002000000 F 0 0

``time_seconds op offset length``: time since the first record, op R (read), W (write) or
F (flush, offset and length 0). ``vraid mount --trace FILE`` writes one with
:class:`TraceWriter`; ``--workload replay:FILE`` reads it back through :func:`replay_requests`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import IO, Iterator

from vraid.errors import VraidError
from .request import HostRequest

MAGIC = "# vraid-trace v1"
_OP_NAME = {"R": "read", "W": "write", "F": "flush"}
_OP_CODE = {"read": "R", "write": "W", "flush": "F", "R": "R", "W": "W", "F": "F"}


@dataclass(frozen=True, slots=True)
class TraceHeader:
    """What the header line says: array capacity in bytes (0 = unknown) and block size."""

    capacity: int
    block: int


class TraceWriter:
    """Append host requests to a trace file, cheaply enough for the FUSE data path.

    ``record`` formats one line into a list; the list goes to the file every ``flush_every``
    records or once ``flush_interval`` seconds of trace time have passed since the last flush,
    and at :meth:`flush` and :meth:`close`. Times are written relative to the first record.
    ``capacity`` 0 means unknown (readers then skip the bounds check).

    Raises:
        VraidError: when the file cannot be created or written.
    """

    def __init__(self, path: str | os.PathLike[str], *, capacity: int = 0, block: int = 4096,
                 flush_every: int = 4096, flush_interval: float = 1.0) -> None:
        self.path = os.fspath(path)
        self._buf: list[str] = []
        self._every, self._interval = flush_every, flush_interval
        self._t0: float | None = None
        self._last_flush = 0.0
        self.records = 0
        try:
            self._file: IO[str] | None = open(self.path, "w", encoding="ascii")
            self._file.write(f"{MAGIC} capacity={int(capacity)} block={int(block)}\n")
        except OSError as exc:
            raise VraidError(f"cannot write trace {self.path}: {exc.strerror}",
                             "choose a writable path for --trace") from exc

    def record(self, t: float, op: str, offset: int, length: int) -> None:
        """Record one request that arrived at time ``t`` (seconds, any origin).

        ``op`` is R/W/F or read/write/flush.
        """
        if self._file is None:
            raise VraidError(f"trace {self.path} is closed", "record before close()")
        if self._t0 is None:
            self._t0 = self._last_flush = t
        self._buf.append(f"{t - self._t0:.9f} {_OP_CODE[op]} {offset} {length}\n")
        self.records += 1
        if len(self._buf) >= self._every or t - self._last_flush >= self._interval:
            self._last_flush = t
            self.flush()

    def flush(self) -> None:
        """Write the buffered records to the file (and the OS)."""
        if self._file is None:
            return
        try:
            self._file.write("".join(self._buf))
            self._file.flush()
        except OSError as exc:
            raise VraidError(f"cannot write trace {self.path}: {exc.strerror}",
                             "free space on its filesystem or trace elsewhere") from exc
        self._buf.clear()

    def close(self) -> None:
        """Flush and close; later calls do nothing."""
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bad(path: str, lineno: int, problem: str, hint: str = "fix or delete the line") -> VraidError:
    return VraidError(f"{path}:{lineno}: {problem}", hint)


def _parse_header(path: str, line: str) -> TraceHeader:
    if not line.startswith(MAGIC + " ") and line.rstrip("\n") != MAGIC:
        what = "a trace of another version" if line.startswith("# vraid-trace ") else "not a vraid trace"
        raise _bad(path, 1, f"{what}: the first line must start with {MAGIC!r}",
                   "record the trace with vraid mount --trace FILE (format v1)")
    fields: dict[str, int] = {}
    for item in line[len(MAGIC):].split():
        key, eq, value = item.partition("=")
        if eq and key in ("capacity", "block"):       # other keys: later additions, ignored
            if not value.isdigit():
                raise _bad(path, 1, f"header {key}={value!r} is not a whole number")
            fields[key] = int(value)
    if "block" not in fields or "capacity" not in fields:
        raise _bad(path, 1, "the header lacks capacity= or block=", f"write {MAGIC} capacity=N block=N")
    if fields["block"] <= 0:
        raise _bad(path, 1, "the header's block size must be positive")
    return TraceHeader(fields["capacity"], fields["block"])


def _records(path: str | os.PathLike[str]) -> Iterator[tuple[int, float, str, int, int] | TraceHeader]:
    """The header, then (line number, time, op name, offset, length) of every record, validated."""
    path = os.fspath(path)
    try:
        f = open(path, encoding="ascii", errors="replace")
    except OSError as exc:
        raise VraidError(f"cannot read trace {path}: {exc.strerror}", "check the path given to replay:") from exc
    with f:
        header = _parse_header(path, f.readline())
        yield header
        last = 0.0
        for lineno, line in enumerate(f, start=2):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) != 4:
                raise _bad(path, lineno, f"{len(fields)} fields where 'time op offset length' has 4")
            t_text, code, off_text, len_text = fields
            try:
                t = float(t_text)
            except ValueError:
                t = math.nan
            if not (math.isfinite(t) and t >= 0):
                raise _bad(path, lineno, f"time {t_text!r} is not a non-negative number of seconds")
            if t < last:
                raise _bad(path, lineno, f"time {t_text} goes back before {last:.9f}", "sort the trace by time")
            op = _OP_NAME.get(code)
            if op is None:
                raise _bad(path, lineno, f"op {code!r} is not R, W or F")
            if not (off_text.isdigit() and len_text.isdigit()):
                raise _bad(path, lineno, f"offset {off_text!r} and length {len_text!r} must be whole numbers")
            offset, length = int(off_text), int(len_text)
            if op == "flush" and (offset or length):
                raise _bad(path, lineno, "a flush (F) carries offset 0 and length 0")
            if op != "flush" and length == 0:
                raise _bad(path, lineno, f"a {op} of length 0")
            if header.capacity and offset + length > header.capacity:
                raise _bad(path, lineno, f"{op} at {offset}+{length} runs past the header's capacity "
                           f"{header.capacity}")
            last = t
            yield lineno, t, op, offset, length


def read_trace_header(path: str | os.PathLike[str]) -> TraceHeader:
    """The header of the trace at ``path``.

    Raises:
        VraidError: when the file is missing or its first line is not a v1 header.
    """
    gen = _records(path)
    header = next(gen)
    gen.close()
    assert isinstance(header, TraceHeader)
    return header


def read_trace(path: str | os.PathLike[str]) -> Iterator[HostRequest]:
    """Every record of the trace as a HostRequest whose ``at`` is the recorded time.

    Raises:
        VraidError: ``path:line: problem`` for the first line that is not a valid record.
    """
    gen = _records(path)
    next(gen)
    for _, t, op, offset, length in gen:      # type: ignore[misc]
        yield HostRequest(op, offset, length, t)


def replay_requests(path: str | os.PathLike[str], capacity: int, block_size: int, *, speed: float = 1.0,
                    beyond: str = "reject", keep_flush: bool = True) -> Iterator[HostRequest]:
    """The trace as open-loop requests: times relative to the first record, divided by ``speed``.

    A request past ``capacity`` raises (``beyond="reject"``) or wraps modulo the capacity
    (``beyond="wrap"``); a wrapped request that would straddle the end is moved back so that it
    ends at the last whole block. Flushes are yielded as ``op="flush"`` when ``keep_flush``.

    Raises:
        VraidError: for a bad line, or a request that does not fit the array, with its line number.
    """
    gen = _records(path)
    header = next(gen)
    t0: float | None = None
    for lineno, t, op, offset, length in gen:    # type: ignore[misc]
        if t0 is None:
            t0 = t
        if op == "flush":
            if keep_flush:
                yield HostRequest("flush", 0, 0, (t - t0) / speed)
            continue
        if offset + length > capacity:
            if beyond != "wrap" or length > capacity:
                raise _bad(os.fspath(path), lineno, f"{op} at {offset}+{length} runs past the end of the "
                           f"{capacity}-byte simulated array (the trace was recorded on "
                           f"{header.capacity or 'an unknown'} bytes)",   # type: ignore[union-attr]
                           "simulate a larger array, or replay with beyond=wrap")
            offset %= capacity
            if offset + length > capacity:
                offset = (capacity - length) // block_size * block_size
        yield HostRequest(op, offset, length, (t - t0) / speed)

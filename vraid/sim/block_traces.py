"""Standard block traces replayed on the simulated array (docs/trace-format.md, "Other formats").

Three formats besides vraid's own (:mod:`vraid.sim.trace`):

* ``msr``: SNIA's MSR Cambridge CSV, ``Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime``
  (timestamp in Windows FILETIME ticks of 100 ns, ``Type`` Read or Write, offset and size in
  bytes); a device is a (hostname, disk number) pair.
* ``spc``: the UMass / SPC trace format, ``ASU,LBA,Size,Opcode,Timestamp[,...]`` (LBA in
  512-byte sectors, size in bytes, opcode r or w, timestamp in seconds); a device is an ASU.
* ``blkparse``: the text ``blkparse`` prints by default, ``MAJ,MIN CPU SEQ TIME PID ACTION RWBS
  SECTOR + COUNT [PROCESS]``; the ``Q`` (queued) events are the host's requests (``D``,
  issued, when a trace has no ``Q``); a device is its ``MAJ,MIN``; RWBS with F and no sectors is
  a flush.

:func:`sniff` tells them apart from the first record. :func:`foreign_requests` maps each device
onto its own disjoint range of the array, as paper 003 sec. 4.1 maps the cello system's eight
disks into the logical space of its 8-disk RAID: with N devices the array's capacity is cut
into N equal ranges (whole blocks), in the order the devices first appear, and a request at
offset X of device i goes to range i at X. A request past its range is rejected, naming its
line (``beyond=reject``), or wrapped modulo the range (``beyond=wrap``; one that would then
straddle the range's end is moved back to end at the range's last whole block). Times are
made relative to the first request and divided by ``speed``; the records are replayed in time
order.
"""

from __future__ import annotations

import os
import re
from typing import Iterator

from vraid.errors import VraidError
from .request import HostRequest
from .trace import MAGIC

#: the formats ``replay:FILE,format=...`` takes (``auto``: sniffed)
FORMATS = ("vraid", "msr", "spc", "blkparse")
SECTOR = 512
#: MSR timestamps: Windows FILETIME, 100 ns ticks
FILETIME_PER_SECOND = 10_000_000

_BLKPARSE = re.compile(r"^\s*(\d+,\d+)\s+\d+\s+\d+\s+(\d+\.\d+)\s+\d+\s+([A-Z]+)\s+([A-Z]+)\s*(?:(\d+)\s*\+\s*(\d+))?")

#: (line number, time s, device, op, offset bytes, length bytes)
Record = tuple[int, float, str, str, int, int]


def _bad(path: str, lineno: int, problem: str, hint: str = "fix or delete the line") -> VraidError:
    return VraidError(f"{path}:{lineno}: {problem}", hint)


def _csv_header(line: str) -> bool:
    """A CSV column-name line (its first field is not a number)."""
    return "," in line and not line.split(",")[0].strip().replace(".", "").isdigit()


def _first_record(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(MAGIC):
                    return line
                if line.strip() and not line.lstrip().startswith("#") and not _csv_header(line):
                    return line
    except OSError as exc:
        raise VraidError(f"cannot read trace {path}: {exc.strerror}", "check the path given to replay:") from exc
    raise VraidError(f"trace {path} has no records", "give a trace with at least one request")


def sniff(path: str | os.PathLike[str]) -> str:
    """The format of the trace at ``path``: one of :data:`FORMATS`.

    Raises:
        VraidError: when the file cannot be read or its first record is none of them.
    """
    path = os.fspath(path)
    line = _first_record(path)
    if line.startswith(MAGIC):
        return "vraid"
    if _BLKPARSE.match(line):
        return "blkparse"
    fields = [f.strip() for f in line.split(",")]
    if len(fields) >= 7 and fields[3].lower() in ("read", "write"):
        return "msr"
    if len(fields) >= 5 and fields[3].lower() in ("r", "w"):
        return "spc"
    raise VraidError(f"{path}: cannot tell the trace format from its first record {line.strip()[:60]!r}",
                     f"give it: replay:FILE,format=vraid|msr|spc|blkparse (docs/trace-format.md)")


def _number(path: str, lineno: int, text: str, what: str, kind: type = int) -> float:
    try:
        value = kind(text)
    except ValueError:
        raise _bad(path, lineno, f"{what} {text!r} is not a number") from None
    if value < 0:
        raise _bad(path, lineno, f"{what} {text!r} is negative")
    return value


def _msr(path: str, line: str, lineno: int) -> Record | None:
    f = [x.strip() for x in line.split(",")]
    if len(f) < 6:
        raise _bad(path, lineno, f"{len(f)} fields where MSR's Timestamp,Hostname,DiskNumber,Type,Offset,Size has 6+")
    op = {"read": "read", "write": "write"}.get(f[3].lower())
    if op is None:
        raise _bad(path, lineno, f"type {f[3]!r} is not Read or Write")
    ticks = _number(path, lineno, f[0], "timestamp")  # made seconds once the first is known (precision)
    return lineno, ticks, f"{f[1]}/{f[2]}", op, int(_number(path, lineno, f[4], "offset")), int(_number(path, lineno, f[5], "size"))


def _spc(path: str, line: str, lineno: int) -> Record | None:
    f = [x.strip() for x in line.split(",")]
    if len(f) < 5:
        raise _bad(path, lineno, f"{len(f)} fields where ASU,LBA,Size,Opcode,Timestamp has 5")
    op = {"r": "read", "w": "write"}.get(f[3].lower())
    if op is None:
        raise _bad(path, lineno, f"opcode {f[3]!r} is not r or w")
    lba = int(_number(path, lineno, f[1], "LBA"))
    return lineno, float(_number(path, lineno, f[4], "timestamp", float)), f[0], op, lba * SECTOR, \
        int(_number(path, lineno, f[2], "size"))


def _blkparse(path: str, line: str, lineno: int, action: str) -> Record | None:
    m = _BLKPARSE.match(line)
    if m is None or m.group(3) != action:
        return None  # other events (C, G, M, ...) and blkparse's summary lines
    dev, t_text, _, rwbs, sector, count = m.groups()
    if "F" in rwbs and not (count and int(count)):
        return lineno, float(t_text), dev, "flush", 0, 0
    if sector is None or not int(count):
        return None
    op = "write" if "W" in rwbs else "read" if "R" in rwbs else None
    if op is None:
        return None  # discards, barriers without data
    return lineno, float(t_text), dev, op, int(sector) * SECTOR, int(count) * SECTOR


def read_records(path: str | os.PathLike[str], fmt: str) -> list[Record]:
    """Every request of a foreign trace, in time order.

    Raises:
        VraidError: ``path:line: problem`` for the first bad record, or a trace without requests.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            lines = [(n, line) for n, line in enumerate(f, 1) if line.strip() and not line.lstrip().startswith("#")]
    except OSError as exc:
        raise VraidError(f"cannot read trace {path}: {exc.strerror}", "check the path given to replay:") from exc
    out: list[Record] = []
    if fmt == "blkparse":
        action = "Q" if any((m := _BLKPARSE.match(line)) and m.group(3) == "Q" for _, line in lines) else "D"
        out = [r for n, line in lines if (r := _blkparse(path, line, n, action)) is not None]
    else:
        parse = _msr if fmt == "msr" else _spc
        for n, line in lines:
            if n == lines[0][0] and _csv_header(line):
                continue  # the column names
            rec = parse(path, line, n)
            if rec is not None:
                out.append(rec)
    if not out:
        raise VraidError(f"trace {path} ({fmt}) has no requests", "check the format (docs/trace-format.md)")
    out.sort(key=lambda r: r[1])
    if fmt == "msr":  # FILETIME ticks since 1601: relative to the first before they become seconds
        base = out[0][1]
        out = [(n, (t - base) / FILETIME_PER_SECOND, *rest) for n, t, *rest in out]  # type: ignore[misc]
    return out


def foreign_requests(path: str | os.PathLike[str], fmt: str, capacity: int, block_size: int, *,
                     speed: float = 1.0, beyond: str = "reject", keep_flush: bool = True) -> Iterator[HostRequest]:
    """The trace's requests on the array, each device on its own range (see the module docstring).

    Raises:
        VraidError: for a bad record, or a request past its device's range with ``beyond=reject``.
    """
    records = read_records(path, fmt)
    devices: dict[str, int] = {}
    for r in records:
        if r[3] != "flush":
            devices.setdefault(r[2], len(devices))
    n = max(1, len(devices))
    span = capacity // n // block_size * block_size
    if span <= 0:
        raise VraidError(f"{len(devices)} devices of the trace do not fit the {capacity}-byte array one range each",
                         "simulate a larger array")
    t0 = records[0][1]
    for lineno, t, dev, op, offset, length in records:
        at = (t - t0) / speed
        if op == "flush":
            if keep_flush:
                yield HostRequest("flush", 0, 0, at)
            continue
        if length == 0:
            continue
        if offset + length > span:
            if beyond != "wrap" or length > span:
                raise _bad(os.fspath(path), lineno, f"{op} at {offset}+{length} of device {dev} runs past its "
                           f"range of {span} bytes ({len(devices)} device(s) share the {capacity}-byte array)",
                           "simulate a larger array, or replay with beyond=wrap")
            offset %= span
            if offset + length > span:
                offset = (span - length) // block_size * block_size
        yield HostRequest(op, devices[dev] * span + offset, length, at)

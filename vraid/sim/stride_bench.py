"""The stride benchmark of seed 000 (Baek & Park, MSC-CT), sec. III-D, Fig. 8, on one member.

For each stride distance S from 1 (contiguous) to a maximum, one-block I/Os go to blocks
``first, first+S, first+2S, ...`` and always end at the same destination block (Fig. 8's
caption: "All workloads employ the same start and end positions"); adjacent blocks are merged
into one request, as a block layer would (so S = 1 is one request per pass). The turnaround of
the passes at S divided by that at S = 1 is the normalized time of Fig. 9, and the 1.2 rule
(:func:`vraid.core.stride_rule.derive_limits`) turns the write and read curves into S_w^max, S_r^max
and the excluded regions the contiguity transform obeys (eq. 8, 9). Sec. III-D: the paper runs
it once "when an administrator creates the disk array" and keeps the result "in a non-volatile
storage"; vraid keeps it in every member's superblock as ``params["ct"]`` (:func:`ct_params`).

Two ways to run it:

* :func:`bench_model`: a ``--disk-model`` over an in-memory store in virtual time. Every curve
  point is a fresh disk in a fresh virtual clock. An hdd model runs with ``stroke=partition``
  (the member is the start of the full-size disk, as a benchmark at the start of a raw disk)
  unless the spec sets ``stroke`` itself. The ``stride`` experiment (Fig. 9) uses the same
  code (:func:`model_curve`).
* :func:`bench_member`: a real member file of an array that is not mounted, timed with the
  wall clock; ``O_DIRECT`` where the filesystem accepts it, else buffered I/O with an
  ``fsync`` after every write pass and ``POSIX_FADV_DONTNEED`` before every read pass. It
  modifies nothing: it reads the bytes of the data area it will touch first and writes those
  same bytes back (never the superblock), and checks them afterwards.

Outstanding requests. Sec. I-C: the paper's benchmark is a kernel driver that "produces from
32 to 64 outstanding I/Os" and processes them asynchronously. In model mode the host keeps
``depth`` requests outstanding (default :data:`DEPTH`, 32), issued in ascending order, a new
one as each completes; a disk with tagged command queueing takes up to its ``queue_depth``
of them and orders them itself, a disk without one serves them one at a time in that order.
Command queueing is on by default in the disk models for a drive that has a queue; the
benchmark spells it out (``tcq=on``, see :func:`bench_spec`) so the recorded spec says so.
``depth=1`` is one request at a time. Where vraid differs: member-file mode issues one
request at a time (synchronous ``pwritev``/``preadv``), so a real disk's own queue is not
exercised there. Real-file timings are noisy: every S is measured ``repeat`` times in
interleaved rounds and the median is kept.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import trio
import trio.testing

from vraid.backends.memory import MemoryStore
from vraid.backends.models import ModelSpec, parse_model
from vraid.engine.clock import TrioClock
from vraid.errors import VraidError
from vraid.core.stride_rule import THRESHOLD, derive_limits
from vraid.core.units import format_size
from .driver import deterministic_trio
from .workload import Stride

BLOCK = 4096
#: model mode defaults (virtual time costs nothing but CPU)
MODEL_MAX_STRIDE = 64
MODEL_SPAN = 2 << 20
MODEL_PASSES = 2
#: requests the benchmark keeps outstanding in model mode (seed 000 sec. I-C: 32 to 64)
DEPTH = 32
#: member-file mode defaults (wall clock: keep it well under 30 s)
FILE_MAX_STRIDE = 32
FILE_SPAN = 1 << 20
FILE_PASSES = 2
FILE_REPEAT = 5


# ---------------------------------------------------------------------- the pattern
def merge_runs(blocks: Sequence[int]) -> list[tuple[int, int]]:
    """Adjacent blocks as (first block, count) requests, as a block layer merges them."""
    runs: list[tuple[int, int]] = []
    for b in blocks:
        if runs and runs[-1][0] + runs[-1][1] == b:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((b, 1))
    return runs


def pass_requests(stride: int, first: int, nblocks: int) -> list[tuple[int, int]]:
    """One Fig. 8 pass of stride ``stride`` over blocks ``first .. first+nblocks-1``, merged."""
    w = Stride(stride=stride, span=nblocks * BLOCK)
    return merge_runs(w.pass_blocks(first, first + nblocks - 1))


def check_strides(max_stride: int, span: int, block: int = BLOCK) -> list[int]:
    """Strides 1..max_stride, after checking they fit ``span``.

    Raises:
        VraidError: a maximum below 2, or a span too short for two strides of the maximum.
    """
    if max_stride < 2:
        raise VraidError(f"--max-stride {max_stride} is below 2", "measure at least S = 1 and S = 2, e.g. --max-stride 32")
    if span % block or span < 2 * max_stride * block:
        raise VraidError(f"--span {format_size(span)} is too short for strides up to {max_stride}",
                         f"give a span of whole {format_size(block)} blocks, at least {format_size(2 * max_stride * block)}")
    return list(range(1, max_stride + 1))


# ---------------------------------------------------------------------- results
@dataclass
class Curve:
    """One op's Fig. 9 curve: seconds per stride and seconds / seconds at S = 1."""

    op: str
    S: list[int]
    seconds: list[float]
    extra: list[dict[str, Any]] = field(default_factory=list)

    @property
    def normalized(self) -> list[float]:
        """Normalized turnaround, rounded to 4 decimals (the limits are derived from these)."""
        t_c = self.seconds[0]
        return [round(s / t_c, 4) if t_c > 0 else 1.0 for s in self.seconds]


@dataclass
class BenchResult:
    """What one stride benchmark measured and the CT limits it derived."""

    source: str  # "hdd:st373454lc,stroke=partition" or "member 0 of /path/arr (disk0.img)"
    timing: str  # "virtual time" | "O_DIRECT" | "fsync per batch"
    setup: dict[str, Any]
    write: Curve
    read: Curve

    def limits(self) -> dict[str, Any]:
        """S_w^max, S_r^max and the excluded regions by the 1.2 rule."""
        sw_max, sw_except = derive_limits(self.write.S, self.write.normalized, THRESHOLD)
        sr_max, sr_except = derive_limits(self.read.S, self.read.normalized, THRESHOLD)
        return {"sw_max": sw_max, "sr_max": sr_max, "sw_except": sw_except, "sr_except": sr_except}

    def ct_params(self) -> dict[str, Any]:
        """The superblock entry ``params["ct"]`` (read by the CT policy at every mount)."""
        lim = self.limits()
        return {"sr_max": lim["sr_max"], "sw_max": lim["sw_max"], "sr_except": lim["sr_except"],
                "sw_except": lim["sw_except"], "source": f"stride-bench {self.source} ({self.timing})"}

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "timing": self.timing, "setup": self.setup,
                "S": self.write.S,
                "write": {"seconds": self.write.seconds, "normalized": self.write.normalized},
                "read": {"seconds": self.read.seconds, "normalized": self.read.normalized},
                **self.limits(), "ct": self.ct_params()}


# ---------------------------------------------------------------------- model mode
def bench_spec(spec: str | ModelSpec) -> ModelSpec:
    """The model the benchmark runs: an hdd at the start of its disk unless ``stroke`` is set,
    with its command queue on (``tcq=on``, the drive's native depth: the models' default, spelt
    out) when the drive has one and the spec does not say ``tcq`` or ``queue_depth`` itself: the paper's benchmark keeps
    32-64 requests outstanding on drives that queue them (sec. I-C). ``tcq=off`` in the spec
    times the one-command model instead.

    Raises:
        VraidError: a bad spec, or ``none`` (nothing to time).
    """
    ms = spec if isinstance(spec, ModelSpec) else parse_model(spec)
    if ms.kind == "none":
        raise VraidError("--disk-model none has no timing to benchmark", "give a model, e.g. --disk-model hdd:st373454lc")
    extra = []
    if ms.kind == "hdd" and not any(k == "stroke" for k, _ in ms.overrides):
        extra.append("stroke=partition")
    if (ms.kind == "hdd" and ms.params.queue_depth > 1  # type: ignore[union-attr]
            and not any(k in ("tcq", "queue_depth", "depth") for k, _ in ms.overrides)):
        extra.append("tcq=on")
    if extra:
        ms = parse_model(ms.text + ("," if ":" in ms.text else ":") + ",".join(extra))
    return ms


def time_passes(model: ModelSpec, op: str, passes: Sequence[Sequence[tuple[int, int]]], store: MemoryStore,
                block: int = BLOCK, depth: int = 1) -> dict[str, float]:
    """Serve ``passes`` (lists of (block, count) requests) on a fresh disk, ``depth`` requests
    outstanding (1: one at a time), each new one issued as one completes.

    Returns the total turnaround (virtual seconds), the requests, and (hdd) the model's
    missed rotations and revolution time.
    """
    payload = memoryview(bytes(max(c for p in passes for _, c in p) * block))

    async def main() -> dict[str, float]:
        disk = model.wrap(store, TrioClock())
        t0 = trio.current_time()
        n = 0
        tagged = min(depth, disk.queue_depth)
        if tagged > 1:  # the drive queues: keep `depth` outstanding, it takes `tagged` of them
            slots = trio.Semaphore(tagged)

            async def finish(cmd) -> None:
                try:
                    await disk.end(cmd)  # type: ignore[attr-defined]
                finally:
                    slots.release()

            async with trio.open_nursery() as nursery:
                for requests in passes:
                    for b, c in requests:
                        await slots.acquire()
                        nursery.start_soon(finish, disk.begin(op, b * block, c * block))  # type: ignore[attr-defined]
                        n += 1
        else:  # one at a time (a host queue in front of a drive that takes one command is FIFO)
            for requests in passes:
                for b, c in requests:
                    if op == "write":
                        await disk.write(b * block, payload[: c * block])
                    else:
                        await disk.read(b * block, c * block)
                    n += 1
        stats = getattr(disk, "stats", None)
        return {"seconds": trio.current_time() - t0, "requests": n,
                "missed_rotations": getattr(stats, "missed_rotations", 0),
                "rotation_wait_seconds": getattr(stats, "rotation_wait_seconds", 0.0),
                "revolution": getattr(disk, "revolution", 0.0)}

    # with requests outstanding, commands that complete and arrive at the same virtual instant
    # must meet the drive's choice in the same order every run (vraid.sim.driver)
    with deterministic_trio(0):
        return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def model_curve(model: ModelSpec, op: str, strides: Iterable[int], *, span: int, passes: int,
                start: int = 0, block: int = BLOCK, depth: int = DEPTH) -> dict[str, Any]:
    """The Fig. 9 curve of one model and op: turnaround per stride, normalized to S = 1.

    Pass k covers ``[start + k*span, start + (k+1)*span)``: every pass is the same pattern on
    blocks the disk has not touched yet, so no pass is served from the on-board cache segments
    of the one before (the paper's benchmark bypasses caches).
    """
    store = MemoryStore(start + passes * span, name=model.params.name if model.params else "model")
    per = span // block
    points = []
    for s in sorted(set(strides) | {1}):
        all_passes = [pass_requests(s, (start + k * span) // block, per) for k in range(passes)]
        t = time_passes(model, op, all_passes, store, block, depth)
        points.append({"S": s, "seconds": t["seconds"], "requests": t["requests"],
                       "missed_rotations": t["missed_rotations"], "revolution": t["revolution"],
                       "rotation_wait_seconds": t["rotation_wait_seconds"]})
    t_c = points[0]["seconds"]
    for p in points:
        p["normalized"] = p["seconds"] / t_c
    return {"points": points}


def bench_model(spec: str | ModelSpec, *, max_stride: int = MODEL_MAX_STRIDE, span: int = MODEL_SPAN,
                passes: int = MODEL_PASSES, depth: int = DEPTH) -> BenchResult:
    """The stride benchmark on a disk model in virtual time (deterministic), ``depth``
    requests outstanding."""
    model = bench_spec(spec)
    strides = check_strides(max_stride, span)
    if passes < 1:
        raise VraidError(f"--passes {passes} is below 1", "e.g. --passes 2")
    if depth < 1:
        raise VraidError(f"--depth {depth} is below 1", "keep 32 requests outstanding as the paper does: --depth 32")
    curves = {}
    for op in ("write", "read"):
        pts = model_curve(model, op, strides, span=span, passes=passes, depth=depth)["points"]
        curves[op] = Curve(op, [p["S"] for p in pts], [p["seconds"] for p in pts],
                           [{"requests": p["requests"], "missed_rotations": p["missed_rotations"]} for p in pts])
    setup = {"block": BLOCK, "max_stride": max_stride, "span": span, "passes": passes, "depth": depth}
    return BenchResult(model.text, "virtual time", setup, curves["write"], curves["read"])


# ---------------------------------------------------------------------- member-file mode
@dataclass
class Member:
    """The member file to benchmark and the part of it that holds data."""

    path: Path
    role: int
    data_start: int  # byte offset of the data area (after the superblock area)
    data_end: int
    label: str


def open_for_bench(path: Path, probe_offset: int) -> tuple[int, str]:
    """Open ``path`` read-write, with O_DIRECT when the filesystem accepts an aligned read there."""
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            fd = os.open(path, os.O_RDWR | direct)
        except OSError:
            fd = -1
        if fd >= 0:
            buf = mmap.mmap(-1, BLOCK)
            try:
                os.preadv(fd, [buf], probe_offset)
                return fd, "O_DIRECT"
            except OSError:
                os.close(fd)
            finally:
                buf.close()
    try:
        return os.open(path, os.O_RDWR), "fsync per batch"
    except OSError as exc:
        raise VraidError(f"cannot open {path}: {exc.strerror}", "check the member file's permissions") from exc


def _digest(buf: Any) -> str:
    return hashlib.sha256(buf).hexdigest()


def bench_member(member: Member, *, max_stride: int = FILE_MAX_STRIDE, span: int = FILE_SPAN,
                 passes: int = FILE_PASSES, repeat: int = FILE_REPEAT) -> BenchResult:
    """The stride benchmark on a real member file, wall-clock timed, data unchanged.

    The region ``[data_start, data_start + passes*span)`` is read first; every write writes back
    the bytes just read for its blocks; at the end the region is read again and compared (a
    mismatch, which only a concurrent writer could cause, restores the original bytes and
    raises); the file's access and modification times are put back.

    Raises:
        VraidError: bad sizes, a region that does not fit the data area, or I/O errors.
    """
    strides = check_strides(max_stride, span)
    if passes < 1 or repeat < 1:
        raise VraidError("--passes and --repeat must be at least 1", "e.g. --passes 2 --repeat 3")
    region = passes * span
    if member.data_start + region > member.data_end:
        room = member.data_end - member.data_start
        raise VraidError(f"{passes} passes of {format_size(span)} do not fit the {format_size(room)} data area of {member.path.name}",
                         "give a smaller --span or fewer --passes")
    stamp = os.stat(member.path)
    fd, timing = open_for_bench(member.path, member.data_start)
    original = mmap.mmap(-1, region)  # page aligned: fit for O_DIRECT
    scratch = mmap.mmap(-1, max(span, BLOCK))
    check = mmap.mmap(-1, region)
    seconds: dict[str, dict[int, list[float]]] = {"write": {s: [] for s in strides}, "read": {s: [] for s in strides}}
    try:
        with memoryview(original) as view, memoryview(scratch) as sview:
            _read_all(fd, view, member.data_start)
            before = _digest(view)
            per = span // BLOCK
            for _ in range(repeat):
                for op in ("write", "read"):
                    for s in strides:
                        total = 0.0
                        for k in range(passes):
                            base = k * span
                            reqs = pass_requests(s, base // BLOCK, per)
                            total += _time_pass(fd, timing, op, reqs, member.data_start, base, span, view, sview)
                        seconds[op][s].append(total)
            with memoryview(check) as cview:
                _read_all(fd, cview, member.data_start)
                changed = _digest(cview) != before
            if changed:
                _write_all(fd, view, member.data_start)
                os.fsync(fd)
                raise VraidError(f"{member.path.name} changed under the benchmark (is something else writing it?); "
                                 "its original bytes were written back",
                                 "stop whatever uses the array, then run `vraid stride-bench` again")
    except OSError as exc:
        raise VraidError(f"I/O error on {member.path}: {exc.strerror}", "check the member file and its filesystem") from exc
    finally:
        os.close(fd)
        for buf in (original, scratch, check):
            try:
                buf.close()
            except BufferError:  # pragma: no cover - a slice outlived an error; the GC frees it
                pass
        os.utime(member.path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # same bytes, same times
    curves = {op: Curve(op, strides, [statistics.median(seconds[op][s]) for s in strides],
                        [{"runs": seconds[op][s]} for s in strides]) for op in ("write", "read")}
    setup = {"block": BLOCK, "max_stride": max_stride, "span": span, "passes": passes, "repeat": repeat,
             "member": member.role, "offset": member.data_start, "sha256": before}
    return BenchResult(member.label, timing, setup, curves["write"], curves["read"])


def _read_all(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done : done + (4 << 20)]], offset + done)
        if n <= 0:
            raise VraidError(f"short read at byte {offset + done} of a member", "is the member file truncated?")
        done += n


def _write_all(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < len(view):
        done += os.pwritev(fd, [view[done : done + (4 << 20)]], offset + done)


def _time_pass(fd: int, timing: str, op: str, reqs: list[tuple[int, int]], data_start: int, base: int, span: int,
               original: memoryview, sview: memoryview) -> float:
    """Wall seconds of one pass: ``reqs`` are (block, count) relative to the region start."""
    buffered = timing != "O_DIRECT"
    if op == "read" and buffered and hasattr(os, "posix_fadvise"):
        os.posix_fadvise(fd, data_start + base, span, os.POSIX_FADV_DONTNEED)
    t0 = time.perf_counter()
    if op == "write":
        for b, c in reqs:
            off = b * BLOCK
            os.pwritev(fd, [original[off : off + c * BLOCK]], data_start + off)
        if buffered:
            os.fsync(fd)
    else:
        for b, c in reqs:
            os.preadv(fd, [sview[: c * BLOCK]], data_start + b * BLOCK)
    return time.perf_counter() - t0


# ---------------------------------------------------------------------- output
def plot(result: BenchResult, path: Path) -> Path:
    """Fig. 9-like plot: normalized write and read time against S, the 1.2 line and S^max."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lim = result.limits()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    ax.plot(result.write.S, result.write.normalized, "-o", markersize=3, label="write")
    ax.plot(result.read.S, result.read.normalized, "-s", markersize=3, label="read")
    ax.axhline(THRESHOLD, color="grey", linestyle="--", linewidth=0.8, label="1.2")
    ax.axvline(lim["sw_max"], color="C0", linestyle=":", linewidth=1, label=f"S_w^max = {lim['sw_max']}")
    ax.axvline(lim["sr_max"], color="C1", linestyle=":", linewidth=1, label=f"S_r^max = {lim['sr_max']}")
    for key, color in (("sw_except", "C0"), ("sr_except", "C1")):
        for a, b in lim[key]:
            ax.axvspan(a - 0.5, b + 0.5, color=color, alpha=0.12)
    if max(result.write.normalized + result.read.normalized) > 10:
        ax.set_yscale("log")
    ax.set_xlabel("stride distance S (blocks of 4 KiB)")
    ax.set_ylabel("normalized turnaround time")
    ax.set_title(f"stride benchmark: {result.source}\n({result.timing})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def table(result: BenchResult):
    """The curves and the derived limits as two :class:`~vraid.sim.table.TextTable`; the
    normalized times at or above the 1.2 threshold are :class:`~vraid.sim.table.Strong`."""
    from .table import Strong, TextTable

    t = TextTable(title=f"stride benchmark (paper 000 Fig. 8): {result.source}, {result.timing}")
    for col in ("S", "write (normalized)", "read (normalized)"):
        t.add_column(col, justify="right")
    for s, w, r in zip(result.write.S, result.write.normalized, result.read.normalized):
        mark = lambda v: Strong(f"{v:.3f}") if v >= THRESHOLD else f"{v:.3f}"  # noqa: E731
        t.add_row(str(s), mark(w), mark(r))
    lim = result.limits()
    p = TextTable(title="contiguity transform limits (1.2 rule, eq. 8 and 9)", show_header=False)
    p.add_column("parameter")
    p.add_column("value", justify="right")

    def regions(rs: list[list[int]]) -> str:
        return ", ".join(f"[{a}, {b}]" for a, b in rs) or "none"

    p.add_row("S_w^max", str(lim["sw_max"]))
    p.add_row("S_w^except", regions(lim["sw_except"]))
    p.add_row("S_r^max", str(lim["sr_max"]))
    p.add_row("S_r^except", regions(lim["sr_except"]))
    return [t, p]

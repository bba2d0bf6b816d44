"""Deterministic host-request generators: the workloads of the five seed papers.

Every workload is a small class in :data:`WORKLOADS`; ``parse_workload("zipf:skew=0.7")``
builds one from the spec the CLI takes (``vraid sim --workload ...``). ``requests(capacity,
block_size, count, seed)`` yields :class:`HostRequest` objects; the same seed gives the same
sequence, and a shorter run is a prefix of a longer one (random numbers are drawn in fixed-size
chunks). Pattern workloads (stride, sequential, semisequential) have no randomness and ignore
the seed. Finite workloads (``hlwm-periods``, ``replay``) may end before ``count``.

Open-loop workloads give each request an arrival time ``at`` (seconds from 0); closed-loop ones
leave ``at`` None and set :attr:`Workload.closed_loop` to the number of requests to keep
outstanding. Multi-stream closed-loop workloads interleave their streams round robin and tag each
request with ``stream`` so a consumer can keep one outstanding per stream.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Literal

import numpy as np

from .errors import VraidError
from .units import format_size, parse_size

_CHUNK = 4096  # random draws per numpy call; fixed so shorter runs are prefixes of longer ones


@dataclass(frozen=True, slots=True)
class HostRequest:
    """One request from the host. ``at``: arrival time in seconds (open loop) or None.

    ``op`` is "read" or "write"; "flush" appears only when replaying a trace that recorded one
    (offset and length 0).
    """

    op: Literal["read", "write", "flush"]
    offset: int
    length: int
    at: float | None
    stream: int = 0


# ---------------------------------------------------------------- parameter parsing
_TIME = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*(ns|us|µs|ms|s|min|h)?\s*$", re.I)
_TIME_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str | float, what: str = "time") -> float:
    """Seconds in ``text``: "10us", "1ms", "2s", "5min" or a bare number of seconds."""
    if isinstance(text, (int, float)):
        return float(text)
    m = _TIME.match(text)
    if not m:
        raise VraidError(f"{what} {text!r} is not a duration",
                         "write a number with an optional unit ns, us, ms, s, min or h, e.g. 20ms")
    return float(m.group(1)) * _TIME_UNIT[(m.group(2) or "s").lower()]


@dataclass(frozen=True, slots=True)
class Param:
    """A workload parameter: ``kind`` is size|time|float|int|path or "a|b|c" (a choice)."""

    kind: str
    default: Any
    help: str

    def convert(self, key: str, value: Any) -> Any:
        if value is None:
            return None
        what = f"parameter {key}"
        try:
            if self.kind == "size":
                return parse_size(value, what)
            if self.kind == "time":
                return parse_duration(value, what)
            if self.kind == "float":
                return float(value)
            if self.kind == "int":
                return int(value)
        except ValueError:
            raise VraidError(f"{what}={value!r} is not a {self.kind}", f"e.g. {key}={self.show()}") from None
        if self.kind == "path":
            return str(value)
        choices = self.kind.split("|")
        if value not in choices:
            raise VraidError(f"{what}={value!r} is not one of {choices}", f"write {key}={choices[0]}")
        return value

    def show(self) -> str:
        if self.default is None:
            return "-"
        return format_size(self.default) if self.kind == "size" else str(self.default)


def _need(ok: bool, message: str, hint: str) -> None:
    if not ok:
        raise VraidError(message, hint)


def _rng(seed: int) -> np.random.Generator:
    _need(isinstance(seed, (int, np.integer)) and seed >= 0, f"seed {seed!r} is not a non-negative integer",
          "pass --seed N")
    return np.random.Generator(np.random.PCG64(int(seed)))


def _truncated_cdf(weights: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _draw(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices 0..len(cdf)-1 drawn by inverse transform of uniform ``u``."""
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(cdf) - 1)


def _closed_loop(p: dict[str, Any]) -> int | None:
    return None if p.get("iat") is not None else int(p.get("outstanding") or 1)


def _arrivals(rng: np.random.Generator, p: dict[str, Any], t: float) -> tuple[list, float]:
    """One chunk of arrival times after ``t`` (Poisson with mean ``iat``, or fixed spacing)."""
    if p.get("iat") is None:
        return [None] * _CHUNK, t
    gaps = rng.exponential(p["iat"], _CHUNK) if p["arrival"] == "poisson" else np.full(_CHUNK, p["iat"])
    times = t + np.cumsum(gaps)
    return times.tolist(), float(times[-1])


_OPEN_OR_CLOSED = {
    "iat": Param("time", None, "mean inter-arrival time: open loop (default: closed loop)"),
    "arrival": Param("poisson|fixed", "poisson", "inter-arrival distribution when iat is set"),
    "outstanding": Param("int", None, "closed loop: requests kept outstanding (default 1 per stream)"),
}


# ---------------------------------------------------------------- base class
class Workload:
    """Base of every workload: validated ``params`` and a ``requests`` generator.

    Subclasses set ``name``, ``summary``, ``source`` (paper, section, figure) and ``PARAMS``;
    a workload whose spec may carry one bare value (``replay:FILE``) names it in ``positional``.
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    source: ClassVar[str]
    PARAMS: ClassVar[dict[str, Param]] = {}
    positional: ClassVar[str | None] = None
    uses_seed: ClassVar[bool] = True

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.PARAMS))
        _need(not unknown, f"workload {self.name!r} has no parameter {', '.join(unknown)}",
              f"valid parameters of {self.name}: {', '.join(self.PARAMS) or '(none)'}")
        self.params: dict[str, Any] = {k: p.convert(k, params.get(k, p.default)) for k, p in self.PARAMS.items()}
        self._check(self.params)

    def _check(self, p: dict[str, Any]) -> None:
        """Raise VraidError for parameter values that make no sense (subclasses extend)."""
        for key in ("iat", "outstanding", "size"):
            if p.get(key) is not None:
                _need(p[key] > 0, f"{self.name}: {key} must be positive", f"e.g. {key}={self.PARAMS[key].show()}")

    @property
    def closed_loop(self) -> int | None:
        """Requests to keep outstanding (closed loop), or None when requests carry ``at``."""
        return _closed_loop(self.params)

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this workload."""
        items = [f"{k}={self.PARAMS[k].show() if self.PARAMS[k].kind == 'size' else v}"
                 for k, v in self.params.items() if v is not None]
        return self.name + (":" + ",".join(items) if items else "")

    def __repr__(self) -> str:
        return f"<workload {self.spec}>"

    def requests(self, capacity: int, block_size: int, count: int, seed: int) -> Iterator[HostRequest]:
        """Yield up to ``count`` requests for an array of ``capacity`` bytes."""
        _need(count >= 0, f"count {count} is negative", "ask for zero or more requests")
        _need(block_size > 0 and capacity >= block_size, f"capacity {capacity} smaller than block {block_size}",
              "use a larger array")
        gen = self._generate(capacity, block_size, seed)
        for _, req in zip(range(count), gen):
            yield req

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        raise NotImplementedError

    def _fit(self, what: str, nbytes: int, capacity: int, block: int) -> None:
        _need(0 < nbytes <= capacity, f"{self.name}: {what} {format_size(nbytes)} does not fit the "
              f"{format_size(capacity)} array", f"make {what} smaller or the array larger")
        _need(nbytes % block == 0, f"{self.name}: {what} {nbytes} is not a multiple of the "
              f"{block}-byte block", f"round {what} to whole blocks")


# ---------------------------------------------------------------- uniform random
class RandomWrite(Workload):
    """Uniform random ``size`` writes over ``workspace`` (seed 000, section V-B, Fig. 11).

    Tiobench threads each write 4 KiB pages uniformly in their own 1 GB file, so the workspace
    grows with the thread count: ``threads=T`` splits the workspace into T equal slices, thread
    k (``stream`` k) writes only its slice, and the threads take turns. Offsets are aligned to
    ``size``. Fig. 11 uses 160k writes: ``--count 160000``.
    """

    name, op = "random-write", "write"
    summary = "uniform random writes over a workspace (Tiobench)"
    source = "seed 000 (Baek & Park, MSC-CT), sec. V-B, Fig. 11"
    PARAMS = {"workspace": Param("size", None, "bytes the offsets cover (default: whole array)"),
              "size": Param("size", 4096, "request size; offsets are aligned to it"),
              "threads": Param("int", 1, "Tiobench threads, each on its own slice of the workspace"),
              **_OPEN_OR_CLOSED}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["threads"] >= 1, f"{self.name}: threads must be at least 1", "e.g. threads=4")

    @property
    def closed_loop(self) -> int | None:
        return None if self.params["iat"] is not None else self.params["outstanding"] or self.params["threads"]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, size, threads = self.params, self.params["size"], self.params["threads"]
        workspace = p["workspace"] or capacity
        self._fit("workspace", workspace, capacity, block_size)
        self._fit("size", size, capacity, block_size)
        slots = workspace // threads // size
        _need(slots > 0, f"{self.name}: a {format_size(workspace)} workspace has no room for "
              f"{threads} threads of {format_size(size)} requests", "use fewer threads or a larger workspace")
        rng, t, n, op = _rng(seed), 0.0, 0, self.op
        while True:
            slot = rng.integers(0, slots, _CHUNK)
            stream = (np.arange(n, n + _CHUNK) % threads) if threads > 1 else np.zeros(_CHUNK, np.int64)
            offsets = ((stream * slots + slot) * size).tolist()
            ats, t = _arrivals(rng, p, t)
            for off, at, s in zip(offsets, ats, stream.tolist()):
                yield HostRequest(op, off, size, at, s)
            n += _CHUNK


class RandomRead(RandomWrite):
    """Uniform random ``size`` reads over ``workspace``; the read twin of ``random-write``."""

    name, op = "random-read", "read"
    summary = "uniform random reads over a workspace"


# ---------------------------------------------------------------- stride patterns
def _stride_params(default_op: str) -> dict[str, Param]:
    return {"op": Param("write|read", default_op, "write or read"),
            "start": Param("size", 0, "byte offset of the preset first block"),
            "span": Param("size", 4 << 20, "bytes from the first to past the destination block"),
            "outstanding": Param("int", 1, "requests in flight (closed loop)")}


class _Pass(Workload):
    """Shared by the stride workloads: passes from ``start`` to the destination block."""

    uses_seed = False

    def _blocks(self, capacity: int, block_size: int) -> tuple[int, int]:
        p = self.params
        _need(p["start"] % block_size == 0, f"{self.name}: start is not block aligned", "round start to a block")
        self._fit("span", p["span"], capacity - p["start"], block_size)
        first = p["start"] // block_size
        return first, first + p["span"] // block_size - 1


class Stride(_Pass):
    """The stride benchmark (seed 000, sec. III-D, Fig. 8): one block, then skip S-1 blocks.

    A pass reads or writes blocks first, first+S, first+2S, ... and always ends at the preset
    destination block (first + span/block - 1): when the span is not a multiple of S the last
    stride is shorter, so every S has the same first and last block as the caption demands.
    Passes repeat until ``count`` requests.
    """

    name = "stride"
    summary = "stride benchmark: every S-th block from a fixed start to a fixed destination"
    source = "seed 000 (Baek & Park, MSC-CT), sec. III-D, Fig. 8 (and Fig. 9)"
    PARAMS = {"stride": Param("int", 2, "stride distance S in blocks (1 = contiguous)"), **_stride_params("write")}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["stride"] >= 1, f"stride: stride {p['stride']} must be at least 1", "e.g. stride=4")

    def pass_blocks(self, first: int, last: int) -> list[int]:
        """Block numbers of one pass from ``first`` to ``last``."""
        blocks = list(range(first, last + 1, self.params["stride"]))
        return blocks if blocks[-1] == last else blocks + [last]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        one_pass = [b * block_size for b in self.pass_blocks(*self._blocks(capacity, block_size))]
        op = self.params["op"]
        while True:
            for off in one_pass:
                yield HostRequest(op, off, block_size, None)


class ExpStride(_Pass):
    """Sequentially discontiguous I/O with exponential stride (seed 000, sec. I-C, Fig. 1; Fig. 15).

    The stride distance S (blocks between two I/Os, 1 = contiguous) is a discretised exponential,
    i.e. geometric on 1..``max`` (Fig. 1: max 32 blocks of 4 KiB; Fig. 15: mean 10, max 64).
    ``mean`` is the average stride actually produced: the geometric parameter is solved so the
    *truncated* distribution has that mean (needs 1 <= mean < (max+1)/2). Each pass starts at the
    preset block and ends at the preset destination; the stride into the destination is cut short.
    """

    name = "exp-stride"
    summary = "ascending I/O with exponentially distributed stride distance"
    source = "seed 000 (Baek & Park, MSC-CT), sec. I-C, Fig. 1 (and Fig. 15)"
    PARAMS = {"mean": Param("float", 4.0, "average stride distance in blocks"),
              "max": Param("int", 32, "largest stride distance in blocks"), **_stride_params("write")}
    uses_seed = True

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["max"] >= 1 and 1 <= p["mean"] and (p["mean"] == 1 or p["mean"] < (p["max"] + 1) / 2),
              f"exp-stride: mean {p['mean']} is not reachable with max {p['max']}",
              "an exponential stride needs 1 <= mean < (max+1)/2; raise max or lower mean")
        self.stride_pmf = self._pmf(p["mean"], p["max"])

    @staticmethod
    def _pmf(mean: float, smax: int) -> np.ndarray:
        """P(S = 1..smax) of the geometric law truncated at smax whose mean is ``mean``."""
        k = np.arange(1, smax + 1, dtype=float)
        if mean == 1 or smax == 1:
            return (k == 1).astype(float)

        def law(q: float) -> np.ndarray:
            w = q ** (k - 1)
            return w / w.sum()

        lo, hi = 0.0, 1.0 - 1e-12          # truncated mean rises from 1 to (max+1)/2 as q -> 1
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if float(law(mid) @ k) < mean else (lo, mid)
        return law((lo + hi) / 2)

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        first, last = self._blocks(capacity, block_size)
        cdf, rng, op, pos = _truncated_cdf(self.stride_pmf), _rng(seed), self.params["op"], first
        while True:
            strides = (_draw(cdf, rng.random(_CHUNK)) + 1).tolist()
            for s in strides:
                yield HostRequest(op, pos * block_size, block_size, None)
                if pos == last:
                    pos = first
                else:
                    pos = min(pos + s, last)


# ---------------------------------------------------------------- Zipf
class Zipf(Workload):
    """The Zipf-skewed multibuffer workload (seed 004, sec. 3 and 4).

    Three draws per request, as the paper's request generator: the first block from
    P_i = 1/(i^z sum_j 1/j^z) over ``blocks`` (block 1 hottest, i.e. block 0 here), the type
    (write with probability ``write_ratio``: the paper's own example makes 0.3 mean three writes
    in every ten I/Os), and the size, Zipf-like with ``size_skew`` over 1..``read_max`` blocks
    for reads and 1..``write_max`` for writes. The paper says a larger access-size skew means
    *larger* requests, so the most likely rank is the largest size. A request that would run
    past the last block is cut at it.
    """

    name = "zipf"
    summary = "Zipf-skewed reads (1..100 blocks) and writes (1..10 blocks) over 10,000 blocks"
    source = "seed 004 (Hua, Vu & Hu, Multibuffer), sec. 3, Figs. 3-8"
    PARAMS = {"skew": Param("float", 0.3, "access skew z of the first block (0 = uniform, 1 = severe)"),
              "write_ratio": Param("float", 0.3, "W/R ratio: fraction of requests that are writes"),
              "size_skew": Param("float", 0.2, "access-size skew (sec. 4.2 fixes it at 0.2)"),
              "blocks": Param("int", 10000, "database size in blocks"),
              "read_max": Param("int", 100, "largest read in blocks"),
              "write_max": Param("int", 10, "largest write in blocks"), **_OPEN_OR_CLOSED}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(0 <= p["write_ratio"] <= 1, "zipf: write_ratio must be within 0..1", "e.g. write_ratio=0.3")
        _need(p["skew"] >= 0 and p["size_skew"] >= 0, "zipf: skews must be >= 0", "e.g. skew=0.7")
        _need(min(p["blocks"], p["read_max"], p["write_max"]) >= 1, "zipf: blocks and sizes must be >= 1",
              "e.g. blocks=10000")

    @staticmethod
    def zipf_pmf(n: int, z: float) -> np.ndarray:
        """P_1..P_n of the paper's Zipf-like law with skew ``z``."""
        w = np.arange(1, n + 1, dtype=float) ** -z
        return w / w.sum()

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, nblocks = self.params, self.params["blocks"]
        self._fit("blocks", nblocks * block_size, capacity, block_size)
        start_cdf = _truncated_cdf(self.zipf_pmf(nblocks, p["skew"]))
        read_cdf = _truncated_cdf(self.zipf_pmf(p["read_max"], p["size_skew"]))
        write_cdf = _truncated_cdf(self.zipf_pmf(p["write_max"], p["size_skew"]))
        rng, t = _rng(seed), 0.0
        while True:
            first = _draw(start_cdf, rng.random(_CHUNK))
            write = rng.random(_CHUNK) < p["write_ratio"]
            u = rng.random(_CHUNK)
            size = np.where(write, p["write_max"] - _draw(write_cdf, u), p["read_max"] - _draw(read_cdf, u))
            size = np.minimum(size, nblocks - first)
            ats, t = _arrivals(rng, p, t)
            for b, n, w, at in zip(first.tolist(), size.tolist(), write.tolist(), ats):
                yield HostRequest("write" if w else "read", b * block_size, n * block_size, at)


# ---------------------------------------------------------------- HLWM periods
@dataclass(frozen=True, slots=True)
class Period:
    """One time-period of seed 003 Table 1 (times in seconds, already scaled)."""

    name: str
    start: float
    end: float
    iat: float
    locality: float
    case: str


_TABLE1 = (("T1", 20e-3, 0.004, "initial"), ("T2", 40e-3, 0.004, "Case 1"), ("T3", 20e-3, 0.004, "initial"),
           ("T4", 10e-3, 0.004, "Case 2"), ("T5", 20e-3, 0.004, "initial"), ("T6", 20e-3, 0.002, "Case 3"),
           ("T7", 20e-3, 0.004, "initial"), ("T8", 20e-3, 0.008, "Case 4"))


class HlwmPeriods(Workload):
    """The synthetic workloads W_synth of seed 003 (sec. 4.1, Table 1): eight periods T1..T8.

    Five processes: process 0 (``stream`` 0) accesses the whole space uniformly, processes 1-4
    each a subset of ``locality`` % of it (Table 1: 0.4 %, 0.2 % in T6, 0.8 % in T8), placed at
    0, 1/5, 2/5, 3/5 of the space so a subset shrinks or grows in place. Arrivals are Poisson with
    the period's mean inter-arrival time (Table 1: 20 ms, 40 ms in T2, 10 ms in T4); each
    arrival belongs to a process drawn uniformly (the paper does not say how requests divide).
    Requests are ``size`` = 16 KB (the cache entry), reads with probability ``read_fraction``
    (W1: 0.6, W2: 0.4). Each period lasts ``period`` (5 min) times ``scale``; ``scale`` also
    shrinks the space. The workload ends after T8.
    """

    name = "hlwm-periods"
    summary = "five processes, eight periods T1..T8 with Table 1 inter-arrival times and locality"
    source = "seed 003 (Nam & Park, adaptive HLWM), sec. 4.1, Table 1, Figs. 4-6"
    PARAMS = {"read_fraction": Param("float", 0.6, "fraction of reads (W1 0.6, W2 0.4)"),
              "size": Param("size", 16384, "request size = cache entry size"),
              "period": Param("time", 300.0, "length of each period T_i"),
              "space": Param("size", None, "storage space (default: whole array)"),
              "scale": Param("float", 1.0, "multiplies period length and space")}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(0 <= p["read_fraction"] <= 1, "hlwm-periods: read_fraction must be within 0..1", "e.g. 0.4")
        _need(p["period"] > 0 and p["scale"] > 0, "hlwm-periods: period and scale must be positive", "e.g. scale=0.1")

    @property
    def closed_loop(self) -> None:
        return None

    def periods(self) -> tuple[Period, ...]:
        """T1..T8 with their (scaled) start and end times: boundaries for per-period metrics."""
        length = self.params["period"] * self.params["scale"]
        return tuple(Period(n, i * length, (i + 1) * length, iat, loc, case)
                     for i, (n, iat, loc, case) in enumerate(_TABLE1))

    def period_of(self, t: float) -> str:
        """Name of the period holding time ``t`` (before 0: T1; after the end: T8)."""
        i = int(t // (self.params["period"] * self.params["scale"])) if t > 0 else 0
        return _TABLE1[min(i, len(_TABLE1) - 1)][0]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, size = self.params, self.params["size"]
        space = int((p["space"] or capacity) * p["scale"]) // size * size
        self._fit("space", space, capacity, block_size)
        self._fit("size", size, space, block_size)
        rng, periods = _rng(seed), self.periods()
        k, t, i = 0, 0.0, _CHUNK
        base = [0] + [j * space // 5 // size * size for j in range(4)]
        nslots = [space // size] + [max(1, int(periods[0].locality * space) // size)] * 4
        while k < len(periods):
            per = periods[k]
            nslots[1:] = [max(1, int(per.locality * space) // size)] * 4
            while True:
                if i == _CHUNK:
                    gap, proc, u = rng.exponential(1.0, _CHUNK).tolist(), rng.integers(0, 5, _CHUNK).tolist(), \
                        rng.random(_CHUNK).tolist()
                    rd, i = (rng.random(_CHUNK) < p["read_fraction"]).tolist(), 0
                t_next = t + gap[i] * per.iat
                if t_next >= per.end:        # memoryless: restart the clock at the boundary
                    t, i, k = per.end, i + 1, k + 1
                    break
                t, pr = t_next, proc[i]
                yield HostRequest("read" if rd[i] else "write", base[pr] + int(u[i] * nslots[pr]) * size,
                                  size, t, pr)
                i += 1


# ---------------------------------------------------------------- sequential streams
class Sequential(Workload):
    """N concurrent sequential streams, IOzone-like (seed 001, sec. 5.2, Fig. 8).

    ``total`` bytes (the paper: an 8 GB aggregate file size; default the whole array) are cut
    into ``streams`` equal regions; stream k reads (or writes) its region from the start in
    ``size`` requests and wraps. Closed loop, one outstanding per stream; streams interleave
    round robin. The paper does not give the IOzone record size; 4 KiB is our default.
    """

    name = "sequential"
    summary = "N concurrent sequential streams, each over its own region (IOzone)"
    source = "seed 001 (Baek & Park, SASEQP/MSP), sec. 5.2, Fig. 8"
    PARAMS = {"streams": Param("int", 4, "concurrent processes (the paper: 1..64)"),
              "size": Param("size", 4096, "request (record) size"),
              "op": Param("read|write", "read", "read or write"),
              "total": Param("size", None, "aggregate bytes of all streams (default: whole array)")}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["streams"] >= 1, "sequential: streams must be at least 1", "e.g. streams=8")

    @property
    def closed_loop(self) -> int:
        return self.params["streams"]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, size, n = self.params, self.params["size"], self.params["streams"]
        total = p["total"] or capacity
        self._fit("total", total, capacity, block_size)
        self._fit("size", size, capacity, block_size)
        region = total // n // size * size
        _need(region > 0, f"sequential: {n} streams of {format_size(size)} do not fit {format_size(total)}",
              "use fewer streams or a smaller size")
        pos, op = 0, p["op"]
        while True:
            for s in range(n):
                yield HostRequest(op, s * region + pos, size, None, s)
            pos = (pos + size) % region


class Semisequential(Workload):
    """A file read at file level, seen at block level (seed 001, sec. 4, Fig. 6).

    Before each run of ``per_meta`` data blocks, one metadata block is read: with the defaults
    the block sequence is (0, 16, 17, 18, 1, 19, 20, 21, 2, 22, 23, 24, 3, 25, 26, 27), a
    12-block file at B16..B27 with metadata in B0..B3. Block numbers are in array blocks. The
    file is read again from the start after its last block; raise ``file_blocks`` (and move
    ``data_start``) for long semisequential reads that drive MSP's counter to SC_thresh.
    """

    name = "semisequential"
    summary = "data blocks interleaved with metadata blocks (a file read seen at block level)"
    source = "seed 001 (Baek & Park, SASEQP/MSP), sec. 4, Fig. 6"
    PARAMS = {"meta_start": Param("int", 0, "first metadata block"),
              "data_start": Param("int", 16, "first data block of the file"),
              "file_blocks": Param("int", 12, "data blocks in the file"),
              "per_meta": Param("int", 3, "data blocks located by one metadata block"),
              "op": Param("read|write", "read", "read or write")}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["file_blocks"] >= 1 and p["per_meta"] >= 1 and min(p["meta_start"], p["data_start"]) >= 0,
              "semisequential: file_blocks and per_meta must be >= 1, block numbers >= 0", "e.g. file_blocks=120")
        meta = range(p["meta_start"], p["meta_start"] + math.ceil(p["file_blocks"] / p["per_meta"]))
        data = range(p["data_start"], p["data_start"] + p["file_blocks"])
        _need(meta.stop <= data.start or data.stop <= meta.start,
              f"semisequential: metadata blocks {meta.start}..{meta.stop - 1} overlap data blocks "
              f"{data.start}..{data.stop - 1}", f"set data_start={meta.stop} or more")
        self.last_block = max(meta.stop, data.stop) - 1

    @property
    def closed_loop(self) -> int:
        return 1

    def block_sequence(self) -> list[int]:
        """Array block numbers of one read of the file, metadata included."""
        p, seq = self.params, []
        for i in range(p["file_blocks"]):
            if i % p["per_meta"] == 0:
                seq.append(p["meta_start"] + i // p["per_meta"])
            seq.append(p["data_start"] + i)
        return seq

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        _need((self.last_block + 1) * block_size <= capacity, f"semisequential: block {self.last_block} is past "
              f"the end of the array", "lower data_start/file_blocks or use a larger array")
        op, one_pass = self.params["op"], [b * block_size for b in self.block_sequence()]
        while True:
            for off in one_pass:
                yield HostRequest(op, off, block_size, None)


# ---------------------------------------------------------------- trace replay
class Replay(Workload):
    """Replay a vraid trace (docs/trace-format.md) open loop, keeping its inter-arrival times.

    Times are relative to the first request and divided by ``speed``. A request past the end of
    the simulated array is rejected with its line number (``beyond=reject``) or wrapped modulo
    the capacity (``beyond=wrap``; one that would then straddle the end is moved back to end at
    the last whole block). Recorded flushes are kept as ``op="flush"`` unless ``flush=drop``.
    """

    name = "replay"
    summary = "replay a recorded vraid trace file, keeping its inter-arrival times"
    source = "vraid trace format (vraid mount --trace FILE)"
    PARAMS = {"file": Param("path", None, "trace file (replay:FILE is short for replay:file=FILE)"),
              "speed": Param("float", 1.0, "time compression: 2 replays twice as fast"),
              "beyond": Param("reject|wrap", "reject", "requests past the array end"),
              "flush": Param("keep|drop", "keep", "recorded flushes")}
    positional = "file"
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        _need(p["file"] is not None, "replay: no trace file given", "write replay:PATH")
        _need(p["speed"] > 0, "replay: speed must be positive", "e.g. speed=2")

    @property
    def closed_loop(self) -> None:
        return None

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        from .trace import replay_requests   # trace imports this module; import here, not at the top
        p = self.params
        return replay_requests(p["file"], capacity, block_size, speed=p["speed"], beyond=p["beyond"],
                               keep_flush=p["flush"] == "keep")


# ---------------------------------------------------------------- registry and spec parsing
WORKLOADS: dict[str, type[Workload]] = {cls.name: cls for cls in (
    RandomWrite, RandomRead, Stride, ExpStride, Zipf, HlwmPeriods, Sequential, Semisequential, Replay)}


def parse_workload(spec: str) -> Workload:
    """Build a workload from ``NAME`` or ``NAME:k=v,k=v`` (``replay:FILE,speed=2``).

    Raises:
        VraidError: for an unknown name or key, or a bad value, listing the valid ones.
    """
    name, _, rest = spec.strip().partition(":")
    cls = WORKLOADS.get(name.strip())
    _need(cls is not None, f"unknown workload {name.strip()!r}", f"choose one of: {', '.join(WORKLOADS)}")
    params: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            _need(cls.positional is not None and not params, f"workload {cls.name}: {item!r} is not key=value",
                  f"write {cls.name}:k=v,k=v with keys {', '.join(cls.PARAMS)}")
            key, value = cls.positional, item
        _need(key.strip() not in params, f"workload {cls.name}: {key.strip()} given twice", "give each key once")
        params[key.strip()] = value.strip()
    return cls(**params)


@dataclass(frozen=True, slots=True)
class WorkloadInfo:
    """What ``--help`` and the docs show for one workload."""

    name: str
    summary: str
    source: str
    params: tuple[tuple[str, str, str], ...]   # (key, default, help)


def describe_workloads() -> list[WorkloadInfo]:
    """Every registered workload with its one-line summary, source and parameter defaults."""
    return [WorkloadInfo(c.name, c.summary, c.source, tuple((k, p.show(), p.help) for k, p in c.PARAMS.items()))
            for c in WORKLOADS.values()]


def workloads_help() -> str:
    """Plain-text listing of :func:`describe_workloads` for ``--help``."""
    lines: list[str] = []
    for w in describe_workloads():
        lines.append(f"{w.name}: {w.summary}  [{w.source}]")
        lines.extend(f"    {k}={d}  {h}" for k, d, h in w.params)
    return "\n".join(lines)


__all__ = ["HostRequest", "Workload", "WORKLOADS", "parse_workload", "parse_duration", "describe_workloads",
           "workloads_help", "WorkloadInfo", "Period", "Param"] + [c.__name__ for c in WORKLOADS.values()]

_unused: Callable[..., Any] | None = None

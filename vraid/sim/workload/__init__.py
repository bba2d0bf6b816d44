"""Deterministic host-request generators: the workloads of the five seed papers.

Every workload is one class in :data:`WORKLOADS`; ``parse_workload("zipf:skew=0.7")`` builds
one from the spec the CLI takes (``vraid sim --workload ...``), and
``workload.requests(capacity, block_size, count, seed)`` yields :class:`HostRequest` objects.
The same seed gives the same sequence; the fixed patterns (stride, sequential, semisequential,
replay) ignore it. Finite workloads (hlwm-periods, replay) may end before ``count``.

Open-loop workloads give each request an arrival time ``at`` in seconds from 0; closed-loop
ones leave ``at`` None and set :attr:`Workload.closed_loop` to the number of requests to keep
outstanding. Multi-stream workloads interleave their streams round robin and tag each request
with ``stream``, so a consumer may instead keep one request outstanding per stream.

Adding a workload: write a :class:`Workload` subclass (name, summary, source, PARAMS,
``_generate``) and add it to :data:`WORKLOADS`. docs/workloads.md describes them all.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import HostRequest, Param, Workload, need, parse_duration
from .hlwm import HlwmPeriods, Period
from .pagecache import PageCache
from .postmark import PostMark
from .readers import Readers
from .replay import Replay
from .seeks import Seeks
from .sequential import Semisequential, Sequential
from .stride import ExpStride, Stride
from .uniform import RandomRead, RandomWrite
from .webserver import WebServer
from .zipf import Zipf, zipf_pmf

WORKLOADS: dict[str, type[Workload]] = {cls.name: cls for cls in (
    RandomWrite, RandomRead, Stride, ExpStride, Zipf, HlwmPeriods, Sequential, Semisequential, Readers, Replay, PageCache, PostMark,
    WebServer, Seeks)}


def parse_workload(spec: str) -> Workload:
    """Build a workload from ``NAME`` or ``NAME:k=v,k=v`` (``replay:FILE,speed=2``).

    Sizes take K/M/G suffixes (4K, 1M), times ns/us/ms/s/min units (20ms, 10us, 2s).

    Raises:
        VraidError: for an unknown name or key, or a bad value, listing the valid ones.
    """
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    cls = WORKLOADS.get(name)
    need(cls is not None, f"unknown workload {name!r}", f"choose one of: {', '.join(WORKLOADS)}")
    params: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq:
            need(cls.positional is not None and not params, f"workload {name}: {item!r} is not key=value",
                 f"write {name}:key=value,... with keys {', '.join(cls.PARAMS)}")
            key, value = cls.positional, item
        need(key not in params, f"workload {name}: {key} is given twice", "give each key once")
        params[key] = value
    return cls(**params)


PageCache.parse_inner = staticmethod(parse_workload)  # the wrapper parses what it wraps


@dataclass(frozen=True, slots=True)
class WorkloadInfo:
    """What ``--help`` and the docs show of one workload; params are (key, default, help)."""

    name: str
    summary: str
    source: str
    params: tuple[tuple[str, str, str], ...]


def describe_workloads() -> list[WorkloadInfo]:
    """Every registered workload: its one-line summary, source and parameters with defaults."""
    return [WorkloadInfo(c.name, c.summary, c.source, tuple((k, p.show(), p.help) for k, p in c.PARAMS.items()))
            for c in WORKLOADS.values()]


def workloads_help() -> str:
    """:func:`describe_workloads` as plain text for ``--help``."""
    lines: list[str] = []
    for w in describe_workloads():
        lines.append(f"{w.name}: {w.summary}  [{w.source}]")
        lines.extend(f"    {k}={d}  {h}" for k, d, h in w.params)
    return "\n".join(lines)


__all__ = ["WORKLOADS", "HostRequest", "Param", "Period", "Workload", "WorkloadInfo", "describe_workloads",
           "parse_duration", "parse_workload", "workloads_help", "zipf_pmf",
           "ExpStride", "HlwmPeriods", "PageCache", "RandomRead", "Readers", "RandomWrite", "Replay", "Semisequential", "Sequential",
           "Stride", "WebServer", "Zipf"]

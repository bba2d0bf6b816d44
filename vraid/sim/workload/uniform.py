"""Uniform random reads and writes over a workspace (seed 000, sec. IV-B, Fig. 11)."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from vraid.core.units import format_size
from .base import CHUNK, OPEN_OR_CLOSED, HostRequest, Param, Workload, arrivals, make_rng, need


class RandomWrite(Workload):
    """Uniform random ``size`` writes over ``workspace`` (seed 000, sec. IV-B, Fig. 11).

    Tiobench threads each write 4 KiB pages uniformly within their own 1 GB file, so the
    workspace grows with the number of threads: ``threads=T`` splits the workspace into T equal
    slices, thread k (``stream`` k) writes only within its slice, and the threads take turns.
    Offsets are aligned to ``size``. Closed loop (one outstanding per thread) unless ``iat`` is
    given. Fig. 11 runs a fixed 160k writes: ``--count 160000``.
    """

    name, op = "random-write", "write"
    summary = "uniform random writes over a workspace (Tiobench)"
    source = "paper 000 (Baek & Park, MSC-CT), sec. IV-B, Fig. 11"
    PARAMS = {"workspace": Param("size", None, "bytes the offsets cover (default: whole array)"),
              "size": Param("size", 4096, "request size; offsets are aligned to it"),
              "threads": Param("int", 1, "Tiobench threads, each on its own slice of the workspace"),
              **OPEN_OR_CLOSED}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["threads"] >= 1, f"{self.name}: threads must be at least 1", "e.g. threads=4")

    @property
    def closed_loop(self) -> int | None:
        p = self.params
        return None if p["iat"] is not None else p["outstanding"] or p["threads"]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, size, threads = self.params, self.params["size"], self.params["threads"]
        workspace = p["workspace"] or capacity
        self._fit("workspace", workspace, capacity, block_size)
        self._fit("size", size, capacity, block_size)
        slots = workspace // threads // size          # request-sized slots per thread
        need(slots > 0, f"{self.name}: a {format_size(workspace)} workspace has no room for {threads} "
             f"threads of {format_size(size)} requests", "use fewer threads or a larger workspace")
        rng, t, n, op = make_rng(seed), 0.0, 0, self.op
        while True:
            slot = rng.integers(0, slots, CHUNK)
            stream = np.arange(n, n + CHUNK) % threads
            offsets = ((stream * slots + slot) * size).tolist()
            ats, t = arrivals(rng, p, t)
            for off, at, s in zip(offsets, ats, stream.tolist()):
                yield HostRequest(op, off, size, at, s)
            n += CHUNK


class RandomRead(RandomWrite):
    """Uniform random ``size`` reads over ``workspace``: the read twin of ``random-write``."""

    name, op = "random-read", "read"
    summary = "uniform random reads over a workspace"

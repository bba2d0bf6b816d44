"""Replay of a block trace (docs/trace-format.md) as an open-loop workload: vraid's own format,
or MSR Cambridge, UMass/SPC and blkparse traces (:mod:`vraid.sim.block_traces`)."""

from __future__ import annotations

from typing import Any, Iterator

from ..block_traces import foreign_requests, sniff
from ..trace import replay_requests
from .base import HostRequest, Param, Workload, need


class Replay(Workload):
    """Replay a block trace open loop, keeping its inter-arrival times.

    ``format``: ``vraid`` (``vraid mount --trace``), ``msr``, ``spc`` or ``blkparse``; sniffed
    from the first record when not given. A foreign trace's devices (MSR disks, SPC ASUs,
    blkparse MAJ,MIN) each get their own equal, disjoint range of the array (paper 003 sec. 4.1).

    Arrival times are relative to the first record and divided by ``speed``. A request past the
    end of the simulated array is rejected with its line number (``beyond=reject``, the default)
    or wrapped modulo the capacity (``beyond=wrap``; one that would then straddle the end is
    moved back so it ends at the array's last whole block). Recorded flushes become
    ``op="flush"`` requests (offset 0, length 0) unless ``flush=drop``.
    """

    name = "replay"
    summary = "replay a block trace (vraid, MSR Cambridge, UMass/SPC, blkparse), keeping its inter-arrival times"
    source = "vraid trace format v1 (vraid mount --trace FILE), SNIA MSR, SPC, blkparse; docs/trace-format.md"
    PARAMS = {"file": Param("path", None, "trace file (replay:FILE is short for replay:file=FILE)"),
              "speed": Param("float", 1.0, "time compression: 2 replays twice as fast"),
              "beyond": Param("reject|wrap", "reject", "what to do with requests past the array end"),
              "flush": Param("keep|drop", "keep", "recorded flushes"),
              "format": Param("auto|vraid|msr|spc|blkparse", "auto", "the trace's format (auto: from its first record)")}
    positional = "file"
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["file"] is not None, "replay: no trace file given", "write replay:PATH")
        need(p["speed"] > 0, "replay: speed must be positive", "e.g. speed=2")

    @property
    def closed_loop(self) -> None:
        return None

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p = self.params
        fmt = sniff(p["file"]) if p["format"] == "auto" else p["format"]
        if fmt != "vraid":
            return foreign_requests(p["file"], fmt, capacity, block_size, speed=p["speed"], beyond=p["beyond"],
                                    keep_flush=p["flush"] == "keep")
        return replay_requests(p["file"], capacity, block_size, speed=p["speed"], beyond=p["beyond"],
                               keep_flush=p["flush"] == "keep")

"""Replay of a recorded vraid trace (docs/trace-format.md) as an open-loop workload."""

from __future__ import annotations

from typing import Any, Iterator

from ..trace import replay_requests
from .base import HostRequest, Param, Workload, need


class Replay(Workload):
    """Replay a vraid trace open loop, keeping its inter-arrival times.

    Arrival times are relative to the first record and divided by ``speed``. A request past the
    end of the simulated array is rejected with its line number (``beyond=reject``, the default)
    or wrapped modulo the capacity (``beyond=wrap``; one that would then straddle the end is
    moved back so it ends at the array's last whole block). Recorded flushes become
    ``op="flush"`` requests (offset 0, length 0) unless ``flush=drop``.
    """

    name = "replay"
    summary = "replay a recorded vraid trace, keeping its inter-arrival times"
    source = "vraid trace format v1 (vraid mount --trace FILE), docs/trace-format.md"
    PARAMS = {"file": Param("path", None, "trace file (replay:FILE is short for replay:file=FILE)"),
              "speed": Param("float", 1.0, "time compression: 2 replays twice as fast"),
              "beyond": Param("reject|wrap", "reject", "what to do with requests past the array end"),
              "flush": Param("keep|drop", "keep", "recorded flushes")}
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
        return replay_requests(p["file"], capacity, block_size, speed=p["speed"], beyond=p["beyond"],
                               keep_flush=p["flush"] == "keep")

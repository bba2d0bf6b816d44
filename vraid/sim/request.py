"""One request from the host: what a workload generates, a trace records and replays, and
the simulator submits.

It sits apart from :mod:`vraid.sim.workload` because the trace format
(:mod:`vraid.sim.trace`) reads and writes it too, and the replay workload reads traces: both
depend on this module and not on each other's package (no import cycle, tests/test_layers.py).
``vraid.sim.workload`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class HostRequest:
    """One request from the host. ``at``: arrival time in seconds (open loop) or None (closed loop).

    ``op`` is "read" or "write"; "flush" appears only when replaying a trace that recorded one
    (then offset and length are 0). ``stream`` names the process/thread/stream that issued it.
    """

    op: Literal["read", "write", "flush"]
    offset: int
    length: int
    at: float | None
    stream: int = 0

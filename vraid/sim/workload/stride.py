"""Stride patterns of seed 000: the stride benchmark (Fig. 8) and exponential strides (Fig. 1)."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .base import CHUNK, HostRequest, Param, Workload, cdf_of, draw, make_rng, need


def _pass_params(default_span: int) -> dict[str, Param]:
    return {"op": Param("write|read", "write", "write or read"),
            "start": Param("size", 0, "byte offset of the preset first block"),
            "span": Param("size", default_span, "bytes from the first block to the end of the destination block"),
            "outstanding": Param("int", 1, "requests in flight (closed loop)")}


class _Pass(Workload):
    """Passes of one-block requests from the preset first block to the preset destination."""

    def _ends(self, capacity: int, block_size: int) -> tuple[int, int]:
        p = self.params
        need(p["start"] % block_size == 0, f"{self.name}: start {p['start']} is not block aligned",
             "round start to a whole block")
        self._fit("span", p["span"], capacity - p["start"], block_size)
        first = p["start"] // block_size
        return first, first + p["span"] // block_size - 1


class Stride(_Pass):
    """The stride benchmark (seed 000, sec. III-D, Fig. 8): one block, then skip S-1 blocks.

    A pass touches blocks first, first+S, first+2S, ... and always ends at the preset
    destination block (first + span/block - 1): when span/block - 1 is not a multiple of S the
    last stride is shorter. So every S has the same first and last block, as the caption of
    Fig. 8 says (its drawing does not: see docs/workloads.md). Passes repeat until ``count``.
    """

    name = "stride"
    summary = "stride benchmark: every S-th block from a fixed start to a fixed destination"
    source = "paper 000 (Baek & Park, MSC-CT), sec. III-D, Fig. 8 (used for Fig. 9)"
    PARAMS = {"stride": Param("int", 2, "stride distance S in blocks (1 = contiguous)"), **_pass_params(1 << 20)}
    uses_seed = False

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["stride"] >= 1, f"stride: stride {p['stride']} must be at least 1", "e.g. stride=4")

    def pass_blocks(self, first: int, last: int) -> list[int]:
        """Block numbers of one pass from ``first`` to ``last``."""
        blocks = list(range(first, last + 1, self.params["stride"]))
        return blocks if blocks[-1] == last else blocks + [last]

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        one_pass = [b * block_size for b in self.pass_blocks(*self._ends(capacity, block_size))]
        op = self.params["op"]
        while True:
            for off in one_pass:
                yield HostRequest(op, off, block_size, None)


class ExpStride(_Pass):
    """Ascending I/O with exponential stride distance (seed 000, sec. I-C, Fig. 1; sec. IV-F, Fig. 15).

    The stride distance S (blocks from one I/O to the next, 1 = contiguous) follows a
    discretised exponential law, i.e. geometric on 1..``max`` (Fig. 1: max 32 blocks of 4 KiB;
    Fig. 15: mean 10, max 64). ``mean`` is the average stride actually produced: the geometric
    parameter is solved so that the *truncated* law has that mean (so 1 <= mean < (max+1)/2).
    Each pass starts at the preset block and ends at the preset destination, the stride into
    the destination being cut short; then the next pass starts over.
    """

    name = "exp-stride"
    summary = "ascending one-block I/O with exponentially distributed stride distance"
    source = "paper 000 (Baek & Park, MSC-CT), sec. I-C, Fig. 1; sec. IV-F, Fig. 15"
    PARAMS = {"mean": Param("float", 4.0, "average stride distance in blocks"),
              "max": Param("int", 32, "largest stride distance in blocks"), **_pass_params(4 << 20)}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(p["max"] >= 1 and p["mean"] >= 1 and (p["mean"] == 1 or p["mean"] < (p["max"] + 1) / 2),
             f"exp-stride: mean {p['mean']} cannot be reached with max {p['max']}",
             "an exponential stride needs 1 <= mean < (max+1)/2: raise max or lower mean")
        self.stride_pmf = self.pmf(p["mean"], p["max"])

    @staticmethod
    def pmf(mean: float, smax: int) -> np.ndarray:
        """P(S = 1), ..., P(S = smax) of the geometric law truncated at smax whose mean is ``mean``."""
        k = np.arange(1, smax + 1, dtype=float)
        if mean == 1 or smax == 1:
            return (k == 1).astype(float)

        def law(q: float) -> np.ndarray:
            w = q ** (k - 1)
            return w / w.sum()

        lo, hi = 0.0, 1.0      # the truncated mean grows from 1 to (smax+1)/2 as q goes from 0 to 1
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if float(law(mid) @ k) < mean else (lo, mid)
        return law((lo + hi) / 2)

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        first, last = self._ends(capacity, block_size)
        cdf, rng, op, pos = cdf_of(self.stride_pmf), make_rng(seed), self.params["op"], first
        while True:
            for s in (draw(cdf, rng.random(CHUNK)) + 1).tolist():
                yield HostRequest(op, pos * block_size, block_size, None)
                pos = first if pos == last else min(pos + s, last)

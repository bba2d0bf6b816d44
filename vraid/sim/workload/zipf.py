"""The Zipf-skewed workload of the multibuffer paper (seed 004, sec. 3)."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .base import CHUNK, OPEN_OR_CLOSED, HostRequest, Param, Workload, arrivals, cdf_of, draw, make_rng, need


def zipf_pmf(n: int, z: float) -> np.ndarray:
    """P_1..P_n of seed 004's Zipf-like law: P_i = 1 / (i^z * sum_j 1/j^z); z = 0 is uniform."""
    w = np.arange(1, n + 1, dtype=float) ** -z
    return w / w.sum()


class Zipf(Workload):
    """Zipf-skewed reads and writes over a small database (seed 004, sec. 3 and 4).

    Three draws per request, as in the paper's request generator: the first block, Zipf-like
    with skew ``skew`` over ``blocks`` blocks (the paper's block 1, the hottest, is block 0
    here); the type, a write with probability ``write_ratio`` (the paper's own example makes a
    W/R ratio of 0.3 mean three writes in every ten I/Os); and the size, Zipf-like with
    ``size_skew`` over 1..``read_max`` blocks for reads and 1..``write_max`` for writes. The
    paper says a larger access-size skew means *larger* requests, so the most likely rank is the
    largest size. A request that would run past the last block is cut at it.
    """

    name = "zipf"
    summary = "Zipf-skewed reads (1..100 blocks) and writes (1..10 blocks) over 10,000 blocks"
    source = "paper 004 (Hua, Vu & Hu, Multibuffer), sec. 3 and 4, Figs. 3-8"
    PARAMS = {"skew": Param("float", 0.3, "access skew z of the first block (0 uniform, 1 severe)"),
              "write_ratio": Param("float", 0.3, "W/R ratio: the fraction of requests that are writes"),
              "size_skew": Param("float", 0.2, "access-size skew (sec. 4.2 fixes it at 0.2)"),
              "blocks": Param("int", 10000, "database size in blocks"),
              "read_max": Param("int", 100, "largest read in blocks"),
              "write_max": Param("int", 10, "largest write in blocks"), **OPEN_OR_CLOSED}

    def _check(self, p: dict[str, Any]) -> None:
        super()._check(p)
        need(0 <= p["write_ratio"] <= 1, "zipf: write_ratio must be within 0..1", "e.g. write_ratio=0.3")
        need(p["skew"] >= 0 and p["size_skew"] >= 0, "zipf: skews must not be negative", "e.g. skew=0.7")
        need(min(p["blocks"], p["read_max"], p["write_max"]) >= 1, "zipf: blocks, read_max and write_max "
             "must be at least 1", "e.g. blocks=10000")

    def _generate(self, capacity: int, block_size: int, seed: int) -> Iterator[HostRequest]:
        p, nblocks = self.params, self.params["blocks"]
        self._fit("blocks", nblocks * block_size, capacity, block_size)
        first_cdf = cdf_of(zipf_pmf(nblocks, p["skew"]))
        read_cdf = cdf_of(zipf_pmf(p["read_max"], p["size_skew"]))
        write_cdf = cdf_of(zipf_pmf(p["write_max"], p["size_skew"]))
        rng, t = make_rng(seed), 0.0
        while True:
            first = draw(first_cdf, rng.random(CHUNK))
            write = rng.random(CHUNK) < p["write_ratio"]
            u = rng.random(CHUNK)
            size = np.where(write, p["write_max"] - draw(write_cdf, u), p["read_max"] - draw(read_cdf, u))
            size = np.minimum(size, nblocks - first)
            ats, t = arrivals(rng, p, t)
            for b, n, w, at in zip(first.tolist(), size.tolist(), write.tolist(), ats):
                yield HostRequest("write" if w else "read", b * block_size, n * block_size, at)

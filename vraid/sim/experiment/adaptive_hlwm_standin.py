"""A synthetic stand-in for each traced workload of seed 003 (sec. 4.1, Table 2): a **stand-in**,
not the trace.

The paper replays two hours of the HP cello traces (W_traced^1, 05/04/92, 75.19 % reads; W_traced^2,
06/15/92, 17.86 % reads) with their inter-arrival times halved. The traces are not public, so
the experiment builds a workload from what Table 2 gives of each: the read ratio, the average
request size and the average inter-arrival time (the replay's: IOs x that time = 3600 s, so a
replay lasts one hour). Everything else is vraid's choice and says so:

* arrivals are Poisson (the trace's burstiness and its changes over the hour are not in
  Table 2, so Fig. 7's marks over time cannot be compared);
* requests are whole 4 KiB blocks: one or two of them, in the mix whose mean is Table 2's size
  (6.5 KB: 62.5 % two blocks), inside one 16 KiB entry, at a uniform block of it;
* the addresses follow W_synth's five processes at Table 1's T1 locality (one over the whole
  space, four over 0.4 % of it each): Table 2 gives no locality, the paper only says the
  traces' writes show "a high spatial locality". The locality ablation
  (:data:`ABLATION_LOCALITIES`) runs W_traced^1's stand-in with its processes kept to less.

:func:`requests` yields ``(at, write, offset, size)`` for the open loop of
:func:`.adaptive_hlwm_sim.simulate` (the paper replays traces "in an asynchronous manner based
on its arrival time"); :func:`periods` cuts the hour into twelve 5-minute pieces for the
per-period aggregates and the timeline.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from vraid.sim.workload.hlwm import Period

from .adaptive_hlwm_paper import BLOCK, ENTRY, TABLE2

#: the stand-in's locality: W_synth's T1 (Table 1), vraid's choice (Table 2 gives none)
LOCALITY = 0.004
#: the locality ablation of W_traced^1's stand-in: Table 1's most local period (T6, 0.2 %) and a
#: tenth of T1's (0.04 %, ours): how far the overwrite ratio and the traffic move with locality
ABLATION_LOCALITIES = (0.002, 0.0004)
PROCESSES = 5
#: the replay's hour, cut into pieces of the synthetic workloads' 5-minute period
PIECES = 12


def size_mix(mean_bytes: float) -> float:
    """The share of two-block requests whose mix with one-block requests has ``mean_bytes``
    (clipped to 0..1): 6.5 KB = 1.625 blocks gives 0.625."""
    return float(min(1.0, max(0.0, mean_bytes / BLOCK - 1.0)))


def describe(name: str, locality: float = LOCALITY) -> dict[str, float | str]:
    """What the stand-in ``name`` takes from Table 2 and what vraid chose."""
    t2 = TABLE2[name]
    return {"read_fraction": t2["read_fraction"], "mean_size_bytes": t2["size"], "iat_seconds": t2["iat"],
            "two_block_share": size_mix(t2["size"]), "locality": locality, "arrivals": "poisson",
            "label": "stand-in (synthetic, from Table 2; the trace is not public)"}


def periods(name: str, piece: float, locality: float = LOCALITY) -> tuple[Period, ...]:
    """The stand-in's hour as :data:`PIECES` periods of ``piece`` (virtual) seconds."""
    iat = TABLE2[name]["iat"]
    return tuple(Period(f"{5 * k}-{5 * (k + 1)} min", k * piece, (k + 1) * piece, iat, locality, "stand-in")
                 for k in range(PIECES))


def requests(name: str, space: int, duration: float, seed: int,
             locality: float = LOCALITY) -> Iterator[tuple[float, bool, int, int]]:
    """The stand-in ``name`` ("traced1", "traced2") over ``space`` bytes for ``duration``
    (virtual) seconds: ``(at, write, offset, size)`` in arrival order, deterministic in ``seed``;
    ``locality``: the share of the space each of the four local processes keeps to (the
    locality ablation varies it)."""
    t2 = TABLE2[name]
    entries = space // ENTRY
    subset = max(1, int(locality * entries))
    base = [0] + [j * entries // PROCESSES for j in range(PROCESSES - 1)]
    slots = [entries] + [subset] * (PROCESSES - 1)
    per_entry = ENTRY // BLOCK
    two = size_mix(t2["size"])
    rng = np.random.Generator(np.random.PCG64([seed, 3]))
    t = 0.0
    while True:
        n = 4096
        gaps = rng.exponential(t2["iat"], n)
        proc = rng.integers(0, PROCESSES, n)
        where = rng.random(n)
        read = rng.random(n) < t2["read_fraction"]
        blocks = np.where(rng.random(n) < two, 2, 1)
        inside = rng.random(n)
        for k in range(n):
            t += float(gaps[k])
            if t >= duration:
                return
            p = int(proc[k])
            entry = base[p] + int(where[k] * slots[p])
            b = int(blocks[k])
            first = int(inside[k] * (per_entry - b + 1))
            yield t, not bool(read[k]), entry * ENTRY + first * BLOCK, b * BLOCK


__all__ = ["ABLATION_LOCALITIES", "LOCALITY", "PIECES", "describe", "periods", "requests", "size_mix"]

"""The 1.2 rule of seed 000 (Baek & Park, MSC-CT, sec. III-D): S^max and the excluded regions.

The stride benchmark (Fig. 8) measures, for each stride distance S, the turnaround time of
one-block I/Os every S blocks from a fixed first block to a fixed last block, divided by the
turnaround time of the contiguous I/O over the same blocks (S = 1, normalized value 1). The
paper then picks

    "S_w^max ... as the smallest S such that the normalized turnaround time is less than 1.2
    for all S" (and S_r^max the same way for reads),

Section IV-F restates the rule in a second wording: the method "selects S_r^max and S_w^max
as the minimum stride distance, S, with a normalized turnaround time of less than 1.2". Taken
alone, that would be the first S below 1.2 (S = 1, the contiguous I/O, always is); with III-D's
"for all S" it is the reading below, and IV-F checks it against Fig. 15 (the stride pattern's
S^max of Fig. 9(a) matches the fastest case of an exponential stride distribution).

The paper lets the contiguity transform fill a gap of stride S only when ``S < S^max`` and S lies in
no excluded region ``[S_s^except, S_e^except]`` (eq. 8 and 9; Fig. 9(d) shows one region).

We read "for all S" as "for every S from there on": S^max is the smallest S such that every
measured S' >= S has a normalized time below the threshold, i.e. one step past the largest
stride that is still slow. An excluded region is then a maximal run of measured strides
``1 < S < S^max`` whose normalized time is already below the threshold: filling such a gap
cannot gain anything, which is the paper's reason for excluding it. Consequences:

* no slow stride at all gives S^max = 1: no transform (Figs. 9(b), 9(c) show S_r^max = 1);
* if even the largest measured stride is slow, S^max is that stride + 1, a lower bound (the
  benchmark should have gone further);
* with sparse strides (1, 2, 4, 8, ...) S^max is the first measured stride after the last slow
  one and region bounds are measured strides; the CT issue should measure every S.
"""

from __future__ import annotations

import math
from typing import Sequence

THRESHOLD = 1.2


def derive_limits(S: Sequence[int], normalized: Sequence[float],
                  threshold: float = THRESHOLD) -> tuple[int, list[list[int]]]:
    """S^max and the excluded regions from one stride-benchmark curve.

    Args:
        S: measured stride distances, strictly increasing, each >= 1.
        normalized: the normalized turnaround time at each stride (same length).
        threshold: a stride is *slow* when its normalized time is at least this (1.2).

    Returns:
        ``(s_max, except_regions)``: ``except_regions`` is a list of ``[start, end]``
        (inclusive, measured strides) in increasing order, all below ``s_max``.

    Raises:
        ValueError: when the inputs are not a curve (lengths differ, S not increasing or
            below 1, a value not finite, threshold not positive).
    """
    if len(S) != len(normalized):
        raise ValueError(f"{len(S)} strides but {len(normalized)} normalized times")
    if not threshold > 0:
        raise ValueError(f"threshold must be positive, not {threshold!r}")
    strides = [int(s) for s in S]
    values = [float(v) for v in normalized]
    for i, s in enumerate(strides):
        if s < 1:
            raise ValueError(f"stride {s} is below 1")
        if i and s <= strides[i - 1]:
            raise ValueError(f"strides must increase: {strides[i - 1]} then {s}")
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"normalized time {v!r} is not finite")
    slow = [s > 1 and v >= threshold for s, v in zip(strides, values)]
    if not any(slow):
        return 1, []
    last = max(i for i, is_slow in enumerate(slow) if is_slow)
    s_max = strides[last + 1] if last + 1 < len(strides) else strides[-1] + 1
    regions: list[list[int]] = []
    run: list[int] | None = None
    for i in range(last + 1):
        if strides[i] > 1 and not slow[i]:
            if run is None:
                run = [strides[i], strides[i]]
                regions.append(run)
            else:
                run[1] = strides[i]
        else:
            run = None
    return s_max, regions


def ct_permitted(stride: int, s_max: int, except_regions: Sequence[Sequence[int]]) -> bool:
    """Eq. (8)/(9): may the contiguity transform fill a gap of ``stride``?

    True when ``stride < s_max`` and ``stride`` lies in no ``[start, end]`` region. A stride
    below 2 leaves no gap to fill, so it is never permitted.
    """
    if stride < 2 or stride >= s_max:
        return False
    return not any(a <= stride <= b for a, b in except_regions)

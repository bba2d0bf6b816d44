"""Workload generators: determinism, the distributions they claim, and the papers' patterns."""

from __future__ import annotations

import math
from collections import Counter
from itertools import islice

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.errors import VraidError
from vraid.sim.workload import (
    WORKLOADS,
    ExpStride,
    HlwmPeriods,
    HostRequest,
    describe_workloads,
    parse_duration,
    parse_workload,
    workloads_help,
    zipf_pmf,
)

CAP = 1 << 30          # a 1 GiB array
BLOCK = 4096
GENERATED = [n for n in WORKLOADS if n not in ("replay", "page-cache")]  # page-cache wraps one: test_pagecache.py


def take(spec: str, count: int, seed: int = 1, capacity: int = CAP, block: int = BLOCK) -> list[HostRequest]:
    return list(parse_workload(spec).requests(capacity, block, count, seed))


# ---------------------------------------------------------------- registry and parsing
def test_registry_has_every_workload_of_the_brief():
    assert set(WORKLOADS) == {"random-write", "random-read", "stride", "exp-stride", "zipf", "hlwm-periods",
                              "sequential", "semisequential", "readers", "replay", "page-cache", "postmark", "webserver", "seeks"}
    for name, cls in WORKLOADS.items():
        assert cls.name == name


def test_describe_lists_every_parameter_with_default_and_help():
    infos = {w.name: w for w in describe_workloads()}
    assert set(infos) == set(WORKLOADS)
    for w in infos.values():
        assert w.summary and "\n" not in w.summary
        assert w.source
        assert [k for k, _, _ in w.params] == list(WORKLOADS[w.name].PARAMS)
        assert all(d and h for _, d, h in w.params)
    assert dict((k, d) for k, d, _ in infos["zipf"].params)["blocks"] == "10000"
    assert dict((k, d) for k, d, _ in infos["hlwm-periods"].params)["size"] == "16K"
    text = workloads_help()
    assert all(name in text for name in WORKLOADS)


def test_parse_values_sizes_times_floats():
    w = parse_workload("random-write: workspace=64M , size=8K,iat=10us,threads=2")
    assert w.params["workspace"] == 64 << 20 and w.params["size"] == 8192 and w.params["threads"] == 2
    assert w.params["iat"] == pytest.approx(10e-6)
    assert w.closed_loop is None
    assert parse_workload("zipf:skew=0.7,write_ratio=.9").params["write_ratio"] == 0.9
    assert parse_workload("hlwm-periods:period=5min").params["period"] == 300


@pytest.mark.parametrize("text,seconds", [("1ms", 1e-3), ("10us", 1e-5), ("2s", 2.0), ("2", 2.0), ("0.5min", 30.0),
                                          ("250ns", 2.5e-7), (" 3 MS ", 3e-3), ("1e-3", 1e-3)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


def test_spec_round_trips():
    for name in GENERATED:
        w = parse_workload(name)
        assert parse_workload(w.spec).params == w.params
    w = parse_workload("random-read:workspace=3M,iat=2ms,arrival=fixed")
    assert parse_workload(w.spec).params == w.params


@pytest.mark.parametrize("spec,words", [
    ("nosuch", ["unknown workload 'nosuch'", "random-write", "zipf", "replay"]),
    ("zipf:skw=0.3", ["no parameter skw", "skew", "write_ratio"]),
    ("random-write:size=4Q", ["size", "not a size"]),
    ("random-write:iat=fast", ["iat", "not a duration"]),
    ("zipf:skew=high", ["skew", "not a number"]),
    ("zipf:blocks=1.5", ["blocks", "not a whole number"]),
    ("stride:op=erase", ["erase", "write", "read"]),
    ("zipf:skew=1,skew=2", ["given twice"]),
    ("zipf:0.3", ["not key=value", "skew"]),
    ("replay", ["no trace file"]),
    ("zipf:write_ratio=1.5", ["write_ratio"]),
    ("exp-stride:mean=20,max=32", ["mean 20", "max"]),
    ("semisequential:file_blocks=100", ["overlap", "data_start"]),
])
def test_bad_specs_name_the_problem(spec, words):
    with pytest.raises(VraidError) as err:
        parse_workload(spec)
    text = str(err.value)
    for word in words:
        assert word in text
    assert err.value.hint


def test_parameters_that_do_not_fit_the_array_fail_at_the_call():
    with pytest.raises(VraidError, match="workspace"):
        parse_workload("random-write:workspace=2G").requests(CAP, BLOCK, 10, 0)
    with pytest.raises(VraidError, match="block"):
        parse_workload("random-write:size=6K").requests(CAP, BLOCK, 10, 0)
    with pytest.raises(VraidError, match="blocks"):
        parse_workload("zipf").requests(16 << 20, BLOCK, 10, 0)      # 10,000 blocks > 4096 blocks
    with pytest.raises(VraidError, match="past the end"):
        parse_workload("semisequential:data_start=100000").requests(16 << 20, BLOCK, 10, 0)
    with pytest.raises(VraidError, match="seed"):
        parse_workload("zipf").requests(CAP, BLOCK, 10, -1)


# ---------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", GENERATED)
def test_same_seed_same_sequence_and_prefixes(name):
    a = take(name, 5000, seed=7)
    assert len(a) == 5000
    assert a == take(name, 5000, seed=7)
    assert take(name, 123, seed=7) == a[:123]       # a short run is a prefix of a longer one
    if WORKLOADS[name].uses_seed:
        assert take(name, 5000, seed=8) != a
    else:
        assert take(name, 5000, seed=8) == a         # a fixed pattern


@pytest.mark.parametrize("name", GENERATED)
def test_requests_inside_capacity_and_block_aligned(name):
    w = parse_workload(name)
    cap = 64 << 20 if name != "zipf" else 10000 * BLOCK
    if name == "hlwm-periods":
        w = parse_workload("hlwm-periods:scale=0.01")
    if name == "seeks":  # the paper's 100 MB file does not fit 64 MiB
        w = parse_workload("seeks:file=32M")
    reqs = list(w.requests(cap, BLOCK, 20000, 3))
    assert reqs
    for r in reqs:
        assert r.op in ("read", "write")
        assert 0 <= r.offset and r.length > 0 and r.offset + r.length <= cap
        assert r.offset % BLOCK == 0 and r.length % BLOCK == 0
        assert (r.at is None) == (w.closed_loop is not None)
    if w.closed_loop is None:
        times = [r.at for r in reqs]
        assert times == sorted(times) and times[0] >= 0


def test_count_zero_and_finite_workloads():
    assert take("zipf", 0) == []
    w = parse_workload("hlwm-periods:scale=0.001")           # 0.3 s periods: a finite run
    reqs = list(w.requests(CAP, BLOCK, 10**9, 0))
    assert 0 < len(reqs) < 10**9
    assert reqs[-1].at < w.periods()[-1].end


# ---------------------------------------------------------------- uniform random
def chi_square(counts: np.ndarray) -> float:
    expected = counts.sum() / len(counts)
    return float(((counts - expected) ** 2 / expected).sum())


def test_random_offsets_are_uniform_over_the_workspace():
    reqs = take("random-write:workspace=256M", 128_000, seed=11)
    assert {r.op for r in reqs} == {"write"} and {r.length for r in reqs} == {4096}
    offsets = np.array([r.offset for r in reqs])
    assert offsets.max() < 256 << 20
    counts = np.bincount(offsets // (4 << 20), minlength=64)
    assert len(counts) == 64
    assert chi_square(counts) < 110          # chi-square, 63 dof: p = 0.001 at about 103
    slots = 65536                                             # distinct slots hit, as for uniform draws
    assert len(set(offsets.tolist())) == pytest.approx(slots * (1 - math.exp(-len(offsets) / slots)), rel=0.01)


def test_random_read_threads_stay_in_their_slices():
    reqs = take("random-read:workspace=64M,threads=4,size=16K", 8000, seed=2)
    assert parse_workload("random-read:threads=4").closed_loop == 4
    assert [r.stream for r in reqs[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]
    for r in reqs:
        assert r.op == "read" and r.offset % (16 << 10) == 0
        assert r.stream * (16 << 20) <= r.offset < (r.stream + 1) * (16 << 20)


def test_open_loop_arrivals():
    reqs = take("random-write:iat=2ms", 20000, seed=5)
    gaps = np.diff([0.0] + [r.at for r in reqs])
    assert gaps.mean() == pytest.approx(2e-3, rel=0.03)
    assert gaps.std() == pytest.approx(2e-3, rel=0.05)       # exponential: std = mean
    fixed = take("random-write:iat=1ms,arrival=fixed", 1000)
    assert [r.at for r in fixed[:3]] == pytest.approx([1e-3, 2e-3, 3e-3])
    assert fixed[-1].at == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(workspace_blocks=st.integers(1, 5000), size_blocks=st.integers(1, 16), threads=st.integers(1, 5),
       seed=st.integers(0, 2**32))
def test_random_always_inside_workspace(workspace_blocks, size_blocks, threads, seed):
    workspace, size = workspace_blocks * 512, size_blocks * 512
    w = parse_workload(f"random-write:workspace={workspace},size={size},threads={threads}")
    if workspace // threads < size:
        with pytest.raises(VraidError):
            w.requests(1 << 24, 512, 10, seed)
        return
    for r in w.requests(1 << 24, 512, 300, seed):
        assert r.offset % size == 0 and r.offset + size <= workspace
        assert r.stream < threads


# ---------------------------------------------------------------- stride (seed 000, Fig. 8)
def test_stride_reproduces_fig8_rows():
    """Fig. 8 draws S = 1..4 over B0..B15.

    The paper does not add up here: its caption (and sec. III-D) says "All workloads employ the
    same start and end positions", but the rows it draws end at B15, B14, B15 and B12 for
    S = 1, 2, 3, 4. We follow the caption: every pass ends at the preset destination (B15 here),
    the last stride being shorter when 15 is not a multiple of S.
    """
    for s, row in {1: range(16), 2: list(range(0, 16, 2)) + [15], 3: range(0, 16, 3),
                   4: [0, 4, 8, 12, 15]}.items():
        got = [r.offset // BLOCK for r in take(f"stride:stride={s},span=64K", len(row))]
        assert got == list(row)


@settings(max_examples=60, deadline=None)
@given(stride=st.integers(1, 300), span_blocks=st.integers(2, 600), start_blocks=st.integers(0, 50))
def test_stride_same_first_and_last_block_for_every_s(stride, span_blocks, start_blocks):
    w = parse_workload(f"stride:stride={stride},span={span_blocks * BLOCK},start={start_blocks * BLOCK},op=read")
    one_pass = w.pass_blocks(start_blocks, start_blocks + span_blocks - 1)
    reqs = list(w.requests(CAP, BLOCK, 2 * len(one_pass), 0))
    blocks = [r.offset // BLOCK for r in reqs]
    assert blocks == one_pass * 2                      # passes repeat
    assert blocks[0] == start_blocks and one_pass[-1] == start_blocks + span_blocks - 1
    gaps = np.diff(one_pass)
    assert (gaps[:-1] == stride).all() and 1 <= gaps[-1] <= stride
    assert all(r.op == "read" and r.length == BLOCK and r.at is None for r in reqs)


# ---------------------------------------------------------------- exp-stride (seed 000, Fig. 1 / 15)
def strides_within_passes(spec: str, count: int, seed: int = 1) -> tuple[np.ndarray, list[int]]:
    w = parse_workload(spec)
    blocks = [r.offset // BLOCK for r in w.requests(CAP, BLOCK, count, seed)]
    first, last = w.params["start"] // BLOCK, (w.params["start"] + w.params["span"]) // BLOCK - 1
    strides = [b - a for a, b in zip(blocks, blocks[1:]) if a != last and b != last]   # drop cut-short strides
    return np.array(strides), blocks


@pytest.mark.parametrize("mean,smax", [(4.0, 32), (10.0, 64), (1.5, 32), (12.0, 32)])
def test_exp_stride_mean_and_range(mean, smax):
    strides, blocks = strides_within_passes(f"exp-stride:mean={mean},max={smax},span=64M", 60_000)
    assert strides.min() >= 1 and strides.max() <= smax
    assert strides.mean() == pytest.approx(mean, rel=0.03)
    pmf = ExpStride.pmf(mean, smax)
    assert float(pmf @ np.arange(1, smax + 1)) == pytest.approx(mean, rel=1e-6)
    ratios = pmf[1:] / pmf[:-1]
    assert np.allclose(ratios, ratios[0]) and ratios[0] < 1      # geometric: a discretised exponential
    counts = np.bincount(strides, minlength=smax + 1)[1:]
    assert counts[0] > counts[smax // 2]


def test_exp_stride_passes_share_start_and_destination():
    _, blocks = strides_within_passes("exp-stride:mean=8,max=32,span=1M,start=1M", 5000)
    first, last = 256, 511
    assert blocks[0] == first
    ends = [i for i, b in enumerate(blocks) if b == last]
    assert len(ends) > 10
    for i in ends[:-1]:
        assert blocks[i + 1] == first                  # the next pass starts over
    assert all(first <= b <= last for b in blocks)
    for a, b in zip(blocks, blocks[1:]):
        assert b > a or (a == last and b == first)    # ascending within a pass
    assert take("exp-stride:mean=1", 10) == take("stride:stride=1,span=4M", 10)   # mean 1: contiguous


# ---------------------------------------------------------------- zipf (seed 004)
def test_zipf_rank_frequencies_fall_and_fit_the_skew():
    reqs = take("zipf:skew=0.7", 400_000, seed=3, capacity=10000 * BLOCK)
    counts = np.bincount([r.offset // BLOCK for r in reqs], minlength=10000)
    assert all(counts[i] > counts[i + 1] for i in range(6))
    bands = [counts[lo:hi].mean() for lo, hi in ((0, 1), (1, 4), (4, 16), (16, 64), (64, 256), (256, 1024))]
    assert bands == sorted(bands, reverse=True)
    ranks = np.arange(1, 201)
    slope = np.polyfit(np.log(ranks), np.log(counts[:200]), 1)[0]
    assert -slope == pytest.approx(0.7, abs=0.05)
    expected = zipf_pmf(10000, 0.7) * len(reqs)
    assert counts[0] == pytest.approx(expected[0], rel=0.05)


def test_zipf_skew_zero_is_uniform():
    reqs = take("zipf:skew=0", 100_000, seed=4, capacity=10000 * BLOCK)
    counts = np.bincount([r.offset // BLOCK // 250 for r in reqs], minlength=40)
    assert chi_square(counts) < 75          # 39 dof: p = 0.001 at about 72


def test_zipf_write_ratio_and_sizes():
    reqs = take("zipf:write_ratio=0.3,skew=0.3", 100_000, seed=9, capacity=CAP)
    writes = [r for r in reqs if r.op == "write"]
    reads = [r for r in reqs if r.op == "read"]
    assert len(writes) / len(reqs) == pytest.approx(0.3, abs=0.01)     # 3 writes in every 10 I/Os
    wsizes = Counter(r.length // BLOCK for r in writes)
    rsizes = Counter(r.length // BLOCK for r in reads)
    assert set(wsizes) == set(range(1, 11)) and min(rsizes) >= 1 and max(rsizes) == 100
    assert len(rsizes) > 90
    assert all(r.offset + r.length <= 10000 * BLOCK for r in reqs)    # cut at the database end
    # access-size skew 0.2: the largest size is the most frequent (rank 1), as sec. 3 defines it
    expected = zipf_pmf(10, 0.2)[::-1] * len(writes)
    assert [wsizes[k] for k in range(1, 11)] == pytest.approx(list(expected), rel=0.08)
    for ratio in (0.1, 0.5, 0.9):
        got = take(f"zipf:write_ratio={ratio}", 20_000, seed=1)
        assert sum(r.op == "write" for r in got) / len(got) == pytest.approx(ratio, abs=0.015)


# ---------------------------------------------------------------- hlwm-periods (seed 003, Table 1)
TABLE1 = {"T1": (20e-3, 0.004), "T2": (40e-3, 0.004), "T3": (20e-3, 0.004), "T4": (10e-3, 0.004),
          "T5": (20e-3, 0.004), "T6": (20e-3, 0.002), "T7": (20e-3, 0.004), "T8": (20e-3, 0.008)}


def test_hlwm_periods_boundaries_and_period_of():
    w = parse_workload("hlwm-periods:scale=0.1")
    per = w.periods()
    assert [p.name for p in per] == list(TABLE1)
    assert [(p.iat, p.locality) for p in per] == list(TABLE1.values())
    assert [p.case for p in per] == ["initial", "Case 1", "initial", "Case 2", "initial", "Case 3", "initial",
                                     "Case 4"]
    assert per[0].start == 0 and per[1].start == pytest.approx(30.0) and per[-1].end == pytest.approx(240.0)
    assert w.period_of(0) == "T1" and w.period_of(29.99) == "T1" and w.period_of(30.0) == "T2"
    assert w.period_of(-1) == "T1" and w.period_of(1e9) == "T8" and w.period_of(235) == "T8"
    assert w.closed_loop is None


def test_hlwm_period_rates_and_locality_match_table1_scaled():
    """Table 1 of seed 003, with 5-minute periods scaled by 0.1 (30 s each) and space by 0.1.

    Things in the paper that do not add up or are left open (our choices in the docstring of
    HlwmPeriods and docs/workloads.md):
    - "the read-to-write ratios of W1 and W2 are 60% and 40%" yet Fig. 4 labels them read=60%
      and write=60%: the 60 % is a read *fraction*, not a read-to-write ratio (which would make
      W1 37.5 % reads). read_fraction=0.6 is W1.
    - it never says how requests divide among the five processes, nor whether the inter-arrival
      time is per process or for the whole stream: we draw the process uniformly per arrival and
      take the time as the aggregate.
    - 0.4 % of the 10 GB space is 2560 cache entries of 16 KB, less than N_W = 4096, yet
      four such subsets (if disjoint) hold 10240 entries: whether "% of entire disk" is per
      subset or for all four together is not said; we take it per subset.
    """
    w = parse_workload("hlwm-periods:scale=0.1")
    reqs = list(w.requests(CAP, BLOCK, 10**7, 21))
    space = int(CAP * 0.1) // 16384 * 16384
    assert w.space_bytes(CAP) == space
    by_period: dict[str, list[HostRequest]] = {p: [] for p in TABLE1}
    for r in reqs:
        by_period[w.period_of(r.at)].append(r)
    for p in w.periods():
        got = by_period[p.name]
        expected = (p.end - p.start) / p.iat
        assert abs(len(got) - expected) < 4 * math.sqrt(expected), p.name          # Poisson count
        assert all(p.start <= r.at < p.end for r in got)
        subset = int(p.locality * space) // 16384 * 16384
        bases = [0] + [j * space // 5 // 16384 * 16384 for j in range(4)]
        for r in got:
            assert r.length == 16384 and r.offset % 16384 == 0
            lo = bases[r.stream]
            hi = space if r.stream == 0 else lo + subset
            assert lo <= r.offset < hi
    streams = Counter(r.stream for r in reqs)
    assert sorted(streams) == [0, 1, 2, 3, 4]
    assert all(c / len(reqs) == pytest.approx(0.2, abs=0.01) for c in streams.values())
    assert sum(r.op == "read" for r in reqs) / len(reqs) == pytest.approx(0.6, abs=0.01)
    # the subset processes of T6 reach only 0.2 %, those of T8 up to 0.8 %
    t6 = max(r.offset - bases[r.stream] for r in by_period["T6"] if r.stream)
    t8 = max(r.offset - bases[r.stream] for r in by_period["T8"] if r.stream)
    assert t6 < 0.002 * space <= t8 < 0.008 * space
    # whole-space process 0 is uniform
    counts = np.bincount([r.offset * 16 // space for r in reqs if r.stream == 0], minlength=16)
    assert chi_square(counts) < 40


def test_hlwm_inter_arrival_times_are_exponential():
    w = HlwmPeriods(scale=0.1, period="300s", read_fraction="0.4")
    reqs = [r for r in w.requests(CAP, BLOCK, 10**7, 2) if w.period_of(r.at) == "T4"]
    gaps = np.diff([r.at for r in reqs])
    assert gaps.mean() == pytest.approx(10e-3, rel=0.05) and gaps.std() == pytest.approx(10e-3, rel=0.08)
    assert sum(r.op == "write" for r in reqs) / len(reqs) == pytest.approx(0.6, abs=0.03)   # W2


# ---------------------------------------------------------------- sequential (seed 001, IOzone)
def test_sequential_streams_each_read_their_own_region():
    w = parse_workload("sequential:streams=3,size=64K,total=3M")
    assert w.closed_loop == 3
    reqs = list(w.requests(CAP, BLOCK, 3 * 40, 0))
    region = 1 << 20
    for s in range(3):
        mine = [r.offset for r in reqs if r.stream == s]
        assert mine[:16] == [s * region + i * (64 << 10) for i in range(16)]
        assert mine[16] == s * region                 # wraps at the end of its region
    assert [r.stream for r in reqs[:6]] == [0, 1, 2, 0, 1, 2]
    assert {r.op for r in reqs} == {"read"} and all(r.at is None for r in reqs)


# ---------------------------------------------------------------- semisequential (seed 001, Fig. 6)
PAPER_BLOCKS = (0, 16, 17, 18, 1, 19, 20, 21, 2, 22, 23, 24, 3, 25, 26, 27)


def msp_counter(blocks, strip_blocks, *, sn_p0=0, floor=1):
    """Lines 14-25 of seed 001 Fig. 7 (MSP): the strip numbers seen and SC after each."""
    sn_p, sn_pp, sc, seen, counts = sn_p0, 0, 0, [], []
    for b in blocks:
        sn_c = b // strip_blocks
        if sn_c == sn_p:                     # line 17
            if not seen:
                seen.append(sn_c)
                counts.append(None)          # the first access returns before SC is touched
            continue
        if sn_p + 1 == sn_c or sn_pp == sn_c:     # lines 18-22
            sc = min(42, sc + 1)
        else:
            sc = max(floor, sc - 1)          # line 23
        sn_pp, sn_p = sn_p, sn_c
        seen.append(sn_c)
        counts.append(sc)
    return seen, counts


def test_semisequential_reproduces_fig6_block_sequence():
    """Seed 001, sec. 4, Fig. 6: the 12-block file at B16..B27 with metadata in B0..B3.

    The block sequence (0,16,17,18,1,19,...,27) adds up: one metadata block before every three
    data blocks, 4 + 12 = 16 accesses, and with the 4-block strips of Fig. 1 (Fig. 3 puts the
    20 blocks B16..B35 in five strips) the strips changed at are (0,4,0,4,5,0,5,6,0,6), as printed.

    What does not add up is the printed SC sequence (1,0,1,2,3,2,3,4,3,4) against the
    pseudocode of Fig. 7 it is said to come from:
    - With SN_p = 0 initially (as Fig. 7 declares), the first access to strip 0 returns at
      line 17 without touching SC, so there are only nine SC values, not ten.
    - Line 23, SC = max(1, SC - 1), never lets SC fall from 1 to 0, yet the printed sequence
      goes 1, 0. Run literally, Fig. 7 gives (-, 1, 2, 3, 4, 3, 4, 5, 4, 5).
    - The printed sequence comes out only if the first access counts as sequential (e.g. SN_p
      starts at -1) and line 23 floors at 0: max(0, SC - 1).
    - Also in Fig. 7: line 27 SPS = min(SPS - 1, 0) can only go negative (max(SPS - 1, 0) is
      meant), and the text says both "equal to or larger than SC_thresh" (which line 26
      implements) and "greater than the threshold value".
    """
    w = parse_workload("semisequential")
    assert tuple(w.block_sequence()) == PAPER_BLOCKS
    reqs = list(w.requests(CAP, BLOCK, 2 * len(PAPER_BLOCKS), 0))
    assert tuple(r.offset // BLOCK for r in reqs) == PAPER_BLOCKS * 2
    assert all(r.op == "read" and r.length == BLOCK for r in reqs) and w.closed_loop == 1

    strips = [b // 4 for b in PAPER_BLOCKS]
    changes = [s for i, s in enumerate(strips) if i == 0 or s != strips[i - 1]]
    assert changes == [0, 4, 0, 4, 5, 0, 5, 6, 0, 6]

    seen, literal = msp_counter(PAPER_BLOCKS, 4)
    assert seen == changes
    assert literal == [None, 1, 2, 3, 4, 3, 4, 5, 4, 5]
    assert literal[1:] != [0, 1, 2, 3, 2, 3, 4, 3, 4]
    _, printed = msp_counter(PAPER_BLOCKS, 4, sn_p0=-1, floor=0)
    assert printed == [1, 0, 1, 2, 3, 2, 3, 4, 3, 4]


def test_semisequential_long_file_and_layout():
    w = parse_workload("semisequential:file_blocks=120,per_meta=3,data_start=64,meta_start=8,op=write")
    seq = w.block_sequence()
    assert len(seq) == 160 and seq[:5] == [8, 64, 65, 66, 9] and seq[-1] == 183
    assert sorted(b for b in seq if b < 64) == list(range(8, 48))
    assert {r.op for r in w.requests(CAP, BLOCK, 10, 0)} == {"write"}
    # a 120-block file is too short for MSP (literal Fig. 7): its counter stops short of SC_thresh = 38
    _, counts = msp_counter(seq, 4)
    assert max(c for c in counts if c is not None) < 38
    long_file = parse_workload("semisequential:file_blocks=240,data_start=128").block_sequence()
    _, counts = msp_counter(long_file, 4)
    assert max(c for c in counts if c is not None) == 42      # reaches SC_thresh, then saturates at SC_max


# ---------------------------------------------------------------- speed
def test_generators_are_lazy():
    """Every generator yields requests one at a time: the first ten of a
    billion-request workload come without building the rest (their speed is
    measured by bench/sim_speed.py, not asserted here)."""
    import itertools
    from collections.abc import Iterator

    for name in GENERATED:
        w = parse_workload(name if name != "hlwm-periods" else "hlwm-periods:scale=0.5")
        it = w.requests(CAP, BLOCK, 10**9, 1)
        assert isinstance(it, Iterator), name
        assert len(list(itertools.islice(it, 10))) == 10, name


# ---------------------------------------------------------------- seeks (paper 002, Bonnie)
def test_seeks_reads_random_chunks_and_writes_a_share_back_in_place():
    reqs = take("seeks:procs=4,seeks=20000,file=64M,chunk=8K,update=0.1", 10**6)
    reads = [r for r in reqs if r.op == "read"]
    assert len(reads) == 20000                                  # seeks counts the reads; the workload ends
    writes = [(i, r) for i, r in enumerate(reqs) if r.op == "write"]
    assert 0.09 < len(writes) / len(reads) < 0.11               # Bonnie's 10 %
    for i, w in writes:                                         # each right after its read, same chunk, same process
        r = reqs[i - 1]
        assert (r.op, r.offset, r.length, r.stream) == ("read", w.offset, 8192, w.stream)
    assert all(r.offset % 8192 == 0 and r.offset + 8192 <= 64 << 20 for r in reqs)
    assert {r.stream for r in reqs} == {0, 1, 2, 3}
    assert parse_workload("seeks:procs=4").closed_loop == 4
    assert len({r.offset for r in reads}) > 0.9 * len(reads) * (1 - len(reads) / (2 * 8192))


def test_seeks_without_write_back_and_its_bad_input():
    assert all(r.op == "read" for r in take("seeks:seeks=3000,file=16M,update=0", 10**6))
    assert all(r.op == "read" for r in take("seeks:seeks=10,file=16M,update=1", 10**6)[0::2])
    for spec, what in (("seeks:update=1.5", "update"), ("seeks:procs=0", "procs"), ("seeks:seeks=0", "seeks")):
        with pytest.raises(VraidError, match=what):
            parse_workload(spec)
    with pytest.raises(VraidError, match="does not fit"):
        take("seeks", 10, capacity=64 << 20)                    # the paper's 100 MB file
    with pytest.raises(VraidError, match="does not fit"):
        take("seeks:file=32M,start=48M", 10, capacity=64 << 20)

"""RAID-6's P+Q (vraid.core.pq) against generate, a slow reference, and md's layouts.

Every reconstruction path (P, Q, P+Q, D, D+P, D+Q, D+D) must give back exactly
what was lost; RMW ``update`` must give what ``generate`` gives of the new data;
Q is checked against a slow per-byte reference (the RAID-6 oracle's carry-less
multiply, which shares no code with vraid.core); the layouts against md's placement rules as raid5.c states them (P on
N-1-s mod N or s mod N, Q after P, data after Q or in member order) and the
syndrome order against md's walk from the member after Q.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.core.geometry import Geometry
from vraid.core.pq import PQ
from vraid.core.redundancy import LEVELS, RAID5_LAYOUTS, for_level
from vraid.testing.raid6_oracle import slow_mul  # the oracle's carry-less multiply: no code of vraid.core

pq = PQ()


def slow_q(data: np.ndarray, slots=None) -> np.ndarray:
    """Q byte by byte: sum of g^slot * D (g = 2)."""
    nd = data.shape[0]
    order = range(nd) if slots is None else slots
    flat = data.reshape(nd, -1)
    out = np.zeros(flat.shape[1], dtype=np.uint8)
    for k, s in enumerate(order):
        c = 1
        for _ in range(s):
            c = slow_mul(c, 2)
        out ^= np.array([slow_mul(c, int(x)) for x in flat[k]], dtype=np.uint8)
    return out.reshape(data.shape[1:])


def _data(nd: int, rows: int = 3, block: int = 16, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (nd, rows, block), dtype=np.uint8)


def test_registered_as_level_6():
    assert 6 in LEVELS and isinstance(for_level(6), PQ)
    assert (pq.parity_columns, pq.tolerates, pq.min_disks) == (2, 2, 4)
    assert pq.check_names == ("P", "Q")


@pytest.mark.parametrize("slots", [None, (2, 3, 0, 1)])
@pytest.mark.parametrize("block", [16, 12])  # eight bytes at a time (Horner on words), and by table
def test_generate_matches_the_slow_reference(slots, block):
    data = _data(4, block=block)
    checks = pq.generate(data, slots=slots)
    assert np.array_equal(checks[0], np.bitwise_xor.reduce(data, axis=0))
    assert np.array_equal(checks[1], slow_q(data, slots))


@pytest.mark.parametrize("nd", [2, 3, 5])
@pytest.mark.parametrize("slots_kind", ["logical", "rotated"])
def test_every_one_or_two_missing_columns_come_back(nd, slots_kind):
    slots = None if slots_kind == "logical" else tuple((k + 1) % nd for k in range(nd))
    data = _data(nd, seed=nd)
    checks = pq.generate(data, slots=slots)
    cols = range(nd + 2)
    for missing in itertools.chain(itertools.combinations(cols, 1), itertools.combinations(cols, 2)):
        d, c = data.copy(), checks.copy()
        for m in missing:
            (d[m] if m < nd else c[m - nd])[...] = 0xA5  # garbage where the lost column was
        pq.reconstruct(d, c, missing, slots=slots)
        assert np.array_equal(d, data), missing
        assert np.array_equal(c, checks), missing


def test_three_missing_is_refused():
    data = _data(3)
    with pytest.raises(ValueError, match="3 columns missing"):
        pq.reconstruct(data, pq.generate(data), [0, 1, 2])


@given(st.integers(2, 6).flatmap(lambda nd: st.tuples(st.just(nd), st.sets(st.integers(0, nd - 1), min_size=1))),
       st.integers(0, 2**32 - 1), st.booleans())
@settings(max_examples=60, deadline=None)
def test_update_is_generate_of_the_new_data(shape, seed, rotated):
    nd, changed = shape
    slots = tuple((k + 2) % nd for k in range(nd)) if rotated else None
    rng = np.random.default_rng(seed)
    old = rng.integers(0, 256, (nd, 2, 8), dtype=np.uint8)
    new = old.copy()
    cols = sorted(changed)
    new[cols] = rng.integers(0, 256, (len(cols), 2, 8), dtype=np.uint8)
    checks = pq.generate(old, slots=slots)
    pq.update(checks, old[cols], new[cols], cols, slots=slots)
    assert np.array_equal(checks, pq.generate(new, slots=slots))


def test_disagree_says_which_check_is_wrong():
    data = _data(4, rows=4)
    checks = pq.generate(data)
    checks[0, 1, 3] ^= 1  # P of row 1
    checks[1, 2, 0] ^= 7  # Q of row 2
    data[3, 3, 5] ^= 9  # a data byte of row 3: both
    flags = pq.disagree(data, checks)
    assert flags.tolist() == [[False, True, False, True], [False, False, True, True]]
    assert pq.verify(data, checks).tolist() == [False, True, True, True]


# -- md's layouts ------------------------------------------------------------------------------
def md_place(layout: str, n: int, s: int, k: int) -> tuple[int, int, int]:
    """(P, Q, member of data strip k) as raid5_compute_sector's RAID-6 branch states it."""
    left = layout.startswith("left")
    p = n - 1 - s % n if left else s % n
    if layout.endswith("-symmetric"):
        return p, (p + 1) % n, (p + 2 + k) % n
    if p == n - 1:
        return p, 0, k + 1
    return p, p + 1, k + 2 if k >= p else k


@pytest.mark.parametrize("layout", RAID5_LAYOUTS)
@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_place_is_mds(layout, n):
    for s in range(2 * n):
        data, (p, q) = pq.place(layout, n, s)
        for k, d in enumerate(data):
            assert md_place(layout, n, s, k) == (p, q, d)
        assert sorted(data + (p, q)) == list(range(n))


def md_slots(layout: str, n: int, s: int) -> list[int]:
    """The slot of each logical data strip: md numbers the data members met walking from Q+1."""
    data, (p, q) = pq.place(layout, n, s)
    d0 = 0 if q == n - 1 else q + 1  # raid6_d0
    slot, i, count = {}, d0, 0
    while True:
        if i not in (p, q):
            slot[i] = count
            count += 1
        i = (i + 1) % n
        if i == d0:
            break
    return [slot[d] for d in data]


@pytest.mark.parametrize("layout", RAID5_LAYOUTS)
def test_slots_are_mds_syndrome_order(layout):
    n = 6
    differs = False
    for s in range(n):
        got = pq.slots(layout, n, s)
        want = md_slots(layout, n, s)
        assert (list(got) if got is not None else list(range(n - 2))) == want
        differs |= got is not None
    assert differs == layout.endswith("asymmetric")  # symmetric: the logical order; asymmetric: rotated


def test_the_geometry_tabulates_places_and_slots():
    g = Geometry(level=6, ndisks=5, stripes=10, layout="left-asymmetric")
    assert g.data_disks == 3 and g.title == "RAID-6 left-asymmetric"
    for s in range(10):
        data, checks = pq.place("left-asymmetric", 5, s)
        assert g.columns(s) == data + checks and g.parity_disks(s) == checks
        assert g.slots(s) == pq.slots("left-asymmetric", 5, s)
    assert Geometry(level=6, ndisks=5, stripes=10).slots(3) is None

"""The redundancy seam (vraid.core.redundancy): parity properties, checked with hypothesis.

XOR is checked against a byte-by-byte reference written here (Python ints,
no numpy), and by its properties: any one missing column comes back;
read-modify-write equals regenerating; verify names exactly the rows that
were corrupted. RAID-0's NoRedundancy tolerates nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from vraid.core.geometry import Geometry
from vraid.core.redundancy import LEVELS, NONE, XOR, NoRedundancy, Xor, count_word, for_level

BS = 16  # bytes per block: small, so hypothesis explores contents, not sizes


@st.composite
def stripes(draw, max_cols: int = 7, max_rows: int = 6):
    """(data columns, rows, block) of random bytes, at least two data columns."""
    nd = draw(st.integers(2, max_cols))
    rows = draw(st.integers(1, max_rows))
    return draw(arrays(np.uint8, (nd, rows, BS)))


def _reference_parity(data: np.ndarray) -> np.ndarray:
    nd, rows, bs = data.shape
    out = np.zeros((rows, bs), dtype=np.uint8)
    for r in range(rows):
        for b in range(bs):
            acc = 0
            for k in range(nd):
                acc ^= int(data[k, r, b])
            out[r, b] = acc
    return out


def test_the_level_chooses_the_scheme():
    assert for_level(5) is XOR and isinstance(XOR, Xor)
    assert for_level(0) is NONE and isinstance(NONE, NoRedundancy)
    assert LEVELS == (0, 1, 4, 5, 6, 10)
    with pytest.raises(KeyError):
        for_level(7)
    assert Geometry(5, 4, 2).redundancy is XOR and Geometry(0, 4, 2).redundancy is NONE


def test_what_each_scheme_tolerates():
    assert (XOR.tolerates, XOR.parity_columns, XOR.min_disks, XOR.name) == (1, 1, 3, "RAID-5")
    assert (NONE.tolerates, NONE.parity_columns, NONE.min_disks, NONE.name) == (0, 0, 1, "RAID-0")
    assert XOR.survives(0) and XOR.survives(1) and not XOR.survives(2)
    assert NONE.survives(0) and not NONE.survives(1)
    assert XOR.data_columns(5) == 4 and NONE.data_columns(5) == 5
    assert [count_word(n) for n in (1, 2, 7)] == ["one", "two", "7"]


@given(stripes())
def test_generate_is_the_xor_of_the_data(data):
    checks = XOR.generate(data)
    assert checks.shape == (1,) + data.shape[1:]
    assert np.array_equal(checks[0], _reference_parity(data))
    out = np.full_like(checks, 7)
    assert XOR.generate(data, out=out) is out and np.array_equal(out, checks)


@given(stripes(), st.data())
def test_reconstruct_any_one_missing_column(data, draw):
    checks = XOR.generate(data)
    column = draw.draw(st.integers(0, data.shape[0]))  # data columns, then parity
    d, c = data.copy(), checks.copy()
    garbage = draw.draw(arrays(np.uint8, data.shape[1:]))
    (d[column] if column < data.shape[0] else c[0])[...] = garbage  # the lost column holds anything
    XOR.reconstruct(d, c, [column])
    assert np.array_equal(d, data) and np.array_equal(c, checks)


@given(stripes(), st.data())
def test_update_equals_regenerate(data, draw):
    nd = data.shape[0]
    checks = XOR.generate(data)
    cols = sorted(draw.draw(st.sets(st.integers(0, nd - 1), min_size=1)))
    new = draw.draw(arrays(np.uint8, (len(cols),) + data.shape[1:]))
    XOR.update(checks, data[cols], new, cols)
    after = data.copy()
    after[cols] = new
    assert np.array_equal(checks, XOR.generate(after))


@given(stripes(), st.data())
def test_verify_finds_exactly_the_corrupted_rows(data, draw):
    nd, rows, _ = data.shape
    checks = XOR.generate(data)
    assert not XOR.verify(data, checks).any()
    bad = draw.draw(st.sets(st.integers(0, rows - 1)))
    d, c = data.copy(), checks.copy()
    for r in bad:
        column = draw.draw(st.integers(0, nd))
        byte = draw.draw(st.integers(0, BS - 1))
        flip = draw.draw(st.integers(1, 255))
        target = d[column] if column < nd else c[0]
        target[r, byte] ^= flip
    assert set(np.flatnonzero(XOR.verify(d, c)).tolist()) == bad


@given(arrays(np.uint8, (4, 3, 2, BS)))
def test_extra_axes_between_column_and_block(data):
    """A scrub hands in (columns, stripes, rows, block): verify answers per (stripe, row)."""
    checks = XOR.generate(data)
    assert checks.shape == (1, 3, 2, BS)
    c = checks.copy()
    c[0, 1, 0, 3] ^= 1
    assert XOR.verify(data, c).tolist() == [[False, False], [True, False], [False, False]]


def test_xor_refuses_two_missing_columns():
    data = np.zeros((3, 2, BS), dtype=np.uint8)
    with pytest.raises(ValueError):
        XOR.reconstruct(data, XOR.generate(data), [0, 2])
    XOR.reconstruct(data, XOR.generate(data), [])  # nothing missing: nothing to do


@given(stripes())
def test_no_redundancy_has_no_parity_and_rebuilds_nothing(data):
    checks = NONE.generate(data)
    assert checks.shape == (0,) + data.shape[1:]
    assert not NONE.verify(data, checks).any()
    before = data.copy()
    NONE.update(checks, data[:1], data[1:2], [0])
    assert np.array_equal(data, before)
    NONE.reconstruct(data, None, [])
    with pytest.raises(ValueError):
        NONE.reconstruct(data, None, [0])


def test_a_level_registered_is_run_and_taken_out_again():
    """``register`` is the seam's one registry entry for a course's own level: geometry accepts it
    while registered and names it as unsupported after ``unregister``; a taken number and a
    built-in level are refused."""
    from vraid.core import redundancy
    from vraid.core.geometry import GeometryError

    class Raid4Again(redundancy.Raid4):
        level = 44

    assert 44 not in redundancy.levels()
    assert redundancy.register(Raid4Again()) == 44
    try:
        assert 44 in redundancy.levels() and redundancy.LEVELS == (0, 1, 4, 5, 6, 10)
        assert Geometry(44, 4, 2).redundancy.name == Raid4Again().name
        with pytest.raises(ValueError, match="taken"):
            redundancy.register(Raid4Again())
    finally:
        redundancy.unregister(44)
    assert 44 not in redundancy.levels()
    with pytest.raises(GeometryError, match="not supported"):
        Geometry(44, 4, 2)
    with pytest.raises(ValueError, match="built in"):
        redundancy.unregister(5)

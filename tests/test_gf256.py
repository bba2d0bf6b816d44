"""md's GF(2^8) (vraid.core.gf256): polynomial 0x11d, generator {02}.

The tables are checked against a slow reference written here: the carry-less
(shift-and-XOR) product of two bytes reduced modulo x^8+x^4+x^3+x^2+1, for all
65536 pairs, and against anchor values of the field.
"""

from __future__ import annotations

import numpy as np
import pytest

from vraid.core import gf256


def slow_mul(a: int, b: int) -> int:
    """Carry-less multiply, then reduce modulo 0x11d (no tables)."""
    product = 0
    for bit in range(8):
        if b >> bit & 1:
            product ^= a << bit
    for bit in range(14, 7, -1):
        if product >> bit & 1:
            product ^= 0x11D << (bit - 8)
    return product


def test_anchor_values():
    assert gf256.gexp(0) == 1
    assert gf256.gexp(1) == 2
    assert gf256.gexp(7) == 0x80
    assert gf256.gexp(8) == 0x1D  # x^8 = x^4+x^3+x^2+1
    assert gf256.gexp(9) == 0x3A
    assert gf256.gexp(255) == 1
    assert gf256.gexp(-1) == gf256.inv(2) == 0x8E
    assert gf256.mul(0x80, 2) == 0x1D


def test_the_generator_makes_every_nonzero_byte_once():
    powers = {gf256.gexp(i) for i in range(255)}
    assert powers == set(range(1, 256))


def test_table_against_slow_reference_for_all_pairs():
    ref = np.array([[slow_mul(a, b) for b in range(256)] for a in range(256)], dtype=np.uint8)
    assert np.array_equal(gf256.MUL, ref)


def test_log_and_inverse():
    for a in range(1, 256):
        assert gf256.gexp(int(gf256.LOG[a])) == a
        assert slow_mul(a, gf256.inv(a)) == 1
    with pytest.raises(ZeroDivisionError):
        gf256.inv(0)


def test_scale_and_scale_xor_are_bytewise():
    rng = np.random.default_rng(1)
    block = rng.integers(0, 256, 4096, dtype=np.uint8)
    acc = rng.integers(0, 256, 4096, dtype=np.uint8)
    for c in (0, 1, 2, 0x1D, 0xFF):
        want = np.array([slow_mul(c, int(x)) for x in block], dtype=np.uint8)
        assert np.array_equal(gf256.scale(c, block), want)
        a = acc.copy()
        gf256.scale_xor(a, c, block)
        assert np.array_equal(a, acc ^ want)

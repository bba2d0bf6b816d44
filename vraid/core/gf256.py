"""GF(2^8), the field RAID-6's Q syndrome is computed in: Linux md's field.

H. Peter Anvin, "The mathematics of RAID-6" (the paper behind drivers/md's
``raid6`` library), section 2: the bytes are polynomials over GF(2) modulo
the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1 (``0x11d``); addition is
XOR; the generator is ``g = {02}`` (x), whose powers g^0 .. g^254 are every
non-zero byte once, so ``g^255 = 1``.

The tables, built once at import:

* :data:`EXP` ``[i] = g^i`` for ``i`` in 0..509 (doubled, so ``EXP[log a + log b]``
  needs no ``mod 255``);
* :data:`LOG` ``[a]`` with ``g^LOG[a] = a`` for ``a != 0`` (``LOG[0]`` is unused, 0);
* :data:`MUL` ``[c]`` the 256-byte row "times c": multiplying a whole block
  (any numpy uint8 array) by the constant ``c`` is one ``MUL[c][block]`` take;
* :data:`INV` ``[a] = a^-1`` (``INV[0]`` is 0, unused).

:func:`times_g` multiplies eight bytes at a time by g on a uint64 view (Anvin section
2's "multiply by {02}": shift left, and XOR 0x1d into each byte whose top bit was set), the
step of the Horner evaluation md's ``gen_syndrome`` makes of Q.
"""

from __future__ import annotations

import numpy as np

#: the field's polynomial, x^8 + x^4 + x^3 + x^2 + 1 (md's)
POLY = 0x11D
#: the generator g = {02}
GENERATOR = 2


def _tables() -> tuple[np.ndarray, np.ndarray]:
    exp = np.zeros(510, dtype=np.uint8)
    log = np.zeros(256, dtype=np.int32)
    v = 1
    for i in range(255):
        exp[i] = v
        log[v] = i
        v <<= 1  # times g = x
        if v & 0x100:
            v ^= POLY
    exp[255:510] = exp[0:255]
    return exp, log


EXP, LOG = _tables()
EXP.flags.writeable = False
LOG.flags.writeable = False


def _mul_table() -> np.ndarray:
    la = LOG[1:, None]
    lb = LOG[None, 1:]
    table = np.zeros((256, 256), dtype=np.uint8)
    table[1:, 1:] = EXP[la + lb]
    return table


#: MUL[a, b] = a * b in the field
MUL = _mul_table()
MUL.flags.writeable = False
#: INV[a] = a^-1 (INV[0] = 0)
INV = np.zeros(256, dtype=np.uint8)
INV[1:] = EXP[(255 - LOG[1:]) % 255]
INV.flags.writeable = False


def gexp(i: int) -> int:
    """``g^i`` (any integer ``i``; the powers repeat every 255)."""
    return int(EXP[i % 255])


def mul(a: int, b: int) -> int:
    """``a * b`` of two bytes."""
    return int(MUL[a, b])


def inv(a: int) -> int:
    """``a^-1`` of a non-zero byte.

    Raises:
        ZeroDivisionError: for 0.
    """
    if not a:
        raise ZeroDivisionError("0 has no inverse in GF(2^8)")
    return int(INV[a])


def scale(c: int, block: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``c * block`` bytewise (one table take; ``out`` may be ``block`` itself)."""
    return np.take(MUL[c], block, out=out)


def scale_xor(acc: np.ndarray, c: int, block: np.ndarray) -> None:
    """``acc ^= c * block`` in place (the multiply-accumulate Q is made of)."""
    if c == 1:
        np.bitwise_xor(acc, block, out=acc)
    elif c:
        np.bitwise_xor(acc, MUL[c][block], out=acc)


_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_TOPS = np.uint64(0x0101010101010101)
_REDUCE = np.uint64(0x1D)
_SEVEN = np.uint64(7)
_ONE = np.uint64(1)


def times_g(x: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """``out := g * x`` bytewise for a uint64 array ``x`` (eight bytes a word; ``out`` may be
    ``x``; ``tmp`` a scratch array of the same shape)."""
    np.right_shift(x, _SEVEN, out=tmp)
    np.bitwise_and(tmp, _TOPS, out=tmp)
    np.multiply(tmp, _REDUCE, out=tmp)  # 0x1d in each byte whose top bit was set
    np.bitwise_and(x, _LOW7, out=out)
    np.left_shift(out, _ONE, out=out)
    np.bitwise_xor(out, tmp, out=out)
    return out


def as_words(block: np.ndarray) -> np.ndarray | None:
    """``block`` (uint8) viewed as uint64 words, or None when it cannot be (not contiguous
    in its last axis, or a length not a multiple of 8)."""
    if block.shape[-1] % 8 or not block.flags.c_contiguous:
        return None
    return block.view(np.uint64)

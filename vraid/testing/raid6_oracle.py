"""The RAID-6 oracle: md's P and Q recomputed from raw bytes with a slow reference.

A carry-less multiply modulo 0x11d and md's syndrome slot walk from the member after Q,
sharing no code with vraid.core.pq or vraid.core.gf256 (it must not use the code it
checks): the tests check member files with it and the model state machines
(:mod:`vraid.testing.machines`, ``vraid fuzz``) build what every member must hold.

Layouts as md's raid5_compute_sector states them for level 6: P on N-1 - s mod N
(left) or s mod N (right), Q on the member after P; data after Q (symmetric) or in
member order skipping P and Q (asymmetric).
"""

from __future__ import annotations

import numpy as np


def slow_mul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a = (a << 1) ^ (0x11D if a & 0x80 else 0)
        b >>= 1
    return r


#: "times c" as a 256-entry table per c, built from slow_mul only
_TIMES = np.array([[slow_mul(c, x) for x in range(256)] for c in range(256)], dtype=np.uint8)


def md_stripe(layout: str, n: int, s: int) -> tuple[int, int, list[int]]:
    """(P member, Q member, members of the data strips in logical order)."""
    p = n - 1 - s % n if layout.startswith("left") else s % n
    q = (p + 1) % n
    if layout.endswith("-symmetric"):
        data = [(p + 2 + k) % n for k in range(n - 2)]
    else:
        data = [m for m in range(n) if m not in (p, q)]  # member order
    return p, q, data


def md_syndrome_members(n: int, p: int, q: int) -> list[int]:
    """The data members in md's syndrome order: from the member after Q, wrapping."""
    return [(q + 1 + i) % n for i in range(n) if (q + 1 + i) % n not in (p, q)]


def member_areas(raw: list[bytes], data_offset: int, stripes: int, strip: int) -> np.ndarray:
    """(member, stripe, strip bytes) of each member's data area."""
    return np.stack([np.frombuffer(r[data_offset: data_offset + stripes * strip], dtype=np.uint8).reshape(stripes, strip)
                     for r in raw])


def bad_stripes(areas: np.ndarray, layout: str) -> list[tuple[int, str]]:
    """(stripe, "P" or "Q") for every stripe whose P or Q is not md's of its data."""
    n, stripes, _ = areas.shape
    out = []
    for s in range(stripes):
        p, q, _ = md_stripe(layout, n, s)
        pw = np.zeros(areas.shape[2], dtype=np.uint8)
        qw = np.zeros(areas.shape[2], dtype=np.uint8)
        coef = 1
        for m in md_syndrome_members(n, p, q):
            pw ^= areas[m, s]
            qw ^= _TIMES[coef][areas[m, s]]
            coef = slow_mul(coef, 2)
        if not np.array_equal(pw, areas[p, s]):
            out.append((s, "P"))
        if not np.array_equal(qw, areas[q, s]):
            out.append((s, "Q"))
    return out


def image_of(areas: np.ndarray, layout: str) -> bytes:
    """The host image: every stripe's data strips in logical order."""
    n, stripes, _ = areas.shape
    return b"".join(areas[m, s].tobytes() for s in range(stripes) for m in md_stripe(layout, n, s)[2])


def expected_areas(layout: str, n: int, stripes: int, strip: int, image: bytes) -> np.ndarray:
    """(member, stripe, strip bytes) that an array holding ``image`` must have on its
    members: each data strip where md's layout puts it, P and Q computed here."""
    data = np.frombuffer(image, dtype=np.uint8).reshape(stripes, n - 2, strip)
    out = np.empty((n, stripes, strip), dtype=np.uint8)
    for s in range(stripes):
        p, q, members = md_stripe(layout, n, s)
        for k, m in enumerate(members):
            out[m, s] = data[s, k]
        pw = np.zeros(strip, dtype=np.uint8)
        qw = np.zeros(strip, dtype=np.uint8)
        coef = 1
        for m in md_syndrome_members(n, p, q):
            pw ^= out[m, s]
            qw ^= _TIMES[coef][out[m, s]]
            coef = slow_mul(coef, 2)
        out[p, s], out[q, s] = pw, qw
    return out

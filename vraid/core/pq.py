"""RAID-6: P+Q parity (Linux md's raid6), survives any two members.

H. Peter Anvin, "The mathematics of RAID-6", sections 2-4, as md's ``raid6``
library (lib/raid6, drivers/md/raid5.c) computes it. With the data strips of
a stripe D_0 .. D_{n-1} in md's *syndrome order* (below) and arithmetic in
GF(2^8) (:mod:`vraid.core.gf256`: polynomial 0x11d, generator g = {02}):

* P = D_0 + D_1 + ... + D_{n-1}            (XOR, RAID-5's parity)
* Q = g^0 D_0 + g^1 D_1 + ... + g^{n-1} D_{n-1}

per byte, so every row (PBG) of a stripe has its own P and Q byte for byte.
Any two of the n+2 strips can be lost (Anvin section 4):

==================  ====================================================
lost                rebuilt by
==================  ====================================================
P, Q, or both       generating them again from the data
D_x                 P + the other data (as RAID-5)
D_x and Q           D_x from P, then Q generated
D_x and P           D_x = g^-x (Q + Q_x), Q_x the Q of the other data; then P
D_x and D_y         P_xy = P + others, Q_xy = Q + others (the two unknowns'
                    sums); D_x = (Q_xy + g^y P_xy) / (g^x + g^y), D_y = P_xy + D_x
==================  ====================================================

*Syndrome order.* md does not weight the data by logical order but by
"slot" (raid5.c ``raid6_idx_to_slot`` from ``raid6_d0``): the members are
walked from the one after Q, wrapping, skipping P and Q, and the k-th data
member met gets g^k. For the symmetric layouts the data starts right after Q
and wraps, so the slot of a strip is its logical number; for the asymmetric
ones (data in member order) it is a rotation of it. :meth:`PQ.slots` gives a
stripe's slots (None when they are the logical order) and every operation
takes them (``slots=``), so the member files hold md's Q under every layout.

*Layouts* (raid5.c ``raid5_compute_sector``, the level-6 branch; md's four
rotations under the RAID-5 names): P on ``N-1 - s mod N`` (left) or ``s mod N``
(right), Q on the member after P (wrapping); symmetric: data strip k on
``(P + 2 + k) mod N``; asymmetric: data in member order skipping P and Q
(``Q D D D P`` when P is the last member, ``D D P Q D`` otherwise).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import gf256
from .scheme import RAID5_LAYOUTS, Redundancy

Slots = Sequence[int] | None


def _weights(nd: int, slots: Slots) -> list[int]:
    """The Q coefficient g^slot of each of ``nd`` data columns (logical order)."""
    order = range(nd) if slots is None else slots
    return [gf256.gexp(s) for s in order]


class PQ(Redundancy):
    """RAID-6 (see the module docstring): P the XOR, Q md's Reed-Solomon syndrome."""

    level = 6
    parity_columns = 2
    tolerates = 2
    min_disks = 4
    layouts = RAID5_LAYOUTS
    check_names = ("P", "Q")

    # -- where the strips are -------------------------------------------------------
    def place(self, layout: str, ndisks: int, stripe: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        n = ndisks
        p = n - 1 - stripe % n if layout.startswith("left") else stripe % n
        q = (p + 1) % n
        if layout.endswith("-symmetric"):
            data = tuple((p + 2 + k) % n for k in range(n - 2))
        elif p == n - 1:  # Q D D D P
            data = tuple(k + 1 for k in range(n - 2))
        else:  # D D P Q D
            data = tuple(k + 2 if k >= p else k for k in range(n - 2))
        return data, (p, q)

    def slots(self, layout: str, ndisks: int, stripe: int) -> tuple[int, ...] | None:
        """md's syndrome slot of each data strip (logical order), None when it is the
        logical number itself (the symmetric layouts)."""
        data, (p, q) = self.place(layout, ndisks, stripe)
        walk = [(q + 1 + i) % ndisks for i in range(ndisks)]
        order = [d for d in walk if d not in (p, q)]
        slot = {d: i for i, d in enumerate(order)}
        out = tuple(slot[d] for d in data)
        return None if out == tuple(range(len(data))) else out

    # -- the operations -------------------------------------------------------------
    def generate(self, data: np.ndarray, out: np.ndarray | None = None, *, slots: Slots = None) -> np.ndarray:
        if out is None:
            out = np.empty((2,) + data.shape[1:], dtype=data.dtype)
        np.bitwise_xor.reduce(data, axis=0, out=out[0])
        self._q(data, _weights(data.shape[0], slots), out[1])
        return out

    @staticmethod
    def _q(data: np.ndarray, weights: Sequence[int], out: np.ndarray, skip: Sequence[int] = ()) -> np.ndarray:
        """``out`` := the Q sum over the data columns not in ``skip``: by Horner's rule in
        syndrome order, eight bytes at a time (as md's ``gen_syndrome``), when the blocks can
        be viewed as words; else one table take per column."""
        nd = data.shape[0]
        powers = [int(gf256.LOG[w]) for w in weights]
        words = gf256.as_words(out) if sorted(powers) == list(range(nd)) else None
        columns = [gf256.as_words(data[k]) for k in range(nd)] if words is not None else []
        if words is None or any(c is None for c in columns):
            out[...] = 0
            for k, w in enumerate(weights):
                if k not in skip:
                    gf256.scale_xor(out, w, data[k])
            return out
        tmp = np.empty_like(words)
        words[...] = 0
        started = False
        for k in sorted(range(nd), key=powers.__getitem__, reverse=True):  # g^(nd-1) first, g^0 last
            if started:
                gf256.times_g(words, words, tmp)  # Q so far times g (zero needs none)
            if k not in skip:
                np.bitwise_xor(words, columns[k], out=words)
                started = True
        return out

    def update(self, checks: np.ndarray, old: np.ndarray, new: np.ndarray, columns: Sequence[int], *,
               slots: Slots = None) -> None:
        p, q = checks[0], checks[1]
        for i, col in enumerate(columns):
            delta = old[i] ^ new[i]
            np.bitwise_xor(p, delta, out=p)
            gf256.scale_xor(q, gf256.gexp(col if slots is None else slots[col]), delta)

    def reconstruct(self, data: np.ndarray, checks: np.ndarray | None, missing: Sequence[int], *,
                    slots: Slots = None) -> None:
        missing = sorted(set(missing))
        if not missing:
            return
        if len(missing) > self.tolerates:
            raise ValueError(f"{len(missing)} columns missing; P+Q rebuilds two")
        assert checks is not None
        nd = data.shape[0]
        lost = [m for m in missing if m < nd]
        weights = _weights(nd, slots)
        if not lost:  # P, Q or both: from the data
            self._regenerate(data, checks, missing, weights)
            return
        p_ok, q_ok = nd not in missing, nd + 1 not in missing
        if len(lost) == 1:
            (x,) = lost
            if p_ok:  # as RAID-5
                acc = checks[0].copy()
                for j in range(nd):
                    if j != x:
                        np.bitwise_xor(acc, data[j], out=acc)
                data[x] = acc
            else:  # D and P: D_x from Q
                qx = self._q(data, weights, np.empty_like(checks[1]), skip=(x,))
                np.bitwise_xor(qx, checks[1], out=qx)
                gf256.scale(gf256.inv(weights[x]), qx, out=data[x])
            self._regenerate(data, checks, [m for m in missing if m >= nd], weights)
            return
        x, y = lost  # two data columns, P and Q both present
        pxy = checks[0].copy()
        for j in range(nd):
            if j not in lost:
                np.bitwise_xor(pxy, data[j], out=pxy)
        qxy = self._q(data, weights, np.empty_like(checks[1]), skip=lost)
        np.bitwise_xor(qxy, checks[1], out=qxy)
        gx, gy = weights[x], weights[y]
        gf256.scale_xor(qxy, gy, pxy)  # (g^x + g^y) D_x
        gf256.scale(gf256.inv(gx ^ gy), qxy, out=data[x])
        np.bitwise_xor(pxy, data[x], out=data[y])

    def _regenerate(self, data: np.ndarray, checks: np.ndarray, missing: Sequence[int], weights: Sequence[int]) -> None:
        nd = data.shape[0]
        if nd in missing:
            np.bitwise_xor.reduce(data, axis=0, out=checks[0])
        if nd + 1 in missing:
            self._q(data, weights, checks[1])

    def disagree(self, data: np.ndarray, checks: np.ndarray, *, slots: Slots = None) -> np.ndarray:
        p = (np.bitwise_xor.reduce(data, axis=0) ^ checks[0]).any(axis=-1)
        q = self._q(data, _weights(data.shape[0], slots), np.empty_like(checks[1]))
        np.bitwise_xor(q, checks[1], out=q)
        return np.stack([p, q.any(axis=-1)])

    def verify(self, data: np.ndarray, checks: np.ndarray, *, slots: Slots = None) -> np.ndarray:
        return self.disagree(data, checks, slots=slots).any(axis=0)

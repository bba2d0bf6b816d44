"""The seek curve of a modelled disk, fitted to its datasheet.

Ruemmler & Wilkes ("An introduction to disk drive modeling", 1994): ``a + b*sqrt(d)``
for short seeks, linear for long ones, fitted so that the average over random
sector pairs equals the datasheet's average seek; writes add a settle time so that
their average is the write-seek average (seed 000, section I-C quotes 4.1 ms for
the ST373454LC).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .hdd_params import HddParams
from .hdd_zones import HddGeometry


@dataclass(frozen=True, slots=True)
class SeekCurve:
    """``t(d) = a + b*sqrt(d)`` for ``1 <= d < knee``, ``c + e*d`` beyond; ``t(0) = 0``.

    ``write_extra`` is added to every write seek (the write settle).
    """

    knee: float = 1.0
    a: float = 0.0
    b: float = 0.0
    c: float = 0.0
    e: float = 0.0
    write_extra: float = 0.0
    #: average over random sector pairs (d = 0 included as zero), reads and writes
    mean_read: float = 0.0
    mean_write: float = 0.0

    def time(self, d: int, write: bool = False) -> float:
        if d <= 0:
            return 0.0
        v = self.a + self.b * math.sqrt(d) if d < self.knee else self.c + self.e * d
        return v + self.write_extra if write else v


@lru_cache(maxsize=64)
def fit_seek_curve(weights: tuple[int, ...], t1: float, tmax: float, avg: float, avg_write: float) -> SeekCurve:
    """Fit the Ruemmler & Wilkes two-part seek curve to the datasheet figures.

    ``weights`` are the sectors of each cylinder; a random request picks a sector
    uniformly, so the seek distance of two independent requests has the
    distribution of the (weighted) autocorrelation. Given a knee K, the curve is
    pinned by t(1) = ``t1`` (track to track), t(C-1) = ``tmax`` (full stroke) and
    a smooth join at K; K is bisected until the mean equals ``avg``. If ``avg``
    lies outside what the two end shapes (all linear, all square root) can give,
    the nearer shape is scaled to hit ``avg`` (then t1 and tmax are not kept).
    """
    import numpy as np  # construction time only

    ncyl = len(weights)
    if ncyl < 2:
        return SeekCurve()
    w = np.asarray(weights, dtype=float)
    w /= w.sum()
    n = 1 << (2 * ncyl - 1).bit_length()
    spec = np.fft.rfft(w, n)
    prob = np.fft.irfft(spec * np.conj(spec), n)[:ncyl]
    prob[1:] *= 2.0
    prob = np.clip(prob, 0.0, None)
    prob /= prob.sum()
    d = np.arange(ncyl, dtype=float)
    sq = np.sqrt(d)
    dmax = ncyl - 1
    tmax = max(tmax, t1)

    def shape(knee: float) -> tuple[float, float, float, float]:
        sk = math.sqrt(knee)
        b = (tmax - t1) / ((sk - 1.0) + (dmax - knee) / (2.0 * sk)) if dmax > 1 else 0.0
        a = t1 - b
        e = b / (2.0 * sk)
        c = a + b * sk - e * knee
        return a, b, c, e

    def mean(knee: float, coef: tuple[float, float, float, float]) -> float:
        a, b, c, e = coef
        f = np.where(d < knee, a + b * sq, c + e * d)
        f[0] = 0.0
        return float((prob * f).sum())

    lo, hi = 1.0, float(dmax)
    m_lo, m_hi = mean(lo, shape(lo)), mean(hi, shape(hi))
    if avg <= m_lo or avg >= m_hi or dmax <= 1:
        knee = lo if abs(avg - m_lo) <= abs(avg - m_hi) else hi
        coef = shape(knee)
        m = mean(knee, coef)
        s = avg / m if m > 0 else 1.0
        coef = tuple(x * s for x in coef)  # type: ignore[assignment]
    else:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if mean(mid, shape(mid)) < avg:
                lo = mid
            else:
                hi = mid
        knee = 0.5 * (lo + hi)
        coef = shape(knee)
    a, b, c, e = coef
    m = mean(knee, coef)
    p_move = 1.0 - float(prob[0])
    extra = (avg_write - m) / p_move if p_move > 0 else 0.0
    return SeekCurve(knee, a, b, c, e, extra, m, m + extra * p_move)


#: seek curves by (params, disk sectors): a fresh model of a full-size disk need not walk its
#: cylinders again (the stride benchmark builds one per curve point)
_SEEK_CURVES: dict[tuple[HddParams, int], SeekCurve] = {}


def seek_curve_for(p: HddParams, geo: HddGeometry) -> SeekCurve:
    """The calibrated seek curve of ``p`` over the sectors the datasheet average refers to."""
    key = (p, geo.disk_sectors)
    curve = _SEEK_CURVES.get(key)
    if curve is None:
        weights = tuple(geo.cylinder_weights(geo.disk_sectors))
        full = p.full_seek if p.full_seek is not None else 2.1 * p.avg_seek
        avg_w = p.avg_write_seek if p.avg_write_seek is not None else p.avg_seek
        curve = fit_seek_curve(weights, p.track_seek, full, p.avg_seek, avg_w)
        if len(_SEEK_CURVES) < 256:
            _SEEK_CURVES[key] = curve
    return curve

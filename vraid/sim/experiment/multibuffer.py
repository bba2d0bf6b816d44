"""Experiment ``multibuffer``: seed 004 (Hua, Vu & Hu) section 4, Figs. 3-8 and Table 1.

The paper's setup (section 3): nine disks, a database of 10,000 blocks laid out as
RAID-5, a 100-block buffer (about 1 % of the data), requests of up to 100 blocks
(reads) or 10 (writes) whose first block follows a Zipf-like distribution of skew z,
access-size skew 0.2, 120,000 requests of which the first 70,000 are warm-up; the
metric is the number of concurrent accesses (no disk timing). vraid runs the same
with its own placement policies and stripe directory in an access-counting loop
(:mod:`.multibuffer_sim`, which says exactly what is counted):

* Fig. 3: buffer hit rate of FIFO and LRW against the skew, W/R 0.3;
* Figs. 4 and 5: accesses against the W/R ratio at skew 0.3 and 0.7, for
  multibuffering (LRW), DPSR and RAID-5;
* Figs. 6, 7, 8: accesses against the skew at W/R 0.1, 0.5 and 0.9;
* Table 1: the sizes of the stripe writes multibuffering issued (all its runs, the
  final buffer flushes included), and the fraction that were full large writes.

The full run is 40,000 requests with 20,000 warm-up (ours: a third of the paper's
length, statistics over 20,000 requests instead of 50,000, to bound the run time);
``--quick`` runs 3,000 requests (1,000 warm-up) on a coarser grid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .verdict import compare, paper_vs_vraid

NAME = "multibuffer"
SCHEMES = ("multibuffer", "dpsr", "raid5")
#: ours: a third of the paper's 120,000 requests (70,000 warm-up) so the full run fits in minutes on a shared
#: 2-core machine; ``runs(False, requests=120_000, warmup=70_000)`` is the paper's length
FULL = {"requests": 40_000, "warmup": 20_000, "skews": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        "wrs": [0.1, 0.3, 0.5, 0.7, 0.9]}
QUICK = {"requests": 3_000, "warmup": 1_000, "skews": [0.0, 0.5, 1.0], "wrs": [0.1, 0.5, 0.9]}
FIG_WR_SKEWS = (0.3, 0.7)  # Figs. 4, 5
FIG_SKEW_WRS = (0.1, 0.5, 0.9)  # Figs. 6, 7, 8
FIG3_WR = 0.3
SEED = 4


def describe() -> str:
    return ("paper 004 Figs. 3-8, Table 1: multibuffering (LRW/FIFO) vs DPSR vs RAID-5, 9 disks, 10,000 blocks, "
            "100-block buffer, Zipf skew; disk accesses counted as the paper counts them")


def runs(quick: bool, *, requests: int | None = None, warmup: int | None = None,
         skews: list[float] | None = None, wrs: list[float] | None = None) -> list[dict[str, Any]]:
    """One run per (scheme, replacement order, skew, W/R) the figures need (shared runs once)."""
    st = {**(QUICK if quick else FULL), **({"skews": skews} if skews else {}), **({"wrs": wrs} if wrs else {})}
    base = {"requests": requests or st["requests"], "warmup": st["warmup"] if warmup is None else warmup}
    keys: list[tuple[str, str, float, float, str]] = []
    for skew in FIG_WR_SKEWS:
        for wr in st["wrs"]:
            keys += [(s, "lrw", skew, wr, "by_wr") for s in SCHEMES]
    for wr in FIG_SKEW_WRS:
        for skew in st["skews"]:
            keys += [(s, "lrw", skew, wr, "by_skew") for s in SCHEMES]
    for skew in st["skews"]:
        keys += [("multibuffer", order, skew, FIG3_WR, "fig3") for order in ("fifo", "lrw")]
    specs, seen = [], set()
    for scheme, order, skew, wr, _fig in keys:
        k = (scheme, order if scheme == "multibuffer" else "", skew, wr)
        if k in seen:
            continue
        seen.add(k)
        specs.append({"id": f"{scheme}{'-' + order if scheme == 'multibuffer' else ''}-z{skew}-wr{wr}",
                      "scheme": scheme, "order": order, "skew": skew, "wr": wr, **base})
    return specs


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from .multibuffer_sim import run_scheme

    return run_scheme(spec["scheme"], wr=spec["wr"], skew=spec["skew"], requests=spec["requests"],
                      warmup=spec["warmup"], seed=SEED, order=spec["order"])


# ---------------------------------------------------------------------- collect
def _get(results, scheme: str, skew: float, wr: float, order: str = "lrw") -> dict[str, Any]:
    for spec, out in results:
        if spec["scheme"] == scheme and spec["skew"] == skew and spec["wr"] == wr and \
                (scheme != "multibuffer" or spec["order"] == order):
            return out
    raise KeyError((scheme, skew, wr, order))


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    specs = [s for s, _ in results]
    skews = sorted({s["skew"] for s in specs if s["scheme"] == "multibuffer" and s["order"] == "fifo"})
    wrs = sorted({s["wr"] for s in specs if s["skew"] in FIG_WR_SKEWS})
    sizes = {str(k): 0 for k in range(1, 9)}
    for spec, out in results:
        if spec["scheme"] == "multibuffer":
            for k, v in out["sizes"].items():
                sizes[k] = sizes.get(k, 0) + v
    total = sum(sizes.values())
    res: dict[str, Any] = {
        "write_sizes": sizes,
        "lw_fraction": sizes["8"] / total if total else 0.0,
        "hit_rate": {"skew": skews,
                     "fifo": [_get(results, "multibuffer", z, FIG3_WR, "fifo")["hit_rate"] for z in skews],
                     "lrw": [_get(results, "multibuffer", z, FIG3_WR, "lrw")["hit_rate"] for z in skews]},
        "by_wr": {str(z): {"wr": wrs, **{s: [_get(results, s, z, w)["accesses"] for w in wrs] for s in SCHEMES}}
                  for z in FIG_WR_SKEWS},
        "by_skew": {str(w): {"skew": skews, **{s: [_get(results, s, z, w)["accesses"] for z in skews] for s in SCHEMES}}
                    for w in FIG_SKEW_WRS},
    }
    res["paper_vs_vraid"] = paper_vs_vraid(claims(res))
    return res


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """detail.json: every run's counters (reads/writes apart, background, LW/PW, fallbacks)."""
    return {"detail.json": {"runs": [{**{k: s[k] for k in ("scheme", "order", "skew", "wr", "requests", "warmup")}, **o}
                                     for s, o in results]}}


def _saving(a: float, b: float) -> float:
    return 100.0 * (1 - a / b) if b else 0.0


def claims(res: dict[str, Any]) -> list[Any]:
    """The paper's numbers (section 4, 5) beside ours."""
    f5, f7, f8 = res["by_wr"]["0.7"], res["by_skew"]["0.5"], res["by_skew"]["0.9"]
    mb, dp, r5 = f5["multibuffer"], f5["dpsr"], f5["raid5"]
    rows = [compare("large writes among multibuffering's stripe writes (Table 1)", 98.3, 100 * res["lw_fraction"],
                    unit="%")]
    rows.append(compare("max saving over DPSR, skew 0.7 (Fig. 5)", 40.0, max(_saving(a, b) for a, b in zip(mb, dp)),
                        unit="%", cause=CAUSE_DPSR))
    rows.append(compare("max saving over RAID-5, skew 0.7 (Fig. 5)", 84.0, max(_saving(a, b) for a, b in zip(mb, r5)),
                        unit="%", cause=CAUSE_RAID5))
    i = f5["wr"].index(0.1) if 0.1 in f5["wr"] else 0
    rows.append(compare("DPSR worse than RAID-5 at W/R 0.1, skew 0.7 (Fig. 5)", 14.0, 100 * (dp[i] / r5[i] - 1),
                        unit="%", cause=CAUSE_READS))
    rows.append(compare("W/R where DPSR matches RAID-5, skew 0.7 (Fig. 5)", 0.4, _crossing(f5["wr"], dp, r5),
                        cause=CAUSE_CROSS))
    sk = f7["skew"]
    top, zero = sk.index(max(sk)), sk.index(min(sk))
    best_other = min(f7["dpsr"][top], f7["raid5"][top])
    rows.append(compare("saving over the better of DPSR/RAID-5, W/R 0.5, skew 1.0 (Fig. 7)", 86.0,
                        _saving(f7["multibuffer"][top], best_other), unit="%", cause=CAUSE_HITS))
    rows.append(compare("saving over DPSR, W/R 0.5, skew 0 (Fig. 7)", 17.0,
                        _saving(f7["multibuffer"][zero], f7["dpsr"][zero]), unit="%", cause=CAUSE_READS))
    rows.append(compare("saving over DPSR, W/R 0.9, skew 1.0 (Fig. 8)", 89.0,
                        _saving(f8["multibuffer"][top], f8["dpsr"][top]), unit="%", cause=CAUSE_HITS))
    h = res["hit_rate"]
    gain = [100 * (l / f - 1) for l, f in zip(h["lrw"], h["fifo"]) if f > 0]
    rows.append(compare("best LRW hit-rate gain over FIFO, W/R 0.3 (Fig. 3)", 50.0, max(gain) if gain else 0.0,
                        unit="%", cause=CAUSE_LRW))
    rows.append(compare("LRW hit rate, lowest skew (section 2.3: 8 %)", 8.0, 100 * h["lrw"][0], unit="%",
                        cause=CAUSE_UNIFORM))
    rows.append(compare("LRW hit rate, highest skew (section 2.3: 86 %)", 86.0, 100 * h["lrw"][-1], unit="%",
                        cause=CAUSE_HITS))
    return rows


def _crossing(xs: list[float], a: list[float], b: list[float]) -> float:
    """The x where a - b changes sign (linear between grid points); nan if it never does."""
    d = [p - q for p, q in zip(a, b)]
    for i in range(len(d) - 1):
        if d[i] == 0:
            return xs[i]
        if (d[i] > 0) != (d[i + 1] > 0):
            return xs[i] + (xs[i + 1] - xs[i]) * d[i] / (d[i] - d[i + 1])
    return float("nan")


CAUSE_HITS = ("our buffer hit rates are far below the paper's (about 20 % at skew 1.0 against its 86 %): a "
              "request's first block is Zipf-distributed but a read then spans up to 100 consecutive blocks, most "
              "of them cold, and we count hits per block referenced; the paper does not define its hit rate. "
              "The savings the paper attributes to hits shrink with them")
CAUSE_UNIFORM = ("under uniform access a 100-block buffer over 10,000 blocks holds 1 % of them, so a per-block hit "
                 "rate is about 1 % under any replacement policy; the paper's 8 % cannot come from a per-block count "
                 "of the workload it describes (its hit definition is not given)")
CAUSE_LRW = ("LRW is ahead of FIFO at every skew above 0.2, as in the paper, but by little: with hit rates of "
             "1-20 % (see the hit-rate rows) there are few rewritten blocks for LRW to keep")
CAUSE_DPSR = ("our DPSR pays about 23 % more read accesses than multibuffering at every W/R (its migrated blocks "
              "pile up on some members); the paper's larger gap comes with its much higher hit rates, which "
              "only multibuffering enjoys")
CAUSE_RAID5 = ("reads cost both schemes the same (blocks stay on their home members) and our hit rates are low, "
               "so the reads bound the saving: at W/R 0.9 about half of multibuffering's accesses are reads "
               "RAID-5 pays too. The paper's 84 % needs the buffer to absorb most reads")
CAUSE_READS = ("ours: a read costs the busiest member's block count (one block per member per access); DPSR's "
               "migrated blocks make that about 30 % higher than RAID-5's for a 100-block read. The paper does "
               "not say how its simulator counts a multi-block read on one member")
CAUSE_CROSS = "the crossing moves with DPSR's read penalty (row above) and RAID-5's write cost"

from .multibuffer_report import report, summary  # noqa: E402  (the report half lives beside this module)

__all__ = ["NAME", "collect", "describe", "extras", "report", "run", "runs", "summary"]

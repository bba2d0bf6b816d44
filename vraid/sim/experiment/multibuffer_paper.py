"""Paper 004's claims (Hua, Vu & Hu) beside experiment ``multibuffer``'s numbers, one row each.

Every claim of the paper's text that a number or a yes/no can be read from is a row,
judged by the one rule (:mod:`.verdict`): the abstract's and section 2's "consistently
better" and "under all conditions", the section 2.2 cleaner claims, the hit rates of
sections 2.3 and 4.1, every number of sections 4.2-4.4 (Figs. 3-8 are drawn, not printed,
so their rows are the prose's numbers), Table 1 (counts and shares) and section 5's
"up to 89 % / 95 %". The setup (section 3) is listed as inputs.

**Accounting.** Rows about accesses are judged with the cleaner's accesses counted by the
paper's rule (section 2.2: a swap with both stripes in the hot region is a stripe-directory
change and costs nothing; other swaps move data; DPSR's collector has no hot region). The
cause of each row gives the same number under the ablations the run has: the requests'
accesses alone (the cleaner not counted, the experiment's figures before issue 34),
vraid's physical rule (every swap moves data), the whole array one hot region (every
swap free) and, at Fig. 5's points, 50 % spare stripes.
"""

from __future__ import annotations

from typing import Any, Callable

from . import verdict as V
from .multibuffer_sim import BLOCKS, DISKS, MAX_READ, MAX_WRITE

SCHEMES = ("multibuffer", "dpsr", "raid5")
#: Table 1 of the paper: stripe writes of S data blocks, S = 1..8, and the printed %W row
TABLE1_COUNTS = {1: 6, 2: 10, 3: 13, 4: 13, 5: 14, 6: 16, 7: 106, 8: 10130}
TABLE1_PERCENT = {1: 0.0, 2: 0.0, 3: 0.1, 4: 0.1, 5: 0.1, 6: 0.2, 7: 1.0, 8: 98.3}
#: section 4.4: "98.3% of the write accesses to the disk array are LWs. Another 1.2% are near-large"
LW_SHARE, NEAR_LARGE_SHARE = 98.3, 1.2
#: section 3
SETUP = {"disks": 9, "blocks": 10_000, "buffer": 100, "max_read": 100, "max_write": 10, "size_skew": 0.2,
         "requests": 120_000, "warmup": 70_000}
#: the ablations a cause reports, in order, and how the cause names them
RULES = {"requests": "cleaner not counted", "vraid": "vraid's rule (every swap moves data)",
         "hot_all": "whole array hot (every swap free)", "spare": "50 % spare stripes"}
View = Callable[[str, str], dict[str, list[int]]]


def view(res: dict[str, Any], rule: str) -> View:
    """``(group, key) -> {scheme: accesses per point}`` of one figure under one accounting:
    ``paper`` (the paper's rule), ``vraid``, ``requests``, ``hot_all`` or ``spare`` (Fig. 5
    only: KeyError elsewhere)."""
    def get(group: str, key: str) -> dict[str, list[int]]:
        b = res[group][key]
        if rule == "requests":
            return {s: b[s] for s in SCHEMES}
        if rule in ("paper", "vraid"):
            return b[f"{rule}_rule"]
        if rule == "hot_all":
            return {**b["paper_rule"], "multibuffer": b["hot_all"]["multibuffer"]}
        if rule == "spare" and (group, key) == ("by_wr", "0.7"):
            a = res["ablations"]["spare"]
            return {s: a[s] for s in SCHEMES}
        raise KeyError((rule, group, key))
    return get


def _size_skew_split(parts: dict[str, Any] | None, order: dict[str, list[str]]) -> str:
    """The counter behind the size-skew row: for the two schemes whose order changes between the
    lowest and the highest size skew, how their requests' accesses and their cleaner's grew."""
    if not parts or len(order) < 2:
        return ""
    lo, hi = min(order, key=float), max(order, key=float)
    swapped = [(a, b) for i, a in enumerate(order[lo]) for b in order[lo][i + 1:]
               if order[hi].index(a) > order[hi].index(b)]
    if not swapped:
        return ""
    a, b = swapped[0]

    def grew(s: str, k: str) -> str:
        x, y = parts[lo][s][k], parts[hi][s][k]
        return f"{x} -> {y} ({y / x:.2f}x)" if x else f"{x} -> {y}"

    return (f"; counter, size skew {lo} -> {hi}: {a}'s requests {grew(a, 'requests')}, its cleaner "
            f"{grew(a, 'cleaner')}; {b}'s requests {grew(b, 'requests')}, its cleaner {grew(b, 'cleaner')}")


def _points(v: View, res: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(multibuffering, DPSR, RAID-5) at every point of Figs. 4-8."""
    out = []
    for group in ("by_wr", "by_skew"):
        for key in res[group]:
            d = v(group, key)
            out += list(zip(d["multibuffer"], d["dpsr"], d["raid5"]))
    return out


def _saving(a: float, b: float) -> float:
    return 100.0 * (1 - a / b) if b else 0.0


def crossing(xs: list[float], a: list[float], b: list[float]) -> float:
    """The x where a - b changes sign (linear between grid points); nan if it never does."""
    d = [p - q for p, q in zip(a, b)]
    for i in range(len(d) - 1):
        if d[i] == 0:
            return xs[i]
        if (d[i] > 0) != (d[i + 1] > 0):
            return xs[i] + (xs[i + 1] - xs[i]) * d[i] / (d[i] - d[i + 1])
    if d and d[-1] == 0:
        return xs[-1]
    return float("nan")


class _Rows:
    """Builds the rows; each access row is judged on the paper's rule, its cause gives the
    ablations' values of the same number."""

    def __init__(self, res: dict[str, Any]) -> None:
        self.res = res
        self.rows: list[V.Comparison] = []

    def _ablations(self, metric: Callable[[View], float], fmt: Callable[[float], str]) -> str:
        parts = []
        for rule, label in RULES.items():
            try:
                parts.append(f"{label} {fmt(metric(view(self.res, rule)))}")
            except KeyError:
                continue
        return "ablations: " + ", ".join(parts)

    def number(self, item: str, paper: float, metric: Callable[[View], float], why: str = "", *,
               unit: str = "%", baseline: float = 0.0) -> None:
        ours = metric(view(self.res, "paper"))
        fmt = (lambda x: V.fmt_value(x, unit))
        cause = "; ".join(p for p in (why, self._ablations(metric, fmt)) if p)
        self.rows.append(V.compare(item, paper, ours, unit=unit, baseline=baseline, cause=cause))

    def claim(self, item: str, metric: Callable[[View], bool], why: str = "") -> None:
        ours = metric(view(self.res, "paper"))
        cause = "; ".join(p for p in (why, self._ablations(metric, lambda x: "yes" if x else "no")) if p)
        self.rows.append(V.holds(item, True, bool(ours), cause=cause))


def claims(res: dict[str, Any]) -> list[V.Comparison]:
    """Every row: inputs, the headline, Figs. 3-8, the cleaner, Table 1, what is not run."""
    st = res["settings"]
    rows = [V.given("disks (sec. 3)", SETUP["disks"], DISKS),
            V.given("database blocks (sec. 3)", SETUP["blocks"], BLOCKS),
            V.given("write buffer, blocks (sec. 4.1, about 1 % of the data)", SETUP["buffer"], st["buffer"]),
            V.given("largest read, blocks (sec. 3)", SETUP["max_read"], MAX_READ),
            V.given("largest write, blocks (sec. 3)", SETUP["max_write"], MAX_WRITE),
            V.given("access-size skew (sec. 4.2)", SETUP["size_skew"], st["size_skew"]),
            V.given("requests per run (sec. 3)", SETUP["requests"], st["requests"],
                    cause="ours shorter, to bound the run time"),
            V.given("warm-up requests (sec. 3)", SETUP["warmup"], st["warmup"], cause="ours shorter")]
    r = _Rows(res)
    cl = res["cleaner"]
    swaps = cl["swaps_hot"] + cl["swaps_cold"]
    cleaner = (f"the paper's rule charges {cl['swaps_cold']} of multibuffering's {swaps} swaps (a stripe in the cold "
               f"region; {cl['victims_hot']} of {cl['victims']} victims hot, the hot region being the last "
               f"{100 * st['hot']:g} % of the stripes)")
    best = (lambda v: [m < min(d, f) for m, d, f in _points(v, res)])
    r.claim("multibuffering needs the fewest accesses at every point of Figs. 4-8 (abstract; sec. 4.2, 4.4, 5)",
            lambda v: all(best(v)), cleaner)
    r.number("share of Figs. 4-8's points where multibuffering needs the fewest accesses", 100.0,
             lambda v: 100.0 * sum(best(v)) / len(best(v)), cleaner)
    r.claim("multibuffering beats RAID-5 at every point (sec. 2: \"under all conditions\")",
            lambda v: all(m < f for m, _, f in _points(v, res)), cleaner)
    r.claim("DPSR is sometimes worse than RAID-5 (abstract)", lambda v: any(d > f for _, d, f in _points(v, res)))
    _figures(r, res, cleaner)
    _hits(r, res)
    _cleaner_and_locality(r, res)
    _table1(r, res)
    rows += r.rows
    return rows + _logging_rows(res) if "logging" in res else rows + [
        V.not_run(ROW_PEAK, 8 / 5, "the run has no log-based schemes (an older store)", unit="x"),
        V.not_run(ROW_DPSR, 2.0, "the run has no log-based schemes (an older store)", unit="x")]


ROW_PEAK = ("most data blocks one write access puts on the disks: multibuffering's large write n-1 = 8 against "
            "Data/Parity Logging's floor((n+1)/2) = 5 (sec. 5)")
ROW_DPSR = "DPSR twice as efficient as the log-based approach (sec. 1): the user's blocks written per write access"
_NAMES = {"multibuffer": "multibuffering", "dpsr": "DPSR", "raid5": "RAID-5", "data-logging": "Data Logging",
          "parity-logging": "Parity Logging"}


def _logging_rows(res: dict[str, Any]) -> list[V.Comparison]:
    """Sections 1 and 5 against the log-based schemes (:mod:`.multibuffer_logging`), at Fig. 5's
    points: the most blocks one access writes, and the user's blocks per write access, the
    cleaner counted by the paper's rule (DPSR's collector; the logs' cleanings by the
    one-block-per-member rule), the requests alone as the ablation."""
    lg = res["logging"]
    logs = [s for s in ("data-logging", "parity-logging") if s in lg]
    peak = {s: max(lg[s]["peak_blocks_per_access"]) for s in lg if isinstance(lg[s], dict) and s != "log_disk"}

    def per_access(s: str, cleaner: bool) -> float:
        d = lg[s]
        acc = sum(d["write_accesses"]) + (sum(d["background_paper"]) if cleaner else 0)
        return sum(d["write_refs"]) / acc if acc else 0.0

    ld = lg["log_disk"]
    best_log = max(logs, key=lambda s: peak[s])
    rule = ("counted as seed 004's simulator counts (one block per member per access), so a log append costs what a "
            "random write costs: the logging schemes' gain in a real disk (a sequential append in place of the "
            "parity's random read-modify-write) is not in the count")
    rows = [V.compare(ROW_PEAK, 8 / 5, peak["multibuffer"] / peak[best_log] if peak[best_log] else 0.0, unit="x",
                      baseline=1.0,
                      cause="the most blocks per access over Fig. 5's runs (counter): " + ", ".join(
                          f"{_NAMES[s]} {peak[s]:.2f}" for s in peak) + "; a logged block costs two I/Os (Data Logging: "
                      "in place and in the log; Parity Logging: its old value read, the new one written), so nine "
                      "members put at most nine blocks in two accesses, 4.5; with the log on a disk of its own "
                      f"(ablation, W/R {ld['wr']:g}): " + ", ".join(
                          f"{_NAMES[s]} {ld[s]['peak_blocks_per_access']:.2f}" for s in logs)
                      + "; RAID-5 also writes 8 in one access when a request covers a whole stripe")]
    eff = {s: per_access(s, True) for s in ("dpsr", *logs)}
    req = {s: per_access(s, False) for s in ("dpsr", "raid5", *logs)}
    better = max(logs, key=lambda s: eff[s])
    better_req = max(logs, key=lambda s: req[s])
    rows.append(V.compare(ROW_DPSR, 2.0, eff["dpsr"] / eff[better] if eff[better] else 0.0, unit="x", baseline=1.0,
                          cause="the user's blocks per write access over Fig. 5's points, cleaner counted (DPSR's "
                                "collector by the paper's rule, the logs' cleanings): " + ", ".join(
                                    f"{_NAMES[s]} {eff[s]:.2f}" for s in eff)
                                + "; ablation, requests only: " + ", ".join(f"{_NAMES[s]} {req[s]:.2f}" for s in req)
                                + f", DPSR over {_NAMES[better_req]} {req['dpsr'] / req[better_req]:.2f}x; " + rule))
    return rows


def _figures(r: _Rows, res: dict[str, Any], cleaner: str) -> None:
    """Sections 4.2, 4.3 and 5: the numbers the prose gives for Figs. 4-8."""
    f5 = (lambda v: v("by_wr", "0.7"))
    wrs = res["by_wr"]["0.7"]["wr"]
    skews = res["by_skew"]["0.5"]["skew"]
    top, zero = skews.index(max(skews)), skews.index(min(skews))
    i01 = wrs.index(0.1) if 0.1 in wrs else 0
    r.number("max saving over DPSR, skew 0.7 (Fig. 5)", 40.0,
             lambda v: max(_saving(a, b) for a, b in zip(f5(v)["multibuffer"], f5(v)["dpsr"])), cleaner)
    r.number("max saving over RAID-5, skew 0.7 (Fig. 5)", 84.0,
             lambda v: max(_saving(a, b) for a, b in zip(f5(v)["multibuffer"], f5(v)["raid5"])), cleaner)
    dp_reads = res["by_wr"]["0.7"]["read_accesses"]
    r.number("DPSR worse than RAID-5 at W/R 0.1, skew 0.7 (Fig. 5)", 14.0,
             lambda v: 100 * (f5(v)["dpsr"][i01] / f5(v)["raid5"][i01] - 1),
             f"DPSR's reads cost {dp_reads['dpsr'][i01] / dp_reads['raid5'][i01]:.2f}x RAID-5's here (read "
             "accesses counted: its blocks migrated between members); its collector adds "
             f"{res['by_wr']['0.7']['paper_rule']['dpsr'][i01] - res['by_wr']['0.7']['dpsr'][i01]} accesses")
    p5 = f5(view(res, "paper"))
    r.number("W/R where DPSR matches RAID-5, skew 0.7 (Fig. 5; sec. 5: \"in the neighborhood of 0.4\")", 0.4,
             lambda v: crossing(wrs, f5(v)["dpsr"], f5(v)["raid5"]),
             "DPSR over RAID-5, its collector counted: " + ", ".join(
                 f"W/R {w:g} {d / f:.2f}x" for w, d, f in zip(wrs, p5["dpsr"], p5["raid5"])), unit="")
    r.claim("accesses fall as the W/R ratio rises, multibuffering, skew 0.7 (sec. 4.2)",
            lambda v: f5(v)["multibuffer"][-1] < f5(v)["multibuffer"][0],
            "the requests' accesses fall (writes are at most 10 blocks) but the cleaner's rise with the writes")
    r.claim("DPSR worse than RAID-5 at every skew, W/R 0.1 (Fig. 6)",
            lambda v: all(d > f for d, f in zip(v("by_skew", "0.1")["dpsr"], v("by_skew", "0.1")["raid5"])))
    r.number("DPSR over RAID-5 at W/R 0.5, mean over the skews (Fig. 7: \"improves to match\")", 1.0,
             lambda v: sum(d / f for d, f in zip(v("by_skew", "0.5")["dpsr"], v("by_skew", "0.5")["raid5"]))
             / len(skews), "DPSR's collector (no hot region: every swap moves data) adds "
             + ", ".join(str(p - q) for p, q in zip(res["by_skew"]["0.5"]["paper_rule"]["dpsr"],
                                                     res["by_skew"]["0.5"]["dpsr"]))
             + " accesses to its requests' (skew " + ", ".join(f"{z:g}" for z in skews) + ")", unit="x", baseline=1.0)
    f7 = (lambda v: v("by_skew", "0.5"))
    r.number("saving over the better of DPSR/RAID-5, W/R 0.5, skew 1.0 (Fig. 7)", 86.0,
             lambda v: _saving(f7(v)["multibuffer"][top], min(f7(v)["dpsr"][top], f7(v)["raid5"][top])), cleaner)
    r.number("saving over DPSR, W/R 0.5, skew 0 (Fig. 7)", 17.0,
             lambda v: _saving(f7(v)["multibuffer"][zero], f7(v)["dpsr"][zero]), cleaner)
    f8 = (lambda v: v("by_skew", "0.9"))
    r.claim("DPSR beats RAID-5 at every skew, W/R 0.9 (Fig. 8)",
            lambda v: all(d < f for d, f in zip(f8(v)["dpsr"], f8(v)["raid5"])),
            "DPSR's collector adds " + ", ".join(
                f"{p - q}" for p, q in zip(res["by_skew"]["0.9"]["paper_rule"]["dpsr"], res["by_skew"]["0.9"]["dpsr"]))
            + " accesses to its requests' (skew " + ", ".join(f"{z:g}" for z in skews) + ")")
    r.claim("multibuffering needs fewer accesses as the skew grows, W/R 0.9 (Fig. 8)",
            lambda v: f8(v)["multibuffer"][top] < f8(v)["multibuffer"][zero])
    r.number("saving over DPSR, W/R 0.9, skew 1.0 (Fig. 8)", 89.0,
             lambda v: _saving(f8(v)["multibuffer"][top], f8(v)["dpsr"][top]), cleaner)
    r.number("max saving over DPSR, any point (sec. 5: \"up to 89%\")", 89.0,
             lambda v: max(_saving(m, d) for m, d, _ in _points(v, res)), cleaner)
    r.number("max saving over RAID-5, any point (sec. 5: \"95%\")", 95.0,
             lambda v: max(_saving(m, f) for m, _, f in _points(v, res)), cleaner)
    size = res["ablations"]["size_skew"]
    order = {k: sorted(SCHEMES, key=lambda s: size[k][s]) for k in size if k not in ("skew", "wr")}
    r.rows.append(V.holds("access-size skew has little impact: the schemes' order is the same at size skew "
                          f"{', '.join(sorted(order))} (sec. 4.2; W/R {size['wr']}, skew {size['skew']})",
                          True, len({tuple(o) for o in order.values()}) == 1,
                          cause="accesses with the cleaner by the paper's rule: " + "; ".join(
                              f"size skew {k}: " + " < ".join(f"{n} {size[k][n]}" for n in o)
                              for k, o in sorted(order.items()))
                          + _size_skew_split(res["ablations"].get("size_skew_parts"), order)))


def _hits(r: _Rows, res: dict[str, Any]) -> None:
    """Sections 2.3 and 4.1: hit rates (Fig. 3, W/R 0.3), LRW against FIFO, the buffer size."""
    h = res["hit_rate"]
    pct = (lambda x: f"{100 * x:.1f} %")
    counts = (lambda i: f"ours per block referenced {pct(h['lrw'][i])}; counted on a read's first block only (the "
                        f"Zipf-drawn one) {pct(h['lrw_first_block'][i])}; write hits alone {pct(h['lrw_write'][i])}")
    r.rows.append(V.compare("LRW hit rate, lowest skew (sec. 2.3: 8 %)", 8.0, 100 * h["lrw"][0], unit="%",
                            cause=f"{counts(0)}; a {res['settings']['buffer']}-block buffer holds "
                                  f"{100 * res['settings']['buffer'] / BLOCKS:g} % of the blocks, the most any uniform "
                                  "count can hit; cause not found: the paper's hit definition is not given, and "
                                  "first-block and write-only counting were ruled out"))
    r.rows.append(V.compare("LRW hit rate, highest skew (sec. 2.3: 86 %)", 86.0, 100 * h["lrw"][-1], unit="%",
                            cause=f"{counts(-1)}; cause not found: no counting tried reaches 86 % (ruled out: "
                                  "per block, first block, write hits)"))
    gain = [100 * (l / f - 1) if f else 0.0 for l, f in zip(h["lrw"], h["fifo"])]
    skews = h["skew"]
    hs = res.get("hit_rate_seeds") or {"seeds": [res["settings"]["seed"]], "lrw": [h["lrw"]], "fifo": [h["fifo"]],
                                       "lrw_write": [h["lrw_write"]], "fifo_write": [h["fifo_write"]]}
    by_seed = [[100 * (l / f - 1) if f else 0.0 for l, f in zip(ls, fs)] for ls, fs in zip(hs["lrw"], hs["fifo"])]
    seeds = f"seeds {', '.join(str(k) for k in hs['seeds'])}"
    runs = len(hs["seeds"]) > 1
    never_worse = [all(l >= f for z, l, f in zip(skews, ls, fs) if z > 0) for ls, fs in zip(hs["lrw"], hs["fifo"])]
    r.rows.append(V.holds("LRW's hit rate at least FIFO's at every skew but uniform (sec. 4.1)", True,
                          never_worse[0], spread=never_worse if runs else None,
                          cause="LRW minus FIFO (counter): " + ", ".join(
                              f"skew {z:g} {100 * (l - f):+.3f} points" for z, l, f in zip(skews, h["lrw"], h["fifo"]))
                          + f"; it holds in {sum(never_worse)} of {len(never_worse)} runs ({seeds}): where both "
                            f"rates are near the buffer's {100 * res['settings']['buffer'] / BLOCKS:g} % share of the "
                            "blocks their order is a few hits either way"))
    wgain = [100 * (l / f - 1) if f else 0.0 for l, f in zip(h["lrw_write"], h["fifo_write"])]
    best = [max(g) for g in by_seed]
    r.rows.append(V.compare("best LRW hit-rate gain over FIFO, mid-range skew (Fig. 3)", 50.0, max(gain), unit="%",
                            spread=(min(best), max(best)) if runs else None,
                            cause=f"counted on write hits alone the best gain is {max(wgain):.1f} %; with per-block hit "
                                  f"rates of {pct(min(h['lrw']))}-{pct(max(h['lrw']))} few rewritten blocks are left "
                                  f"for LRW to keep; range over {seeds}; cause of the paper's 50 % not found"))
    i = next((k for k, z in enumerate(skews) if z > 0), 0)
    near = [g[i] for g in by_seed]
    r.rows.append(V.compare(f"LRW gain over FIFO near uniform, skew {skews[i]:g} (sec. 4.1: about 10 %)", 10.0,
                            gain[i], unit="%", spread=(min(near), max(near)) if runs else None,
                            cause=f"write hits alone {wgain[i]:+.1f} %; FIFO's hit rate {pct(h['fifo'][i])}, LRW's "
                                  f"{pct(h['lrw'][i])}, both about the buffer's share of the blocks; range over "
                                  f"{seeds}; cause of the paper's 10 % not found (ruled out: per-block and write-only "
                                  "counting)"))
    b = res["ablations"]["buffer"]
    sizes = sorted((k for k in b if k not in ("skew", "wr")), key=int)
    rates = [b[k]["hit_rate"] for k in sizes]
    r.rows.append(V.holds("a larger buffer, a higher hit rate (sec. 4.1)", True,
                          all(x < y for x, y in zip(rates, rates[1:])),
                          cause=", ".join(f"{k} blocks {pct(x)}" for k, x in zip(sizes, rates))
                          + f" (W/R {b['wr']}, skew {b['skew']})"))


def _cleaner_and_locality(r: _Rows, res: dict[str, Any]) -> None:
    """Section 2.2 (the free-stripe generator) and the locality claims of sections 1 and 5."""
    cl = res["cleaner"]
    r.rows.append(V.holds("the victim stripe is likely in the hot region (sec. 2.2)", True,
                          cl["victims_hot"] > cl["victims"] / 2,
                          cause=f"{cl['victims_hot']} of {cl['victims']} victims hot (counter); the victim is the "
                                "stripe with the fewest active blocks, and the blocks the updates dirty sit on their "
                                "home stripes, in the cold region: the hot region (vraid's: the last stripes) holds "
                                "only what large writes put there"))
    r.rows.append(V.holds("multibuffering never falls back to RAID-5 small writes: the generator always finds a "
                          "free stripe or a PFS (sec. 2.2)", True, cl["small_writes"] == 0,
                          cause=f"{cl['small_writes']} small writes in multibuffering's runs"))
    r.rows.append(V.holds("DPSR's collector sometimes finds no free stripe and falls back to RAID-5 (sec. 1)", True,
                          res["dpsr_fallbacks"] > 0, cause=f"{res['dpsr_fallbacks']} fallbacks over DPSR's runs"))
    reads = [(m, d, f) for g in ("by_wr", "by_skew") for k in res[g]
             for m, d, f in zip(*(res[g][k]["read_accesses"][s] for s in SCHEMES))]
    r.rows.append(V.holds("multibuffering keeps locality: its reads cost no more than RAID-5's (sec. 5)", True,
                          all(m <= f for m, _, f in reads),
                          cause=f"read accesses, multibuffering over RAID-5: {min(m / f for m, _, f in reads):.2f}-"
                                f"{max(m / f for m, _, f in reads):.2f}x"))
    r.rows.append(V.holds("DPSR loses locality: its reads cost more than RAID-5's (sec. 1)", True,
                          all(d > f for _, d, f in reads),
                          cause=f"read accesses, DPSR over RAID-5: {min(d / f for _, d, f in reads):.2f}-"
                                f"{max(d / f for _, d, f in reads):.2f}x"))


def _table1(r: _Rows, res: dict[str, Any]) -> None:
    """Section 4.4, Table 1: shares of the stripe writes by size S (the paper's from its counts)."""
    sizes, flush = res["write_sizes"], res["flush_sizes"]
    total, paper_total = sum(sizes.values()), sum(TABLE1_COUNTS.values())
    share = (lambda s: 100.0 * sizes[str(s)] / total if total else 0.0)
    runs = res.get("table1_runs", "all")
    r.rows.append(V.compare("large writes among multibuffering's stripe writes (Table 1, sec. 4.4)", LW_SHARE,
                            share(8), unit="%"))
    r.rows.append(V.compare("near-large writes, S = 6 and 7 (sec. 4.4)", NEAR_LARGE_SHARE, share(6) + share(7),
                            unit="%", cause=_why_size(sizes, flush, (6, 7), runs)))
    for s in range(1, 8):
        r.rows.append(V.compare(f"Table 1, S = {s}: share of stripe writes (paper: {TABLE1_COUNTS[s]} of "
                                f"{paper_total:,})", 100.0 * TABLE1_COUNTS[s] / paper_total, share(s), unit="%",
                                cause=_why_size(sizes, flush, (s,), runs)))
    small = sum(sizes[str(s)] for s in range(1, 6))
    from_flush = sum(flush.get(str(s), 0) for s in range(1, 6))
    r.rows.append(V.holds("writes of S = 1-5 are mostly the final buffer flush (sec. 4.4)", True,
                          small > 0 and from_flush > small / 2,
                          cause=f"{from_flush} of {small} came from the final flushes of {runs} runs (counter)"))


def _why_size(sizes: dict[str, int], flush: dict[str, int], ss: tuple[int, ...], runs: Any) -> str:
    n = sum(sizes[str(s)] for s in ss)
    f = sum(flush.get(str(s), 0) for s in ss)
    return (f"{f} of our {n} came from the final flushes of {runs} runs (the paper's table is one simulation, one "
            f"flush); the other {n - f} are PWs made while fewer than 8 buffers held blocks")

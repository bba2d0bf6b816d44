"""Experiment ``multibuffer``: paper 004 (Hua, Vu & Hu) sections 2-5, Figs. 3-8 and Table 1.

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
  final buffer flushes included), and the fraction that were full large writes;
* sections 1 and 5, the log-based schemes: Data Logging and Parity Logging, counted by the
  same rule (:mod:`.multibuffer_logging`, vraid's models of sec. 1's descriptions), at
  Fig. 5's points, and with the log on a disk of its own at the ablation point.

Every access count is given three ways: the requests' own accesses (``multibuffer``,
``dpsr``, ``raid5``: what the paper's figures plot if its cleaner is not counted), and
with the cleaner's (free-stripe generator, garbage collector) added by the paper's rule
(``paper_rule``: a swap inside the hot region is a directory change, section 2.2) and by
vraid's physical rule (``vraid_rule``: every swap moves data). The claims are judged on
the paper's rule (:mod:`.multibuffer_paper`). Ablations: multibuffering with the whole
array one hot region (``hot_all``: every swap free) at every figure point; 50 % spare
stripes at Fig. 5's points; access-size skew 0 and 0.6 and a 50- and 200-block buffer
at W/R 0.5, skew 0.7. Fig. 3 runs with two more seeds, for the run-to-run range of the
LRW-vs-FIFO rows (the verdict ``inconclusive`` where it crosses the paper's side).

The full run is 40,000 requests with 20,000 warm-up (ours: a third of the paper's
length, statistics over 20,000 requests instead of 50,000, to bound the run time);
``--quick`` runs 3,000 requests (1,000 warm-up) on a coarser grid.
"""

from __future__ import annotations

from typing import Any

from .multibuffer_logging import LOGGING
from .multibuffer_sim import SIZE_SKEW

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
#: vraid's defaults for what the paper does not give (the placement's own defaults)
HOT, SPARE, BUFFER = 0.1, 0.05, 100
#: the ablations: (variant, scheme settings), and where they run
SPARE_ABLATION = 0.5
SIZE_SKEWS = (0.0, 0.6)
BUFFERS = (50, 200)
ABLATION_POINT = (0.7, 0.5)  # (skew, W/R)
#: Fig. 3 is run again with these seeds: the run-to-run range of the LRW-vs-FIFO rows
FIG3_SEEDS = (5, 6)
#: the log-based schemes run at Fig. 5's points (this skew, every W/R)
LOG_SKEW = 0.7


def describe() -> str:
    return ("paper 004 Figs. 3-8, Table 1: multibuffering (LRW/FIFO) vs DPSR vs RAID-5, 9 disks, 10,000 blocks, "
            "100-block buffer, Zipf skew; accesses with the cleaner counted by the paper's rule and by vraid's")


def _spec(scheme: str, order: str, skew: float, wr: float, base: dict[str, Any], variant: str = "",
          **settings: Any) -> dict[str, Any]:
    rid = f"{scheme}{'-' + order if scheme == 'multibuffer' else ''}-z{skew}-wr{wr}{'-' + variant if variant else ''}"
    return {"id": rid, "scheme": scheme, "order": order, "skew": skew, "wr": wr, "variant": variant,
            "hot": HOT, "spare": SPARE, "buffer": BUFFER, "size_skew": SIZE_SKEW, "seed": SEED, **base, **settings}


def runs(quick: bool, *, requests: int | None = None, warmup: int | None = None,
         skews: list[float] | None = None, wrs: list[float] | None = None) -> list[dict[str, Any]]:
    """One run per (scheme, replacement order, skew, W/R) the figures need (shared runs once),
    then the ablations."""
    st = {**(QUICK if quick else FULL), **({"skews": skews} if skews else {}), **({"wrs": wrs} if wrs else {})}
    base = {"requests": requests or st["requests"], "warmup": st["warmup"] if warmup is None else warmup}
    points: list[tuple[float, float]] = []  # (skew, W/R) of Figs. 4-8
    for skew in FIG_WR_SKEWS:
        points += [(skew, wr) for wr in st["wrs"]]
    for wr in FIG_SKEW_WRS:
        points += [(skew, wr) for skew in st["skews"] if (skew, wr) not in points]
    specs = [_spec(s, "lrw", z, w, base) for z, w in points for s in SCHEMES]
    have = {(z, w) for z, w in points}
    specs += [_spec("multibuffer", order, z, FIG3_WR, base) for z in st["skews"] for order in ("fifo", "lrw")
              if order == "fifo" or (z, FIG3_WR) not in have]
    specs += [_spec("multibuffer", "lrw", z, w, base, "hot1", hot=1.0) for z, w in points]
    specs += [_spec(s, "lrw", 0.7, w, base, "spare", spare=SPARE_ABLATION)
              for w in st["wrs"] for s in ("multibuffer", "dpsr")]
    z, w = ABLATION_POINT
    if ABLATION_POINT not in have:  # a grid without the point: its runs with the defaults
        specs += [_spec(s, "lrw", z, w, base, "point") for s in SCHEMES]
    specs += [_spec(s, "lrw", z, w, base, f"size{k}", size_skew=k) for k in SIZE_SKEWS for s in SCHEMES]
    # sections 1 and 5: the log-based schemes at Fig. 5's points; the log on a disk of its own at the point
    specs += [_spec(s, "lrw", LOG_SKEW, w, base) for w in st["wrs"] for s in LOGGING]
    specs += [_spec(s, "lrw", z, w, base, "logdisk", log_disk=True) for s in LOGGING]
    specs += [_spec("multibuffer", "lrw", z, w, base, f"buffer{b}", buffer=b) for b in BUFFERS]
    specs += [_spec("multibuffer", order, z, FIG3_WR, base, f"seed{k}", seed=k)
              for k in FIG3_SEEDS for z in st["skews"] for order in ("fifo", "lrw")]
    return specs


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from .multibuffer_sim import run_scheme

    return run_scheme(spec["scheme"], wr=spec["wr"], skew=spec["skew"], requests=spec["requests"],
                      warmup=spec["warmup"], seed=spec.get("seed", SEED), order=spec["order"], hot=spec["hot"],
                      spare=spec["spare"], buffer=spec["buffer"], size_skew=spec["size_skew"],
                      log_disk=spec.get("log_disk", False))


# ---------------------------------------------------------------------- collect
def _get(results, scheme: str, skew: float, wr: float, order: str = "lrw", variant: str = "") -> dict[str, Any]:
    for spec, out in results:
        if spec["scheme"] == scheme and spec["skew"] == skew and spec["wr"] == wr and \
                spec.get("variant", "") == variant and (scheme != "multibuffer" or spec["order"] == order):
            return out
    raise KeyError((scheme, skew, wr, order, variant))


def _block(results, key: str, xs: list[float], fixed: float) -> dict[str, Any]:
    """One figure: accesses by scheme (requests only), then with the cleaner by each rule."""
    at = (lambda x: (fixed, x)) if key == "wr" else (lambda x: (x, fixed))
    outs = {s: [_get(results, s, *at(x)) for x in xs] for s in SCHEMES}
    block: dict[str, Any] = {key: xs, **{s: [o["accesses"] for o in outs[s]] for s in SCHEMES}}
    block["read_accesses"] = {s: [o["read_accesses"] for o in outs[s]] for s in SCHEMES}
    block["paper_rule"] = {s: [o["accesses"] + o["background_paper"] for o in outs[s]] for s in SCHEMES}
    block["vraid_rule"] = {s: [o["accesses"] + o["background"] for o in outs[s]] for s in SCHEMES}
    hot = [_get(results, "multibuffer", *at(x), variant="hot1") for x in xs]
    block["hot_all"] = {"multibuffer": [o["accesses"] + o["background_paper"] for o in hot]}
    return block


def _sum(outs: list[dict[str, Any]], key: str) -> int:
    return sum(o[key] for o in outs)


def collect(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    main = [(s, o) for s, o in results if not s.get("variant")]
    specs = [s for s, _ in main]
    skews = sorted({s["skew"] for s in specs if s["scheme"] == "multibuffer" and s["order"] == "fifo"})
    wrs = sorted({s["wr"] for s in specs if s["skew"] in FIG_WR_SKEWS and s["scheme"] == "raid5"})
    sizes = {str(k): 0 for k in range(1, 9)}
    flush = {str(k): 0 for k in range(1, 9)}
    mb = [o for s, o in main if s["scheme"] == "multibuffer"]
    for o in mb:
        for k, v in o["sizes"].items():
            sizes[k] = sizes.get(k, 0) + v
        for k, v in o.get("flush_sizes", {}).items():
            flush[k] = flush.get(k, 0) + v
    total = sum(sizes.values())
    lrw = [_get(main, "multibuffer", z, FIG3_WR, "lrw") for z in skews]
    fifo = [_get(main, "multibuffer", z, FIG3_WR, "fifo") for z in skews]
    res: dict[str, Any] = {
        "write_sizes": sizes,
        "flush_sizes": flush,
        "lw_fraction": sizes["8"] / total if total else 0.0,
        "table1_runs": len(mb),
        "hit_rate": {"skew": skews,
                     **{f"{name}{suffix}": [o[key] for o in outs]
                        for name, outs in (("fifo", fifo), ("lrw", lrw))
                        for suffix, key in (("", "hit_rate"), ("_write", "write_hit_rate"),
                                            ("_first_block", "first_block_read_hit_rate"))}},
        "by_wr": {str(z): _block(results, "wr", wrs, z) for z in FIG_WR_SKEWS},
        "by_skew": {str(w): _block(results, "skew", skews, w) for w in FIG_SKEW_WRS},
        "cleaner": {k: _sum(mb, k) for k in ("victims", "victims_hot", "swaps_hot", "swaps_cold",
                                              "partial_releases", "small_writes")},
        "dpsr_fallbacks": sum(o["fallbacks"] for s, o in main if s["scheme"] == "dpsr"),
        "ablations": _ablations(results, wrs),
        "logging": _logging(results, wrs),
        "hit_rate_seeds": _seeds(results, skews),
        "settings": {k: specs[0][k] for k in ("requests", "warmup", "hot", "spare", "buffer", "size_skew", "seed")},
    }
    from .multibuffer_paper import claims
    from .verdict import paper_vs_vraid

    res["paper_vs_vraid"] = paper_vs_vraid(claims(res))
    return res


def _ablations(results, wrs: list[float]) -> dict[str, Any]:
    """The ablation runs: spare 50 % at Fig. 5's points; access-size skew and buffer size at
    :data:`ABLATION_POINT`; each with the cleaner by the paper's rule (the size skew's also split
    into the requests' accesses and the cleaner's, ``size_skew_parts``)."""
    def total(o: dict[str, Any]) -> int:
        return o["accesses"] + o["background_paper"]

    spare = {s: [total(_get(results, s, 0.7, w, variant="spare")) for w in wrs] for s in ("multibuffer", "dpsr")}
    spare["raid5"] = [total(_get(results, "raid5", 0.7, w)) for w in wrs]
    z, w = ABLATION_POINT
    point = {spec.get("variant") for spec, _ in results}
    at = "point" if "point" in point else ""
    size = {str(k): {s: total(_get(results, s, z, w, variant=f"size{k}")) for s in SCHEMES} for k in SIZE_SKEWS}
    size[str(SIZE_SKEW)] = {s: total(_get(results, s, z, w, variant=at)) for s in SCHEMES}
    # the same totals split: the requests' own accesses and the cleaner's (by the paper's rule)
    parts = {str(k): {s: _parts(_get(results, s, z, w, variant=f"size{k}")) for s in SCHEMES} for k in SIZE_SKEWS}
    parts[str(SIZE_SKEW)] = {s: _parts(_get(results, s, z, w, variant=at)) for s in SCHEMES}
    buffers = {str(b): _get(results, "multibuffer", z, w, variant=f"buffer{b}") for b in BUFFERS}
    buffers[str(BUFFER)] = _get(results, "multibuffer", z, w, variant=at)
    return {"spare": {"spare": SPARE_ABLATION, "wr": wrs, **spare},
            "size_skew": {"skew": z, "wr": w, **dict(sorted(size.items()))},
            "size_skew_parts": dict(sorted(parts.items())),
            "buffer": {"skew": z, "wr": w, **{b: {"hit_rate": o["hit_rate"], "lw": o["lw"], "pw": o["pw"]}
                                              for b, o in sorted(buffers.items(), key=lambda kv: int(kv[0]))}}}


def _parts(o: dict[str, Any]) -> dict[str, int]:
    """A run's accesses as the requests' own and the cleaner's by the paper's rule."""
    return {"requests": o["accesses"], "cleaner": o["background_paper"]}


def _logging(results, wrs: list[float]) -> dict[str, Any]:
    """Sections 1 and 5: every scheme's writes at Fig. 5's points (the user's blocks written,
    the blocks put on the disks, the write accesses, the cleaner by the paper's rule, the most
    blocks one access wrote), and the logging schemes with the log on a disk of its own."""
    keys = ("write_refs", "blocks_written", "write_accesses", "background_paper", "peak_blocks_per_access",
            "fallbacks", "cleanings")
    have = {s["scheme"] for s, _ in results}
    out: dict[str, Any] = {"skew": LOG_SKEW, "wr": wrs}
    for scheme in (*SCHEMES, *LOGGING):
        if scheme in have:
            runs = [_get(results, scheme, LOG_SKEW, w) for w in wrs]
            out[scheme] = {k: [o.get(k, 0) for o in runs] for k in keys}
    z, w = ABLATION_POINT
    out["log_disk"] = {"skew": z, "wr": w, **{s: {k: o.get(k, 0) for k in keys}
                                              for s in LOGGING for o in [_get(results, s, z, w, variant="logdisk")]}}
    return out


def _seeds(results, skews: list[float]) -> dict[str, Any]:
    """Fig. 3's hit rates per seed (the main run's first): the rows' run-to-run range."""
    seeds = [SEED] + [k for k in FIG3_SEEDS if any(s.get("variant") == f"seed{k}" for s, _ in results)]
    out: dict[str, Any] = {"seeds": seeds}
    for order in ("fifo", "lrw"):
        for suffix, key in (("", "hit_rate"), ("_write", "write_hit_rate")):
            out[order + suffix] = [[_get(results, "multibuffer", z, FIG3_WR, order, "" if k == SEED else f"seed{k}")[key]
                                    for z in skews] for k in seeds]
    return out


def extras(results: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """detail.json: every run's counters (reads/writes apart, the cleaner by both rules, LW/PW)."""
    keys = ("scheme", "order", "skew", "wr", "variant", "hot", "spare", "buffer", "size_skew", "seed", "requests",
            "warmup")
    return {"detail.json": {"runs": [{**{k: s.get(k) for k in keys}, **o} for s, o in results]}}


from .multibuffer_report import report, summary  # noqa: E402  (the report half lives beside this module)

__all__ = ["NAME", "collect", "describe", "extras", "report", "run", "runs", "summary"]

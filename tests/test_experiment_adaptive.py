"""The `adaptive-hlwm` experiment: seed 003 (Nam & Park) Fig. 4-9, static HLWM vs adaptive.

One --quick run (sixteen runs, two at a time: W_synth^1, W_synth^2, the two traced workloads'
stand-ins and the destage-cost, locality and think-factor ablations; ~1 min on a quiet machine)
is shared by the module;
the determinism check runs a smaller cache twice.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import trio

from vraid.sim.experiment import EXPERIMENTS, get
from vraid.sim.experiment import adaptive_hlwm as ah
from vraid.sim.experiment import adaptive_hlwm_paper as paper
from vraid.sim.experiment import adaptive_hlwm_sim as sim
from vraid.sim.experiment.runner import run_experiment
from vraid.sim.workload import parse_workload
from vraid.tui.render import rich_table

HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
NAMES = [f"T{k}" for k in range(1, 9)]
IDS = ["static", "adaptive", "synth2-static", "synth2-adaptive", "traced1-static", "traced1-adaptive",
       "traced2-static", "traced2-adaptive", "ablation-rmw-adaptive", "ablation-loc0.002-traced1-static",
       "ablation-loc0.002-traced1-adaptive", "ablation-loc0.0004-traced1-static", "ablation-loc0.0004-traced1-adaptive",
       "ablation-think1-adaptive", "ablation-think1-synth2-adaptive", "ablation-rmw-synth2-adaptive"]
PROGRESS: list[tuple[int, int, str, str]] = []  # what run_experiment told the quick run's callback


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("adaptive-hlwm")
    run_experiment("adaptive-hlwm", out, quick=True, jobs=2, progress=lambda *c: PROGRESS.append(c))
    return out


def test_progress_of_a_pool_run(quick):
    # the runs in a pool: the start, then each run as it finishes, in any order, with its worker (host:pid)
    n = len(IDS)
    assert PROGRESS[0] == (0, n, "", "") and [c[:2] for c in PROGRESS[1:]] == [(k, n) for k in range(1, n + 1)]
    assert sorted(c[2] for c in PROGRESS[1:]) == sorted(IDS)
    assert all(c[3].rsplit(":", 1)[1].isdigit() and c[3] != "local" for c in PROGRESS[1:])


@pytest.fixture(scope="module")
def results(quick) -> dict:
    return json.loads((quick / "results.json").read_text())


def test_registered():
    assert EXPERIMENTS["adaptive-hlwm"] == "vraid.sim.experiment.adaptive_hlwm"
    assert get("adaptive-hlwm") is ah
    specs = ah.runs(True)
    assert [s["id"] for s in specs] == IDS                             # independent: --jobs runs them side by side
    assert all(s["nw"] == paper.QUICK_NW for s in specs) and all(s["nw"] == paper.PAPER_NW for s in ah.runs(False))
    assert {s.get("workload", "synth1") for s in specs} == {"synth1", "synth2", "traced1", "traced2"}
    assert all(s["loop"] == "open" for s in specs if s.get("workload", "").startswith("traced"))


def test_results_json_has_exactly_the_schema(results):
    assert set(results) == {"periods", "synth2", "traced1", "traced2", "paper_vs_vraid"}
    assert [p["name"] for p in results["periods"]] == NAMES
    assert [p["name"] for p in results["synth2"]["periods"]] == NAMES
    for w in ("traced1", "traced2"):                                      # the stand-in's hour in 5-minute pieces
        assert [p["name"] for p in results[w]["periods"]] == [f"{5 * k}-{5 * k + 5} min" for k in range(12)]
    for p in results["periods"] + results["synth2"]["periods"] + results["traced1"]["periods"]:
        assert set(p) == {"name", "static", "adaptive"}
        for s in ("static", "adaptive"):
            d = p[s]
            assert set(d) == {"hwm", "lwm", "overwrite_ratio", "disk_blocks", "destage_blocks"}, (p["name"], s)
            assert 0 < d["destage_blocks"] < d["disk_blocks"]  # the paper's traffic: destages only
            assert all(isinstance(d[k], float) for k in ("hwm", "lwm", "overwrite_ratio"))
            assert isinstance(d["disk_blocks"], int) and d["disk_blocks"] > 0
            assert 0.0 <= d["lwm"] <= d["hwm"] <= 1.0 and 0.0 <= d["overwrite_ratio"] <= 1.0
        assert p["static"]["hwm"] == 0.5 and p["static"]["lwm"] == 0.1     # static marks never move


def test_cases_1_to_4_show_as_the_paper_says(results):
    """Table 1: T2 is Case 1, T4 Case 2, T6 Case 3, T8 Case 4 (sec. 4.1)."""
    p = {row["name"]: row for row in results["periods"]}
    st, ad = ({n: p[n][s] for n in NAMES} for s in ("static", "adaptive"))
    assert ad["T2"]["hwm"] > st["T2"]["hwm"]                                  # Case 1: HWM up
    assert ad["T2"]["lwm"] > st["T2"]["lwm"]                                  # ... and LWM up
    assert ad["T2"]["overwrite_ratio"] >= st["T2"]["overwrite_ratio"]        # ... overwrite ratio not lower
    assert ad["T4"]["hwm"] < st["T4"]["hwm"]                                  # Case 2: HWM down
    assert ad["T4"]["lwm"] < st["T4"]["lwm"]                                  # ... and LWM down
    assert ad["T6"]["lwm"] > st["T6"]["lwm"]                                  # Case 3: LWM up
    assert ad["T8"]["lwm"] < st["T8"]["lwm"]                                  # Case 4: LWM down
    # the shape of Fig. 4: the Case 1 and Case 2 marks move far, not just across the line
    assert ad["T2"]["hwm"] > 0.6 and ad["T4"]["hwm"] < 0.4
    assert all(c["holds"] for c in paper.cases(results))


def test_paper_vs_vraid_covers_the_cases_with_verdicts(results):
    from vraid.sim.experiment import verdict

    rows = verdict.from_json(results["paper_vs_vraid"])
    items = " ".join(r.item for r in rows)
    for case in ("Case 1 (T2)", "Case 2 (T4)", "Case 3 (T6)", "Case 4 (T8)", "i_B", "delta_B"):
        assert case in items
    marks = {r.item: r for r in rows if r.unit == "%" and "mark" not in r.item}
    assert marks["Case 1 (T2): adaptive HWM"].paper == 73.0 and marks["Case 2 (T4): adaptive LWM"].paper == 2.0
    assert all(r.verdict in (*verdict.VERDICTS, verdict.INPUT) and r.cause for r in rows)
    # ours are this run's: the T2 HWM is the adaptive run's median mark, as a per cent
    p = {row["name"]: row for row in results["periods"]}
    assert 50 < marks["Case 1 (T2): adaptive HWM"].vraid <= 100 * 1.0 and p["T2"]["adaptive"]["hwm"] > 0.5


def test_carried_counts_the_entries_a_period_leaves_dirty():
    from vraid.sim.experiment.adaptive_hlwm_report import carried

    # two periods of 10 s, N_W = 100: T1 fills from 0 to 40 %, T2 drains to 25 %
    run = {"setup": {"nw": 100, "period_seconds": 10.0},
           "periods": [{"name": "T1"}, {"name": "T2"}],
           "timeline": {"t": [0.0, 5.0, 10.0, 15.0, 20.0], "occupancy": [0.0, 0.3, 0.4, 0.1, 0.25]}}
    assert carried(run, "T1") == 40 and carried(run, "T2") == -15
    assert carried({**run, "timeline": None}, "T1") is None and carried(run, "T9") is None


def test_traffic_causes_name_the_carry_over_and_the_overwrite_prediction(results):
    from vraid.sim.experiment import verdict

    rows = {r.item: r for r in verdict.from_json(results["paper_vs_vraid"])}
    t2 = rows["Case 1 (T2): destage traffic, adaptive vs HLWM"].cause
    assert "left dirty for the next period" in t2 and "overwrite ratios" in t2 and "static overwrite ratio of 0.14" in t2


def test_cases_check_is_not_vacuous(results):
    bad = copy.deepcopy(results)
    t6 = next(p for p in bad["periods"] if p["name"] == "T6")
    t6["adaptive"]["lwm"] = 0.05
    failed = [c for c in paper.cases(bad) if not c["holds"]]
    assert [(c["case"], c["period"]) for c in failed] == [("Case 3", "T6")]


def test_files_and_detail(quick):
    detail = json.loads((quick / "detail.json").read_text())
    assert set(detail["runs"]) == set(IDS)
    for run in detail["runs"].values():
        assert run["tail"]["reused"] == 0                  # the closed loop never ran out of workload requests
    for s in ("static", "adaptive"):
        assert sum(p["write_misses"] for p in detail["runs"][s]["periods"]) == 0
    learned = detail["runs"]["adaptive"]["scheduler"]
    assert learned["learned"] and learned["i_b_entries_per_s"] > 0 and learned["delta_b_entries_per_s"] > 0
    md = (quick / "results.md").read_text()
    assert "73 %" in md and "Case 4" in md and "| T8 |" in md             # the paper's figures beside ours
    timeline = json.loads((quick / "timeline.json").read_text())
    assert len(timeline["adaptive"]["t"]) == len(timeline["adaptive"]["occupancy"]) > 8 * 100
    if HAVE_MPL:
        assert all((quick / f).stat().st_size > 0 for f in ("fig4.png", "fig5_6.png", "fig7_9.png"))


def test_summary_renders(results):
    from rich.console import Console

    console = Console(record=True, width=160)
    console.print(rich_table(ah.summary(results)))
    assert "T8" in console.export_text()


@pytest.mark.slow  # the framework's determinism stays quick in test_experiment_msc_ct
def test_deterministic():
    a = sim.simulate(64, "adaptive", seed=3)
    b = sim.simulate(64, "adaptive", seed=3)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(sim.simulate(64, "adaptive", seed=4)["periods"]) != json.dumps(a["periods"])


def test_setup_at_paper_scale_is_the_paper():
    s = sim.Setup(paper.PAPER_NW)
    assert s.cache_bytes == 64 << 20 and s.nw == 4096                       # N_W = 4096 entries of 16 KB
    g = s.geometry()
    assert g.capacity == 10 << 30                                            # the 10 GB logical unit
    assert g.stripe_data_bytes == paper.ENTRY                                   # one PBG (a row) = one entry
    assert s.update == pytest.approx(3.0 * s.tau) and s.period == pytest.approx(300.0 * s.tau)
    assert "period=" in s.destage("adaptive") and "high=0.5,low=0.1" in s.destage("adaptive")


@pytest.mark.parametrize("nw", [64, paper.QUICK_NW, paper.PAPER_NW])
def test_scaled_space_keeps_the_locality_relative_to_the_cache(nw):
    """160 entries of space per cache entry at every scale, so 0.4 % of the space is 0.64 N_W."""
    s = sim.Setup(nw)
    g = s.geometry()
    w = parse_workload(s.workload(1.0))
    assert w.space_bytes(g.capacity) == g.capacity == 160 * nw * paper.ENTRY
    assert w.period_length == pytest.approx(s.period)
    t1 = w.periods()[0]
    assert int(t1.locality * w.space_bytes(g.capacity)) // paper.ENTRY == int(0.004 * 160 * nw)


def test_sparse_store_round_trip():
    store = sim.SparseMemoryStore(1 << 30)                                    # 1 GiB, nothing allocated
    trio.run(store.write, 4096, b"x" * 4096)
    assert trio.run(store.read, 4096, 4096) == b"x" * 4096
    assert store.read_sync(0, 8) == bytes(8) and store.size == 1 << 30


# ---------------------------------------------------------------------- W_synth^2, the stand-ins, the rows
def test_rows_of_every_workload_exist_and_carry_verdicts(results):
    from vraid.sim.experiment import verdict

    rows = verdict.from_json(results["paper_vs_vraid"])
    items = [r.item for r in rows]
    for want in ("W_synth^2: i_B", "W_synth^2: delta_B", "W_synth^2 over W_synth^1: i_B", "W_synth^2 T4",
                 "W_synth^2 T8", "W_traced^1 stand-in: i_B", "W_traced^1 stand-in: HLWM overwrite ratio",
                 "W_traced^1 stand-in: overwrite ratio, adaptive minus HLWM", "W_traced^1 stand-in: destage traffic",
                 "W_traced^2 stand-in: destage traffic", "read cache hit ratio", "W_traced^1 (Fig. 7a)",
                 "W_traced^2 (Fig. 7b)"):
        assert any(i.startswith(want) or want in i for i in items), want
    by = {r.item: r for r in rows}
    assert by["W_synth^2: i_B, entries/s at the paper's scale (T1)"].paper == 104.0
    assert by["W_synth^2: delta_B, entries/s at the paper's scale (T1)"].paper == 28.92
    assert by["W_traced^1 stand-in: destage traffic, adaptive vs HLWM (Fig. 9)"].paper == -12.0
    assert by["W_traced^1 stand-in: overwrite ratio, adaptive minus HLWM, points (Fig. 8)"].paper == 6.2
    # every claim judged on a stand-in says so; the claims it cannot speak to are not run, with the reason
    assert all("stand-in" in r.cause for r in rows if "stand-in" in r.item and r.verdict != verdict.NOT_RUN)
    fig7 = [r for r in rows if "(Fig. 7" in r.item]
    assert len(fig7) == 5 and all(r.verdict == verdict.NOT_RUN and "not public" in r.cause for r in fig7)
    # W_synth^1's i_B is set by vraid's think factor: an input, not a verdict
    i_b = by["i_B, entries/s at the paper's scale (T1)"]
    assert i_b.verdict == verdict.INPUT and "think factor" in i_b.cause
    # one rule: no row has a tolerance of its own, and the verdicts are the rule's on the printed numbers
    assert all(r.tolerance == verdict.TOLERANCE for r in rows)
    for r in rows:
        if r.verdict not in (verdict.NOT_RUN, verdict.INPUT):
            assert r.verdict == verdict.judge(r.paper, r.vraid, baseline=r.baseline), r.item


def test_locality_ablation_measures_the_standins_overwrite_level(quick, results):
    """W_traced^1's stand-in with its local processes kept to less of the space: the rows that
    named the locality as their cause quote how far it moves the overwrite ratio and traffic."""
    from vraid.sim.experiment import verdict

    detail = json.loads((quick / "detail.json").read_text())["runs"]
    own = detail["traced1-static"]["setup"]["stand_in"]["locality"]
    assert own == 0.004 and detail["ablation-loc0.0004-traced1-static"]["setup"]["stand_in"]["locality"] == 0.0004
    rows = {r.item: r for r in verdict.from_json(results["paper_vs_vraid"])}
    for item in ("W_traced^1 stand-in: HLWM overwrite ratio (Fig. 8)",
                 "W_traced^1 stand-in: overwrite ratio, adaptive minus HLWM, points (Fig. 8)",
                 "W_traced^1 stand-in: destage traffic, adaptive vs HLWM (Fig. 9)"):
        cause = rows[item].cause
        assert "ablation, the local processes kept to less of the space (locality 0.4 %: " in cause, item
        assert "0.2 %: HLWM overwrite ratio" in cause and "0.04 %: HLWM overwrite ratio" in cause, item
    # the ablation's runs are not workloads of their own: no timeline, no rows
    timeline = json.loads((quick / "timeline.json").read_text())
    assert not any(k.startswith("ablation-loc") for k in timeline.get("workloads", {}))


def test_same_claims_are_ratios_against_one(results):
    """"Almost the same", "same", "almost equal": adaptive over HLWM against 1.00x, by the rule's 25 %
    (a change against 0 % would get the rule's absolute 0.25 points)."""
    from vraid.sim.experiment import verdict

    rows = verdict.from_json(results["paper_vs_vraid"])
    same = [r for r in rows if any(w in r.item for w in ("almost the same", "almost equal", "\"the same\"",
                                                          "the same as at T1"))]
    assert len(same) >= 4 + 2 + 2 + 6  # read hits, T4/T8 traffic, W_traced^2's two, Fig. 4's marks as at T1
    assert all(r.paper == 1.0 and r.unit == "x" and r.baseline == 1.0 for r in same)
    assert not [r for r in rows if r.paper == 0 and r.verdict != verdict.NOT_RUN]


def test_figure_4_to_6_period_claims_are_rows(results):
    from vraid.sim.experiment import verdict

    rows = {r.item: r for r in verdict.from_json(results["paper_vs_vraid"])}
    for n in ("T3", "T4", "T5", "T7", "T8"):
        assert any(i.startswith(f"Fig. 5, {n}: adaptive overwrite ratio") for i in rows), n
    for n in ("T3", "T7"):
        assert any(i.startswith(f"Fig. 6, {n}: adaptive destage traffic above") for i in rows), n
    for n in ("T3", "T5", "T7"):
        for m in ("HWM", "LWM"):
            assert f"Fig. 4, {n}: adaptive {m} the same as at T1 (median, {n} over T1)" in rows
    assert rows["Fig. 4, T6: adaptive HWM \"remains nearby at 50 percent\" (median)"].paper == 50.0
    assert any("LWM's fall at T8 smaller than its rise at T6" in i for i in rows)
    assert "W_traced^2 stand-in over W_synth^1: i_B (\"lighter IO traffic than the synthetic workloads\")" in rows


def _by_from_detail(quick: Path) -> dict:
    runs = json.loads((quick / "detail.json").read_text())["runs"]
    return {k: {"periods": v["periods"], "scheduler": v["scheduler"], "setup": v["setup"]} for k, v in runs.items()}


def test_period_rows_follow_the_counters_both_ways(quick):
    """Each yes/no row says what the two runs' counters say, and says the opposite when they flip."""
    from vraid.sim.experiment import verdict
    from vraid.sim.experiment.adaptive_hlwm_periods import period_rows

    by = _by_from_detail(quick)
    st = {r["name"]: r for r in by["static"]["periods"]}
    ad = {r["name"]: r for r in by["adaptive"]["periods"]}
    for n in ("T3", "T7"):
        st[n]["overwrite_ratio"], ad[n]["overwrite_ratio"] = 0.10, 0.20
        st[n]["destage_blocks"], ad[n]["destage_blocks"] = 1000, 900
    st["T4"]["overwrite_ratio"], ad["T4"]["overwrite_ratio"] = 0.10, 0.05
    ad["T1"]["hwm_median"], ad["T3"]["hwm_median"] = 0.50, 0.90   # 1.8x T1's: not the same
    ad["T5"]["lwm_median"], ad["T6"]["lwm_median"] = 0.10, 0.30   # rise 20 points
    ad["T7"]["lwm_median"], ad["T8"]["lwm_median"] = 0.10, 0.08   # fall 2 points
    rows = {r.item: r for r in period_rows(by, lambda run, name: None)}

    def row(prefix: str) -> verdict.Comparison:
        return next(r for i, r in rows.items() if i.startswith(prefix))

    assert row("Fig. 5, T3").verdict == verdict.REPRODUCED and "static 0.100, adaptive 0.200" in row("Fig. 5, T3").cause
    assert row("Fig. 5, T4").verdict == verdict.REPRODUCED
    assert row("Fig. 6, T7").verdict == verdict.NOT_REPRODUCED and "static 1000, adaptive 900" in row("Fig. 6, T7").cause
    assert row("Fig. 4, T3: adaptive HWM").vraid == pytest.approx(1.8)
    assert row("Fig. 4, T3: adaptive HWM").verdict == verdict.NOT_REPRODUCED
    assert row("Fig. 4: the LWM's fall").verdict == verdict.REPRODUCED
    ad["T8"]["lwm_median"] = -0.5  # a fall of 60 points, more than the rise
    st["T4"]["overwrite_ratio"] = 0.01
    rows = {r.item: r for r in period_rows(by, lambda run, name: None)}
    assert row("Fig. 4: the LWM's fall").verdict == verdict.NOT_REPRODUCED
    assert row("Fig. 5, T4").verdict == verdict.NOT_REPRODUCED


def test_every_miss_names_a_measured_cause(results):
    from vraid.sim.experiment import verdict

    for r in verdict.from_json(results["paper_vs_vraid"]):
        if r.verdict in (verdict.DIRECTION, verdict.NOT_REPRODUCED, verdict.INCONCLUSIVE):
            assert any(w in r.cause for w in ("counter", "ablation", "cause not found", "left dirty", "averaged",
                                                "ours:")), r.item


def test_destage_cost_ablation_reads_old_data_and_parity(quick):
    from vraid.sim.experiment.adaptive_hlwm_rows import ablation

    detail = json.loads((quick / "detail.json").read_text())
    runs = detail["runs"]
    assert len(runs["ablation-rmw-adaptive"]["periods"]) == paper.ABLATION_PERIODS
    by = {k: {"periods": v["periods"], "scheduler": v["scheduler"], "setup": v["setup"]} for k, v in runs.items()}
    a = ablation(by)
    assert a["base_reads_per_destage"] == 0 and a["base_per_destage"] == pytest.approx(5, rel=0.02)  # 5 writes
    assert a["rmw_reads_per_destage"] > 0 and a["rmw_per_destage"] < 5           # read-modify-write of one block
    rows = {r["item"]: r for r in json.loads((quick / "results.json").read_text())["paper_vs_vraid"]}
    assert "ablation" in rows["delta_B, entries/s at the paper's scale (T1)"]["cause"]


def test_think_factor_ablation_runs_table_1s_own_think_times(quick):
    """Think times 1.0 x Table 1 in place of 2.5 x: the loop issues faster, so the learned i_B rises,
    the periods are shorter (tau follows the factor), and the rows the factor is named in quote it."""
    from vraid.sim.experiment.adaptive_hlwm_think import think

    runs = json.loads((quick / "detail.json").read_text())["runs"]
    abl = runs["ablation-think1-adaptive"]
    assert [p["name"] for p in abl["periods"]] == NAMES[:4]
    assert len(runs["ablation-think1-synth2-adaptive"]["periods"]) == 4
    assert abl["setup"]["think_factor"] == 1.0 and runs["adaptive"]["setup"]["think_factor"] == paper.THINK
    assert abl["setup"]["period_seconds"] == pytest.approx(runs["adaptive"]["setup"]["period_seconds"] / paper.THINK)
    by = {k: {"periods": v["periods"], "scheduler": v["scheduler"], "setup": v["setup"]} for k, v in runs.items()}
    a = think(by)
    # a faster loop keeps the disks busier; i_B in the paper's seconds moves (tau follows the factor,
    # so it rises only if the loop's rate rises as much as its think time falls)
    assert a["think_busy"] > a["base_busy"] and a["think_i_b"] != pytest.approx(a["base_i_b"], rel=0.01)
    assert {"base_rise", "think_rise", "base_t4_lwm", "think_t4_hwm", "base_s2_i_b", "think_s2_over_s1"} <= set(a)
    rows = {r["item"]: r for r in json.loads((quick / "results.json").read_text())["paper_vs_vraid"]}
    for item in ("W_synth^2: i_B, entries/s at the paper's scale (T1)", "Case 2 (T4): adaptive HWM",
                 "Case 2 (T4): adaptive LWM", "W_synth^2 over W_synth^1: i_B"):
        assert "ablation (think factor 1: Table 1's inter-arrival times as the think times, against vraid's 2.5" \
            in rows[item]["cause"], item
    assert "host requests T4 over T1" in rows["Case 2 (T4): adaptive HWM"]["cause"]
    assert "read-modify-write" in rows["W_synth^2 T8: adaptive destaging continues through the period (share of time "
                                       "destaging; baseline: T1's)"]["cause"]
    assert "destages a second while destaging" in rows["W_traced^1 stand-in: delta_B, entries/s"]["cause"]


def test_results_md_prints_the_rule_and_the_stand_ins(quick):
    from vraid.sim.experiment import verdict

    md = (quick / "results.md").read_text()
    assert verdict.rule_text() in md and "tolerance 25 %" in md and "within ±25 % of equal" in md
    assert "stand-in" in md and "not the traces" in md and "Inputs taken from the paper" in md
    assert "W_synth^2" in md and "| W_traced^1 stand-in | static |" in md


@pytest.mark.parametrize("name", ["traced1", "traced2"])
def test_standin_has_table_2s_read_ratio_size_and_inter_arrival(name):
    from vraid.sim.experiment import adaptive_hlwm_standin as standin

    t2 = paper.TABLE2[name]
    space = 160 * 256 * paper.ENTRY
    reqs = list(standin.requests(name, space, 600.0, seed=1))
    n = len(reqs)
    assert n == pytest.approx(600.0 / t2["iat"], rel=0.05)                   # Poisson at Table 2's mean rate
    gaps = np.diff([r[0] for r in reqs])
    assert gaps.mean() == pytest.approx(t2["iat"], rel=0.05) and gaps.std() == pytest.approx(t2["iat"], rel=0.1)
    reads = sum(1 for r in reqs if not r[1]) / n
    assert reads == pytest.approx(t2["read_fraction"], abs=0.02)
    sizes = [r[3] for r in reqs]
    assert set(sizes) <= {paper.BLOCK, 2 * paper.BLOCK}
    assert np.mean(sizes) == pytest.approx(t2["size"], rel=0.03)             # Table 2's average request size
    for _, _, off, size in reqs:                                               # whole blocks inside one entry
        assert off % paper.BLOCK == 0 and off // paper.ENTRY == (off + size - 1) // paper.ENTRY
        assert 0 <= off and off + size <= space
    assert list(standin.requests(name, space, 600.0, seed=1)) == reqs         # deterministic
    assert [r[0] for r in standin.requests(name, space, 600.0, seed=2)][:5] != [r[0] for r in reqs][:5]


def test_standin_size_mix_and_pieces():
    from vraid.sim.experiment import adaptive_hlwm_standin as standin

    assert standin.size_mix(6.5 * 1024) == pytest.approx(0.625) and standin.size_mix(2 << 20) == 1.0
    pieces = standin.periods("traced1", 30.0)
    assert len(pieces) == 12 and pieces[-1].end == pytest.approx(360.0)
    assert all(p.case == "stand-in" and p.iat == paper.TABLE2["traced1"]["iat"] for p in pieces)
    # Table 2's IOs at its inter-arrival time last one hour: the replay is the trace's two hours halved
    for t2 in paper.TABLE2.values():
        assert t2["ios"] * t2["iat"] == pytest.approx(3600, rel=0.01)


def test_synth2_is_table_1_with_40_percent_reads():
    s = sim.Setup(64, read_fraction=paper.SYNTH["synth2"], workload_name="synth2")
    w = parse_workload(s.workload(1.0))
    reqs = list(w.requests(s.geometry().capacity, paper.BLOCK, 20000, 0))
    assert sum(r.op == "read" for r in reqs) / len(reqs) == pytest.approx(0.4, abs=0.02)
    assert all(r.length == paper.ENTRY for r in reqs)
    t1 = [r for r in reqs if r.at < w.period_length]
    assert np.diff([r.at for r in t1]).mean() == pytest.approx(0.020, rel=0.1)  # Table 1's T1: 20 ms
    assert sim.Setup(64, workload_name="traced1").tau == pytest.approx(64 / 4096)  # open loop: no think factor
    assert sim.Setup(64).tau == pytest.approx(paper.THINK * 64 / 4096)
    assert sim.Setup(64, think=1.0).tau == pytest.approx(64 / 4096)              # the think-factor ablation's


def test_simulate_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="unknown workload"):
        sim.simulate(8, "static", workload="cello")
    with pytest.raises(ValueError, match="loop must be 'open'"):
        sim.simulate(8, "static", workload="traced1", loop="closed")
    with pytest.raises(ValueError, match="writes must be"):
        sim.simulate(8, "static", writes="half")
    with pytest.raises(ValueError, match="think is W_synth's closed loop's"):
        sim.simulate(8, "static", workload="traced1", loop="open", think=1.0)
    with pytest.raises(ValueError, match="think is W_synth's closed loop's"):
        sim.simulate(8, "static", think=0)

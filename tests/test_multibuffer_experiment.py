"""Experiment ``multibuffer`` (seed 004 Figs. 3-8, Table 1): the results.json shape of a small run
and what must hold even at that size (almost every stripe write a full LW; DPSR reads cost more
than RAID-5's; multibuffering never needs more accesses than RAID-5 on writes)."""

from __future__ import annotations

import json

import pytest

from vraid.sim.experiment import get, names
from vraid.sim.experiment import multibuffer as mb
from vraid.sim.experiment.multibuffer_sim import run_scheme, workload, zipf_probabilities
from vraid.sim.experiment.runner import run_experiment


def test_registered_and_the_workload_is_the_papers():
    assert "multibuffer" in names() and get("multibuffer") is mb
    p = zipf_probabilities(10_000, 0.0)
    assert p[0] == pytest.approx(1e-4) and p.sum() == pytest.approx(1.0)
    p = zipf_probabilities(4, 1.0)
    assert list(p) == pytest.approx([12 / 25, 6 / 25, 4 / 25, 3 / 25])  # 1/i over H_4 = 25/12
    first, is_write, size = workload(4000, 0.3, 0.7, seed=1)
    assert 0.25 < is_write.mean() < 0.35 and first.min() >= 0 and first.max() < 10_000
    assert size[is_write].max() <= 10 and size[~is_write].max() <= 100 and size.min() >= 1
    assert (first < 100).mean() > 0.1  # skewed toward the first blocks


def test_the_papers_setup_gives_large_writes_and_dpsr_reads_cost_more():
    out = {s: run_scheme(s, wr=0.5, skew=0.7, requests=2500, warmup=500, seed=3) for s in ("multibuffer", "dpsr", "raid5")}
    m = out["multibuffer"]
    assert m["lw"] / (m["lw"] + m["pw"]) > 0.9 and m["small_writes"] == 0
    assert out["dpsr"]["read_accesses"] > out["raid5"]["read_accesses"]  # blocks migrated between disks
    assert m["read_accesses"] <= out["raid5"]["read_accesses"]  # home disks kept, and some hits
    assert m["write_accesses"] < out["raid5"]["write_accesses"]
    assert out["raid5"]["lw"] == 0 and out["raid5"]["hit_rate"] == 0


def test_results_json_shape_of_a_shortened_quick_grid():
    specs = mb.runs(True, requests=400, warmup=100, skews=[0.0, 1.0], wrs=[0.1, 0.9])
    res = json.loads(json.dumps(mb.collect([(s, mb.run(s)) for s in specs])))
    assert set(res) == {"write_sizes", "lw_fraction", "hit_rate", "by_wr", "by_skew", "paper_vs_vraid"}
    assert list(res["write_sizes"]) == [str(k) for k in range(1, 9)]
    assert res["lw_fraction"] > 0.8  # 400 requests: the final flush's small writes weigh more
    assert set(res["by_wr"]) == {"0.3", "0.7"} and set(res["by_skew"]) == {"0.1", "0.5", "0.9"}
    for block in (*res["by_wr"].values(), *res["by_skew"].values()):
        assert set(block) - {"wr", "skew"} == {"multibuffer", "dpsr", "raid5"}
        assert all(v > 0 for s in ("multibuffer", "dpsr", "raid5") for v in block[s])
    h = res["hit_rate"]
    assert h["skew"] == [0.0, 1.0] and len(h["fifo"]) == len(h["lrw"]) == 2
    assert h["lrw"][-1] > h["lrw"][0]  # more skew, more hits
    assert len(res["paper_vs_vraid"]) == 11
    assert {r["verdict"] for r in res["paper_vs_vraid"]} <= {"reproduced", "direction", "not reproduced"}


@pytest.mark.slow
def test_quick_run_writes_the_files_and_large_writes_dominate(tmp_path):
    res = run_experiment("multibuffer", tmp_path, quick=True, jobs=1).results
    assert res["lw_fraction"] > 0.95  # the paper: 98.3 %
    assert (tmp_path / "fig5.png").exists() and "Paper vs vraid" in (tmp_path / "results.md").read_text()

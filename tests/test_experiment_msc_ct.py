"""Experiment msc-ct: seed 000 Fig. 11 (PBGC vs SC vs MSC-CT against the workspace)."""

from __future__ import annotations

import json

import pytest

from vraid.sim.experiment import get, msc_ct, names
from vraid.sim.experiment.runner import run_experiment
from vraid.sim.workload import parse_workload

#: a test-sized configuration: the paper's set-up divided by 256 (cache 2 MiB, 625 writes)
SCALE = 256


def _collect(specs):
    return msc_ct.collect([(s, msc_ct.run(s)) for s in specs])


def test_registered():
    assert "msc-ct" in names() and get("msc-ct") is msc_ct
    specs = msc_ct.runs(True)
    fig11 = [s for s in specs if not s.get("kind")]
    assert len(fig11) == len(msc_ct.HOSTS) * 4 * len(msc_ct.POLICIES)
    assert {s["kind"] for s in specs if s.get("kind")} == {"ablation", "eq1", "fig12", "table2"}
    # the judged PBGC is md + elevator; vraid's row-by-row one is the ablation
    assert msc_ct.POLICIES["pbgc"][0] == "pbg:merge=true" and msc_ct.POLICIES["pbgc_rows"][0] == "pbg"
    assert len(msc_ct.runs(True, parts=("fig11",))) == len(fig11)
    s = specs[0]
    # the paper's ratios: cache 512 MiB : workspace 1 GB : 160k writes
    assert s["cache_size"] * s["scale"] == 512 << 20 and s["writes"] * s["scale"] == 160_000
    assert s["workspace"] * s["scale"] == s["workspace_gb"] << 30
    assert s["disks"] == 5 and s["disk_model"] == "hdd:st373454lc"


def test_page_cache_host_is_the_workload_wrapper():
    s = msc_ct.runs(True)[0]
    assert s["host"] == "page-cache"
    spec = msc_ct.workload_spec(s)
    assert spec.startswith("page-cache:of=random-write:") and f"dirty={s['dirty']}" in spec
    w = parse_workload(spec)
    assert w.params["dirty"] == s["dirty"] and w.params["background"] == 0 and w.params["order"] == "ascending"
    assert msc_ct.workload_spec(dict(s, host="direct")).startswith("random-write:")


@pytest.fixture(scope="module")
def page_cache_results():
    return _collect(msc_ct.runs(False, scale=SCALE, workspaces_gb=[1, 2, 4, 8], hosts=("page-cache",), parts=("fig11",)))


def test_schema(page_cache_results):
    r = page_cache_results
    assert r["workspace"] == [1, 2, 4, 8] and r["host"] == "page-cache"
    for key in ("pbgc", "sc", "msc_ct"):
        assert len(r[key]) == 4 and all(isinstance(x, float) and x > 0 for x in r[key])
    assert r["setup"]["ct"] == "msc:sr_max=4,sw_max=4"  # the model's stride-benchmark limits
    json.dumps(r)


def test_shape_the_paper_claims(page_cache_results):
    """Sec. IV-B: MSC-CT never below SC; its gain over SC shrinks as the workspace grows.

    Measured on this model the gain is flat from 1 to 2 GB (the model's S_w^max = 4 lets CT fill
    only 2- and 3-block gaps, which are most common at the 2 GB density): asserted here is the
    fall from the largest gain on, with the largest gain at one of the two smallest workspaces.
    docs/experiments.md reports the numbers.
    """
    g = msc_ct.gains(page_cache_results)["msc_ct_over_sc"]
    assert all(x >= 0 for x in g), g
    peak = g.index(max(g))
    assert peak <= 1, g
    assert all(b < a for a, b in zip(g[peak:], g[peak + 1:])), g
    assert g[-1] < g[0] / 2, g
    # and MSC-CT beats PBGC at the smallest workspace by more than it beats SC
    over_pbgc = msc_ct.gains(page_cache_results)["msc_ct_over_pbgc"]
    assert over_pbgc[0] > g[0] > 0.3


def test_direct_host_runs_and_ct_never_hurts():
    r = _collect(msc_ct.runs(False, scale=SCALE, workspaces_gb=[1, 8], hosts=("direct",), parts=("fig11",)))
    assert r["host"] == "direct"
    g = msc_ct.gains(r)["msc_ct_over_sc"]
    assert all(x >= -0.02 for x in g), g


def test_deterministic_json(tmp_path, monkeypatch):
    original = msc_ct.runs
    small = lambda quick: original(False, scale=SCALE * 2, workspaces_gb=[1, 2], parts=("fig11",))  # noqa: E731
    monkeypatch.setattr(msc_ct, "runs", small)
    a = run_experiment("msc-ct", tmp_path / "a", jobs=1, progress=False)
    b = run_experiment("msc-ct", tmp_path / "b", jobs=1, progress=False)
    for name in ("results.json", "detail.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    r = json.loads((tmp_path / "a" / "results.json").read_text())
    assert set(r) >= {"workspace", "pbgc", "sc", "msc_ct", "direct", "setup"}
    assert set(r["direct"]) == {"pbgc", "sc", "msc_ct", "pbgc_rows"}
    md = (tmp_path / "a" / "results.md").read_text()
    assert "+170 %" in md and "+220 %" in md
    assert a.files and b.files


def test_runner_options_reach_runs(tmp_path):
    from vraid.cli.sweep import parse_set
    from vraid.errors import VraidError

    assert parse_set(["scale=1024", "hosts=direct", "x=0.5", "workspaces_gb=[1,8]"]) == {
        "scale": 1024, "hosts": "direct", "x": 0.5, "workspaces_gb": [1, 8]}
    with pytest.raises(VraidError, match="KEY=VALUE"):
        parse_set(["scale"])
    with pytest.raises(VraidError, match="does not take options"):
        run_experiment("msc-ct", tmp_path, options={"nosuch": 1})
    a = run_experiment("msc-ct", tmp_path / "a", jobs=1,
                       options={"scale": 1024, "workspaces_gb": [1], "hosts": ("direct",), "parts": "fig11"})
    meta = json.loads((tmp_path / "a" / "meta.json").read_text())
    assert meta["options"]["scale"] == 1024 and a.results["workspace"] == [1]
    rows = a.results["paper_vs_vraid"]
    assert sum(r["item"].endswith("no page cache") for r in rows) == 3
    # Fig. 11's shape as yes/no rows: one workspace judges "never below SC", not the trend
    shape = [r for r in rows if r["item"].startswith("Fig. 11, no page cache:")]
    assert len(shape) == 2 and shape[0]["verdict"] == "not run" and shape[1]["unit"] == "yes/no"
    # without the "more" part every other claim is a row still, `not run` with its reason
    assert all(r["verdict"] == "not run" and r["cause"] for r in rows if "Fig. 11" not in r["item"]
               and not r["item"].endswith("no page cache"))
    with pytest.raises(VraidError, match="part"):
        msc_ct.runs(True, parts=("nosuch",))


def test_one_command_runs_and_the_comparison_in_results_md(tmp_path):
    """``disk_model`` and ``ct_limits`` reach the runs (the one-command comparison of results/msc-ct/),
    the plans do not depend on the drive's queue, and results.md puts the two beside each other."""
    opts = {"scale": 1024, "workspaces_gb": [1], "hosts": ("page-cache",), "parts": "fig11"}
    one = run_experiment("msc-ct", tmp_path / "q" / msc_ct.ONE_COMMAND, jobs=1,
                         options=opts | {"disk_model": "hdd:st373454lc,tcq=off", "ct_limits": "sr_max=4,sw_max=4"})
    assert one.results["setup"]["disk_model"] == "hdd:st373454lc,tcq=off"
    assert one.results["setup"]["ct"] == "msc:sr_max=4,sw_max=4"  # not the conservative limits of a modified disk
    queued = run_experiment("msc-ct", tmp_path / "q", jobs=1, options=opts)
    d_one = json.loads((tmp_path / "q" / msc_ct.ONE_COMMAND / "detail.json").read_text())["runs"]
    d_q = json.loads((tmp_path / "q" / "detail.json").read_text())["runs"]
    for a, b in zip(d_one, d_q):  # the same plans and member requests; the queue changes their cost
        assert a["policy"] == b["policy"]
        if a["policy"] != "pbgc":  # merged PBGC groups the rows dirty when a destage starts: timing decides
            assert a["member_requests"] == b["member_requests"]
    sc, sc_one = {r["policy"]: r for r in d_q}["sc"], {r["policy"]: r for r in d_one}["sc"]
    assert sc["missed_rotations"] < sc_one["missed_rotations"]  # the stripe cache's runs: the queue hides misses
    assert "seek_seconds" in sc and sc["rotation_wait_seconds"] > 0 and sc["pbg_rmw"] + sc["pbg_rcw"] > 0
    md = (tmp_path / "q" / "results.md").read_text()
    assert "one command at a time" in md and "Where the members' time went" in md
    assert queued.results["workspace"] == [1]


def test_ablations_keep_the_main_ct_limits_on_the_one_command_drive():
    """A modified preset (tcq=off) names no CT limits of its own: the ablation gives the main
    run's, so the one-command ablation changes the drive and nothing else."""
    specs = {s["id"]: s for s in msc_ct.runs(True)}
    one = specs["ablation-tcq-off-msc_ct"]
    assert one["disk_model"].endswith("tcq=off") and one["ct_limits"] == "sr_max=4,sw_max=4"
    assert specs["ablation-limits-16-msc_ct"]["ct_limits"] == "sr_max=16,sw_max=16"
    assert specs["ablation-write-ct-only-msc_ct"]["ct_limits"] == "sr_max=1"


def test_eq1_holds_one_command_at_a_time_and_the_queue_is_what_breaks_it():
    """Eq. (1) on the model: one command at a time every stride-2 block misses a revolution and
    t_d = t_c + t_r N_r; with the drive's queue the counted N_r explains little of t_d - t_c."""
    from vraid.sim.experiment import msc_ct_figs

    got = {}
    for key, model in (("one", "hdd:st373454lc,tcq=off"), ("queue", "hdd:st373454lc")):
        got[key] = msc_ct_figs.eq1_run({"disk_model": model, "span": 1 << 20, "passes": 1})
    one, queue = got["one"], got["queue"]
    assert one["n_r"] == one["blocks"]
    assert one["t_d"] == pytest.approx(one["t_c"] + one["t_r"] * one["n_r"], rel=0.02)
    assert queue["t_d"] > 1.25 * (queue["t_c"] + queue["t_r"] * queue["n_r"])
    assert queue["rotation_wait_d"] > queue["rotation_wait_c"]
    rows = msc_ct_figs.eq1_rows({"eq1": got})
    assert [r.verdict for r in rows] == ["not reproduced", "reproduced"]


def test_every_claim_of_the_paper_is_a_row():
    """Fig. 11's ratios, Fig. 12, Table II (12 benchmarks x 2 ratios), Figs. 13 and 14, eq. (1)."""
    from vraid.sim.experiment import msc_ct_figs
    from vraid.sim.experiment.msc_ct_trends import more_rows, mount_rows

    rows = more_rows({}, {}) + mount_rows({})  # the file-system rows: the mount part's
    items = " | ".join(r.item for r in rows)
    for bench in msc_ct_figs.TABLE2:
        assert f"Table II {bench}: SC over PBGC" in items and f"Table II {bench}: MSC-CT over SC" in items
    for fig in ("Fig. 12(a)", "Fig. 12(b)", "Fig. 12(d)", "Fig. 13(a)", "Fig. 13(b)", "Fig. 14(a)", "Fig. 14(b)"):
        assert fig in items
    assert all(r.cause for r in rows if r.verdict == "not run")
    # Table II's printed numbers, as throughput ratios: src self-copy 29.3 s / 15.2 s, sequential read 381/106
    t2 = {r.item: r.paper for r in rows if r.item.startswith("Table II")}
    assert t2["Table II src self-copy: SC over PBGC"] == pytest.approx(29.3 / 15.2, abs=1e-3)
    assert t2["Table II sequential read (block): SC over PBGC"] == pytest.approx(381 / 106, abs=1e-3)

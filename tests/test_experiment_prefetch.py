"""Experiment ``prefetch`` (seed 001 Fig. 8) in a small run: the schema of results.json and
results-256k.json, the paper_vs_vraid list, and what the host model must show even at this
size (SASEQP's windows never cross a strip; SEQP's do)."""

from __future__ import annotations

import json

import pytest

from vraid.sim.experiment import get, names
from vraid.sim.experiment import prefetch as pf
from vraid.sim.experiment import verdict
from vraid.sim.experiment.runner import run_experiment

KIB, MIB = 1 << 10, 1 << 20


@pytest.fixture(scope="module")
def small():
    specs = pf.runs(True, total=2 * MIB, streams=[1, 4], strips=(128 * KIB, 256 * KIB),
                    series=("SEQP128", "SASEQP128", "SEQP512", "SASEQP512"))
    return [(s, pf.run(s)) for s in specs]


def test_registered_and_run_specs():
    assert "prefetch" in names() and get("prefetch") is pf
    quick = pf.runs(True)
    fig8 = [s for s in quick if not pf.paper.is_extra(s)]
    assert len(fig8) == len(pf.STRIPS) * len(pf.SERIES) * len(pf.QUICK["streams"])
    kinds = {s["kind"] for s in quick if pf.paper.is_extra(s)}
    assert kinds == {"tcq-off", "antic", "fig8c", "fig8f", "fig9", "webserver", "msp512"}
    assert all("tcq=off" not in s["disk_model"] for s in fig8)  # the headline is judged on the queued model
    assert {s["disk_model"] for s in quick if s.get("kind") == "tcq-off"} == {pf.paper.ONE_COMMAND}
    assert {s["antic"] for s in quick if s.get("kind") == "antic"} == set(pf.paper.ANTIC)
    full = [s for s in pf.runs(False) if not pf.paper.is_extra(s)]
    assert {s["streams"] for s in full} == {1, 2, 4, 8, 16, 32, 64} and {s["strip"] for s in full} == set(pf.STRIPS)
    assert {s["prefetch"] for s in full if s["series"].startswith("MSP")} == {"msp"}


def test_results_json_schema(small):
    res = pf.collect(small)
    assert set(res) == {"strip", "streams", "series", "paper_vs_vraid"}
    assert res["strip"] == 128 * KIB and res["streams"] == [1, 4]
    assert list(res["series"]) == ["SEQP128", "SEQP512", "SASEQP128", "SASEQP512"]
    assert all(len(v) == 2 and all(x > 0 for x in v) for v in res["series"].values())
    for claim in res["paper_vs_vraid"]:
        assert set(claim) >= {"item", "paper", "vraid", "verdict"}
        assert claim["verdict"] in verdict.VERDICTS
    r256 = pf.extras(small)["results-256k.json"]
    assert r256["strip"] == 256 * KIB and set(r256["series"]) == set(res["series"])


def test_saseqp_windows_stay_in_one_strip(small):
    for spec, out in small:
        assert out["file_read_bytes"] == 2 * MIB
        if spec["series"].startswith("SASEQP"):
            assert out["crossing_windows"] == 0 and out["disk_read_requests"] == out["windows"]
        elif spec["strip"] == 128 * KIB:
            assert out["crossing_windows"] > 0 and out["disk_read_requests"] > out["windows"]


def test_claims_are_judged_by_the_one_rule(small):
    """prefetch has no verdict of its own: every ratio row is verdict.judge's, baseline 1."""
    assert not hasattr(pf, "verdict")
    rows = verdict.from_json(pf.collect(small)["paper_vs_vraid"])
    ratios = [r for r in rows if r.unit == "x" and r.verdict != verdict.NOT_RUN]
    assert ratios and all(r.verdict == verdict.judge(r.paper, r.vraid, baseline=1.0) for r in ratios)
    # a run without the 256 KiB strip: its figures are rows that say so
    only128 = verdict.from_json(pf.collect([(s, o) for s, o in small if s["strip"] == 128 * KIB])["paper_vs_vraid"])
    assert {r.verdict for r in only128 if "8d" in r.item or "8e" in r.item} == {verdict.NOT_RUN}


def test_report_files(tmp_path, monkeypatch):
    monkeypatch.setattr(pf, "QUICK", {"total": 1 * MIB, "streams": [1]})
    monkeypatch.setattr(pf, "SERIES", {k: pf.SERIES[k] for k in ("SASEQP128", "MSP+SASEQP128")})
    monkeypatch.setattr(pf.paper, "extra_runs", lambda *args: [])  # the other figures: see test_prefetch_rows
    done = run_experiment("prefetch", tmp_path, quick=True, jobs=1)
    names_ = {f.name for f in done.files}
    assert {"results.json", "results-256k.json", "results.md", "detail.json"} <= names_
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["series"]) == {"SASEQP128", "MSP+SASEQP128"}
    md = (tmp_path / "results.md").read_text()
    assert "| item | paper | vraid | verdict | cause |" in md and "2.40x" in md and "tolerance 25 %" in md


@pytest.mark.parametrize("strip,label", [(128 * KIB, "128K"), (256 * KIB, "256K")])
def test_fig8_panels_name_their_own_strip(tmp_path, monkeypatch, strip, label):
    """Each Fig. 8 panel's title names the strip of its own results (it once printed the last
    claim's strip in bytes, "strip 131072", on both figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seen = []
    monkeypatch.setattr(plt, "close", lambda fig: seen.append([ax.get_title() for ax in fig.axes]))
    res = {"strip": strip, "streams": [1, 4], "series": {"SEQP128": [1.0, 2.0], "SASEQP128": [1.5, 2.5]}}
    pf._plot(res, tmp_path / "fig8.png")
    assert (tmp_path / "fig8.png").stat().st_size > 0
    assert seen and all(t.startswith(f"strip {label}, ") for t in seen[0]), seen


def test_runs_keep_no_bytes_and_time_the_same_as_with_them(monkeypatch):
    """A run is metadata-only (its members keep no bytes, so the paper's 8 GB aggregate fits in
    memory); with members that keep the bytes the outputs are the same."""
    import dataclasses

    import vraid.sim.simulator as simulator

    spec = pf.runs(True, total=2 * MIB, streams=[4], strips=(128 * KIB,), series=("SASEQP128",))[0]
    seen = []
    real = simulator.SimConfig

    def kept(*args, **kwargs):
        config = real(*args, **kwargs)
        seen.append(config.no_data)
        return dataclasses.replace(config, no_data=False) if len(seen) == 2 else config

    monkeypatch.setattr(simulator, "SimConfig", kept)
    without, with_bytes = pf.run(spec), pf.run(spec)
    assert seen == [True, True] and without == with_bytes

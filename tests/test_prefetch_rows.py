"""Experiment ``prefetch``: every claim of paper 001 is a row, judged by verdict.py.

Checked on the committed run (results/prefetch/) and on rows() with no extra runs (each
claim then says ``not run``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from vraid.sim.experiment import prefetch as pf
from vraid.sim.experiment import prefetch_paper as pp
from vraid.sim.experiment import verdict

RESULTS = Path(__file__).resolve().parent.parent / "results"
MIB = 1 << 20

#: one fragment of each claim's item: Fig. 8 (sec. 5.2), 8c, 8f, 9, 10a-f, the abstract, the ablations
CLAIMS = ("MSP+SASEQP128 over SASEQP128, 1 stream (Fig. 8a)", "(Fig. 8b)", "(Fig. 8d", "(Fig. 8e",
          "SEQP512 over SEQP128, 1 stream", "SEQP128 over SEQP512", "MSP combinations best",
          "(Fig. 8c)", "(Fig. 8f)", "(Fig. 9 right)", "(Fig. 9 left", "(Fig. 9, sixth bar)",
          "SASEQP64 over SEQP64 (Fig. 10a)", "SASEQP128 over SEQP128 (Fig. 10a)", "SASEQP256 over SEQP256 (Fig. 10a)",
          "SASEQP512 over SEQP512 (Fig. 10a)", "SASEQP32 over SEQP32 (Fig. 10b)", "SASEQP64 over SEQP64 (Fig. 10b)",
          "SASEQP128 over SEQP128 (Fig. 10b)", "SASEQP256 over SEQP256 (Fig. 10b)",
          "SASEQP512 over SEQP512 (Fig. 10b)", "1,024 KB prefetch", "(Fig. 10c)", "(Figs. 10d-f)", "(Fig. 10f",
          "(abstract, sec. 6", "one command at a time (tcq=off)", "anticipatory scheduler 6ms (ablation)",
          "anticipatory scheduler 4ms (ablation)", "MSP+SASEQP128 over SEQP128, 1 stream (abstract, sec. 6",
          "SEQP notably inferior to SASEQP for eight or more streams",
          "significantly inferior to both MSP combinations at one stream (Figs. 8b, 8d, 8e)",
          "SASEQP512 over SASEQP128", "(sec. 3, Fig. 3 worked example)", "(sec. 3, Fig. 4 worked example)")
PAPER = {"(Fig. 10a)": (3.1, 1.3, 2.6, 1.9), "(Fig. 10b)": (3.2, 1.3, 2.6, 1.8, 1.2)}


def _rows(path: Path) -> list[verdict.Comparison]:
    return verdict.from_json(json.loads(path.read_text())["paper_vs_vraid"])


def _check(rows: list[verdict.Comparison]) -> None:
    text = [r.item + " " + r.cause for r in rows]
    for claim in CLAIMS:
        assert any(claim in t for t in text), f"no row for {claim!r}"
    for r in rows:
        assert r.verdict in verdict.VERDICTS
        if r.verdict == verdict.NOT_RUN:
            assert r.cause  # says why
            continue
        assert r.verdict == verdict.judge(r.paper, r.vraid, tolerance=r.tolerance, baseline=r.baseline)
        if r.verdict != verdict.REPRODUCED and r.unit != verdict.YES_NO:
            assert r.cause, f"a miss without its measured cause: {r.item}"
    for fig, values in PAPER.items():  # the paper's printed numbers, in order
        ratio_rows = [r for r in rows if r.item.endswith(fig) and "SASEQP" in r.item and "best" not in r.item]
        assert tuple(r.paper for r in ratio_rows) == values


def test_committed_run_has_every_claim_judged_by_the_rule():
    _check(_rows(RESULTS / "prefetch" / "results.json"))


def test_headline_is_judged_on_the_queued_model_with_the_ablation_in_its_cause():
    rows = _rows(RESULTS / "prefetch" / "results.json")
    head = next(r for r in rows if r.item.startswith("MSP+SASEQP128 over SASEQP128, 1 stream (Fig. 8a)"))
    ablation = next(r for r in rows if "one command at a time (tcq=off)" in r.item)
    assert head.paper == 2.4 == ablation.paper
    assert f"{ablation.vraid:.2f}x" in head.cause
    detail = json.loads((RESULTS / "prefetch" / "detail.json").read_text())
    assert all("tcq=off" not in r["disk_model"] for r in detail["runs"])


def test_rows_without_runs_say_not_run():
    rows = pp.rows([])
    assert {r.verdict for r in rows} == {verdict.NOT_RUN}
    assert all(r.cause for r in rows)
    assert any("abstract" in r.item for r in rows) and any("Fig. 8c" in r.item for r in rows)
    assert all(math.isnan(r.vraid) for r in rows)


def _row(rows: list[verdict.Comparison], fragment: str) -> verdict.Comparison:
    found = [r for r in rows if fragment in r.item]
    assert len(found) == 1, (fragment, [r.item for r in found])
    return found[0]


def test_committed_run_has_the_audited_claims_with_the_papers_numbers():
    """The claims an audit found without a row (abstract/sec. 6's 2.4x over SEQP, sec. 5.2's
    three statements without numbers, sec. 3's worked example): each is a row, with the
    paper's number and the baseline that gives its direction."""
    rows = _rows(RESULTS / "prefetch" / "results.json")
    head = _row(rows, "MSP+SASEQP128 over SEQP128, 1 stream (abstract, sec. 6")
    assert (head.paper, head.baseline, head.unit) == (2.4, 1.0, "x")
    assert "one command at a time (tcq=off)" in head.cause and "member reads per MiB" in head.cause
    eight = _row(rows, "SEQP notably inferior to SASEQP for eight or more streams")
    assert (eight.paper, eight.unit) == (1.0, verdict.YES_NO)
    assert "8, 16, 32, 64 streams" in eight.item and "Figs. 8a, 8b, 8d, 8e" in eight.item
    assert "8/16/32/64 streams" in eight.cause
    if eight.verdict != verdict.REPRODUCED:  # a miss names where and its counters
        assert "misses:" in eight.cause and "member reads per MiB" in eight.cause
    msp = _row(rows, "both MSP combinations at one stream")
    assert (msp.paper, msp.unit) == (1.0, verdict.YES_NO)
    assert all(f"{fig}: MSP+" in msp.cause for fig in ("8b", "8d", "8e")) and "stripe prefetches" in msp.cause
    similar = _row(rows, "SASEQP512 over SASEQP128")
    assert (similar.paper, similar.baseline, similar.unit) == (1.0, 1.0, "x")
    assert "by streams 1/2/4/8/16/32/64" in similar.cause and "shrunk" in similar.cause
    fig3, fig4 = _row(rows, "(sec. 3, Fig. 3 worked example)"), _row(rows, "(sec. 3, Fig. 4 worked example)")
    assert (fig3.paper, fig3.vraid, fig3.baseline) == (11, 11, 7)
    assert (fig4.paper, fig4.vraid, fig4.baseline) == (7, 7, 11)
    assert fig3.verdict == fig4.verdict == verdict.REPRODUCED
    assert "4 crossing a strip" in fig3.cause and "1 shrunk" in fig4.cause
    detail = json.loads((RESULTS / "prefetch" / "detail.json").read_text())
    kinds = {r["kind"] for r in detail["extra"]}
    assert {"msp512", "fig3-4"} <= kinds  # the runs behind them are in detail.json


def test_worked_example_runs_through_the_host_model_give_11_and_7():
    """Sec. 3, Figs. 3 and 4, run as the experiment runs it (host model, engine, RAID-5 of
    Fig. 1) where it collects the rows: SEQP's seven prefetch requests make 11 member requests,
    SASEQP's make 7."""
    assert not [s for s in pf.runs(True) + pf.runs(False) if s.get("kind") == "fig3-4"]  # not a run of the sweep
    runs = pf.worked_example()
    assert [r["policy"] for r in runs] == ["seqp", "saseqp"] and {r["kind"] for r in runs} == {"fig3-4"}
    assert [r["disk_read_requests"] for r in runs] == [11, 7]
    assert [r["windows"] for r in runs] == [7, 7] and [r["file_read_bytes"] for r in runs] == [80 << 10] * 2
    rows = pp.worked_rows(runs)
    assert [(r.paper, r.vraid, r.verdict) for r in rows] == [(11, 11, verdict.REPRODUCED), (7, 7, verdict.REPRODUCED)]


def _fig8(values: dict[tuple[int, str], list[float]], streams: list[int]):
    """by_strip and main rows of a made-up Fig. 8 sweep (every counter the rows read)."""
    by_strip, main = {}, []
    for (strip, name), mbs in values.items():
        by_strip.setdefault(strip, {"strip": strip, "streams": streams, "series": {}})["series"][name] = mbs
        main += [{"strip": strip, "series": name, "streams": n, "mb_s": v, "disk_read_requests": 100,
                  "file_read_bytes": 10 << 20, "disk_busy": [0.5] * 5, "rotation_wait_seconds": 0.1, "windows": 50,
                  "shrunk_windows": 5, "controller_prefetches": 3 if name.startswith("MSP") else 0}
                 for n, v in zip(streams, mbs)]
    return by_strip, main


def test_eight_or_more_streams_holds_only_where_saseqp_wins_at_every_count_from_8():
    k = 1 << 10
    good = {(s, f"{p}{m}"): ([1, 10, 10] if p == "SEQP" else [1, 11, 12])
            for s in (128 * k, 256 * k) for p in ("SEQP", "SASEQP") for m in (128, 512)}
    by_strip, main = _fig8(good, [4, 8, 64])
    row = pf.eight_or_more(by_strip, main, [])
    assert row.verdict == verdict.REPRODUCED and "8, 64 streams" in row.item  # 4 streams left out
    bad = dict(good)
    bad[(256 * k, "SASEQP512")] = [1, 11, 9]
    row = pf.eight_or_more(*_fig8(bad, [4, 8, 64]), [])
    assert row.verdict == verdict.NOT_REPRODUCED and "misses: 8e at 64 streams" in row.cause
    assert "counters at the worst (8e, 64 streams, 0.90x)" in row.cause
    assert pf.eight_or_more(*_fig8(good, [1, 4]), []).verdict == verdict.NOT_RUN


def test_saseqp_similar_takes_the_stream_count_farthest_from_one():
    k = 1 << 10
    by_strip, main = _fig8({(128 * k, "SASEQP128"): [10, 10, 10], (128 * k, "SASEQP512"): [10.5, 13, 8]}, [1, 8, 64])
    row = pf.saseqp_similar(by_strip, main)
    assert row.vraid == 1.3 and row.verdict == verdict.NOT_REPRODUCED and "counters at 8 streams" in row.cause


def test_msp_one_stream_needs_the_512_kib_msp_runs_of_figs_8b_and_8e():
    k = 1 << 10
    values = {(s, n): [v] for s in (128 * k, 256 * k)
              for n, v in (("SEQP128", 50), ("SASEQP128", 60), ("SEQP512", 200), ("SASEQP512", 60),
                           ("MSP+SEQP128", 350), ("MSP+SASEQP128", 300))}
    by_strip, main = _fig8(values, [1])
    assert pf.msp_one_stream(by_strip, main, []).verdict == verdict.NOT_RUN  # no msp512 runs
    extra = [{**r, "series": "MSP+" + r["series"], "kind": "msp512", "mb_s": 250.0}
             for r in main if r["series"] in ("SEQP512", "SASEQP512")]
    row = pf.msp_one_stream(by_strip, main, extra)
    assert row.verdict == verdict.REPRODUCED and "8b 1.25x" in row.cause
    extra[0]["mb_s"] = 150.0  # one MSP combination below SEQP512 in Fig. 8b
    assert pf.msp_one_stream(by_strip, main, extra).verdict == verdict.NOT_REPRODUCED


def test_file_size_row_names_the_counters_where_it_fails():
    """Figs. 10d-f's "noticeable only from files 4x the strip": where it fails, each policy's member
    reads per MiB and rotational wait at that file size, from the sweep's own web-server runs."""
    from vraid.sim.experiment import prefetch_paper as pp

    detail = json.loads((RESULTS / "prefetch" / "detail.json").read_text())
    row = next(r for r in pp.rows(detail["extra"]) if "4x the strip" in r.item)
    if row.verdict != "reproduced":
        assert "counters where it fails: " in row.cause and "member reads per MiB SASEQP" in row.cause
        assert "rotational wait per member read" in row.cause
    gains = {128 << 10: 1.0, 512 << 10: 1.2, 4096 << 10: 1.3}
    assert pp._file_size_counters([], gains).startswith("; cause not found in this run")


def test_a_one_command_sweep_makes_no_copy_of_itself_as_the_queue_ablation():
    """results/prefetch-tcq runs every run one command at a time: its 'ablation, one command at
    a time' would be the same runs again (a ratio 2.05x -> 2.05x). It makes none, and its rows
    name the queued sweep as their other model."""
    queued = pp.extra_runs(True, 2 * MIB, 8, pf.DISK_MODEL)
    alone = pp.extra_runs(True, 2 * MIB, 8, pp.ONE_COMMAND)
    assert any(s["kind"] == "tcq-off" for s in queued) and any(s.get("ablation") for s in queued)
    assert not any(s["kind"] == "tcq-off" or s.get("ablation") for s in alone)
    assert {s["disk_model"] for s in alone} == {pp.ONE_COMMAND}
    assert {s["id"] for s in alone} < {s["id"] for s in queued}  # the same runs, less the copies
    sweep = [{**s, "mb_s": 1.0} for s in alone if s["kind"] == "fig8c"]
    assert pp.one_command_sweep(sweep) and not pp.one_command_sweep([{**s, "mb_s": 1.0} for s in queued])
    assert pp.headline_cause(sweep, 2.0) == pp.QUEUED_SWEEP and "results/prefetch" in pp.QUEUED_SWEEP
    rows = pp.rows(sweep)
    assert not any("(ablation of Fig. 8a)" in r.item for r in rows)  # the sweep's own Fig. 8a row is it
    assert not any("2.05x -> 2.05x" in r.cause for r in rows)

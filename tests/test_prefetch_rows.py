"""Experiment ``prefetch``: every claim of paper 001 is a row, judged by verdict.py.

Checked on the committed run (results/prefetch/) and on rows() with no extra runs (each
claim then says ``not run``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from vraid.sim.experiment import prefetch_paper as pp
from vraid.sim.experiment import verdict

RESULTS = Path(__file__).resolve().parent.parent / "results"

#: one fragment of each claim's item: Fig. 8 (sec. 5.2), 8c, 8f, 9, 10a-f, the abstract, the ablations
CLAIMS = ("MSP+SASEQP128 over SASEQP128, 1 stream (Fig. 8a)", "(Fig. 8b)", "(Fig. 8d", "(Fig. 8e",
          "SEQP512 over SEQP128, 1 stream", "SEQP128 over SEQP512", "MSP combinations best",
          "(Fig. 8c)", "(Fig. 8f)", "(Fig. 9 right)", "(Fig. 9 left", "(Fig. 9, sixth bar)",
          "SASEQP64 over SEQP64 (Fig. 10a)", "SASEQP128 over SEQP128 (Fig. 10a)", "SASEQP256 over SEQP256 (Fig. 10a)",
          "SASEQP512 over SEQP512 (Fig. 10a)", "SASEQP32 over SEQP32 (Fig. 10b)", "SASEQP64 over SEQP64 (Fig. 10b)",
          "SASEQP128 over SEQP128 (Fig. 10b)", "SASEQP256 over SEQP256 (Fig. 10b)",
          "SASEQP512 over SEQP512 (Fig. 10b)", "1,024 KB prefetch", "(Fig. 10c)", "(Figs. 10d-f)", "(Fig. 10f",
          "(abstract, sec. 6", "one command at a time (tcq=off)", "anticipatory scheduler 6ms (ablation)",
          "anticipatory scheduler 4ms (ablation)")
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

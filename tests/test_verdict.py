"""The shared paper-vs-vraid verdict (vraid.sim.experiment.verdict)."""

import json

import pytest

from vraid.sim.experiment import verdict as V


@pytest.mark.parametrize("paper, ours, baseline, expected", [
    (2.7, 2.2, 1.0, V.REPRODUCED),        # 18 % below: within 25 %
    (2.7, 2.0, 1.0, V.DIRECTION),         # 26 % below, still a gain
    (2.7, 0.9, 1.0, V.NOT_REPRODUCED),    # a loss where the paper gains
    (36.0, -7.0, 0.0, V.NOT_REPRODUCED),  # opposite sign of a change
    (-10.0, -12.4, 0.0, V.REPRODUCED),
    (-10.0, -30.0, 0.0, V.DIRECTION),
    (0.0, 0.2, 0.0, V.REPRODUCED),        # paper 0: absolute tolerance
    (0.0, 0.3, 0.0, V.NOT_REPRODUCED),
    (1.0, 1.0, 1.0, V.REPRODUCED),
    (5.0, 1.0, 1.0, V.NOT_REPRODUCED),    # on the baseline where the paper is not
    (1.10, 0.95, 1.0, V.NOT_REPRODUCED),  # within 25 % but a loss where the paper gains
    (1.10, 1.0, 1.0, V.NOT_REPRODUCED),
    (0.0, -0.1, 0.0, V.REPRODUCED),       # the paper on the baseline: "about the same"
])
def test_judge(paper, ours, baseline, expected):
    assert V.judge(paper, ours, baseline=baseline) == expected


def test_tolerance_is_relative_to_the_paper():
    assert V.judge(100, 125) == V.REPRODUCED
    assert V.judge(100, 126) == V.DIRECTION
    assert V.judge(100, 110, tolerance=0.05) == V.DIRECTION
    with pytest.raises(ValueError):
        V.judge(1, 1, tolerance=-0.1)


def test_json_round_trip_and_table():
    rows = [V.compare("CT gain at 1 GB", 2.7, 1.8, baseline=1.0, unit="x", cause="one | two"),
            V.compare("Case 3 overwrite change", 36.0, 30.0, unit="%")]
    data = json.loads(json.dumps(V.paper_vs_vraid(rows)))
    assert [set(d) >= {"item", "paper", "vraid", "verdict"} for d in data] == [True, True]
    assert [d["verdict"] for d in data] == [V.DIRECTION, V.REPRODUCED]
    assert V.from_json(data) == rows
    table = V.markdown_table(rows)
    assert "| CT gain at 1 GB | 2.70x | 1.80x | direction | one \\| two |" in table
    assert "| 36.0% | 30.0% | reproduced |" in table
    assert V.tally(rows) == {V.REPRODUCED: 1, V.DIRECTION: 1, V.INCONCLUSIVE: 0, V.NOT_REPRODUCED: 0,
                             V.NOT_RUN: 0}
    with pytest.raises(ValueError):
        V.from_json([{"item": "x", "paper": 1, "vraid": 1, "verdict": "close"}])


def test_fmt_value():
    assert V.fmt_value(3.3333, "x") == "3.33x"
    assert V.fmt_value(123.456, "ms") == "123 ms"
    assert V.fmt_value(0.0) == "0"
    assert V.fmt_value(float("nan")) == "n/a"


def test_a_range_that_crosses_the_papers_side_is_inconclusive():
    # ours 1.3x, but repeated runs gave 0.9x to 1.6x: one run can say a loss
    assert V.judge(1.4, 1.3, baseline=1.0, spread=(0.9, 1.6)) == V.INCONCLUSIVE
    assert V.judge(1.4, 1.3, baseline=1.0, spread=(1.1, 1.6)) == V.REPRODUCED
    assert V.judge(3.0, 1.3, baseline=1.0, spread=(1.1, 1.6)) == V.DIRECTION
    assert V.judge(3.0, 0.8, baseline=1.0, spread=(0.7, 0.9)) == V.NOT_REPRODUCED
    row = V.compare("gain", 1.4, 1.3, baseline=1.0, unit="x", spread=(0.9, 1.6))
    assert row.verdict == V.INCONCLUSIVE and V.from_json(V.paper_vs_vraid([row])) == [row]
    assert "| gain | 1.40x | 1.30x (runs 0.900x to 1.60x) | inconclusive |" in V.markdown_table([row])
    yes_no = V.holds("LRW never worse", True, True, spread=[True, False, True])
    assert yes_no.verdict == V.INCONCLUSIVE and V.holds("x", True, True, spread=[True]).verdict == V.REPRODUCED


def test_not_run_inputs_and_yes_no_claims():
    rows = [V.not_run("Fig. 9 (web server)", 2.6, "the FileBench personality is not modelled", unit="x"),
            V.given("revolution time", 4.0, 4.0, unit="ms", cause="the preset's 15,000 rpm"),
            V.holds("best at every point", True, False, cause="RAID-5 wins at W/R 0.1"),
            V.holds("LRW never worse", True, True)]
    assert [r.verdict for r in rows] == [V.NOT_RUN, V.INPUT, V.NOT_REPRODUCED, V.REPRODUCED]
    assert V.tally(rows)[V.NOT_RUN] == 1 and sum(V.tally(rows).values()) == 3  # an input is no verdict
    data = json.loads(json.dumps(V.paper_vs_vraid(rows)))
    back = V.from_json(data)
    assert [r.verdict for r in back] == [r.verdict for r in rows] and back[2:] == rows[2:]
    table = V.markdown_table(back, rule=True)
    assert table.startswith("Verdicts (one rule") and "tolerance 25 %" in table
    assert "| Fig. 9 (web server) | 2.60x | n/a | not run | the FileBench personality is not modelled |" in table
    assert "| best at every point | yes | no | not reproduced |" in table
    judged, inputs = table.split("Inputs taken from the paper")
    assert "revolution time" not in judged and "| revolution time | 4.00 ms | 4.00 ms |" in inputs
    with pytest.raises(ValueError):
        V.not_run("x", 1.0, "")


def test_a_tolerance_other_than_the_rules_is_printed():
    row = V.compare("odd", 10.0, 12.0, tolerance=0.1)
    assert row.verdict == V.DIRECTION and "direction (tolerance 10 %)" in V.markdown_table([row])

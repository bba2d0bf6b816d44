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
    assert V.tally(rows) == {V.REPRODUCED: 1, V.DIRECTION: 1, V.NOT_REPRODUCED: 0}
    with pytest.raises(ValueError):
        V.from_json([{"item": "x", "paper": 1, "vraid": 1, "verdict": "close"}])


def test_fmt_value():
    assert V.fmt_value(3.3333, "x") == "3.33x"
    assert V.fmt_value(123.456, "ms") == "123 ms"
    assert V.fmt_value(0.0) == "0"
    assert V.fmt_value(float("nan")) == "n/a"

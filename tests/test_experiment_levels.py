"""Experiment ``levels`` (issue 32 item 6): the book's side gives OSTEP Fig. 38.8's formulas for
the levels the book has, derived from the schemes alone; a level registered later (a throwaway
RAID-4-like scheme here) gets its column, the book's RAID-4 formulas and a measured value."""

from __future__ import annotations

import json

import pytest
from levels_fixture import fixed_parity_level, mirror_level  # noqa: F401  (fixtures)

from vraid.core import geometry, redundancy
from vraid.sim.experiment import levels, levels_book
from vraid.sim.experiment.runner import run_experiment

#: OSTEP Fig. 38.8's rows as the book prints them (RAID-4's "1/2·R" is the book's ½·R)
BOOK = {
    "raid0": ["N·B", "0", "0", "N·S", "N·S", "N·R", "N·R", "T", "T"],
    "raid4": ["(N-1)·B", "1", "1", "(N-1)·S", "(N-1)·S", "(N-1)·R", "1/2·R", "T", "2·T"],
    "raid5": ["(N-1)·B", "1", "1", "(N-1)·S", "(N-1)·S", "N·R", "N/4·R", "T", "2·T"],
}


def formulas(level: int, n: int = 6) -> list[str]:
    return [levels_book.formula(level, row, n) for row in levels_book.ROWS]


def test_the_book_formulas_come_out_of_raid0_and_raid5():
    assert formulas(0) == BOOK["raid0"]
    assert formulas(5) == BOOK["raid5"]
    assert levels_book.survivable(5, 5) == (1, 1) and levels_book.survivable(0, 4) == (0, 0)


def test_a_fixed_parity_level_gets_raid4s_column(fixed_parity_level):
    assert formulas(fixed_parity_level) == BOOK["raid4"]
    s = levels_book.shape(fixed_parity_level, 6)
    assert (s.write_reads, s.write_writes) == (2, 2)


def test_copies_are_read_from_either_member_and_written_without_reading(mirror_level):
    levels_book_level = mirror_level
    copies, depends = levels_book.dependence(levels_book_level, 2)
    assert copies == (0,) and depends == ((0,),)
    s = levels_book.shape(levels_book_level, 2)
    # the book's mirror on N = 2: reads from both copies (N·R), writes to both (N/2·R), no reads first (T)
    assert 1 / s.read_load == 2 and 1 / s.write_load == 1 and (s.write_reads, s.write_writes) == (0, 2)
    assert levels_book.survivable(levels_book_level, 2) == (1, 1)


def test_the_quick_run_measures_every_registered_level_and_a_later_one(fixed_parity_level, tmp_path):
    level = fixed_parity_level
    run = run_experiment("levels", tmp_path, quick=True, jobs=1)  # one process: the fixture is in this one
    res = json.loads((tmp_path / "results.json").read_text())
    assert [e["level"] for e in res["levels"]] == list(redundancy.levels()) and level in redundancy.levels()
    assert {"results.md", "levels.png", "meta.json"} <= {p.name for p in run.files}
    by_level = {e["level"]: e for e in res["levels"]}
    for entry in res["levels"]:
        for key, cell in entry["rows"].items():
            assert cell["vraid"] is not None and cell["vraid"] > 0 or key.startswith("reliability"), (entry, key)
    # the measured shape of the book's table: RAID-0 streams on all N, parity costs random writes,
    # RAID-4's fixed parity member is its bottleneck and RAID-5 spreads it
    r0, r5, r4 = by_level[0]["rows"], by_level[5]["rows"], by_level[level]["rows"]
    assert r0["seq_read"]["vraid"] > r5["seq_read"]["vraid"]
    assert r4["rand_write"]["vraid"] < r5["rand_write"]["vraid"] < r0["rand_write"]["vraid"] / 2
    assert r4["rand_write"]["vraid"] == pytest.approx(0.5, rel=0.3)
    assert by_level[5]["small_write"] == {"book": [2, 2], "vraid": [2.0, 2.0]}
    text = (tmp_path / "results.md").read_text()
    assert f"RAID-{level}" in text and "(N-1)·S" in text and "N/4·R" in text


def test_a_level_that_refuses_the_member_count_keeps_its_rows_and_says_why():
    specs = levels.runs(True, disks=2)
    static5 = next(s for s in specs if s["id"] == "raid5-static")
    assert not [s for s in specs if s["id"].startswith("raid5-") and s["kind"] != "static"]
    out = levels.run(static5)
    assert "does not run on 2 members" in out["not_run"]
    res = levels.collect([(static5, out)])
    assert all("not_run" in cell for cell in res["levels"][0]["rows"].values())
    assert geometry.LEVELS == redundancy.LEVELS == redundancy.levels()  # nothing registered here


def test_raid10_runs_on_an_odd_member_count_with_the_book_s_half():
    """md's near-2 on 5 members: measured on 5 (not refused), capacity 5/2 members (a stripe is two
    chunk rows holding 5 chunks), any one failure and some two (not neighbours) survived, and the
    book's N/2 fitted on the odd counts as (N-1)/2 for the lucky failures."""
    specs = levels.runs(True, disks=5)
    assert {s["id"] for s in specs} >= {"raid10-static", "raid10-seq_read", "raid10-rand_write"}
    static = levels.run(next(s for s in specs if s["id"] == "raid10-static"))
    assert static == {"capacity": 2.5, "reliability_sure": 1, "reliability_lucky": 2}
    rows = {row.key: row for row in levels_book.ROWS}
    assert levels_book.formula(10, rows["capacity"], 5) == "N/2·B"
    assert levels_book.formula(10, rows["reliability_lucky"], 5) == "(N/2-1/2)"
    assert levels_book.formula(10, rows["reliability_lucky"], 6) == "N/2"
    s = levels_book.shape(10, 5)
    assert (1 / s.read_load, 1 / s.write_load, s.write_reads, s.write_writes) == (5, 2.5, 0, 2)


@pytest.mark.parametrize("options, message", [({"disks": 0}, "disks 0"), ({"depth": "x"}, "depth 'x'"),
                                              ({"model": "nonsense"}, "unknown disk model")])
def test_bad_options_are_refused_before_anything_runs(tmp_path, options, message):
    from vraid.errors import VraidError

    with pytest.raises(VraidError, match=message):
        run_experiment("levels", tmp_path / "out", quick=True, jobs=1, options=options)
    assert not (tmp_path / "out").exists()


def test_a_latency_row_off_the_book_names_its_measured_counters():
    """A latency row that is not reproduced carries the run's own seek and rotation counters
    beside the one disk's; on mirrors, the nearest-head read balance that shortens the seek."""
    from vraid.sim.experiment.levels import _cause
    from vraid.sim.experiment.levels_report import CAUSES

    one = {"mean_seek_ms": 3.62, "rotation_wait_seconds": 1.97, "rotation_waits": 1000}
    mirrored = {"mean_seek_ms": 1.48, "rotation_wait_seconds": 1.99, "rotation_waits": 1000}
    text = _cause("lat_read", 1, 6, mirrored, one)
    assert "mean seek 1.48 ms against one disk's 3.62 ms" in text
    assert "rotational wait 1.99 ms against 1.97 ms" in text
    assert "nearest" in text
    assert "nearest" not in _cause("lat_read", 5, 6, mirrored, one)  # parity: no copies to choose from
    assert _cause("rand_read", 1, 6, mirrored, one) == CAUSES["rand_read"]
    assert _cause("lat_read", 1, 6, {}, one) == CAUSES["lat_read"]  # a run written before the counters

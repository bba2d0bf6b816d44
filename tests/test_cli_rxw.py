"""``vraid rxw``: seed 000's rxw-matrix and contiguity transform on the command line."""

from __future__ import annotations

import json

import pytest

from vraid.cli.main import main
from vraid.cli.ct import _cell_text, random_z
from vraid.policies.ct import GENEROUS
from vraid.policies.ct.spec import load_ct
from vraid.core.rxw import Plan, format_cell, parse_z

Z_EQ2 = "DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE"


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["rxw", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _expected(z_text: str, spec: str = "msc"):
    z = parse_z(z_text)
    plan = Plan.build(0, z, list(range(len(z[0]) + 1)))
    ct = load_ct(spec, GENEROUS)
    return z, plan, (ct(plan) if ct else plan)


def _marked(cell, basic) -> str:
    """A transformed cell as printed off a terminal: ``*`` after each operation CT added."""
    return "".join(op + ("*" if op not in basic else "") for op in cell) or "."


def test_eq2_text_shows_z_basic_and_transformed_side_by_side(capsys, monkeypatch) -> None:
    from vraid.cli.common import console

    monkeypatch.setattr(console, "width", 120)  # wide enough for the three matrices in a row
    code, out, _ = _run(capsys, "--z", Z_EQ2)
    assert code == 0
    z, basic, tr = _expected(Z_EQ2)
    lines = [line.split() for line in out.splitlines()]
    for i in range(7):
        want = [str(i), *z[i], *(format_cell(c) for c in basic.basic[i]), basic.cycles()[i],
                *(_marked(c, b) for c, b in zip(tr.transformed[i], basic.basic[i]))]
        assert want in lines, f"row {i}: {want} not in the output"
    # the paper's eq. (2) row 3 (0-based 2): nothing planned, CT reads and writes column 0 and parity
    assert ["2", "E", "E", "E", "E", ".", ".", ".", ".", ".", "none", "r*w*", ".", ".", ".", "r*w*"] in lines
    # each row states its cycle (sec. II-A)
    assert [line[10] for line in lines if len(line) == 16 and line[0].isdigit()] == \
        ["rmw", "rcw", "none", "full", "rcw", "rmw", "rmw"]
    assert "Z" in out and "basic M" in out and "after CT" in out
    assert "msc:sr_max=1048576,sw_max=1048576" in out
    # member requests per column, and the legend of Table I
    assert "0x7" in out and "1x1, 3x2" in out and "5 -> 2" in out
    assert "read the block from the disk into a temporary memory" in out
    assert "the destination of the XOR result" in out


def test_eq2_json(capsys) -> None:
    code, out, _ = _run(capsys, "--z", Z_EQ2, "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"z", "cycles", "basic", "transformed", "requests"}
    assert doc["cycles"] == ["rmw", "rcw", "none", "full", "rcw", "rmw", "rmw"]
    z, plan, tr = _expected(Z_EQ2)
    assert doc["z"] == [list(r) for r in z]
    assert doc["basic"] == [[list(c) for c in r] for r in plan.basic]
    assert doc["transformed"] == [[list(c) for c in r] for r in tr.transformed]
    for req in doc["requests"]:
        assert set(req) == {"column", "op", "first_row", "rows"}
        assert req["op"] in ("read", "write") and 0 <= req["column"] <= 4
    # expected values (0-based rows, parity column 4)
    assert {"column": 0, "op": "read", "first_row": 0, "rows": 7} in doc["requests"]
    assert {"column": 0, "op": "write", "first_row": 0, "rows": 7} in doc["requests"]
    assert {"column": 4, "op": "write", "first_row": 0, "rows": 7} in doc["requests"]
    assert [r for r in doc["requests"] if r["column"] == 3 and r["op"] == "write"] == [
        {"column": 3, "op": "write", "first_row": 1, "rows": 1}, {"column": 3, "op": "write", "first_row": 3, "rows": 2}]
    assert doc["transformed"][2][3] == []  # m_34 of the paper: no w
    assert doc["basic"][0] == [["t", "xx", "w"], [], [], [], ["r", "x", "_", "w"]]
    ops = {op for m in (doc["basic"], doc["transformed"]) for row in m for c in row for op in c}
    assert ops <= {"r", "t", "x", "xx", "_", "w"}


def test_ct_none_and_explicit_limits(capsys) -> None:
    _, out, _ = _run(capsys, "--z", Z_EQ2, "--json", "--ct", "none")
    doc = json.loads(out)
    assert doc["transformed"] == doc["basic"]
    _, out, _ = _run(capsys, "--z", Z_EQ2, "--json", "--ct", "msc:sr_max=1")
    doc = json.loads(out)
    assert all("r" not in c or "r" in b for tr, br in zip(doc["transformed"], doc["basic"]) for c, b in zip(tr, br))
    _, out, _ = _run(capsys, "--z", Z_EQ2, "--ct", "none")
    assert "no CT (--ct none)" in out


def test_random_is_reproducible_and_answer_reveals(capsys) -> None:
    _, first, _ = _run(capsys, "--random", "--seed", "42")
    _, again, _ = _run(capsys, "--random", "--seed", "42")
    assert first == again
    assert "Predict" in first and "--answer" in first
    assert "basic M" not in first and "after CT" not in first
    _, answer, _ = _run(capsys, "--random", "--seed", "42", "--answer")
    assert "basic M" in answer and "after CT" in answer
    z = random_z(42, 7, 5)
    for i, row in enumerate(z):
        assert [str(i), *row] in [line.split()[: 1 + len(row)] for line in first.splitlines()]
    _, practice_json, _ = _run(capsys, "--random", "--seed", "42", "--json")
    assert json.loads(practice_json) == {"z": [list(r) for r in z], "seed": 42}
    _, answer_json, _ = _run(capsys, "--random", "--seed", "42", "--json", "--answer")
    assert json.loads(answer_json)["z"] == [list(r) for r in z] and "transformed" in json.loads(answer_json)
    assert random_z(1, 4, 3) == random_z(1, 4, 3)
    assert len(random_z(3, 9, 6)) == 9 and len(random_z(3, 9, 6)[0]) == 5
    assert any(random_z(s, 7, 5) != z for s in range(5))


@pytest.mark.parametrize(
    "args, words",
    [
        (["--z", "DEX"], ["'X'", "use only D, C and E"]),
        (["--z", "DEE,DE"], ["row 1 of Z has 2 blocks"]),
        (["--z", ","], ["Z is empty"]),
        (["--z", "D,E"], ["needs at least 2 data strips"]),
        (["--z", "DEE", "--ct", "msc:sr_max=0"], ["sr_max=0 is below 1"]),
        (["--z", "DEE", "--ct", "fast"], ["unknown contiguity transform"]),
        (["--random", "--rows", "0"], ["--rows 0 is out of range"]),
        (["--random", "--disks", "2"], ["--disks 2 is out of range"]),
    ],
)
def test_bad_input(capsys, args, words) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 1
    text = " ".join(err.split())
    for w in words:
        assert w in text, text
    assert "hint:" in text
    assert out == ""


def test_z_or_random_is_required(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["rxw"])
    assert info.value.code == 2
    capsys.readouterr()


def test_added_operations_are_bold() -> None:
    text = _cell_text(["r", "x", "w"], ["x"])
    bold = {text.plain[s.start : s.end] for s in text.spans if "bold" in str(s.style)}
    assert bold == {"r", "w"}
    assert not [s for s in _cell_text(["r", "x"], None).spans if "bold" in str(s.style)]


def test_random_difficulty_sets_the_size_and_rows_disks_override(capsys) -> None:
    from vraid.cli.ct import DIFFICULTY

    for level, (rows, disks) in DIFFICULTY.items():
        _, out, _ = _run(capsys, "--random", "--difficulty", level, "--seed", "3", "--json")
        z = json.loads(out)["z"]
        assert len(z) == rows and len(z[0]) == disks - 1
    _, out, _ = _run(capsys, "--random", "--difficulty", "easy", "--rows", "6", "--seed", "3", "--json")
    assert len(json.loads(out)["z"]) == 6
    code, _, err = _run(capsys, "--z", "DEE", "--difficulty", "hard")
    assert code == 1 and "go with --random" in err


def test_at_80_columns_the_matrices_stack_instead_of_wrapping(capsys, monkeypatch) -> None:
    from vraid.cli.common import console

    monkeypatch.setattr(console, "width", 80)
    code, out, _ = _run(capsys, "--z", Z_EQ2, "--ct", "msc")
    assert code == 0
    assert max(len(line) for line in out.splitlines()) <= 80
    z, basic, tr = _expected(Z_EQ2)
    lines = [line.split() for line in out.splitlines()]
    for i in range(7):  # Z and the basic M side by side, the transformed M under them
        assert [str(i), *z[i], *(format_cell(c) for c in basic.basic[i]), basic.cycles()[i]] in lines
        assert [_marked(c, b) for c, b in zip(tr.transformed[i], basic.basic[i])] in lines
    assert out.index("basic M") < out.index("after CT")


def test_rxw_level_6_plans_p_and_q(capsys):
    code, out, _ = _run(capsys, "--level", "6", "--z", "DEEEE,DDDDD,EEEEE", "--ct", "none", "--json")
    assert code == 0
    res = json.loads(out)
    assert res["checks"] == 2
    # row 0: one dirty block of 5 data on 7 disks: RCW reads 4, RMW reads 1 + P + Q = 3: RMW (fewer reads)
    assert res["cycles"] == ["rmw", "full", "none"]
    assert res["basic"][0][5:] == [["r", "x", "_", "w"]] * 2  # P and Q each read and patched
    assert res["basic"][1][5:] == [["_", "w"]] * 2
    code, text, _ = _run(capsys, "--level", "6", "--z", "DEEEE", "--ct", "none")
    assert code == 0 and "check columns P and Q" in text and "multiply-accumulate" in text

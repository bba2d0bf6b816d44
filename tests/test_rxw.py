"""The rxw-matrix planner against seed 000 (Baek & Park), section II-A and III-B."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vraid.core.rxw import (
    OPS,
    MemberRequest,
    Plan,
    basic_matrix,
    cell,
    column_requests,
    format_cell,
    parse_z,
    row_cycle,
)

# -- seed 000, eq. (2) and eq. (3) ---------------------------------------------------
Z_EQ2 = "DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE"

# Eq. (3) of the paper, written out cell by cell (the paper prints the XOR
# destination as "-"; vraid spells it "_"). NOTE: the text extracted from the
# paper (/work/shared/seeds/000_eb2143efadab9a8a.txt, eq. (3), about line 185) drops one empty
# cell in rows 1 and 7 and prints them with four cells,
#     {t,xx,w} {} {} {r,x,-,w}
# but M is u x v = 7 x 5, so those rows are {t,xx,w} {} {} {} {r,x,_,w}:
# the dirty block's RMW, three untouched empty blocks, and the parity's RMW.
M_EQ3 = [
    [{"t", "xx", "w"}, set(), set(), set(), {"r", "x", "_", "w"}],
    [{"r", "x"}, {"x"}, {"r", "x"}, {"x", "w"}, {"_", "w"}],
    [set(), set(), set(), set(), set()],
    [{"x", "w"}, {"x", "w"}, {"x", "w"}, {"x", "w"}, {"_", "w"}],
    [{"x", "w"}, {"x"}, {"x", "w"}, {"x", "w"}, {"_", "w"}],
    [set(), {"t", "xx", "w"}, set(), set(), {"r", "x", "_", "w"}],
    [{"t", "xx", "w"}, set(), set(), set(), {"r", "x", "_", "w"}],
]


def test_eq2_parses_to_the_papers_z() -> None:
    z = parse_z(Z_EQ2)
    assert z == (
        ("D", "E", "E", "E"),
        ("E", "C", "E", "D"),
        ("E", "E", "E", "E"),
        ("D", "D", "D", "D"),
        ("D", "C", "D", "D"),
        ("E", "D", "E", "E"),
        ("D", "E", "E", "E"),
    )


def test_eq2_gives_exactly_eq3() -> None:
    m = basic_matrix(parse_z(Z_EQ2))
    assert len(m) == 7 and all(len(row) == 5 for row in m)
    assert [[set(c) for c in row] for row in m] == M_EQ3
    # cells are in the paper's canonical order, each operation once
    for row in m:
        for c in row:
            assert c == cell(c)


def test_eq2_cycles_per_row() -> None:
    plan = Plan.build(3, parse_z(Z_EQ2), columns=[1, 2, 3, 4, 0])
    assert plan.cycles() == ["rmw", "rcw", "none", "full", "rcw", "rmw", "rmw"]
    assert plan.basic == plan.transformed
    assert plan.requests == tuple(column_requests(plan.basic))
    assert plan.to_dict()["columns"] == [1, 2, 3, 4, 0]


def test_eq3_member_requests() -> None:
    """Fig. 7(c): what the basic matrix asks of each member, merged per column."""
    reqs = column_requests(basic_matrix(parse_z(Z_EQ2)))
    reads = [(r.column, r.first_row, r.rows) for r in reqs if r.op == "read"]
    writes = [(r.column, r.first_row, r.rows) for r in reqs if r.op == "write"]
    # rows are 0-based here (the paper counts from 1)
    # column 0: t at row 0 and r at row 1 are adjacent reads: one request
    assert reads == [(0, 0, 2), (0, 6, 1), (1, 5, 1), (2, 1, 1), (4, 0, 1), (4, 5, 2)]
    assert writes == [
        (0, 0, 1),
        (0, 3, 2),
        (0, 6, 1),
        (1, 3, 1),
        (1, 5, 1),
        (2, 3, 2),
        (3, 1, 1),
        (3, 3, 2),
        (4, 0, 2),
        (4, 3, 4),
    ]


# -- section II-A: the RCW / RMW rule --------------------------------------------------
def _row(n: int):
    """A PBG row of Z for an N-member RAID-5 array (N-1 data blocks)."""
    return st.lists(st.sampled_from("DCE"), min_size=n - 1, max_size=n - 1).map(tuple)


rows_and_n = st.integers(3, 16).flatmap(lambda n: st.tuples(st.just(n), _row(n)))


def _io(states: tuple[str, ...]) -> tuple[int, int]:
    """(reads, writes) of one row, counted from the merged member requests."""
    reqs = column_requests(basic_matrix((states,)))
    assert all(r.rows == 1 and r.first_row == 0 for r in reqs)
    reads = sum(1 for r in reqs if r.op == "read")
    writes = sum(1 for r in reqs if r.op == "write")
    return reads, writes


@given(rows_and_n)
def test_rmw_exactly_when_it_needs_fewer_ios(case) -> None:
    n, states = case
    d, c = states.count("D"), states.count("C")
    cycle = row_cycle(states, n)
    if d == 0:
        assert cycle == "none"
    elif d == n - 1:
        assert cycle == "full"
    elif n - c > 2 * (1 + d):
        assert cycle == "rmw"
    else:
        assert cycle == "rcw"


@given(rows_and_n)
def test_io_counts_of_the_chosen_cycle(case) -> None:
    n, states = case
    d, c = states.count("D"), states.count("C")
    reads, writes = _io(states)
    cycle = row_cycle(states, n)
    if cycle == "none":
        assert (reads, writes) == (0, 0)
    elif cycle == "rmw":
        assert (reads, writes) == (1 + d, 1 + d)
        assert reads + writes == 2 * (1 + d) < n - c
    else:  # rcw and full
        assert (reads, writes) == (n - 1 - d - c, d + 1)
        assert reads + writes == n - c
        assert n - c <= 2 * (1 + d)  # RMW would not have been cheaper
    if cycle == "full":
        assert reads == 0
    # the chosen cycle never costs more I/Os than the other one
    if d:
        assert reads + writes == min(n - c, 2 * (1 + d))


@given(rows_and_n)
def test_cells_of_each_cycle(case) -> None:
    n, states = case
    (row,) = basic_matrix((states,))
    assert len(row) == n
    data, parity = row[:-1], row[-1]
    cycle = row_cycle(states, n)
    for s, c in zip(states, data):
        if cycle == "none":
            assert c == ()
        elif cycle == "rmw":
            assert c == (("t", "xx", "w") if s == "D" else ())
        else:
            assert c == {"D": ("x", "w"), "C": ("x",), "E": ("r", "x")}[s]
    assert parity == {"none": (), "rmw": ("r", "x", "_", "w"), "rcw": ("_", "w"), "full": ("_", "w")}[cycle]


@given(st.integers(1, 16).flatmap(lambda n: _row(n + 1)))
def test_raid0_rows_only_write_dirty_blocks(states) -> None:
    (row,) = basic_matrix((states,), parity=False)
    assert len(row) == len(states)
    assert row == tuple(("w",) if s == "D" else () for s in states)
    reqs = column_requests(((row),))
    assert all(r.op == "write" for r in reqs)
    assert len(reqs) == states.count("D")


def test_raid0_plan_cycles() -> None:
    plan = Plan.build(0, parse_z("DE,EE"), [0, 1], parity=False)
    assert plan.cycles() == ["write", "none"]
    assert plan.basic == ((("w",), ()), ((), ()))


# -- Fig. 5 cases described in section II-A ----------------------------------------------
@pytest.mark.parametrize("states", ["CCDE", "CDCE", "ECCD", "DECC"])
def test_fig5_case2_two_clean_one_dirty_on_five_disks(states: str) -> None:
    """N=5, c=2, d=1: N-c = 3 < 2(1+d) = 4, so reconstruct-write."""
    z = tuple(states)
    assert row_cycle(z, 5) == "rcw"
    (row,) = basic_matrix((z,))
    want = {"E": ("r", "x"), "C": ("x",), "D": ("x", "w")}
    assert row == tuple(want[s] for s in states) + (("_", "w"),)
    assert [format_cell(c) for c in row][-1] == "_w"
    assert _io(z) == (1, 2)  # N-1-d-c reads, d+1 writes


def test_fig5_case4_all_dirty() -> None:
    z = tuple("DDDD")
    assert row_cycle(z, 5) == "full"
    (row,) = basic_matrix((z,))
    assert row == (("x", "w"),) * 4 + (("_", "w"),)
    assert _io(z) == (0, 5)


@pytest.mark.parametrize("states", ["DEEE", "EEDE", "EEED"])
def test_fig5_read_modify_write_cases(states: str) -> None:
    """One dirty block, nothing cached: N-c = 5 > 2(1+d) = 4, so read-modify-write
    (Cases 1 and 6): read old data (t) and old parity (r), write both."""
    z = tuple(states)
    assert row_cycle(z, 5) == "rmw"
    (row,) = basic_matrix((z,))
    assert row[-1] == ("r", "x", "_", "w")
    assert row[states.index("D")] == ("t", "xx", "w")
    assert _io(z) == (2, 2)


def test_rule_boundary_is_strict() -> None:
    # N=5, d=1, c=1: N-c = 4 > 4 is false -> RCW (equal cost: RCW wins the tie)
    assert row_cycle(tuple("CDEE"), 5) == "rcw"
    # N=6, d=1, c=1: N-c = 5 > 4 -> RMW; N=6, d=1, c=2: 4 > 4 is false -> RCW
    assert row_cycle(tuple("DCEEE"), 6) == "rmw"
    assert row_cycle(tuple("DCCEE"), 6) == "rcw"
    # d=2 on N=7 with nothing cached: 7 > 6 -> RMW; on N=6: 6 > 6 false -> RCW
    assert row_cycle(tuple("DDEEEE"), 7) == "rmw"
    assert row_cycle(tuple("DDEEE"), 6) == "rcw"


# -- column_requests -------------------------------------------------------------------
cells = st.frozensets(st.sampled_from(OPS)).map(cell)
matrices = st.integers(1, 6).flatmap(
    lambda w: st.lists(st.lists(cells, min_size=w, max_size=w).map(tuple), min_size=1, max_size=24).map(tuple)
)


def _check_requests(m, reqs: list[MemberRequest]) -> None:
    reads = [r for r in reqs if r.op == "read"]
    writes = [r for r in reqs if r.op == "write"]
    assert reqs == reads + writes, "reads come before writes"
    for group in (reads, writes):
        keys = [(r.column, r.first_row) for r in group]
        assert keys == sorted(keys), "column order, then row order"
    want_read = sum(1 for row in m for c in row if "r" in c or "t" in c)
    want_write = sum(1 for row in m for c in row if "w" in c)
    assert sum(r.rows for r in reads) == want_read
    assert sum(r.rows for r in writes) == want_write
    for r in reqs:
        assert r.rows >= 1
        for i in range(r.first_row, r.first_row + r.rows):
            c = m[i][r.column]
            assert ("r" in c or "t" in c) if r.op == "read" else ("w" in c)
    for a, b in zip(reqs, reqs[1:]):
        if a.op == b.op and a.column == b.column:
            assert a.first_row + a.rows < b.first_row, f"{a} and {b} should have been merged"


@given(matrices)
def test_column_requests_merge_runs(m) -> None:
    _check_requests(m, column_requests(m))


z_matrices = st.integers(2, 8).flatmap(
    lambda w: st.lists(st.lists(st.sampled_from("DCE"), min_size=w, max_size=w).map(tuple), min_size=1, max_size=32).map(tuple)
)


@given(z_matrices, st.booleans())
def test_column_requests_of_basic_matrices(z, parity: bool) -> None:
    m = basic_matrix(z, parity=parity)
    _check_requests(m, column_requests(m))
    assert len(m[0]) == len(z[0]) + (1 if parity else 0)


def test_column_requests_examples() -> None:
    assert column_requests(()) == []
    m = ((("r", "x"),), (("t", "xx", "w"),), ((),), (("w",),), (("w",),))
    assert column_requests(m) == [
        MemberRequest(0, "read", 0, 2),
        MemberRequest(0, "write", 1, 1),
        MemberRequest(0, "write", 3, 2),
    ]
    assert MemberRequest(0, "read", 0, 2).to_dict() == {"column": 0, "op": "read", "first_row": 0, "rows": 2}


# -- parse_z, cell and format_cell -------------------------------------------------------------
def test_parse_z_tolerates_case_and_spaces() -> None:
    assert parse_z(" dee , ECd ,") == (("D", "E", "E"), ("E", "C", "D"))


@pytest.mark.parametrize(
    "text,words",
    [
        ("", ["Z is empty"]),
        (" , ,", ["Z is empty"]),
        ("DEX", ["row 0", "'DEX'", "'X'"]),
        ("DEE,EEQ", ["row 1", "'Q'"]),
        ("DE1,EEE", ["row 0", "'1'"]),
        ("DEE,DE", ["row 1 of Z has 2 blocks", "row 0 has 3"]),
        ("DEE,EEE,DDDD", ["row 2 of Z has 4 blocks"]),
    ],
)
def test_parse_z_errors(text: str, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        parse_z(text)
    for w in words:
        assert w in str(info.value)


def test_cell_orders_and_rejects() -> None:
    assert cell(["w", "_", "x", "r"]) == ("r", "x", "_", "w")
    assert cell(["w", "t", "xx", "w"]) == ("t", "xx", "w")
    assert cell([]) == ()
    with pytest.raises(ValueError, match="unknown rxw operations"):
        cell(["r", "q"])
    assert format_cell(("r", "x", "_", "w")) == "rx_w"
    assert format_cell(()) == "."

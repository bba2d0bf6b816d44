"""Plans with more than one check column (issue 31 item 7): the shape RAID-6 uses.

These plans are built directly (RAID-6 runs them: tests/test_raid6.py)
(``Plan.build(..., checks=2)`` over made-up Z) and checked against the rules the
planner states (vraid.core.rxw's docstring, seed 000 sec. II-A with k check
columns): every row with a dirty block writes every check block, RMW reads
every old check block, RCW reads the data blocks the cache lacks, and the cycle
of a row is the one with fewer I/Os (RCW N-c, RMW 2(k+d); RCW on a tie). The
contiguity transform treats each check column as Fig. 10's parity column, and
the degraded planner keeps a row writable with one missing column per check
column. The counts in the assertions are worked out here from Z, never read
back from the planner.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.core.geometry import Geometry
from vraid.core.rxw import Plan, column_requests, parse_z, transform_violation
from vraid.engine.raid.degraded import degraded_plan, degraded_row
from vraid.engine.raid.stripe import full_stripe_writes, writes_of
from vraid.policies.ct import GENEROUS, CtLimits
from vraid.policies.ct.msc import MscTransform

z_st = st.integers(2, 7).flatmap(
    lambda w: st.lists(st.lists(st.sampled_from("DCE"), min_size=w, max_size=w).map(tuple), min_size=1,
                       max_size=16).map(tuple))


def _plan(text: str, checks: int = 2) -> Plan:
    z = parse_z(text)
    return Plan.build(3, z, range(len(z[0]) + checks), checks=checks)


def _ios(row) -> int:
    """Member I/Os of one row of M: a cell that reads costs one, a cell that writes one."""
    return sum(("r" in c or "t" in c) + ("w" in c) for c in row)


# -- the basic matrix with two check columns -----------------------------------------------------
def test_a_plan_with_two_checks_has_them_last_p_then_q():
    plan = _plan("DEEE,EEEE,DDDD")
    assert plan.checks == 2 and plan.parity
    assert plan.data_columns == 4 and plan.check_columns == (4, 5)
    assert all(len(row) == 6 for row in plan.basic)
    assert plan.columns == (0, 1, 2, 3, 4, 5)


def test_every_row_with_a_dirty_block_writes_both_checks():
    plan = _plan("DEEE,EEEE,EDCE,CCCC,DDDD,EEED")
    for states, row in zip(plan.z, plan.basic):
        p, q = row[4], row[5]
        if "D" in states:
            assert "w" in p and "w" in q and "_" in p and "_" in q
        else:
            assert row == ((),) * 6
    writes = {(r.column, r.first_row, r.rows) for r in plan.requests if r.op == "write"}
    assert writes >= {(4, 0, 1), (5, 0, 1), (4, 2, 1), (5, 2, 1), (4, 4, 2), (5, 4, 2)}


def test_rmw_reads_both_old_checks():
    # 8 data blocks, one dirty: RCW would cost N-c = 10 I/Os, RMW 2(2+1) = 6
    plan = _plan("DEEEEEEE")
    assert plan.cycles() == ["rmw"]
    (row,) = plan.basic
    assert row[0] == ("t", "xx", "w")  # the old data into a temporary buffer
    assert row[8] == row[9] == ("r", "x", "_", "w")
    reads = sorted((r.column, r.first_row, r.rows) for r in plan.requests if r.op == "read")
    assert reads == [(0, 0, 1), (8, 0, 1), (9, 0, 1)]
    assert _ios(row) == 6


def test_rcw_reads_the_missing_data_only():
    # 4 data blocks, one dirty, one clean: RCW costs N-c = 6-1 = 5 I/Os, RMW 2(2+1) = 6
    plan = _plan("DECE")
    assert plan.cycles() == ["rcw"]
    (row,) = plan.basic
    assert row[:4] == (("x", "w"), ("r", "x"), ("x",), ("r", "x"))
    assert row[4] == row[5] == ("_", "w")
    reads = sorted((r.column, r.first_row) for r in plan.requests if r.op == "read")
    assert reads == [(1, 0), (3, 0)]  # the E blocks, never C, D or a check
    # DEEE on RAID-5 (one check) is a read-modify-write: 5-0 > 2(1+1); with two checks
    # RCW and RMW both cost 6 I/Os, and a tie is RCW
    assert _plan("DEEE", checks=1).cycles() == ["rmw"]
    assert _plan("DEEE", checks=2).cycles() == ["rcw"]


def test_a_full_row_reads_nothing_and_a_full_stripe_writes_every_column():
    plan = _plan("DDD,DDD")
    assert plan.cycles() == ["full", "full"]
    assert all(r.op == "write" for r in plan.requests)
    assert full_stripe_writes(plan) is not None and sorted(full_stripe_writes(plan)) == [0, 1, 2, 3, 4]
    assert writes_of(plan)
    assert full_stripe_writes(_plan("DDD,DDE")) is None


@settings(max_examples=150)
@given(z_st, st.integers(1, 3))
def test_cycles_are_counted_with_every_check(z, k):
    plan = Plan.build(0, z, range(len(z[0]) + k), checks=k)
    n = len(z[0]) + k
    for states, row, cycle in zip(z, plan.basic, plan.cycles()):
        d, c = states.count("D"), states.count("C")
        checks = row[len(states):]
        assert len(checks) == k
        if d == 0:
            assert cycle == "none" and _ios(row) == 0
            continue
        assert all(cell == checks[0] for cell in checks), "every check column gets the same cell"
        if d == len(states):
            assert cycle == "full" and _ios(row) == n
            continue
        rcw, rmw = n - c, 2 * (k + d)
        assert cycle == ("rmw" if rmw < rcw else "rcw")
        assert _ios(row) == min(rcw, rmw)
        assert all(("r" in cell) == (cycle == "rmw") for cell in checks)
    assert plan.requests == tuple(column_requests(plan.basic))


# -- the old keyword and the dataclass -------------------------------------------------------------
def test_parity_keyword_means_one_or_no_check_column():
    z = parse_z("DEEE,EECD")
    assert Plan.build(0, z, range(5), parity=True) == Plan.build(0, z, range(5), checks=1)
    assert Plan.build(0, z, range(4), parity=False) == Plan.build(0, z, range(4), checks=0)
    assert Plan.build(0, z, range(4), parity=False).checks == 0
    p = Plan.build(0, z, range(5))
    assert Plan(0, z, p.basic, p.basic, p.columns, p.requests, parity=True) == p
    assert not Plan(0, z, (), (), (), parity=False).parity
    assert Plan(0, z, (), (), (), parity=False).cycles() == ["write", "write"]


def test_transform_keeps_the_check_count():
    plan = _plan("DEEE,EEEE,DEEE")
    assert plan.transform(plan.transformed, "x").checks == 2
    with pytest.raises(ValueError, match="check columns"):
        Plan.build(0, parse_z("DE"), range(2), checks=-1)


# -- the contiguity transform with two check columns ---------------------------------------------
def test_msc_fills_both_check_columns_as_parity_columns():
    # rows 0 and 3 read the old checks (RMW); rows 1 and 2 are empty between them
    plan = _plan("DEEEEEEE,EEEEEEEE,EEEEEEEE,DEEEEEEE")
    assert plan.cycles() == ["rmw", "none", "none", "rmw"]
    after = MscTransform(GENEROUS)(plan)
    for j in (8, 9):
        column = [after.transformed[i][j] for i in range(4)]
        assert column[1] == column[2] == ("r", "w"), "line 8 adds r; line 24 then allows w"
    assert [(r.column, r.op) for r in after.requests if r.column >= 8] == [(8, "read"), (9, "read"), (8, "write"), (9, "write")]
    assert transform_violation(plan, after) is None
    # with writes not joined, Q gets reads only: never a t (no parity cache)
    reads_only = MscTransform(CtLimits(sr_max=8, sw_max=1))(plan)
    assert reads_only.transformed[1][9] == ("r",)


@settings(max_examples=120)
@given(z_st, st.integers(1, 10), st.integers(1, 10))
def test_msc_keeps_the_rules_with_two_checks(z, sr, sw):
    plan = Plan.build(0, z, range(len(z[0]) + 2), checks=2)
    after = MscTransform(CtLimits(sr, sw))(plan)
    assert transform_violation(plan, after) is None
    for row, brow in zip(after.transformed, plan.basic):
        for c, b in zip(row[-2:], brow[-2:]):
            assert set(c) - set(b) <= {"r", "w"}


def _with(plan: Plan, h: int, j: int, cell) -> Plan:
    rows = [list(r) for r in plan.transformed]
    rows[h][j] = cell
    return plan.transform(tuple(tuple(r) for r in rows), "edited")


def test_transform_violation_checks_the_q_column_too():
    plan = _plan("DEEEEEEE,EEEEEEEE,DEEEEEEE")
    assert "only r and w" in transform_violation(plan, _with(plan, 1, 9, ("t",)))
    assert "without reading the old parity" in transform_violation(plan, _with(plan, 1, 9, ("w",)))
    assert transform_violation(plan, _with(plan, 1, 9, ("r",))) is None
    assert "checks" in transform_violation(plan, Plan(3, plan.z, plan.basic, plan.basic, plan.columns,
                                                      plan.requests, checks=1))


# -- the degraded planner with two check columns --------------------------------------------------
def _touches(cell) -> bool:
    return any(op in cell for op in ("r", "t", "w"))


def test_two_missing_columns_are_written_around():
    (states,) = parse_z("DCEE")
    # the dirty block and a clean one missing: RCW, both checks take their new data
    row = degraded_row(states, (0, 1), 2)
    assert row == (("x",), ("x",), ("r", "x"), ("r", "x"), ("_", "w"), ("_", "w"))
    # the dirty block and Q missing: RCW into P alone
    assert degraded_row(states, (0, 5), 2) == (("x",), ("x",), ("r", "x"), ("r", "x"), ("_", "w"), ())
    # both checks missing: the dirty block is written, nothing else
    assert degraded_row(states, (4, 5), 2) == (("w",), (), (), (), (), ())
    # Q missing, every data block there: the basic row without Q
    basic = _plan("DCEE").basic[0]
    assert degraded_row(states, (5,), 2) == basic[:5] + ((),)
    # a data block that is not dirty missing: RMW of both surviving checks
    assert degraded_row(states, (2, 3), 2) == (("t", "xx", "w"), (), (), (), ("r", "x", "_", "w"), ("r", "x", "_", "w"))
    # the dirty block and an empty one: the empty one would have to be rebuilt first
    assert degraded_row(states, (0, 2), 2) is None
    # three missing with a dirty one among them: more than two checks rebuild
    assert degraded_row(states, (0, 1, 4), 2) is None


@settings(max_examples=150)
@given(z_st, st.data())
def test_degraded_rows_never_touch_a_missing_column(z, data):
    nd = len(z[0])
    missing = tuple(sorted(data.draw(st.sets(st.integers(0, nd + 1), max_size=2))))
    for states in z:
        row = degraded_row(states, missing, 2)
        if row is None:
            assert any(states[j] == "D" for j in missing if j < nd)
            continue
        assert len(row) == nd + 2
        assert not any(_touches(row[j]) for j in missing)
        for j, s in enumerate(states):  # every dirty block that has a member is written
            if s == "D" and j not in missing:
                assert "w" in row[j]
        if "D" in states:  # every surviving check is written
            assert all("w" in row[j] for j in (nd, nd + 1) if j not in missing)


def test_degraded_plan_counts_the_checks_from_the_columns():
    z = parse_z("DEEE,EEEE")
    members = (7, 6, 5, 4, 3, 2)  # four data members, then P and Q
    plan = degraded_plan(0, z, members, {7, 2})
    assert plan.checks == 2 and plan.check_columns == (4, 5)
    assert plan.transformed[0] == (("x",), ("r", "x"), ("r", "x"), ("r", "x"), ("_", "w"), ())
    assert degraded_plan(0, z, members[:5], {7}).checks == 1


# -- geometry -------------------------------------------------------------------------------------
@pytest.mark.parametrize("level,ndisks", [(5, 3), (5, 5), (0, 4)])
def test_parity_disks_are_the_columns_after_the_data(level, ndisks):
    g = Geometry(level, ndisks, stripes=2 * ndisks, block_size=4096, strip_size=16384)
    for s in range(g.stripes):
        disks = g.parity_disks(s)
        assert len(disks) == g.redundancy.parity_columns
        assert disks == (() if g.parity_disk(s) is None else (g.parity_disk(s),))
        assert g.columns(s) == g.data_disks_of(s) + disks
        assert sorted(g.columns(s)) == list(range(ndisks))

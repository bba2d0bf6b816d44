"""The contiguity transform (seed 000, Baek & Park, sections III-B..E, Fig. 10) and its limits.

Paper indices are 1-based (m_11 is the top-left cell); vraid's are 0-based: the paper's
m_ij is ``m[i-1][j-1]`` here. The parity column is the last one (paper: column 5 of eq. (3)).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.errors import VraidError
from vraid.policies.ct import CONSERVATIVE, GENEROUS, PRESET_LIMITS, CtLimits, default_limits
from vraid.policies.ct.spec import CHOICES, load_ct, parse_spec
from vraid.policies.ct.msc import permitted, read_transform, transform_matrix, write_transform
from vraid.core.rxw import Plan, basic_matrix, column_requests, parse_z

Z_EQ2 = "DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE"
P = 4  # the parity column of eq. (3), 0-based


def _msc(limits: CtLimits = GENEROUS):
    ct = load_ct("msc", limits)
    assert ct is not None
    return ct


def _eq2_plan(limits: CtLimits = GENEROUS) -> Plan:
    return _msc(limits)(Plan.build(0, parse_z(Z_EQ2), [0, 1, 2, 3, 4]))


def _col(m, j):
    return [m[i][j] for i in range(len(m))]


def _reads(reqs, j):
    return [(r.first_row, r.rows) for r in reqs if r.column == j and r.op == "read"]


def _writes(reqs, j):
    return [(r.first_row, r.rows) for r in reqs if r.column == j and r.op == "write"]


# -- the paper's worked example, eq. (2) with limits large enough -------------------------------
def test_eq2_column_1_reads_rows_1_to_7_with_t_only_on_dirty_blocks() -> None:
    plan = _eq2_plan()
    z = plan.z
    col = _col(plan.transformed, 0)
    for i in range(7):
        assert ("r" in col[i]) or ("t" in col[i]), f"row {i} of column 0 is not read"
        if z[i][0] == "D":
            assert "t" in col[i] and "r" not in col[i], f"dirty block at row {i} must be read with t (eq. 6)"
        else:
            assert "r" in col[i] and "t" not in col[i], f"row {i} is {z[i][0]}: r (eq. 6)"
    # paper: "t is added to m_51 ... r is used for m_61" (0-based rows 4 and 5)
    assert "t" in col[4] and "r" in col[5]
    assert _reads(plan.requests, 0) == [(0, 7)]


def test_eq2_writes_join_m11_m41_and_m51_m71() -> None:
    plan = _eq2_plan()
    col = _col(plan.transformed, 0)
    assert all("w" in c for c in col)  # rows 1..7 (paper) = 0..6 here
    assert _writes(column_requests(plan.basic), 0) == [
        (0, 1), (3, 2), (6, 1)]
    assert _writes(plan.requests, 0) == [(0, 7)]  # one member write for the whole column


def test_eq2_m34_gets_no_w() -> None:
    """z_34 is E and m_34 holds no r (column 4 has no reads at all): eq. (7) forbids joining
    the writes m_24 and m_44."""
    plan = _eq2_plan()
    assert plan.z[2][3] == "E"
    assert plan.transformed[2][3] == ()
    assert _writes(plan.requests, 3) == [(1, 1), (3, 2)]


def test_eq2_parity_column_reads_and_writes() -> None:
    plan = _eq2_plan()
    par = _col(plan.transformed, P)
    assert [("r" in c) for c in par] == [True] * 7  # r inserted in rows 2..5 (paper), 1..4 here
    assert par[2] == ("r", "w")  # m_35: read and written back unchanged (no dirty block in that row)
    assert all("w" in c for c in par)
    assert _reads(plan.requests, P) == [(0, 7)] and _writes(plan.requests, P) == [(0, 7)]


def test_eq2_transform_only_adds_and_never_touches_the_xor() -> None:
    plan = _eq2_plan()
    for brow, trow in zip(plan.basic, plan.transformed):
        for b, t in zip(brow, trow):
            assert set(b) <= set(t)
            assert set(t) - set(b) <= {"r", "t", "w"}


def test_prose_of_section_III_C_and_fig_10_disagree_on_eq2() -> None:
    """What the paper's prose (sec. III-B/III-C) says about eq. (2) against Fig. 10 run on it.

    1. The prose says "the read contiguity transforms of m_63, m_73, and m_35 also enable the
       write contiguity transforms": for m_35 Fig. 10 agrees. The r it adds at m_35 (z_35 is a
       parity cell, always read: line 8) lets the parity column's writes join across row 3, so
       m_35 gains w too and the parity column is written in one request of rows 1..7. The
       prose does not say that m_35 is the only parity cell to gain r, and it is not: line 8
       adds r to every parity cell between the reads at m_15 and m_65 (m_25, m_35, m_45, m_55).
    2. The prose says "the read contiguity transforms of m_63, m_73 ... also enable the write
       contiguity transforms". Fig. 10 cannot add anything to column 3 on this Z: the only read
       in column 3 is m_23 (r of the reconstruct-write of row 2), so there is no second read
       to fill up to, and the writes of column 3 (m_43, m_53) are adjacent. m_63 and m_73 stay
       empty. (They would be touched in a Z with another read below row 5 in column 3; the
       prose probably describes another version of Fig. 7.)
    3. Fig. 10 also joins <m_42, m_62> in column 2 by adding w to m_52 (z_52 = C: the cached
       clean copy is valid, eq. (7) allows it); the prose does not mention it.
    """
    plan = _eq2_plan()
    m, basic = plan.transformed, plan.basic
    added_r_parity = [i for i in range(7) if "r" in m[i][P] and "r" not in basic[i][P]]
    assert added_r_parity == [1, 2, 3, 4]  # paper rows 2..5, not only row 3
    assert basic[2][P] == () and m[2][P] == ("r", "w")  # paper m_35: its r enables a write
    assert _writes(plan.requests, P) == [(0, 7)]  # the parity writes join across row 3
    assert m[5][2] == () and m[6][2] == ()  # paper m_63, m_73: untouched
    assert _col(m, 2) == _col(basic, 2)  # nothing at all changes in paper column 3
    assert m[4][1] == ("x", "w") and basic[4][1] == ("x",)  # paper m_52 gains w
    assert _writes(plan.requests, 1) == [(3, 3)]


def test_eq2_request_counts_fall() -> None:
    plan = _eq2_plan()
    before, after = column_requests(plan.basic), list(plan.requests)
    assert len(before) == 16 and len(after) == 10
    assert plan.ct == "msc"


def test_eq2_with_measured_limits_st373454lc() -> None:
    """With the measured limits of the default disk (S^max = 4) the gap of stride 5 between
    the reads m_21 and m_71 is too long: column 1 keeps two reads, and without r on the
    empty blocks its writes cannot join across rows 2-3 and 6 either."""
    plan = _eq2_plan(default_limits(disk_preset="st373454lc"))
    assert _reads(plan.requests, 0) == [(0, 2), (6, 1)]
    assert _writes(plan.requests, 0) == [(0, 1), (3, 2), (6, 1)]
    # the parity column's reads at rows 0 and 5 are 5 apart too: also left alone
    assert _reads(plan.requests, P) == [(0, 1), (5, 2)]


# -- performance rules, eq. (8) and (9) --------------------------------------------------------------
def test_permitted_boundaries() -> None:
    assert not permitted(1, 100, ())  # adjacent: nothing to fill
    assert permitted(2, 3, ()) and not permitted(3, 3, ())  # S < S^max, strictly
    assert not permitted(2, 1, ()) and not permitted(2, 2, ())
    assert not permitted(3, 10, ((3, 4),)) and not permitted(4, 10, ((3, 4),))  # inclusive
    assert permitted(2, 10, ((3, 4),)) and permitted(5, 10, ((3, 4),))
    assert not permitted(7, 10, ((3, 4), (7, 7))) and permitted(6, 10, ((3, 4), (7, 7)))


def _column_z(gap: int, state: str = "E") -> tuple:
    """Two dirty blocks in column 0, ``gap`` rows apart, ``state`` between; 5 disks.

    Each dirty row is a read-modify-write (t on the block, r on parity), so column 0 reads
    and writes at rows 0 and ``gap``: a stride distance S = gap for reads and for writes."""
    rows = [["E"] * 4 for _ in range(gap + 1)]
    rows[0][0] = rows[gap][0] = "D"
    for i in range(1, gap):
        rows[i][0] = state
    return tuple(tuple(r) for r in rows)


@pytest.mark.parametrize("gap", [2, 3, 4, 5, 8])
def test_read_limit_is_a_strict_upper_bound(gap) -> None:
    z = _column_z(gap)
    m = basic_matrix(z)
    for sr_max, filled in ((gap, False), (gap + 1, True)):
        t = read_transform(m, z, CtLimits(sr_max=sr_max, sw_max=1))
        assert all(("r" in t[i][0]) == filled for i in range(1, gap)), (sr_max, t)
        assert all(("r" in t[i][P]) == filled for i in range(1, gap))


@pytest.mark.parametrize("region", [(3, 3), (2, 3), (3, 5)])
def test_except_regions_are_inclusive_and_separate_for_reads_and_writes(region) -> None:
    z = _column_z(3)  # S = 3
    m = basic_matrix(z)
    big = 100
    only_reads_excluded = transform_matrix(m, z, CtLimits(sr_max=big, sw_max=big, sr_except=(region,)))
    assert "r" not in only_reads_excluded[1][0]  # read gap S=3 excluded
    assert "w" not in only_reads_excluded[1][0]  # then the empty blocks hold no r: no write either (eq. 7)
    only_writes_excluded = transform_matrix(m, z, CtLimits(sr_max=big, sw_max=big, sw_except=(region,)))
    assert "r" in only_writes_excluded[1][0] and "w" not in only_writes_excluded[1][0]
    neither = transform_matrix(m, z, CtLimits(sr_max=big, sw_max=big, sr_except=((4, 9),), sw_except=((1, 2),)))
    assert "r" in neither[1][0] and "w" in neither[1][0]


def test_sr_max_1_means_no_read_transform() -> None:
    z = parse_z(Z_EQ2)
    m = basic_matrix(z)
    assert read_transform(m, z, CtLimits(sr_max=1, sw_max=1 << 20)) == m
    # writes still join across clean blocks (z = C holds valid data), never across empty ones
    z2 = _column_z(3, "C")
    t = transform_matrix(basic_matrix(z2), z2, CtLimits(sr_max=1, sw_max=8))
    assert [("w" in t[i][0]) for i in range(4)] == [True] * 4
    z3 = _column_z(3, "E")
    assert transform_matrix(basic_matrix(z3), z3, CtLimits(sr_max=1, sw_max=8)) == basic_matrix(z3)


def test_write_limit_is_a_strict_upper_bound() -> None:
    z = _column_z(4, "C")
    m = basic_matrix(z)
    assert write_transform(m, z, CtLimits(sr_max=1, sw_max=4)) == m
    assert all("w" in c for c in _col(write_transform(m, z, CtLimits(sr_max=1, sw_max=5)), 0))


def test_parity_column_needs_r_for_w() -> None:
    z = _column_z(3, "C")  # data writes join across C without reads; parity holds no r between
    t = transform_matrix(basic_matrix(z), z, CtLimits(sr_max=1, sw_max=8))
    assert [("w" in t[i][P]) for i in range(4)] == [True, False, False, True]
    t = transform_matrix(basic_matrix(z), z, CtLimits(sr_max=8, sw_max=8))
    assert [t[i][P] for i in (1, 2)] == [("r", "w"), ("r", "w")]


def test_raid0_plans_treat_every_column_as_data() -> None:
    z = (("D", "E"), ("C", "E"), ("D", "E"))
    plan = _msc()(Plan.build(0, z, [0, 1], parity=False))
    assert _col(plan.transformed, 0) == [("w",), ("w",), ("w",)]
    assert _col(plan.transformed, 1) == [(), (), ()]


# -- specs, limits, defaults ----------------------------------------------------------------------------
def test_choices_and_none() -> None:
    assert CHOICES == ("none", "msc")
    assert load_ct("none") is None
    assert load_ct(" NONE ") is None


def test_spec_round_trip_and_overrides() -> None:
    base = CtLimits(sr_max=4, sw_max=5, sw_except=((7, 9),), source="test")
    ct = load_ct("msc:sr_max=8,sr_except=9-10;3-4", base)
    assert ct.name == "msc"
    assert ct.limits == CtLimits(sr_max=8, sw_max=5, sr_except=((3, 4), (9, 10)), sw_except=((7, 9),))
    assert ct.spec == "msc:sr_max=8,sw_max=5,sr_except=3-4;9-10,sw_except=7-9"
    assert load_ct(ct.spec).limits == ct.limits
    assert load_ct("msc", base).limits is base
    assert load_ct("msc").limits == CONSERVATIVE
    assert load_ct("msc:sr_except=5").limits.sr_except == ((5, 5),)


@pytest.mark.parametrize(
    "spec, words",
    [
        ("", ["empty"]),
        ("fast", ["unknown contiguity transform 'fast'", "none, msc"]),
        ("msc:", ["gives no parameters", "sr_max, sw_max"]),
        ("msc:s_max=3", ["has no parameter 's_max'", "sr_max, sw_max"]),
        ("msc:sr_max", ["is not key=value"]),
        ("msc:sr_max=x", ["sr_max='x' is not a whole number"]),
        ("msc:sw_max=0", ["sw_max=0 is below 1"]),
        ("msc:sw_max=-3", ["below 1"]),
        ("msc:sr_max=2,sr_max=3", ["given twice"]),
        ("msc:sr_except=5-3", ["has a > b", "3-5"]),
        ("msc:sw_except=a-b", ["not a-b with integers"]),
        ("msc:sw_except=0-2", ["starts below 1"]),
        ("none:sr_max=3", ["takes no parameters"]),
    ],
)
def test_bad_specs(spec, words) -> None:
    with pytest.raises(VraidError) as info:
        load_ct(spec)
    text = str(info.value)
    for w in words:
        assert w in text, text
    assert info.value.hint


def test_limits_params_round_trip_and_errors() -> None:
    limits = CtLimits(sr_max=3, sw_max=9, sr_except=((2, 2),), sw_except=((4, 6), (1, 2)), source="stride-bench")
    params = limits.to_params()
    assert params == {"sr_max": 3, "sw_max": 9, "sr_except": [[2, 2]], "sw_except": [[1, 2], [4, 6]],
                      "source": "stride-bench"}
    back = CtLimits.from_params(params)
    assert back == limits and back.source == "stride-bench"
    for bad in ({}, {"sr_max": 3}, {"sr_max": "3", "sw_max": 4}, {"sr_max": 0, "sw_max": 4},
                {"sr_max": 3, "sw_max": 4, "sr_except": 5}, {"sr_max": 3, "sw_max": 4, "sr_except": [[4, 2]]},
                {"sr_max": 3, "sw_max": 4, "sw_except": [["a"]]}, None, [3, 4]):
        with pytest.raises(VraidError):
            CtLimits.from_params(bad)


def test_default_limits_order() -> None:
    stored = {"ct": CtLimits(sr_max=7, sw_max=11, source="stride-bench on this array").to_params()}
    assert default_limits(stored, disk_preset="st373454lc") == CtLimits(sr_max=7, sw_max=11)
    assert default_limits(stored).source == "stride-bench on this array"
    assert default_limits({"ct": {"sr_max": 2, "sw_max": 2}}).source == "superblock"
    assert default_limits({}, disk_preset="st373454lc") == CtLimits(sr_max=4, sw_max=4)
    assert default_limits(disk_preset="dnes-318350") == CtLimits(sr_max=1, sw_max=1)  # queued: no write threshold
    assert "preset st39175fc" in default_limits(disk_preset="st39175fc").source
    for other in (None, "ssd", "hdd:st373454lc", "nope"):  # a spec is not a preset name
        assert default_limits({"nvram": "x"}, disk_preset=other) is CONSERVATIVE
    assert CONSERVATIVE == CtLimits(sr_max=1, sw_max=3)
    with pytest.raises(TypeError):  # the preset is keyword-only: an old (params, disk_model) call fails loudly
        default_limits(None, "hdd:st373454lc")  # type: ignore[misc]


def test_default_limits_from_a_disk_model_spec() -> None:
    """The callers' path: the disk model spec names a preset (vraid.backends.models.disk_preset),
    and the policy gets that name."""
    from vraid.backends.models import disk_preset

    def limits(spec):
        return default_limits(disk_preset=disk_preset(spec))

    assert limits("hdd") == limits("hdd:st373454lc") == CtLimits(*PRESET_LIMITS["st373454lc"])
    assert limits("dnes-318350") == CtLimits(sr_max=1, sw_max=1)
    assert limits("dnes-318350,tcq=off") is CONSERVATIVE  # the one-command disk: not the preset measured
    assert limits("hdd:st39175fc,stroke=partition") == CtLimits(sr_max=3, sw_max=3)
    for other in (None, "none", "ssd", "hdd:st39175fc,rpm=5400", "hdd:nope"):
        assert limits(other) is CONSERVATIVE


def test_registry_hands_the_preset_to_ct() -> None:
    from vraid.policies import registry

    ct = registry.create("ct", "msc", registry.Context(disk_preset="st39175fc"))
    assert ct.limits == CtLimits(sr_max=3, sw_max=3)
    assert registry.create("ct", "msc", registry.Context()).limits is CONSERVATIVE
    stored = {"ct": CtLimits(sr_max=7, sw_max=11).to_params()}
    assert registry.create("ct", "msc", registry.Context(params=stored, disk_preset="st39175fc")).limits.sr_max == 7


def test_preset_table_covers_every_hdd_preset() -> None:
    from vraid.backends.hdd_params import HddParams
    from vraid.backends.models import PRESETS

    assert set(PRESET_LIMITS) == {n for n, p in PRESETS.items() if isinstance(p, HddParams)}


# -- properties over random Z and random limits ---------------------------------------------------------
regions = st.lists(st.tuples(st.integers(1, 12), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1])), max_size=2)
limits_st = st.builds(CtLimits, sr_max=st.integers(1, 20), sw_max=st.integers(1, 20),
                      sr_except=regions.map(tuple), sw_except=regions.map(tuple))
z_st = st.integers(2, 8).flatmap(
    lambda w: st.lists(st.lists(st.sampled_from("DCE"), min_size=w, max_size=w).map(tuple), min_size=1,
                       max_size=24).map(tuple))


def _per_column(reqs):
    out: dict = {}
    for r in reqs:
        out[(r.column, r.op)] = out.get((r.column, r.op), 0) + 1
    return out


@settings(max_examples=400)
@given(z_st, limits_st, st.booleans())
def test_transform_properties(z, limits, parity) -> None:
    basic = basic_matrix(z, parity=parity)
    ct = _msc(limits)
    plan = ct(Plan.build(0, z, list(range(len(basic[0]))), parity=parity))
    m = plan.transformed
    nd = len(z[0])
    for i, (brow, row) in enumerate(zip(basic, m)):
        for j, (b, c) in enumerate(zip(brow, row)):
            assert set(b) <= set(c), "CT only adds operations"
            assert set(c) - set(b) <= {"r", "t", "w"}, "CT adds only r, t and w"
            if j < nd:
                if z[i][j] == "D":
                    assert "r" not in c, "r on a dirty block would spoil its new data (eq. 6)"
                if "t" in c:
                    assert z[i][j] == "D", "t only where the block is dirty"
                if "w" in c:
                    assert z[i][j] in "DC" or "r" in c, "w needs valid data: dirty, clean or read (eq. 7)"
            else:  # parity column
                assert "t" not in c
                if "w" in c:
                    assert "_" in brow[j] or "r" in c, "parity w needs a parity update or an r"
    before, after = _per_column(column_requests(basic)), _per_column(plan.requests)
    for key, n in after.items():
        assert n <= before.get(key, 0), f"column {key} issues more requests after CT"
    assert len(plan.requests) <= len(column_requests(basic))
    # the blocks the basic plan reads or writes are still read or written
    assert ct(plan).transformed == m, "applying CT twice changes nothing more"
    assert plan.requests == tuple(column_requests(m))


@given(z_st, limits_st)
def test_larger_limits_transform_at_least_as_much(z, limits) -> None:
    basic = basic_matrix(z)
    small = transform_matrix(basic, z, CtLimits(sr_max=limits.sr_max, sw_max=limits.sw_max))
    large = transform_matrix(basic, z, CtLimits(sr_max=limits.sr_max + 3, sw_max=limits.sw_max + 3))
    for srow, lrow in zip(small, large):
        for s, big in zip(srow, lrow):
            assert set(s) <= set(big)


@given(z_st)
def test_limits_of_one_change_nothing(z) -> None:
    basic = basic_matrix(z)
    assert transform_matrix(basic, z, CtLimits(sr_max=1, sw_max=1)) == basic
    assert transform_matrix(basic, z, CtLimits(sr_max=2, sw_max=2)) == basic  # S=1 gaps only: no gap


def test_parse_spec_returns_values() -> None:
    assert parse_spec("msc:sr_max=8,sw_except=2-3;5-5") == ("msc", {"sr_max": 8, "sw_except": ((2, 3), (5, 5))})

"""Geometry: the RAID-0 / RAID-5 address mapping against an independent reference.

The reference below is written from Linux md's ``raid5_compute_sector``
(drivers/md/raid5.c), not from vraid.core.geometry: for stripe ``s`` of an
``N``-member RAID-5 array,

* left-*  : parity member ``pd = N-1 - s % N``
* right-* : parity member ``pd = s % N``
* *-symmetric : data strip ``k`` on member ``(pd + 1 + k) % N``
* *-asymmetric: data strip ``k`` on member ``k``, or ``k + 1`` when ``k >= pd``

and RAID-0 puts data strip ``k`` on member ``k``.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vraid.errors import GeometryError, VraidError
from vraid.core.geometry import LAYOUTS, RESERVED, Geometry
from vraid.core.units import format_size, parse_size

K = 1024


# -- the independent reference ----------------------------------------------------
def ref_parity(level: int, n: int, layout: str, stripe: int) -> int | None:
    if level == 0:
        return None
    if layout in ("left-symmetric", "left-asymmetric"):
        return n - 1 - stripe % n
    return stripe % n


def ref_data_member(level: int, n: int, layout: str, stripe: int, k: int) -> int:
    if level == 0:
        return k
    pd = ref_parity(level, n, layout, stripe)
    if layout in ("left-symmetric", "right-symmetric"):
        return (pd + 1 + k) % n
    return k + 1 if k >= pd else k


def ref_locate(g: Geometry, block: int) -> tuple[int, int, int, int, int]:
    """(stripe, k, row, member, member byte offset) of logical ``block``."""
    data = g.ndisks - 1 if g.level == 5 else g.ndisks
    u = g.strip_size // g.block_size
    stripe = block // (data * u)
    k = (block % (data * u)) // u
    row = block % u
    member = ref_data_member(g.level, g.ndisks, g.layout, stripe, k)
    return stripe, k, row, member, g.data_offset + (stripe * u + row) * g.block_size


# -- geometries to try ------------------------------------------------------------
def _cases() -> list[Geometry]:
    out = []
    for n in range(3, 9):
        for strip, block in ((4 * K, 4 * K), (16 * K, 4 * K), (4 * K, 512), (64 * K, 4 * K)):
            stripes = 2 * n + 3  # more than one full layout period
            for layout in LAYOUTS:
                out.append(Geometry(5, n, stripes, block, strip, layout, data_offset=8 * K))
            out.append(Geometry(0, n, stripes, block, strip, data_offset=8 * K))
    return out


CASES = _cases()


def _id(g: Geometry) -> str:
    lay = g.layout if g.level == 5 else "stripe"
    return f"raid{g.level}-{lay}-{g.ndisks}d-{format_size(g.strip_size)}-b{format_size(g.block_size)}"


# -- mapping ----------------------------------------------------------------------
@pytest.mark.parametrize("g", CASES, ids=_id)
def test_every_block_maps_as_md_does(g: Geometry) -> None:
    for block in range(g.blocks):
        stripe, k, row, member, offset = ref_locate(g, block)
        got = g.locate(block)
        assert (got.stripe, got.strip, got.row, got.disk) == (stripe, k, row, member), block
        assert g.member_offset(got.stripe, got.row) == offset
        assert g.data_offset + got.member_block * g.block_size == offset


@pytest.mark.parametrize("g", CASES, ids=_id)
def test_parity_and_data_members_per_stripe(g: Geometry) -> None:
    data = g.ndisks - 1 if g.level == 5 else g.ndisks
    for s in range(g.stripes):
        pd = ref_parity(g.level, g.ndisks, g.layout, s)
        assert g.parity_disk(s) == pd
        want = tuple(ref_data_member(g.level, g.ndisks, g.layout, s, k) for k in range(data))
        assert g.data_disks_of(s) == want
        assert tuple(g.data_disk(s, k) for k in range(data)) == want
        assert g.columns(s) == want + (() if pd is None else (pd,))
        for disk in range(g.ndisks):
            expected = want.index(disk) if disk in want else None
            assert g.strip_of_disk(s, disk) == expected


# md's own picture (Documentation, raid5.c comments): 5 disks, left-symmetric,
# one strip per cell, Dn = data strip n of the array, P = parity.
MD_LEFT_SYMMETRIC_5 = [
    ["D0", "D1", "D2", "D3", "P"],
    ["D5", "D6", "D7", "P", "D4"],
    ["D10", "D11", "P", "D8", "D9"],
    ["D15", "P", "D12", "D13", "D14"],
    ["P", "D16", "D17", "D18", "D19"],
]
# The other three layouts, worked by hand from the definitions above.
LEFT_ASYMMETRIC_5 = [
    ["D0", "D1", "D2", "D3", "P"],
    ["D4", "D5", "D6", "P", "D7"],
    ["D8", "D9", "P", "D10", "D11"],
    ["D12", "P", "D13", "D14", "D15"],
    ["P", "D16", "D17", "D18", "D19"],
]
RIGHT_ASYMMETRIC_5 = [
    ["P", "D0", "D1", "D2", "D3"],
    ["D4", "P", "D5", "D6", "D7"],
    ["D8", "D9", "P", "D10", "D11"],
    ["D12", "D13", "D14", "P", "D15"],
    ["D16", "D17", "D18", "D19", "P"],
]
RIGHT_SYMMETRIC_5 = [
    ["P", "D0", "D1", "D2", "D3"],
    ["D7", "P", "D4", "D5", "D6"],
    ["D10", "D11", "P", "D8", "D9"],
    ["D13", "D14", "D15", "P", "D12"],
    ["D16", "D17", "D18", "D19", "P"],
]
TABLES = {
    "left-symmetric": MD_LEFT_SYMMETRIC_5,
    "left-asymmetric": LEFT_ASYMMETRIC_5,
    "right-asymmetric": RIGHT_ASYMMETRIC_5,
    "right-symmetric": RIGHT_SYMMETRIC_5,
}


def _picture(g: Geometry, stripes: int) -> list[list[str]]:
    """Draw the first ``stripes`` stripes as md does, from vraid's mapping."""
    pic = [["?"] * g.ndisks for _ in range(stripes)]
    for block in range(0, stripes * g.data_disks * g.u, g.u):  # first block of each strip
        a = g.locate(block)
        pic[a.stripe][a.disk] = f"D{block // g.u}"
    for s in range(stripes):
        pic[s][g.parity_disk(s)] = "P"
    return pic


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("strip,block", [(4 * K, 4 * K), (64 * K, 4 * K), (8 * K, 512)])
def test_five_disk_pictures(layout: str, strip: int, block: int) -> None:
    g = Geometry(5, 5, 10, block, strip, layout)
    table = TABLES[layout]
    assert _picture(g, 5) == table
    # the layout repeats every N stripes: stripes 5..9 are 0..4 shifted by 20 strips
    later = [[c if c == "P" else f"D{int(c[1:]) + 20}" for c in row] for row in table]
    assert _picture(g, 10)[5:] == later


def test_md_default_picture_literally() -> None:
    """Stripes 0..4 of 5-disk left-symmetric, one block per strip: block n is Dn."""
    g = Geometry(5, 5, 5, 4 * K, 4 * K)  # the default layout
    assert g.layout == "left-symmetric"
    for s, row in enumerate(MD_LEFT_SYMMETRIC_5):
        for disk, name in enumerate(row):
            if name == "P":
                assert g.parity_disk(s) == disk
            else:
                a = g.locate(int(name[1:]))
                assert (a.stripe, a.disk, a.row) == (s, disk, 0)


@pytest.mark.parametrize("g", CASES, ids=_id)
def test_locate_is_a_bijection_onto_member_blocks(g: Geometry) -> None:
    """Every member block of every stripe is exactly one logical block, or parity."""
    owner: dict[tuple[int, int], object] = {}
    for block in range(g.blocks):
        a = g.locate(block)
        key = (a.disk, a.member_block)
        assert key not in owner, f"block {block} and {owner.get(key)} share {key}"
        owner[key] = block
    if g.level == 5:
        for s in range(g.stripes):
            for row in range(g.u):
                key = (g.parity_disk(s), s * g.u + row)
                assert key not in owner, f"parity of stripe {s} row {row} overlaps block {owner.get(key)}"
                owner[key] = ("P", s, row)
    every = set(itertools.product(range(g.ndisks), range(g.stripes * g.u)))
    assert set(owner) == every
    # and each PBG (stripe s, row) has one block on every member
    for s in range(g.stripes):
        for row in range(g.u):
            members = [d for d in range(g.ndisks) if (d, s * g.u + row) in owner]
            assert members == list(range(g.ndisks))


@pytest.mark.parametrize("g", CASES[::7], ids=_id)
def test_locate_stays_in_member_data_area(g: Geometry) -> None:
    for block in (0, g.blocks // 2, g.blocks - 1):
        a = g.locate(block)
        off = g.member_offset(a.stripe, a.row)
        assert g.data_offset <= off and off + g.block_size <= g.member_size


# -- extents --------------------------------------------------------------------------
_EXTENT_GEOMETRIES = [
    Geometry(5, 5, 6, 4 * K, 16 * K),
    Geometry(5, 3, 9, 512, 4 * K, "right-asymmetric"),
    Geometry(0, 4, 5, 4 * K, 8 * K),
    Geometry(5, 7, 4, 512, 512, "left-asymmetric"),
]


@pytest.mark.parametrize("g", _EXTENT_GEOMETRIES, ids=_id)
@given(data=st.data())
def test_extents_cover_the_range_exactly(g: Geometry, data) -> None:
    offset = data.draw(st.integers(0, g.capacity), label="offset")
    length = data.draw(st.integers(0, g.capacity - offset), label="length")
    per = g.stripe_data_bytes
    exts = list(g.extents(offset, length))
    if length == 0:
        assert exts == []
        return
    assert sum(e.length for e in exts) == length
    pos = offset
    for i, e in enumerate(exts):
        assert e.length > 0
        assert e.host_offset == pos - offset
        assert e.stripe * per + e.start == pos
        assert 0 <= e.start < per and e.start + e.length <= per
        if i > 0:
            assert e.start == 0, "only the first extent may start inside a stripe"
            assert e.stripe == exts[i - 1].stripe + 1
        if i < len(exts) - 1:
            assert e.start + e.length == per, "only the last extent may end inside a stripe"
        pos += e.length
    assert pos == offset + length


def test_extents_examples() -> None:
    g = Geometry(5, 5, 6, 4 * K, 16 * K)  # 64 KiB of data per stripe
    assert [tuple(e) for e in g.extents(60 * K, 10 * K)] == [(0, 60 * K, 4 * K, 0), (1, 0, 6 * K, 4 * K)]
    assert [tuple(e) for e in g.extents(64 * K, 64 * K)] == [(1, 0, 64 * K, 0)]
    assert [tuple(e) for e in g.extents(1, 1)] == [(0, 1, 1, 0)]


# -- sizes ------------------------------------------------------------------------------
@pytest.mark.parametrize("g", CASES[::5], ids=_id)
def test_capacity_and_member_size(g: Geometry) -> None:
    data = g.ndisks - 1 if g.level == 5 else g.ndisks
    assert g.data_disks == data
    assert g.u == g.strip_size // g.block_size
    assert g.stripe_data_bytes == data * g.strip_size
    assert g.capacity == g.stripes * data * g.strip_size
    assert g.blocks * g.block_size == g.capacity
    assert g.member_size == g.data_offset + g.stripes * g.strip_size
    # raw space = data + parity
    parity = g.stripes * g.strip_size if g.level == 5 else 0
    assert g.ndisks * (g.member_size - g.data_offset) == g.capacity + parity


@pytest.mark.parametrize("level,ndisks", [(5, 3), (5, 4), (5, 8), (0, 1), (0, 5)])
@pytest.mark.parametrize("strip", [4 * K, 64 * K, 2 * 1024 * K])
@pytest.mark.parametrize("extra", [0, 1, 4095])
def test_for_disk_size(level: int, ndisks: int, strip: int, extra: int) -> None:
    reserved = max(RESERVED, strip)  # RESERVED rounded up to a whole strip
    disk = reserved + 7 * strip + extra
    g = Geometry.for_disk_size(level=level, ndisks=ndisks, disk_size=disk, strip_size=strip)
    assert g.data_offset == reserved and g.data_offset % strip == 0
    assert g.stripes == 7
    assert g.member_size <= disk < g.member_size + strip
    assert g.capacity == 7 * strip * (ndisks - 1 if level == 5 else ndisks)
    assert g.describe()["capacity"] == g.capacity


def test_for_disk_size_exactly_one_stripe() -> None:
    g = Geometry.for_disk_size(level=5, ndisks=3, disk_size=RESERVED + 64 * K)
    assert g.stripes == 1 and g.capacity == 2 * 64 * K and g.member_size == RESERVED + 64 * K


# -- errors ---------------------------------------------------------------------------------
def _raises(fn, *words: str) -> GeometryError:
    with pytest.raises(GeometryError) as info:
        fn()
    err = info.value
    for w in words:
        assert w in err.message, f"{w!r} not in {err.message!r}"
    assert err.hint, "every GeometryError carries a hint"
    return err


@pytest.mark.parametrize("ndisks", [0, 1, 2])
def test_raid5_needs_three_disks(ndisks: int) -> None:
    _raises(lambda: Geometry(5, ndisks, 4), "RAID-5", "at least 3 disks", f"got {ndisks}")
    _raises(lambda: Geometry.for_disk_size(level=5, ndisks=ndisks, disk_size=8 << 20), "at least 3 disks")


def test_raid0_with_one_disk_is_fine_but_zero_is_not() -> None:
    assert Geometry(0, 1, 4).capacity == 4 * 64 * K
    _raises(lambda: Geometry(0, 0, 4), "RAID-0", "at least 1 disk")


@pytest.mark.parametrize(
    "strip,block",
    [(12 * K, 4 * K), (6 * K, 2 * K), (2 * K, 4 * K), (4 * K + 512, 512), (3 * 512, 512), (0, 4 * K)],
)
def test_strip_must_be_power_of_two_multiple_of_block(strip: int, block: int) -> None:
    err = _raises(lambda: Geometry(5, 4, 4, block, strip), "strip size", "power-of-two multiple", format_size(block))
    assert format_size(strip) in err.message


@pytest.mark.parametrize("block", [0, 256, 1000, 3 * 1024, 4097])
def test_block_must_be_power_of_two(block: int) -> None:
    _raises(lambda: Geometry(5, 4, 4, block, 64 * K), "block size", str(block), "power of two")


@pytest.mark.parametrize("disk", [-1, 0, 4096, RESERVED, RESERVED + 64 * K - 1])
def test_disk_smaller_than_one_stripe(disk: int) -> None:
    _raises(
        lambda: Geometry.for_disk_size(level=5, ndisks=4, disk_size=disk),
        "smaller than one stripe",
        "disk size",
    )


def test_disk_smaller_than_one_stripe_names_the_strip() -> None:
    err = _raises(
        lambda: Geometry.for_disk_size(level=0, ndisks=2, disk_size=RESERVED + 100, strip_size=256 * K),
        "smaller than one stripe",
        "256K",
    )
    assert "--disk-size" in err.hint


@pytest.mark.parametrize("layout", ["left", "symmetric", "Left-Symmetric", "diagonal", ""])
def test_unknown_layout(layout: str) -> None:
    err = _raises(lambda: Geometry(5, 4, 4, layout=layout), "unknown RAID-5 layout", repr(layout))
    for name in LAYOUTS:
        assert name in err.hint


def test_other_geometry_errors() -> None:
    _raises(lambda: Geometry(7, 4, 4), "RAID level 7")
    _raises(lambda: Geometry(5, 65, 4), "65 disks")
    _raises(lambda: Geometry(5, 4, 0), "at least one stripe")
    _raises(lambda: Geometry(5, 4, 4, 4 * K, 64 * K, data_offset=1000), "data offset")


def test_geometry_error_is_a_vraid_error_and_prints_the_hint() -> None:
    with pytest.raises(VraidError) as info:
        Geometry(5, 2, 4)
    assert "hint:" in str(info.value)


# -- parse_size / format_size ------------------------------------------------------------------
UNITS = {"": 1, "K": K, "M": K**2, "G": K**3, "T": K**4}


@given(st.integers(min_value=0, max_value=1 << 60))
def test_format_then_parse_is_identity(n: int) -> None:
    text = format_size(n)
    assert parse_size(text) == n
    # and the spelling is the shortest exact one: no bigger unit divides n
    if n:
        number = int(text.rstrip("BKMGT"))
        suffix = text[len(str(number)) :].rstrip("B")
        assert number * UNITS[suffix] == n
        bigger = [u for u in UNITS.values() if u > UNITS[suffix]]
        assert all(n % u for u in bigger)


@given(
    st.integers(min_value=0, max_value=1 << 20),
    st.sampled_from(sorted(UNITS)),
    st.sampled_from(["", "B", "iB"]),
    st.booleans(),
    st.sampled_from(["", " "]),
)
def test_parse_then_format_round_trips(number: int, unit: str, tail: str, lower: bool, pad: str) -> None:
    if tail == "iB" and not unit:
        tail = "B"
    text = f"{pad}{number}{pad}{unit}{tail}{pad}"
    if lower:
        text = text.lower()
    n = parse_size(text)
    assert n == number * UNITS[unit]
    assert parse_size(format_size(n)) == n


@pytest.mark.parametrize(
    "text,n",
    [("4K", 4096), ("64k", 65536), ("256M", 256 << 20), ("1G", 1 << 30), ("2T", 2 << 40), ("4096", 4096), ("512B", 512), ("4KiB", 4096), ("1 MB", 1 << 20)],
)
def test_parse_size_examples(text: str, n: int) -> None:
    assert parse_size(text) == n
    assert parse_size(n) == n


@pytest.mark.parametrize("n,text", [(0, "0"), (1, "1B"), (512, "512B"), (4096, "4K"), (65536, "64K"), (1536, "1536B"), (3 << 30, "3G"), (1 << 40, "1T")])
def test_format_size_examples(n: int, text: str) -> None:
    assert format_size(n) == text


@pytest.mark.parametrize("text", ["", "K", "4X", "-4K", "4.5K", "four", "4 K B B", "0x10"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(VraidError) as info:
        parse_size(text, "strip size")
    assert "strip size" in info.value.message and repr(text) in info.value.message
    assert info.value.hint

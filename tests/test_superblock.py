"""Member superblocks: encoding, checksum, magic, params."""

from __future__ import annotations

import struct
import uuid
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vraid.errors import SuperblockError
from vraid.core.geometry import Geometry
from vraid.core.redundancy import LAYOUT_NAMES
from vraid.ondisk.superblock import MAGIC, SIZE, SPARE, VERSION, NotAMember, Superblock

# JSON values that survive a dumps/loads round trip unchanged (no tuples, no NaN)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
params = st.dictionaries(st.text(max_size=12), json_values, max_size=6)
times = st.floats(allow_nan=False)  # infinities round-trip through struct 'd' fine

superblocks = st.builds(
    Superblock,
    array_uuid=st.uuids().map(str),
    level=st.sampled_from([0, 1, 4, 5, 10]),
    layout=st.sampled_from(LAYOUT_NAMES),
    ndisks=st.integers(1, 64),
    block_size=st.sampled_from([512, 1024, 4096, 65536]),
    strip_size=st.integers(0, 2**32 - 1),
    data_offset=st.integers(0, 2**64 - 1),
    stripes=st.integers(0, 2**64 - 1),
    role=st.integers(SPARE, 63),
    events=st.integers(0, 2**64 - 1),
    clean=st.booleans(),
    ctime=times,
    utime=times,
    params=params,
)


def _sb(**changes) -> Superblock:
    g = Geometry(5, 4, 16, 4096, 64 * 1024)
    return Superblock.for_member(g, str(uuid.UUID(int=0x1234)), 2, 1700000000.5).evolve(**changes)


@given(superblocks)
def test_pack_unpack_round_trip(sb: Superblock) -> None:
    raw = sb.pack()
    assert len(raw) == SIZE
    assert raw.startswith(MAGIC)
    assert Superblock.unpack(raw) == sb
    # and what follows the superblock on the member does not matter
    assert Superblock.unpack(raw + b"\xff" * 100) == sb


def test_for_member_and_geometry_round_trip() -> None:
    g = Geometry(5, 7, 33, 512, 8 * 1024, "right-asymmetric", data_offset=16 * 1024)
    sb = Superblock.for_member(g, str(uuid.uuid4()), 6, 12.25)
    back = Superblock.unpack(sb.pack())
    assert back.geometry() == g
    assert (back.role, back.events, back.clean, back.ctime, back.utime, back.version) == (6, 0, True, 12.25, 12.25, VERSION)


def test_spare_role_round_trips() -> None:
    assert Superblock.unpack(_sb(role=SPARE).pack()).role == SPARE


def test_every_single_flipped_byte_is_caught() -> None:
    raw = _sb(params={"ct": {"S_w_max": 8}}).pack()
    for pos in range(SIZE):
        bad = bytearray(raw)
        bad[pos] ^= 0x01
        with pytest.raises(SuperblockError):
            Superblock.unpack(bytes(bad))


@given(superblocks, st.integers(0, SIZE - 1), st.integers(1, 255))
def test_any_flipped_byte_is_caught(sb: Superblock, pos: int, mask: int) -> None:
    bad = bytearray(sb.pack())
    bad[pos] ^= mask
    with pytest.raises(SuperblockError) as info:
        Superblock.unpack(bytes(bad), "disk3.img")
    if pos < len(MAGIC):
        assert isinstance(info.value, NotAMember)
    else:
        assert "disk3.img" in info.value.message and "checksum" in info.value.message


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"\0" * SIZE,
        b"VRAIDSB\x01" + b"\0" * (SIZE - 8),
        b"vraidsb\x00" + b"\0" * (SIZE - 8),
        b"\x7fELF" + b"\0" * (SIZE - 4),
    ],
    ids=["empty", "zeros", "magic-version-byte", "lowercase-magic", "elf"],
)
def test_wrong_magic_is_not_a_member(raw: bytes) -> None:
    with pytest.raises(NotAMember) as info:
        Superblock.unpack(raw, "stray.bin")
    assert "stray.bin" in info.value.message and "no vraid superblock" in info.value.message
    assert info.value.hint


def test_short_superblock_is_not_a_member() -> None:
    with pytest.raises(NotAMember):
        Superblock.unpack(_sb().pack()[: SIZE - 1])


def test_not_a_member_is_a_superblock_error() -> None:
    assert issubclass(NotAMember, SuperblockError)


def _reseal(body: bytearray) -> bytes:
    """Recompute the CRC so only the field change is seen."""
    body = bytes(body[: SIZE - 4])
    return body + struct.pack("<I", zlib.crc32(body))


def test_unknown_version_is_refused() -> None:
    raw = bytearray(_sb().pack())
    struct.pack_into("<H", raw, 8, VERSION + 1)
    with pytest.raises(SuperblockError, match=f"version {VERSION + 1} is not supported"):
        Superblock.unpack(_reseal(raw), "m")


def test_unknown_layout_index_is_refused() -> None:
    raw = bytearray(_sb().pack())
    raw[8 + 2 + 2 + 16 + 1] = len(LAYOUT_NAMES)  # the layout byte, after magic, version, flags, uuid, level
    with pytest.raises(SuperblockError, match="invalid"):
        Superblock.unpack(_reseal(raw), "m")


def test_garbled_params_are_refused() -> None:
    sb = _sb(params={"k": 1})
    raw = bytearray(sb.pack())
    at = raw.index(b'{"k":1}')
    raw[at] = ord("[")
    with pytest.raises(SuperblockError, match="invalid"):
        Superblock.unpack(_reseal(raw), "m")


# -- params -------------------------------------------------------------------------
@given(params)
def test_params_json_round_trip(p: dict) -> None:
    sb = _sb(params=p)
    assert Superblock.unpack(sb.pack()).params == p


def test_params_examples() -> None:
    p = {"ct": {"S_w_max": 8, "S_r_max": 16, "S_except": 2}, "label": "bench run 3", "ratio": 1.2, "ok": True, "none": None}
    back = Superblock.unpack(_sb(params=p).pack())
    assert back.params == p
    assert back.to_dict()["params"] == p
    assert Superblock.unpack(_sb().pack()).params == {}


def test_params_that_do_not_fit_are_refused() -> None:
    with pytest.raises(SuperblockError, match="4 KiB"):
        _sb(params={"blob": "x" * SIZE}).pack()


def test_clean_flag_and_events() -> None:
    sb = _sb()
    dirty = Superblock.unpack(sb.evolve(clean=False, events=41).pack())
    assert (dirty.clean, dirty.events) == (False, 41)
    assert Superblock.unpack(dirty.evolve(clean=True, events=42).pack()).clean


@pytest.mark.parametrize("layout", ["left-symmetric", "right-asymmetric"])
def test_a_raid6_superblock_round_trips(layout: str) -> None:
    g = Geometry(6, 5, 9, layout=layout)
    back = Superblock.unpack(Superblock.for_member(g, str(uuid.uuid4()), 4, 1.0).pack())
    assert back.geometry() == g and back.level == 6 and back.layout == layout


def test_layout_indices_are_append_only() -> None:
    """A superblock stores its layout as an index into LAYOUT_NAMES: the names of the first
    arrays ever made keep their numbers (RAID-5's four, also RAID-6's, then RAID-4's, RAID-1's,
    RAID-10's)."""
    assert LAYOUT_NAMES[:8] == ("left-symmetric", "left-asymmetric", "right-symmetric", "right-asymmetric",
                                "parity-last", "parity-first", "mirror", "near-2")
    assert len(set(LAYOUT_NAMES)) == len(LAYOUT_NAMES)


@pytest.mark.parametrize("level, ndisks, layout", [(4, 4, "parity-last"), (4, 3, "parity-first"), (1, 3, "mirror"),
                                                   (10, 4, "near-2")])
def test_every_level_round_trips(level, ndisks, layout) -> None:
    g = Geometry(level, ndisks, 16, 4096, 64 * 1024, layout)
    sb = Superblock.for_member(g, str(uuid.uuid4()), 1, 0.0)
    back = Superblock.unpack(sb.pack())
    assert back == sb and back.geometry() == g

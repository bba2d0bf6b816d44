"""Creating an array directory and assembling it from its member files (no mounts)."""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest
import trio

from vraid.ondisk.assemble import Assembled, assemble, examine
from vraid.ondisk.create import create
from vraid.backends.file import FileStore
from vraid.ondisk.config import NAME as CONFIG_NAME, ArrayConfig
from vraid.errors import AssemblyError, SuperblockError, VraidError
from vraid.core.geometry import RESERVED, Geometry
from vraid.ondisk.superblock import SIZE as SB_SIZE, Superblock
from vraid.engine.build import EngineConfig

from support import running

K = 1024
STRIP = 4 * K
STRIPES = 16
DISK = RESERVED + STRIPES * STRIP  # 1 MiB superblock area + 16 strips, sparse


def _geometry(level: int = 5, ndisks: int = 4, layout: str = "left-symmetric") -> Geometry:
    return Geometry.for_disk_size(level=level, ndisks=ndisks, disk_size=DISK, strip_size=STRIP, layout=layout)


def _make(directory: Path, level: int = 5, ndisks: int = 4, **kw) -> Assembled:
    return create(directory, _geometry(level, ndisks, kw.pop("layout", "left-symmetric")), DISK, **kw)


def _snapshot(directory: Path) -> dict[str, tuple[str, int, int]]:
    """name -> (sha256, size, mtime_ns) of every file in ``directory``."""
    out = {".": ("", 0, directory.stat().st_mtime_ns)}
    for p in sorted(directory.iterdir()):
        st = p.stat()
        out[p.name] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_size, st.st_mtime_ns)
    return out


def _flip(path: Path, offset: int) -> None:
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x5A]))


# -- create / assemble -------------------------------------------------------------------
@pytest.mark.parametrize("level,ndisks", [(5, 3), (5, 4), (0, 2), (0, 5)])
def test_create_then_assemble(tmp_path: Path, level: int, ndisks: int) -> None:
    d = tmp_path / "arr"
    made = _make(d, level, ndisks)
    assert sorted(p.name for p in d.iterdir()) == sorted([f"disk{i}.img" for i in range(ndisks)] + [CONFIG_NAME])
    got = assemble(d)
    assert got.uuid == made.uuid
    assert got.geometry == made.geometry == _geometry(level, ndisks)
    assert got.paths == [d / f"disk{i}.img" for i in range(ndisks)]
    assert [sb.role for sb in got.superblocks] == list(range(ndisks))
    assert {sb.array_uuid for sb in got.superblocks} == {made.uuid}
    assert got.was_clean and got.events == 0
    assert got.config.uuid == made.uuid and got.config.image == "disk.img"
    for p in got.paths:
        assert p.stat().st_size == DISK
    assert ArrayConfig.load(d) == got.config
    assert "RAID-" in got.summary()


def test_examine_reads_every_member(tmp_path: Path) -> None:
    made = _make(tmp_path / "a")
    rows = examine(tmp_path / "a")
    assert [(p.name, sb.role if sb else None, why) for p, sb, why in rows] == [
        (f"disk{i}.img", i, "") for i in range(4)
    ]
    ((path, sb, _),) = examine(tmp_path / "a" / "disk2.img")
    assert sb.role == 2 and sb.array_uuid == made.uuid
    with pytest.raises(VraidError, match="does not exist"):
        examine(tmp_path / "nope")


async def _write_and_read(geometry: Geometry, stores, chunks: list[tuple[int, bytes]]) -> bytes:
    async with running(EngineConfig(geometry, stores)) as array:
        for offset, data in chunks:
            await array.write(offset, data)
        await array.flush()
        return await array.read(0, geometry.capacity)


async def _read_all(geometry: Geometry, stores) -> bytes:
    async with running(EngineConfig(geometry, stores)) as array:
        return await array.read(0, geometry.capacity)


@pytest.mark.parametrize("level,ndisks,layout", [(5, 4, "left-symmetric"), (5, 5, "right-asymmetric"), (0, 3, "left-symmetric")])
def test_shuffled_renamed_members_assemble_in_role_order(tmp_path: Path, level: int, ndisks: int, layout: str) -> None:
    d = tmp_path / "arr"
    _make(d, level, ndisks, layout=layout)
    a = assemble(d)
    rng = random.Random(level * 100 + ndisks)
    chunks = [(rng.randrange(a.geometry.capacity - 9000), rng.randbytes(rng.randrange(1, 9000))) for _ in range(20)]
    chunks.append((0, rng.randbytes(a.geometry.stripe_data_bytes + 123)))
    try:
        written = trio.run(_write_and_read, a.geometry, a.open_stores(), chunks)
    finally:
        a.close()
    model = bytearray(a.geometry.capacity)
    for off, data in chunks:
        model[off : off + len(data)] = data
    assert written == bytes(model)

    # rename every member to a name that sorts in a different, shuffled order
    names = [f"{c}-member.bin" for c in "qwertyuiop"[:ndisks]]
    order = list(range(ndisks))
    while order == sorted(order, key=lambda i: names[i]) or order == list(range(ndisks)):
        rng.shuffle(order)
    for i, p in enumerate(a.paths):
        p.rename(d / names[order[i]])
    b = assemble(d)
    assert [p.name for p in b.paths] == [names[order[i]] for i in range(ndisks)]
    assert [sb.role for sb in b.superblocks] == list(range(ndisks))
    try:
        assert trio.run(_read_all, b.geometry, b.open_stores()) == bytes(model)
    finally:
        b.close()

    # control: the same files in name order do not read back the data
    by_name = [FileStore(p) for p in sorted(d.glob("*-member.bin"))]
    try:
        assert trio.run(_read_all, b.geometry, by_name) != bytes(model)
    finally:
        for s in by_name:
            s.close()


def test_members_in_a_subdirectory_or_other_files_are_ignored(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    _make(d)
    (d / "notes.txt").write_text("not a member\n")
    (d / "sub").mkdir()
    got = assemble(d)
    assert len(got.paths) == 4


# -- create refuses / force ----------------------------------------------------------------
@pytest.mark.parametrize("level", [0, 5])
def test_create_refuses_existing_array_and_changes_nothing(tmp_path: Path, level: int) -> None:
    d = tmp_path / "arr"
    made = _make(d, level, 3)
    # put some data in, so an overwrite would show
    with open(made.paths[1], "r+b") as f:
        f.seek(RESERVED)
        f.write(b"precious" * 100)
    before = _snapshot(d)
    for geometry in (_geometry(level, 3), _geometry(5, 6)):
        with pytest.raises(VraidError) as info:
            create(d, geometry, DISK)
        assert "already holds a vraid array" in info.value.message
        assert made.uuid in info.value.message
        assert "--force" in info.value.hint
    assert _snapshot(d) == before
    assert assemble(d).uuid == made.uuid


def test_create_refuses_renamed_members_too(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    for i, p in enumerate(made.paths):
        p.rename(d / f"m{i}.raw")
    (d / CONFIG_NAME).unlink()
    before = _snapshot(d)
    with pytest.raises(VraidError, match="already holds a vraid array"):
        _make(d)
    assert _snapshot(d) == before


def test_create_refuses_a_directory_with_only_the_config(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    _make(d)
    for p in d.glob("disk*.img"):
        p.unlink()
    before = _snapshot(d)
    with pytest.raises(VraidError, match="vraid.toml exists"):
        _make(d)
    assert _snapshot(d) == before


def test_create_refuses_a_file_path(tmp_path: Path) -> None:
    f = tmp_path / "plain"
    f.write_bytes(b"x")
    with pytest.raises(VraidError, match="not a directory"):
        _make(f)
    assert f.read_bytes() == b"x"


def test_create_refuses_foreign_files_with_member_names(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    d.mkdir()
    (d / "disk1.img").write_bytes(b"holiday photos")
    with pytest.raises(VraidError, match="disk1.img already exist"):
        _make(d)
    assert (d / "disk1.img").read_bytes() == b"holiday photos"


def test_force_overwrites(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    old = _make(d, 5, 4)
    with open(old.paths[0], "r+b") as f:
        f.seek(RESERVED)
        f.write(b"old data")
    old.paths[3].rename(d / "renamed-old-member")
    (d / "keep.txt").write_text("mine")
    new = _make(d, 0, 3, force=True)
    assert new.uuid != old.uuid
    got = assemble(d)
    assert got.uuid == new.uuid and got.geometry.level == 0 and got.geometry.ndisks == 3
    assert not (d / "renamed-old-member").exists(), "old members under other names are removed"
    assert not (d / "disk3.img").exists()
    assert (d / "keep.txt").read_text() == "mine", "files that are not members stay"
    with open(d / "disk0.img", "rb") as f:
        f.seek(RESERVED)
        assert f.read(8) == b"\0" * 8
    assert ArrayConfig.load(d).uuid == new.uuid


def test_force_replaces_corrupt_members(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    _make(d)
    _flip(d / "disk2.img", 100)
    _make(d, force=True)
    assert len(assemble(d).paths) == 4


# -- assembly errors ----------------------------------------------------------------------------
def test_members_of_two_arrays(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ma = _make(a)
    mb = _make(b, 5, 3)
    os.rename(mb.paths[1], a / "stray.img")
    with pytest.raises(AssemblyError) as info:
        assemble(a)
    msg = info.value.message
    assert "different arrays" in msg
    for name in ["disk0.img", "disk1.img", "disk2.img", "disk3.img", "stray.img"]:
        assert name in msg
    assert ma.uuid in msg and mb.uuid in msg
    assert info.value.hint


def test_members_of_another_array_than_the_config_names(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ma = _make(a)
    mb = _make(b)
    for p in ma.paths:
        p.unlink()
    for p in mb.paths:
        os.rename(p, a / p.name)
    with pytest.raises(AssemblyError) as info:
        assemble(a)
    assert ma.uuid in info.value.message and "disk0.img" in info.value.message


@pytest.mark.parametrize("level,ndisks,missing", [(0, 3, [1]), (0, 2, [0]), (5, 4, [1, 2]), (5, 3, [0, 2])])
def test_missing_member(tmp_path: Path, level: int, ndisks: int, missing: list[int]) -> None:
    d = tmp_path / "arr"
    made = _make(d, level, ndisks)
    for i in missing:
        made.paths[i].unlink()
    with pytest.raises(AssemblyError) as info:
        assemble(d)
    msg = info.value.message
    assert "missing" in msg and ", ".join(map(str, missing)) in msg and f"of {ndisks}" in msg
    assert ("RAID-0" if level == 0 else "RAID-5") in msg
    assert "missing member" in info.value.hint


def test_duplicated_member(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    (d / "copy.img").write_bytes(made.paths[1].read_bytes())
    with pytest.raises(AssemblyError, match="both claim role 1"):
        assemble(d)


@pytest.mark.parametrize("level", [0])
@pytest.mark.parametrize("cut", [1, STRIP, DISK - RESERVED])
def test_truncated_member(tmp_path: Path, level: int, cut: int) -> None:
    d = tmp_path / "arr"
    made = _make(d, level, 3)
    need = made.geometry.member_size
    os.truncate(made.paths[2], need - cut)
    with pytest.raises(AssemblyError) as info:
        assemble(d)
    msg = info.value.message
    assert "disk2.img" in msg and "truncated" in msg
    assert str(need - cut) in msg and str(need) in msg
    assert "truncate" in info.value.hint


def test_member_truncated_to_its_superblock(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    os.truncate(made.paths[0], SB_SIZE)
    got = assemble(d)  # RAID-5: the truncated member is not used, the array runs degraded
    assert got.failed == {0: f"disk0.img is truncated: {SB_SIZE} bytes, the array needs {made.geometry.member_size}"}
    assert "DEGRADED" in got.notes[0]
    os.truncate(made.paths[1], SB_SIZE)  # two: refused
    with pytest.raises(AssemblyError, match="disk1.img is truncated"):
        assemble(d)


def test_member_truncated_inside_its_superblock(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    os.truncate(made.paths[2], 100)
    with pytest.raises(AssemblyError) as info:
        assemble(d)
    msg = info.value.message
    assert "disk2.img" in msg
    assert "truncated" in msg and "100 bytes" in msg


@pytest.mark.parametrize("offset", [8, 9, 24, 40, 77, 200, 2048, SB_SIZE - 5, SB_SIZE - 1])
def test_corrupted_superblock(tmp_path: Path, offset: int) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    _flip(made.paths[3], offset)
    with pytest.raises(SuperblockError) as info:
        assemble(d)
    assert "disk3.img" in info.value.message and "checksum" in info.value.message
    assert "disk0.img" not in info.value.message
    assert info.value.hint


def test_corrupted_magic_makes_the_member_missing(tmp_path: Path) -> None:
    """With its magic gone a member is just a file; assembly says so when it reports the gap."""
    d = tmp_path / "arr"
    made = _make(d)
    _flip(made.paths[1], 0)
    got = assemble(d)  # RAID-5 runs without it, and says why
    assert got.failed == {1: "missing"} and got.paths[1] is None
    assert "without member 1" in got.notes[0] and "disk1.img (no vraid superblock)" in got.notes[0]
    _flip(made.paths[2], 0)
    with pytest.raises(AssemblyError) as info:
        assemble(d)
    assert "members 1, 2 of 4 missing" in info.value.message
    assert "disk1.img (no vraid superblock)" in info.value.message


def test_not_an_array(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(AssemblyError, match="is not a vraid array"):
        assemble(empty)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.img").write_bytes(os.urandom(SB_SIZE * 2))
    (junk / "b.txt").write_text("hello")
    with pytest.raises(AssemblyError, match="no member file"):
        assemble(junk)
    with pytest.raises(AssemblyError, match="is not a directory"):
        assemble(tmp_path / "does-not-exist")
    with pytest.raises(AssemblyError, match="is not a directory"):
        assemble(junk / "b.txt")


def test_config_without_members(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    for p in made.paths:
        p.unlink()
    with pytest.raises(AssemblyError, match="vraid.toml is there, but no members"):
        assemble(d)


def test_unknown_config_key(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    _make(d)
    with open(d / CONFIG_NAME, "a") as f:
        f.write('imgae = "typo.img"\n')
    with pytest.raises(VraidError) as info:
        assemble(d)
    assert "unknown setting imgae" in info.value.message
    assert "image" in info.value.hint


def test_bad_config_values(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    (d / CONFIG_NAME).write_text(f'uuid = "{made.uuid}"\nimage = "../escape.img"\n')
    with pytest.raises(VraidError, match="is not a file name"):
        assemble(d)
    (d / CONFIG_NAME).write_text("image = [\n")
    with pytest.raises(VraidError, match="not valid TOML"):
        assemble(d)
    (d / CONFIG_NAME).write_text(f'uuid = "{made.uuid}"\nimage = "vol.img"\n')
    assert assemble(d).config.image == "vol.img"


def test_assemble_without_config(tmp_path: Path) -> None:
    d = tmp_path / "arr"
    made = _make(d)
    (d / CONFIG_NAME).unlink()
    got = assemble(d)
    assert got.config.uuid == made.uuid and got.config.image == "disk.img"


# -- mark ---------------------------------------------------------------------------------------
def _on_disk(d: Path) -> list[Superblock]:
    return assemble(d).superblocks


@pytest.mark.parametrize("open_first", [False, True])
def test_mark_bumps_events_on_all_members(tmp_path: Path, open_first: bool) -> None:
    d = tmp_path / "arr"
    _make(d)
    a = assemble(d)
    if open_first:
        a.open_stores()
    try:
        a.mark(clean=False)
        sbs = _on_disk(d)
        assert [sb.events for sb in sbs] == [1] * 4
        assert not any(sb.clean for sb in sbs)
        assert not assemble(d).was_clean
        a.mark(clean=True)
        sbs = _on_disk(d)
        assert [sb.events for sb in sbs] == [2] * 4
        assert all(sb.clean for sb in sbs)
        assert a.events == 2 and a.was_clean
        # nothing else about the members changed
        assert [sb.role for sb in sbs] == [0, 1, 2, 3]
        assert {sb.array_uuid for sb in sbs} == {a.uuid}
        assert all(sb.utime >= sb.ctime for sb in sbs)
    finally:
        a.close()


def test_assembly_follows_the_highest_event_count(tmp_path: Path) -> None:
    """A member left behind at an older event count still assembles (same geometry)."""
    d = tmp_path / "arr"
    _make(d)
    a = assemble(d)
    stale = a.paths[0].read_bytes()[:SB_SIZE]
    a.mark(clean=False)
    with open(a.paths[0], "r+b") as f:
        f.write(stale)
    got = assemble(d)  # the stale member is not trusted: RAID-5 runs degraded without it
    assert got.failed == {0: "disk0.img is stale: events 0, the others 1; not trusted"}
    assert [sb and sb.events for sb in got.superblocks] == [None, 1, 1, 1]
    assert got.events == 1

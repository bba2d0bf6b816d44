"""RAID-6: a spare dying mid-rebuild, then a remount (the smallest example hypothesis found in
tests/test_failures_model.py, raid6-5d-s4K-b4096-x10-ls, written out step by step).

Two spares; member 0 fails (its spare0 starts rebuilding it); one byte is written at 0; a third
spare is added; member 4 fails too; spare0 dies on its first stripe. The pass is stopped and
the next one takes *both* failed roles at once (0 onto spare1, 4 onto spare2: md's recovery of
every failed member that has a spare). An unmount now must leave both roles failed and both
spares spares: a spare becomes a member only when its pass is done (vraid.ondisk.failures), so
the next mount rebuilds both from stripe 0. The model machine's remount put back only the first
role of the pass (``rb.role``) and its spare: role 4 came back as an active member on spare2,
which holds nothing, and the checks found member 4's P/Q of stripe 0 wrong.

The first test runs the steps on memory members and remounts as the machine does
(:func:`test_failures_model.after_unmount`); the second on member files through assembly and the
superblock hooks, as the mount daemon does, and checks that assembly finds what
``after_unmount`` says. Every member is compared with vraid.testing.raid6_oracle's md layout.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import trio
from portal import ArrayPortal
from test_degraded import Breakable
from test_failures_model import after_unmount

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import RESERVED, Geometry
from vraid.engine.config import EngineConfig
from vraid.ondisk import failures
from vraid.ondisk.assemble import assemble
from vraid.ondisk.create import create
from vraid.testing.raid6_oracle import expected_areas
from vraid.testing.session import Session

K = 1024
BYTE = b"_"


def _geometry() -> Geometry:
    return Geometry(6, 5, 10, 4 * K, 4 * K, "left-symmetric", data_offset=4 * K)


def _bad_members(g: Geometry, stores, model: bytes, skip=()) -> list[int]:
    """Members (not in ``skip``) whose data area is not md's RAID-6 of ``model``."""
    want = expected_areas(g.layout, g.ndisks, g.stripes, g.strip_size, model)
    n = g.stripes * g.strip_size
    return [d for d, s in enumerate(stores)
            if d not in skip and s.read_sync(g.data_offset, n) != want[d].reshape(-1).tobytes()]


def _in_loop(p, fn, *args):
    """``fn(*args)`` (a plain function of the engine) run in the engine's trio loop."""

    async def call():
        return fn(*args)

    return p.call(call)


def _spare_dies_with_a_second_role_failed(p, fail_member_store, third_spare) -> None:
    """The steps between the first failure and the remount (the rebuild is paused)."""
    raid = p.array.raid
    _in_loop(p, raid.add_spare, third_spare)
    _in_loop(p, raid.fail_member, 4, "the test")
    fail_member_store(4)
    assert raid.rebuild.roles == (0,) and raid.health.failed == [4]
    raid.rebuild.spare.broken = True  # spare0 dies on its first stripe
    first = raid.rebuild

    p.call(first.step, 1)
    assert first.state == "stopped" and first.dead == {0}
    assert raid.rebuild.roles == (0, 4), "the next pass takes both failed roles"
    assert [Path(s.name).stem for s in raid.rebuild.spares] == ["spare1", "spare2"]
    assert raid.health.missing_roles == [0, 4] and raid.health.failed == []


def test_a_remount_after_a_spare_dies_mid_rebuild_leaves_both_roles_of_the_next_pass_failed():
    g = _geometry()
    stores = [Breakable(MemoryStore(g.member_size, f"m{i}")) for i in range(g.ndisks)]
    spares = [Breakable(MemoryStore(g.member_size, f"spare{i}")) for i in range(3)]
    model = bytearray(g.capacity)
    p = ArrayPortal(g, stores)
    raid = p.array.raid

    def scribble(d):  # the failed member's old disk holds garbage
        stores[d].inner.write_sync(0, bytes(np.random.default_rng(d).integers(0, 256, g.member_size, dtype=np.uint8)))

    raid.rebuild_paused = True
    _in_loop(p, raid.add_spare, spares[0])
    _in_loop(p, raid.add_spare, spares[1])
    _in_loop(p, raid.fail_member, 0, "the test")
    scribble(0)
    p.write(0, BYTE)
    model[0:1] = BYTE
    _spare_dies_with_a_second_role_failed(p, scribble, spares[2])

    failed, left = after_unmount(raid)
    assert failed == [0, 4] and left == [spares[1], spares[2]]
    members = [raid.members[i].store for i in range(g.ndisks)]
    p.close()

    p = ArrayPortal(g, members, failed=failed)  # the remount
    raid = p.array.raid
    raid.rebuild_paused = True
    raid.spares.extend(left)  # as the mount gives them (EngineConfig.spares): both at once
    _in_loop(p, raid.maybe_start_rebuild)
    assert raid.rebuild.roles == (0, 4) and raid.rebuild.pos == 0
    assert p.read(0, 1) == BYTE
    p.flush()
    assert _bad_members(g, members, bytes(model), skip=(0, 4)) == []
    raid.rebuild_paused = False

    async def rebuild_to_the_end():
        raid.rebuild._wakeup.set()
        while raid.rebuild is not None:
            await trio.sleep(0.001)

    p.call(rebuild_to_the_end)
    assert raid.health.missing_roles == [] and p.read(0, g.capacity) == bytes(model)
    p.flush()
    news = [raid.members[i].store for i in range(g.ndisks)]
    assert [news[0], news[4]] == [spares[1], spares[2]]
    assert _bad_members(g, news, bytes(model)) == []
    p.close()


def _mount(directory, *, paused: bool):
    """What the daemon does (vraid.fuse.daemon.serve): assemble, open, build, mark dirty, hook
    failures and finished rebuilds to the superblocks, serve; every store behind a Breakable.
    (The session serves as soon as it is built, so the spares are handed over once the hooks
    are there, with the rebuild paused or not; the daemon hooks them before it serves.)"""
    asm = assemble(directory)
    asm.open_stores()
    config = dataclasses.replace(EngineConfig.from_assembled(asm), stores=tuple(Breakable(s) for s in asm.stores),
                                 spares=())
    asm.mark(clean=False)
    session = Session(config)
    raid = session.array.raid
    failures.attach(asm, session.array)
    raid.rebuild_paused = paused
    raid.spares.extend(Breakable(s) for s in asm.spare_stores)
    _in_loop(session, raid.maybe_start_rebuild)
    return asm, session


def _unmount(asm, session) -> None:
    session.call(session.array.shutdown)
    session.close()
    asm.mark(clean=True)
    asm.close()


def test_on_member_files_assembly_after_the_spare_died_finds_what_after_unmount_says(tmp_path):
    g0 = _geometry()
    disk_size = RESERVED + g0.stripes * g0.strip_size
    g = Geometry.for_disk_size(level=6, ndisks=5, disk_size=disk_size, strip_size=4 * K)
    directory = tmp_path / "arr"
    create(directory, g, disk_size, spares=2)
    model = bytearray(g.capacity)

    asm, s = _mount(directory, paused=True)
    raid = s.array.raid
    assert len(raid.spares) == 2

    _in_loop(s, raid.fail_member, 0, "the test")
    s.write(0, BYTE)
    model[0:1] = BYTE
    path = failures.add_spare(asm, directory / "spare2.img")  # `vraid add` on the mount
    _spare_dies_with_a_second_role_failed(s, lambda d: None, Breakable(asm.spare_stores[-1]))
    assert path.name == "spare2.img"
    failed, left = after_unmount(raid)
    _unmount(asm, s)

    asm = assemble(directory)
    assert sorted(asm.failed) == failed == [0, 4]
    assert [p.name for p in asm.spares] == [Path(st.name).name for st in left] == ["spare1.img", "spare2.img"]
    assert any(n.startswith("spare0.img is a spare that failed") for n in asm.notes), asm.notes

    asm, s = _mount(directory, paused=False)  # the rebuild of both runs at the mount
    raid = s.array.raid

    async def wait():
        while raid.rebuild is not None:
            await trio.sleep(0.001)

    s.call(wait)
    assert raid.last_rebuild["state"] == "done" and raid.last_rebuild["roles"] == [0, 4]
    assert s.read(0, g.capacity) == bytes(model)
    s.flush()
    assert _bad_members(g, [raid.members[i].store for i in range(g.ndisks)], bytes(model)) == []
    _unmount(asm, s)
    asm = assemble(directory)
    assert asm.failed == {} and [asm.paths[0].name, asm.paths[4].name] == ["spare1.img", "spare2.img"]
    assert asm.spares == []  # spare0.img stays out until it is added again
    failures.add_spare(asm, directory / "spare0.img")
    assert [p.name for p in assemble(directory).spares] == ["spare0.img"]

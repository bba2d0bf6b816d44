"""RAID-6 rebuild of two failed members in one pass (issue 32 item 3), as md's recovery does
when two spares are there: each stripe's survivors are read once, both missing columns are
reconstructed from P and Q together, and each is written to its spare. A spare failing in
the middle gives the other role back as failed and its spare back, and the next pass starts
over with what is left; a pass stopped by lost data (RAID-5, a survivor failing) gives its role
back as failed and its spare back. The members are checked with vraid.testing.raid6_oracle."""

from __future__ import annotations

import numpy as np
import pytest
import trio
from portal import ArrayPortal

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.testing.raid6_oracle import bad_stripes, image_of, member_areas

K = 1024


def _setup(layout: str, n: int = 6, stripes: int = 12):
    g = Geometry(6, n, stripes, 4 * K, 8 * K, layout, data_offset=4 * K)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(n)]
    spares = [MemoryStore(g.member_size, f"spare{i}") for i in range(2)]
    model = np.random.default_rng(3).integers(0, 256, g.capacity, dtype=np.uint8).tobytes()
    return g, stores, spares, model


def _check_members(g, stores) -> bytes:
    areas = member_areas([s.read_sync(0, g.member_size) for s in stores], g.data_offset, g.stripes, g.strip_size)
    assert bad_stripes(areas, g.layout) == []
    return image_of(areas, g.layout)


@pytest.mark.parametrize("layout", ["left-symmetric", "right-asymmetric"])
@pytest.mark.parametrize("failed", [(1, 4), (0, 5)])
def test_two_spares_rebuild_both_failed_members_in_one_pass(layout, failed):
    g, stores, spares, model = _setup(layout)
    rebuilt = []
    with ArrayPortal(g, stores) as p:
        a = p.array
        a.raid.on_rebuilt = lambda role, name: rebuilt.append((role, name))
        p.write(0, model)
        p.flush()
        for d in failed:
            p.call(lambda d=d: _fail(a, d))
        before = {m["disk"]: m["reads"] for m in a.status()["members"]}

        async def both_spares_then_wait():
            a.raid.spares.extend(spares)  # two spares there when the pass starts
            a.raid.maybe_start_rebuild()
            assert a.raid.rebuild.roles == failed
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)

        p.call(both_spares_then_wait)
        st = a.status()
        assert st["degraded"] is False and rebuilt == [(failed[0], "spare0"), (failed[1], "spare1")]
        assert st["rebuild"]["roles"] == list(failed) and st["rebuild"]["state"] == "done"
        shown = _status_text(st)  # `vraid status` names both members of the pass
        assert f"member {failed[0]} onto spare0, member {failed[1]} onto spare1: done" in shown
        members = {m["disk"]: m for m in st["members"]}
        for d in range(g.ndisks):
            if d in failed:  # the spare in the role: written once a stripe, read never
                assert (members[d]["reads"], members[d]["writes"]) == (0, g.stripes)
            else:  # each survivor read once a stripe: one pass, not two
                assert members[d]["reads"] - before[d] == g.stripes
        assert p.read(0, g.capacity) == model
        p.flush()
    new = list(stores)
    for d, s in zip(failed, spares):
        new[d] = s
    assert _check_members(g, new) == model


def _status_text(st) -> str:
    import io

    from rich.console import Console

    from vraid.tui.render import status_tables
    out = io.StringIO()
    console = Console(width=200, file=out, color_system=None)
    for table in status_tables({"state": "mounted", **st}):  # (the daemon adds its state)
        console.print(table)
    return out.getvalue()


async def _fail(array, disk):
    return array.raid.fail_member(disk, "failed by the test")


def test_a_spare_failing_mid_pass_gives_the_other_role_back_and_the_next_pass_starts_over():
    g, stores, spares, model = _setup("left-symmetric")
    with ArrayPortal(g, stores) as p:
        a = p.array
        p.write(0, model)
        p.flush()
        for d in (1, 4):
            p.call(lambda d=d: _fail(a, d))

        async def start_then_fail_a_spare():
            a.raid.rebuild_paused = True
            a.raid.spares.extend(spares)
            a.raid.maybe_start_rebuild()
            first = a.raid.rebuild
            await first.step(5)
            assert a.raid.health.rebuild_pos == 5 and a.raid.health.missing(0) == set()
            a.raid.rebuild_paused = False  # (the paused first pass wakes only when stopped, below)
            a.raid.fail_member(4, "the spare died")  # spare1, in role 4
            assert first.state == "stopped" and 4 in first.dead
            assert a.raid.health.failed == [4]  # role 1 went back to failed and its spare started again
            second = a.raid.rebuild
            assert second is not first and second.roles == (1,) and second.spare is spares[0]
            assert a.raid.health.rebuild_pos == 0 and a.raid.spares == []
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)

        p.call(start_then_fail_a_spare)
        st = a.status()
        assert st["failed"] == [4] and st["degraded"] and not st["data_lost"]
        assert st["members"][1]["state"] == "active" and st["members"][1]["store"] == "spare0"
        assert p.read(0, g.capacity) == model


def test_a_pass_stopped_by_lost_data_gives_its_role_and_spare_back():
    g = Geometry(5, 4, 8, 4 * K, 8 * K, "left-symmetric", data_offset=4 * K)
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(4)]
    spare = MemoryStore(g.member_size, "spare0")
    with ArrayPortal(g, stores) as p:
        a = p.array
        p.write(0, bytes(g.capacity))
        p.call(lambda: _fail(a, 2))

        async def start_then_lose_a_survivor():
            a.raid.add_spare(spare)  # the pass starts (its task runs at the next checkpoint)
            assert a.raid.rebuild.roles == (2,)
            a.raid.fail_member(0, "a survivor died")
            while a.raid.rebuild is not None:
                await trio.sleep(0.001)

        p.call(start_then_lose_a_survivor)
        st = a.status()
        assert st["rebuild"]["state"] == "stopped" and "missing" in st["rebuild"]["error"]
        assert st["failed"] == [0, 2] and st["data_lost"]
        assert [s["store"] for s in st["spares"]] == ["spare0"]  # the spare is a spare again

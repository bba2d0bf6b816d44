"""Scrub: counts exactly the mismatches it was given, repairs them, never reports a stripe being written."""

from __future__ import annotations

import json

import numpy as np
import pytest
import trio
from hypothesis import given, settings
from hypothesis import strategies as st

from mountutil import tree_hash, vraid
from vraid.ondisk.assemble import assemble
from vraid.backends.memory import MemoryStore
from vraid.errors import VraidError
from vraid.core.geometry import Geometry
from vraid.engine.raid.scrub import ScrubProgress, scrub_array
from vraid.engine.build import EngineConfig

from support import running, write_cache

K = 1024
G = Geometry(5, 4, 20, 4 * K, 16 * K, data_offset=64 * K)


def _filled(g: Geometry = G):
    """Members holding random data with correct parity."""
    stores = [MemoryStore(g.member_size, f"m{i}") for i in range(g.ndisks)]

    async def fill():
        async with running(EngineConfig(g, stores)) as array:
            rng = np.random.default_rng(1)
            await array.write(0, rng.integers(0, 256, g.capacity, dtype=np.uint8).tobytes())

    trio.run(fill)
    return stores


def _scrub(stores, g: Geometry = G, **kw) -> ScrubProgress:
    async def main():
        async with running(EngineConfig(g, stores)) as array:
            return await scrub_array(array.raid, **kw)

    return trio.run(main)


@settings(max_examples=30, deadline=None)
@given(hits=st.lists(st.tuples(st.integers(0, G.stripes - 1), st.integers(0, G.u - 1), st.integers(0, G.ndisks - 1),
                                st.integers(0, G.block_size - 1)), max_size=12),
       batch=st.sampled_from([1, 3, 8, 64]))
def test_scrub_counts_exactly_the_damaged_pbgs_and_repair_fixes_them(hits, batch):
    stores = _filled()
    flips: dict[tuple[int, int, int], int] = {}
    for stripe, row, disk, byte in hits:  # flip one byte of a data or parity block
        off = G.member_offset(stripe, row) + byte
        old = stores[disk].read_sync(off, 1)[0]
        stores[disk].write_sync(off, bytes([old ^ 0x5A]))
        flips[stripe, row, byte] = flips.get((stripe, row, byte), 0) + 1
    # every flip XORs the same 0x5A into the row's parity sum at that byte: an even number of
    # them there (twice on one member, or once each on two members) leaves it consistent
    rows = {(s, r) for (s, r, _), n in flips.items() if n % 2}
    found = _scrub(stores, batch=batch)
    assert found.mismatches == len(rows)
    assert found.mismatched_stripes == len({s for s, _ in rows})
    assert found.stripes == sorted({s for s, _ in rows})
    assert found.done == found.total == G.stripes and found.repaired == 0
    fixed = _scrub(stores, repair=True, batch=batch)
    assert fixed.mismatches == fixed.repaired == len(rows)
    assert _scrub(stores).mismatches == 0


def test_raid0_has_no_parity_to_check():
    g = Geometry(0, 3, 4, 4 * K, 16 * K, data_offset=64 * K)

    async def main():
        async with running(EngineConfig(g, [MemoryStore(g.member_size) for _ in range(3)])) as array:
            with pytest.raises(VraidError, match="RAID-0 has no parity"):
                await scrub_array(array.raid)

    trio.run(main)


@pytest.mark.parametrize("cache", [None, "stripe", "pbg"])
def test_a_stripe_being_written_is_never_a_mismatch(cache):
    """Scrub runs over and over while writers hammer the same stripes: never a mismatch."""
    g = G
    stores = _filled()
    kwargs = write_cache(cache, 4 * g.stripe_data_bytes) if cache else {}

    async def main():
        async with running(EngineConfig(g, stores, **kwargs)) as array:
            stop = trio.Event()

            async def writer(seed):
                rng = np.random.default_rng(seed)
                while not stop.is_set():
                    off = int(rng.integers(0, g.capacity - 70000))
                    await array.write(off, rng.integers(0, 256, int(rng.integers(1, 70000)), dtype=np.uint8).tobytes())
                    await trio.sleep(0)

            results = []
            async with trio.open_nursery() as n:
                for seed in range(4):
                    n.start_soon(writer, seed)
                for batch in (1, 4, 20):
                    results.append(await scrub_array(array.raid, batch=batch))
                stop.set()
            await array.shutdown()
            results.append(await scrub_array(array.raid))
            return results

    for r in trio.run(main):
        assert r.mismatches == 0 and r.done == g.stripes


# -- the CLI on an unmounted array (no root needed) ---------------------------------------
def _text(result) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join((result.stdout + result.stderr).split())


def _corrupt_parity(arr, stripe: int, row: int) -> None:
    asm = assemble(arr)
    g = asm.geometry
    with open(asm.paths[g.parity_disk(stripe)], "r+b") as f:
        f.seek(g.member_offset(stripe, row) + 17)
        f.write(b"\xa5\x5a")


def test_check_repair_and_check_again_on_an_unmounted_array(tmp_path):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "4", "--disk-size", "6M", "--strip", "16K")
    first = vraid("check", arr)
    assert "0 mismatches (parity blocks) in 0 stripes" in _text(first)
    _corrupt_parity(arr, 40, 3)
    _corrupt_parity(arr, 41, 0)
    _corrupt_parity(arr, 41, 2)
    found = vraid("check", arr, "--json", check=False)
    assert found.returncode == 4
    doc = json.loads(found.stdout)
    assert (doc["mismatches"], doc["mismatched_stripes"], doc["stripes"], doc["unit"]) == (3, 2, [40, 41], "parity blocks")
    text = vraid("check", arr, check=False)
    assert "3 mismatches (parity blocks) in 2 stripes" in _text(text) and "--repair" in _text(text)
    fixed = vraid("check", arr, "--repair")
    assert "rewrote 3 parity blocks" in _text(fixed)
    assert json.loads(vraid("check", arr, "--json").stdout)["mismatches"] == 0


def test_check_errors_and_raid0(tmp_path):
    result = vraid("check", tmp_path / "nope", check=False)
    assert result.returncode == 1 and "does not exist" in _text(result)
    plain = tmp_path / "plain"
    plain.mkdir()
    result = vraid("check", plain, check=False)
    assert result.returncode == 1 and "is not a vraid array" in _text(result)
    r0 = tmp_path / "r0"
    vraid("create", r0, "--level", "0", "--disks", "2", "--disk-size", "4M")
    out = vraid("check", r0)
    assert "RAID-0 has no parity" in _text(out)
    assert json.loads(vraid("check", r0, "--json").stdout)["checked"] is False


def test_repair_of_a_dirty_array_is_refused_and_changes_nothing(tmp_path):
    arr = tmp_path / "arr"
    vraid("create", arr, "--disks", "3", "--disk-size", "4M")
    asm = assemble(arr)
    asm.mark(clean=False)
    _corrupt_parity(arr, 3, 1)
    before = tree_hash(arr)
    result = vraid("check", arr, "--repair", check=False)
    assert result.returncode == 1 and "not shut down cleanly" in _text(result) and "hint:" in _text(result)
    assert tree_hash(arr) == before
    result = vraid("check", arr, check=False)  # a plain check still reports
    assert result.returncode == 4 and "resync fixes these" in _text(result)
    assert tree_hash(arr) == before


def test_control_handlers_start_report_refuse_a_second_and_stop():
    """The daemon side of `vraid check` on a mount, without a mount."""
    from vraid.engine.raid.scrub import control_handlers

    stores = _filled()
    p = G.parity_disk(7)
    stores[p].write_sync(G.member_offset(7, 1), b"\xee" * 8)

    async def main():
        async with running(EngineConfig(G, stores)) as array:
            async with trio.open_nursery() as nursery:
                h = control_handlers(array.raid, nursery)
                assert (await h["check_status"]({}))["check"] is None
                started = (await h["check_start"]({"repair": False}))["check"]
                assert started["running"] and started["total"] == G.stripes
                with pytest.raises(VraidError, match="already running"):
                    await h["check_start"]({})
                while (await h["check_status"]({}))["check"]["running"]:
                    await trio.sleep(0.01)
                done = (await h["check_status"]({}))["check"]
                assert (done["mismatches"], done["stripes"], done["error"]) == (1, [7], "")
                await h["check_start"]({"repair": True})
                while (await h["check_status"]({}))["check"]["running"]:
                    await trio.sleep(0.01)
                assert (await h["check_status"]({}))["check"]["repaired"] == 1
                # a stop ends a running check early, and says so
                await h["check_start"]({})
                stopped = (await h["check_stop"]({}))["check"]
                while (await h["check_status"]({}))["check"]["running"]:
                    await trio.sleep(0.01)
                final = (await h["check_status"]({}))["check"]
                assert final["cancelled"] and final["done"] < final["total"], (stopped, final)

    trio.run(main)

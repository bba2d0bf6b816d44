"""Executing contiguity-transformed plans (seed 000 sec. III-C, Fig. 7(e)) on real member stores.

A CT-merged column must be ONE member request per run; ``t`` reads go to the temporary
buffer (released afterwards); inserted ``w`` over clean blocks or ``r``-read empty blocks
writes the right bytes; an ``r``+``w`` parity cell of a row without dirty data writes back
exactly what it read; ``r``-read empty blocks become clean cache blocks (stripe and PBG
caches); the ``plan`` event carries the transformed plan. Rows are 0-based (paper: 1-based).
"""

from __future__ import annotations

import numpy as np
import trio

from vraid.engine.events import PlanEvent
from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.members.request import Priority

HOST = Priority.HOST
from vraid.policies.ct import GENEROUS
from vraid.policies.ct.spec import load_ct
from vraid.core.rxw import Plan, column_requests, parse_z
from vraid.engine.raid.stripe import StripeBuffer, execute
from vraid.engine.build import EngineConfig

from support import memory_stores, running, write_cache

K = 1024
BS = 4 * K
G = Geometry(5, 5, 4, BS, 8 * BS, "left-symmetric", 4 * K)  # u = 8 rows
Z8 = parse_z("DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE,EEEE")  # eq. (2) and an untouched eighth row
STRIPE = 1


def _rand(seed: int, n: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _block(store: MemoryStore, stripe: int, row: int) -> bytes:
    return store.read_sync(G.member_offset(stripe, row), BS)


def _stats(array) -> list[tuple[int, int]]:
    return [(d.stats.reads, d.stats.writes) for d in array.members.disks]


def _per_disk(plan: Plan) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for r in plan.requests:
        out.setdefault(plan.columns[r.column], [0, 0])[0 if r.op == "read" else 1] += 1
    return out


def _check_request_counts(before, after, plan: Plan) -> None:
    want = _per_disk(plan)
    for disk, ((r0, w0), (r1, w1)) in enumerate(zip(before, after)):
        assert [r1 - r0, w1 - w0] == want.get(disk, [0, 0]), f"member {disk}: requests differ from the plan"


def _logical(k: int, row: int, stripe: int = STRIPE) -> int:
    return stripe * G.stripe_data_bytes + k * G.strip_size + row * BS


def _parity_ok(stores, stripe: int, rows) -> None:
    for row in rows:
        acc = np.zeros(BS, dtype=np.uint8)
        for s in stores:
            acc ^= np.frombuffer(_block(s, stripe, row), dtype=np.uint8)
        assert not acc.any(), f"parity of row {row} of stripe {stripe} is wrong"


def test_execute_transformed_eq2_plan_on_members() -> None:
    """stripe.execute on the CT'd eq. (2) plan: one request per run, t into temp, right bytes."""
    old = _rand(1, G.capacity)
    new = {(i, k): _rand(100 + 10 * i + k, BS) for i, row in enumerate(Z8) for k, s in enumerate(row) if s == "D"}
    ct = load_ct("msc", GENEROUS)
    stores = memory_stores(G)
    garbage = b"\xee" * BS
    tampered = _rand(7, BS)  # row 2 has no dirty block: its parity must come back exactly as read

    async def main() -> None:
        async with running(EngineConfig(G, stores)) as array:
            await array.write(0, old)  # write-through: data and parity right on the members
            pdisk = G.parity_disk(STRIPE)
            stores[pdisk].write_sync(G.member_offset(STRIPE, 2), tampered)
            buf = StripeBuffer(G, STRIPE)
            for i, row in enumerate(Z8):
                for k, s in enumerate(row):
                    off = _logical(k, i)
                    buf.data[k, i] = np.frombuffer(new[(i, k)] if s == "D" else old[off : off + BS] if s == "C" else garbage,
                                                   dtype=np.uint8)
            plan = ct(Plan.build(STRIPE, Z8, buf.columns))
            assert len(plan.requests) < len(column_requests(plan.basic))
            before = _stats(array)
            await execute(plan, buf, array.members, priority=HOST)
            _check_request_counts(before, _stats(array), plan)
            assert buf.temp is None, "t's temporary memory is released after the destage"
            # the cache buffer: D kept, C kept, E read with r holds the member's bytes, other E untouched
            for i, row in enumerate(Z8):
                for k, s in enumerate(row):
                    off = _logical(k, i)
                    got = buf.data[k, i].tobytes()
                    if s == "D":
                        assert got == new[(i, k)], f"t or r spoiled dirty block ({i}, {k})"
                    elif s == "C" or "r" in plan.transformed[i][k]:
                        assert got == old[off : off + BS], f"block ({i}, {k})"
                    else:
                        assert got == garbage, f"block ({i}, {k}) was read though its cell has no r"
            assert plan.transformed[2][4] == ("r", "w")

    trio.run(main)
    for i, row in enumerate(Z8):
        for k, s in enumerate(row):
            off = _logical(k, i)
            want = new[(i, k)] if s == "D" else old[off : off + BS]
            assert _block(stores[G.data_disk(STRIPE, k)], STRIPE, i) == want, f"member data of ({i}, {k})"
    assert _block(stores[G.parity_disk(STRIPE)], STRIPE, 2) == tampered
    _parity_ok(stores, STRIPE, [r for r in range(G.u) if r != 2])
    _parity_ok(stores, STRIPE - 1, range(G.u))


def test_write_through_with_ct_joins_the_parity_column() -> None:
    """A host write over the end of strip 0 and the start of strip 1: two RMW row groups whose
    parity reads (rows 0-1 and 6-7) CT joins into one read and one write of the parity member."""
    stores = memory_stores(G)
    old = _rand(2, G.capacity)
    data = _rand(3, 4 * BS)
    offset = _logical(0, 6)  # rows 6, 7 of strip 0, rows 0, 1 of strip 1
    plans: list[Plan] = []

    async def main() -> None:
        async with running(EngineConfig(G, stores)) as array:
            await array.write(0, old)
            array.ct = load_ct("msc", GENEROUS)
            array.events.subscribe(lambda e: plans.append(e.plan) if e.kind == "plan" else None)
            before = _stats(array)
            await array.write(offset, data)
            (plan,) = plans
            _check_request_counts(before, _stats(array), plan)
            pdisk = G.parity_disk(STRIPE)
            assert [a - b for a, b in zip(_stats(array)[pdisk], before[pdisk])] == [1, 1]
            assert plan.ct == "msc"
            assert all(("r" in plan.transformed[i][4]) and ("w" in plan.transformed[i][4]) for i in range(8))
            got = await array.read(0, G.capacity)
            want = bytearray(old)
            want[offset : offset + len(data)] = data
            assert got == bytes(want)

    trio.run(main)
    for s in range(G.stripes):
        _parity_ok(stores, s, range(G.u))


def _cached_array_test(org: str) -> None:
    """Build eq. (2)'s Z in a cache unit by host writes (D) and reads (C), destage, check."""
    stores = memory_stores(G)
    old = _rand(4, G.capacity)
    ct = load_ct("msc", GENEROUS)
    events: list[PlanEvent] = []
    written = bytearray(old)

    async def main() -> None:
        async with running(EngineConfig(G, stores, **write_cache(org, 8 * G.stripe_data_bytes), instances={"ct": ct})) as array:
            cache = array.cache
            cache.paused = True
            await array.raid.write(0, old)  # the initial contents, through the members directly
            for i, row in enumerate(Z8):
                for k, s in enumerate(row):
                    if s == "D":
                        d = _rand(1000 + 8 * i + k, BS)
                        await array.write(_logical(k, i), d)
                        written[_logical(k, i) : _logical(k, i) + BS] = d
            for i, row in enumerate(Z8):
                for k, s in enumerate(row):
                    if s == "C":
                        assert await array.read(_logical(k, i), BS) == old[_logical(k, i) : _logical(k, i) + BS]
            units = sorted(cache.units.values(), key=lambda u: u.span.key)
            z = tuple(r for u in units for r in u.z())
            if org == "stripe":
                assert z == Z8
            array.events.subscribe(lambda e: events.append(e) if e.kind == "plan" else None)
            before = _stats(array)
            while await cache.destage_one():
                pass
            after = _stats(array)
            # the published plans are the transformed ones, and they are what ran
            total = {d: [0, 0] for d in range(G.ndisks)}
            for ev in events:
                assert ev.cause.is_destage and ev.plan.ct == "msc"
                assert ev.plan.transformed == ct(Plan.build(ev.plan.stripe, ev.plan.z, ev.plan.columns)).transformed
                for disk, (r, w) in _per_disk(ev.plan).items():
                    total[disk][0] += r
                    total[disk][1] += w
            assert [[a[0] - b[0], a[1] - b[1]] for a, b in zip(after, before)] == [total[d] for d in range(G.ndisks)]
            # states: D and C are clean now, E blocks read with r became clean, other E stay empty
            for ev in events:
                unit = next(u for u in units if u.span.stripe == ev.plan.stripe and u.span.row0 == ev.row0)
                for i, row in enumerate(ev.plan.transformed):
                    for k in range(G.data_disks):
                        s = ev.plan.z[i][k]
                        want = "C" if s in "DC" or "r" in row[k] else "E"
                        assert unit.z()[i][k] == want, f"unit {unit.span.key} row {i} strip {k}"
                        if want == "C":
                            off = _logical(k, ev.row0 + i)
                            assert unit.data[k, i].tobytes() == bytes(written[off : off + BS])
            if org == "stripe":
                assert len(events) == 1
                assert len(events[0].plan.requests) < len(column_requests(events[0].plan.basic))
                assert [r for r in range(8) if any("r" in c for c in events[0].plan.transformed[r][:4])] == [1, 2, 5]
            else:  # one row per unit: nothing to join
                assert all(ev.plan.transformed == ev.plan.basic for ev in events)
            # clean blocks now serve reads from the cache: everything reads back right
            assert await array.read(0, G.capacity) == bytes(written)

    trio.run(main)
    for s in range(G.stripes):
        _parity_ok(stores, s, range(G.u))
    image = b"".join(
        _block(stores[G.data_disk(s, k)], s, r) for s in range(G.stripes) for k in range(G.data_disks) for r in range(G.u)
    )
    assert image == bytes(written)


def test_stripe_cache_destage_with_ct() -> None:
    _cached_array_test("stripe")


def test_pbg_cache_destage_with_ct() -> None:
    _cached_array_test("pbg")


def test_status_shows_the_ct_spec() -> None:
    async def main() -> None:
        async with running(EngineConfig(G, memory_stores(G), instances={"ct": load_ct("msc:sr_max=3,sw_max=5")})) as array:
            assert array.status()["ct"] == "msc:sr_max=3,sw_max=5"
        async with running(EngineConfig(G, memory_stores(G))) as array:
            assert array.status()["ct"] == "none"

    trio.run(main)


def test_status_table_names_the_transform() -> None:
    import io

    from rich.console import Console

    from vraid.tui.render import status_tables

    async def main() -> dict:
        async with running(EngineConfig(G, memory_stores(G), instances={"ct": load_ct("msc:sr_max=3,sw_max=5")})) as array:
            return array.status() | {"state": "active"}

    st = trio.run(main)
    out = io.StringIO()
    console = Console(file=out, width=200)
    for t in status_tables(st):
        console.print(t)
    assert "contiguity transform" in out.getvalue() and "msc:sr_max=3,sw_max=5" in out.getvalue()

"""A member request with no await (``Member._execute_now``, ``runs_now``): taken only where a
store says its ``read``/``write`` do nothing but the synchronous call, and leaving what the
awaited ``_execute`` leaves: bytes, results, counts, busy time, errors."""

from __future__ import annotations

import random

import trio

from vraid.backends.base import StoreWrapper
from vraid.backends.file import FileStore
from vraid.backends.memory import MemoryStore, NullStore
from vraid.engine.clock import TrioClock
from vraid.engine.members.member import runs_now
from vraid.engine.members.queues import Members
from vraid.engine.members.request import Priority, Request

SIZE = 1 << 20
BS = 4096


class Flaky(MemoryStore):
    """Fails the synchronous calls at one offset (its ``read``/``write`` call them, so it
    keeps ``sync_reads``/``sync_writes``)."""

    bad = 3 * BS

    def read_sync(self, offset, length):
        if offset == self.bad:
            raise OSError(5, "injected")
        return super().read_sync(offset, length)

    def write_now(self, offset, data):
        if offset == self.bad:
            raise OSError(5, "injected")
        super().write_now(offset, data)


class Timed(MemoryStore):
    """Overrides ``read`` and ``write`` (as a fault injector or a slow store would)."""

    async def read(self, offset, length):
        await trio.sleep(0)
        return await super().read(offset, length)

    async def write(self, offset, data):
        await trio.sleep(0)
        await super().write(offset, data)


def test_only_stores_whose_calls_are_synchronous_run_without_an_await(tmp_path):
    read = Request(0, "read", 0, BS)
    write = Request(0, "write", 0, BS, memoryview(bytes(BS)))
    durable = Request(0, "write", 0, BS, memoryview(bytes(BS)), durable=True)
    f = FileStore.create(tmp_path / "m", SIZE)
    try:
        for store in (MemoryStore(SIZE), NullStore(SIZE), Flaky(SIZE), f):
            assert runs_now(store, read) and runs_now(store, write) and not runs_now(store, durable)
    finally:
        f.close()
    assert not runs_now(Timed(SIZE), read) and not runs_now(Timed(SIZE), write)
    assert not runs_now(StoreWrapper(MemoryStore(SIZE)), read)


def test_the_same_bytes_counts_and_errors_as_the_awaited_path():
    rng = random.Random(4)
    batches = []
    for _ in range(200):
        batch = []
        for disk in rng.sample(range(3), rng.randint(1, 3)):
            at = rng.randrange(8) * BS
            if rng.random() < 0.5:
                batch.append((disk, "read", at, None))
            else:
                batch.append((disk, "write", at, rng.randbytes(BS)))
        batches.append(batch)

    def run(stores):
        async def main():
            members = Members(stores, TrioClock())
            out = []
            async with trio.open_nursery() as nursery:
                await nursery.start(members.serve)
                for batch in batches:
                    reqs = [Request(d, op, at, BS, None if data is None else memoryview(data), Priority.HOST)
                            for d, op, at, data in batch]
                    try:
                        await members.run(reqs)
                        failed = None
                    except Exception as exc:  # noqa: BLE001 - compared below
                        failed = (type(exc).__name__, getattr(exc, "disks", None))
                    out.append(([r.result for r in reqs], [None if r.error is None else str(r.error) for r in reqs], failed))
                nursery.cancel_scope.cancel()
            stats = [{k: v for k, v in d.stats.to_dict().items() if k != "busy_seconds"} for d in members.disks]
            return out, stats, [s.read_sync(0, 8 * BS) for s in stores]

        return trio.run(main)

    assert runs_now(Flaky(SIZE), Request(0, "read", 0, BS)) and not runs_now(_Awaited(SIZE), Request(0, "read", 0, BS))
    now = run([Flaky(SIZE) for _ in range(3)])
    awaited = run([_Awaited(SIZE) for _ in range(3)])
    assert now == awaited
    assert any(f is not None for _, _, f in now[0])  # some batches met the injected error
    assert all(s["errors"] > 0 for s in now[1])


class _Awaited(Flaky):
    """Flaky, but awaited: it overrides ``read`` and ``write`` (same bytes, same errors)."""

    async def read(self, offset, length):
        return self.read_sync(offset, length)

    async def write(self, offset, data):
        self.write_now(offset, data)

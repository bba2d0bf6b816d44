"""Engines for the tests, built as every caller builds them (``vraid.engine.build``)."""

from __future__ import annotations

import random
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import trio
import trio.testing

from vraid.engine.build import EngineConfig, open_engine


@asynccontextmanager
async def running(config: EngineConfig) -> AsyncIterator[Any]:
    """``config``'s engine built and run (``open_engine``: workers, then recovery); the
    block gets its array. Leaving cancels the workers (no shutdown) and closes the engine."""
    async with open_engine(config) as engine:
        yield engine.array


def write_cache(organisation: str, size: int, *, order: str | None = None, destage: str | None = None,
                **policies: str) -> dict[str, Any]:
    """The ``EngineConfig`` fields of a write-back cache: ``EngineConfig(g, stores,
    **write_cache("stripe", 1 << 20, destage="hlwm:high=0.5,low=0.1"))``. An order or
    destage scheduler not given is the family's default (lrw, hlwm); ``policies``: more
    families' specs."""
    chosen = {"cache": organisation, "destage_order": order, "destage": destage, **policies}
    return {"policies": {k: v for k, v in chosen.items() if v is not None}, "cache_size": size}


def run_virtual(fn, *args):
    """``trio.run`` in virtual time (a MockClock that jumps whenever every task waits)."""
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


async def random_writes(array: Any, capacity: int, seed: int, count: int = 300) -> bytearray:
    """``count`` random writes of 512 B, 4 KiB or 12 KiB at 512-byte offsets (seeded), some
    1 in 5 followed by a short sleep so destages run and later writes land on them mid-way.
    Returns the model: the image as the writes left it."""
    rng = random.Random(seed)
    model = bytearray(capacity)
    for _ in range(count):
        off = rng.randrange(capacity // 512) * 512
        n = min(rng.choice((512, 4096, 12288)), capacity - off)
        data = rng.randbytes(n)
        model[off : off + n] = data
        await array.write(off, data)
        if rng.random() < 0.2:
            await trio.sleep(0.002)
    return model

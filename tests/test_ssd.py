"""The ssd timing model (backends/ssd.py), in virtual time."""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.backends.memory import MemoryStore
from vraid.backends.models import parse_model, wrap
from vraid.backends.ssd import SsdModel, SsdParams
from vraid.engine.clock import TrioClock

PAGE = 4096


def run(fn, *args):
    return trio.run(fn, *args, clock=trio.testing.MockClock(autojump_threshold=0))


def model(spec: str = "ssd", size: int = 16 << 20) -> SsdModel:
    m = wrap(MemoryStore(size), spec, TrioClock())
    assert isinstance(m, SsdModel)
    return m


async def timed(coro_fn, *args) -> float:
    t0 = trio.current_time()
    await coro_fn(*args)
    return trio.current_time() - t0


def test_one_page_read_and_program():
    async def main():
        m = model()
        p = m.params
        bus = PAGE / (p.bus_rate * 1e6)
        assert await timed(m.write, 0, bytes(PAGE)) == pytest.approx(p.overhead + bus + p.program)
        assert await timed(m.read, 0, PAGE) == pytest.approx(p.overhead + bus + p.read)
        assert m.stats.pages_read == 1 and m.stats.pages_programmed == 1

    run(main)


@pytest.mark.parametrize("pages, rounds", [(1, 1), (8, 1), (9, 2), (16, 2), (64, 8)])
def test_pages_spread_over_channels(pages, rounds):
    async def main():
        m = model("ssd:channels=8")
        p = m.params
        t = await timed(m.read, 0, pages * PAGE)
        assert t == pytest.approx(p.overhead + pages * PAGE / (p.bus_rate * 1e6) + rounds * p.read)

    run(main)


def test_unaligned_request_touches_both_pages():
    m = model()
    assert m.service_time(PAGE - 512, 1024, False)[1] == 2
    assert m.service_time(PAGE, PAGE, False)[1] == 1


def test_stride_costs_nothing_extra():
    """No rotation: stride-2 writes over a span are not slower than the contiguous
    single-block writes of that span (the contrast to seed 000 Fig. 1)."""

    async def writes(stride):
        m = model()
        t0 = trio.current_time()
        for b in range(0, 256, stride):
            await m.write((1000 + b) * PAGE, bytes(PAGE))
        return trio.current_time() - t0

    assert run(writes, 2) == pytest.approx(run(writes, 1) / 2)


def test_flush_costs_one_overhead():
    async def main():
        m = model("ssd:overhead=20us")
        assert await timed(m.flush) == pytest.approx(20e-6)
        assert m.stats.flushes == 1

    run(main)


def test_spec_overrides():
    p = parse_model("ssd:read_us=80,program=1ms,channels=2,page=16K,bus=3000").params
    assert isinstance(p, SsdParams)
    assert (p.read, p.program, p.channels, p.page_size, p.bus_rate) == pytest.approx((80e-6, 1e-3, 2, 16384, 3000))


@settings(max_examples=30, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, (1 << 20) - 1), st.binary(min_size=1, max_size=9000)),
                    min_size=1, max_size=20))
def test_data_reads_back_identically(ops):
    async def main():
        m = model(size=1 << 20)
        shadow = bytearray(1 << 20)
        for off, data in ops:
            data = data[: (1 << 20) - off]
            await m.write(off, data)
            shadow[off : off + len(data)] = data
        assert await m.read(0, 1 << 20) == bytes(shadow)

    run(main)


def test_deterministic():
    async def main():
        m = model()
        rng = random.Random(4)
        out = []
        for _ in range(200):
            await m.read(rng.randrange(4096) * PAGE, rng.choice((1, 3, 32)) * 512)
            out.append(trio.current_time())
        return out

    assert run(main) == run(main)

"""MSP (seed 001 sec. 4, Fig. 7): the pseudocode step by step, the paper's Fig. 6 vector,
whole-stripe prefetch, the registry entry, and MSP in an array."""

from __future__ import annotations

import pytest

from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.policies import registry
from vraid.policies.prefetch import HostRead, load_prefetch
from vraid.policies.prefetch.msp import MspPrefetch
from vraid.engine.build import EngineConfig

from support import SlowStore, running

BS = 4096


def fig1() -> Geometry:
    """The array of Fig. 1: RAID-5 of five disks, strips of four blocks (B16..B19 is strip 4)."""
    return Geometry(level=5, ndisks=5, stripes=16, block_size=BS, strip_size=4 * BS, data_offset=0)


#: Fig. 6: the semisequential read of a 12-block file (data B16..B27, metadata B0..B3)
FIG6_BLOCKS = (0, 16, 17, 18, 1, 19, 20, 21, 2, 22, 23, 24, 3, 25, 26, 27)
#: sec. 4: "the sequence of the accessed strip number SN_c becomes ..."
PAPER_SN = (0, 4, 0, 4, 5, 0, 5, 6, 0, 6)
#: sec. 4: "the transitional sequence of SC becomes ..." (one value per SN_c above)
PAPER_SC = (1, 0, 1, 2, 3, 2, 3, 4, 3, 4)


def _read(block: int, count: int = 1) -> HostRead:
    return HostRead(block, count, count, 0, 0.0)


def test_fig6_strip_numbers_and_sc_of_the_pseudocode():
    """The strip sequence is the paper's; the SC values of Fig. 7 as printed are not.

    Strip changes: the paper lists ten strip numbers, starting with the metadata strip 0.
    Fig. 7 starts with SN_p = 0, so line 17 ("SN_c = SN_p: return") swallows the first
    access to strip 0: the pseudocode sees only the last nine. On those it gives
    (1, 2, 3, 4, 3, 4, 5, 4, 5), the paper's values plus one. The paper's printed sequence is
    what Fig. 7 gives with two changes (checked below): no previous strip at the start
    (SN_p = -1, so the first access to strip 0 counts as sequential, SC = 1), and a decrement
    floored at 0 instead of line 23's max(1, SC - 1) (so SC drops to 0 at the first strip 4).
    vraid follows the pseudocode: both sequences rise by one per data strip, which is all MSP
    needs (SC_thresh 38 is reached one strip change earlier than with the printed values).
    """
    msp = MspPrefetch(fig1())
    sn, sc = [], []
    for b in FIG6_BLOCKS:
        msp.after_read(_read(b))
        sn += [s.strip for s in msp.steps]
        sc += [s.sc for s in msp.steps]
    assert [b // 4 for b in FIG6_BLOCKS] == [0, 4, 4, 4, 0, 4, 5, 5, 0, 5, 5, 6, 0, 6, 6, 6]
    assert tuple(sn) == PAPER_SN[1:]  # the first 0 is line 17's no-op
    assert sc == [1, 2, 3, 4, 3, 4, 5, 4, 5]
    assert sc == [v + 1 for v in PAPER_SC[1:]]
    assert msp.sps == 0 and not any(s.active for s in msp.steps)  # far below SC_thresh 38


def _paper_variant(strips):
    """Fig. 7 lines 16-25 with SN_p = SN_pp = -1 at the start and a decrement floored at 0:
    the reading of the pseudocode that reproduces the SC sequence printed in sec. 4."""
    sn_p = sn_pp = -1
    sc, out = 0, []
    for s in strips:
        if s == sn_p:
            continue
        if sn_p + 1 == s or sn_pp == s:
            sc += 1
        else:
            sc = max(0, sc - 1)
        sn_pp, sn_p = sn_p, s
        out.append(sc)
    return out


def test_paper_sc_sequence_comes_from_a_different_start_and_floor():
    assert tuple(_paper_variant(b // 4 for b in FIG6_BLOCKS)) == PAPER_SC


def _sequential(msp: MspPrefetch, strips: int, start_strip: int = 0) -> list[list[tuple[int, int]]]:
    """Read strips one host read each (one block per strip); the advice after each."""
    u = msp.geometry.u
    return [list(msp.after_read(_read((start_strip + i) * u, u))) for i in range(strips)]


def test_whole_stripes_once_sc_reaches_the_threshold():
    g = fig1()  # 4 data disks x 4 blocks: a stripe is 16 blocks
    msp = MspPrefetch(g, sc_max=6, sc_thresh=4, sps_max=3)
    advice = _sequential(msp, 12)
    # strip 0 is line 17's no-op; strips 1..3 take SC to 3; strip 4 reaches SC 4 = SC_thresh
    assert advice[:4] == [[], [], [], []]
    assert [s.sc for s in msp.steps] == [6]  # capped at sc_max
    # at strip 4, SPS is still 0 (line 34 grows it after the loop): no stripe yet
    assert advice[4] == []
    # then SPS 1, 2, 3, 3, ...: stripes from the one holding the current strip
    assert advice[5] == [(16, 16)]  # strip 5 is in stripe 1
    assert advice[6] == [(16, 16), (32, 16)]
    assert advice[7] == [(16, 16), (32, 16), (48, 16)]
    assert advice[8] == [(32, 16), (48, 16), (64, 16)]  # strip 8: stripe 2, SPS_max 3
    for ranges in advice:
        for first, count in ranges:
            assert first % 16 == 0 and count == 16  # stripe aligned, whole stripes


def test_random_strips_keep_msp_off_and_sps_decays():
    g = fig1()
    msp = MspPrefetch(g, sc_max=6, sc_thresh=4, sps_max=3)
    _sequential(msp, 10)
    assert msp.sps == 3 and msp.sc == 6
    for s in (40, 3, 50, 7, 20, 60, 11, 33, 2):  # no strip follows or repeats the one before last
        assert msp.after_read(_read(s * 4)) == []
    assert msp.sc == 1 and msp.sps == 0  # line 23 floors SC at 1; line 27 (as max) floors SPS at 0


def test_semisequential_read_triggers_msp():
    """Fig. 6's pattern, long enough: metadata strip 0 between data strips still counts."""
    g = Geometry(level=0, ndisks=5, stripes=64, block_size=BS, strip_size=4 * BS, data_offset=0)
    msp = MspPrefetch(g)  # the paper's 42/38/8
    fired = []
    data = 20  # data from block 20*4
    for k in range(360):
        if k % 3 == 0:
            msp.after_read(_read(k // 3 % 4))  # a metadata block of strip 0
        fired += msp.after_read(_read(data * 4 + k))
    assert msp.sc >= 38 and fired
    assert all(first % 20 == 0 and count == 20 for first, count in fired)


def test_a_read_over_several_strips_is_one_step_per_strip():
    msp = MspPrefetch(fig1(), sc_max=10, sc_thresh=10, sps_max=2)
    msp.after_read(_read(4, 12))  # strips 1, 2, 3 in one host read
    assert [s.strip for s in msp.steps] == [1, 2, 3] and msp.sc == 3


def test_prefetch_stops_at_the_end_of_the_array():
    g = fig1()
    msp = MspPrefetch(g, sc_max=2, sc_thresh=1, sps_max=8)
    last_stripe = g.stripes - 1
    _sequential(msp, 10, start_strip=last_stripe * 4 - 9)
    for first, count in msp.after_read(_read(last_stripe * 16 + 4)):
        assert first + count <= g.stripes * 16


def test_registry_and_parameters():
    g = fig1()
    p = registry.create("prefetch", "msp", registry.Context(geometry=g))
    assert isinstance(p, MspPrefetch) and (p.sc_max, p.sc_thresh, p.sps_max) == (42, 38, 8)
    p = load_prefetch("msp:sc_max=10,sc_thresh=3,sps_max=2", g)
    assert (p.sc_max, p.sc_thresh, p.sps_max) == (10, 3, 2)
    assert registry.spec_of(p) == "msp:sc_max=10,sc_thresh=3,sps_max=2"
    with pytest.raises(VraidError, match="sc_thresh=50 is above sc_max=42"):
        load_prefetch("msp:sc_thresh=50", g)
    with pytest.raises(VraidError, match="sps_max"):
        load_prefetch("msp:sps_max=0", g)
    with pytest.raises(VraidError, match="bogus"):
        load_prefetch("msp:bogus=1", g)
    assert "msp" in registry.family("prefetch").names()
    assert p.state() == {"sc": 0, "sps": 0, "sn_p": 0, "sn_pp": 0, "active": False, "strip_changes": 0,
                         "sequential_changes": 0, "active_changes": 0}
    for strip in (1, 2, 3, 2, 9):  # SC 1 2 3 (sequential), 4 (SN_pp: semisequential), 3
        p.step(strip * g.u)
    st = p.state()
    assert (st["strip_changes"], st["sequential_changes"], st["active_changes"]) == (5, 3, 3)  # SC >= 3 thrice


def test_msp_in_an_array_reads_whole_stripes_ahead_of_one_stream():
    import numpy as np
    import trio
    import trio.testing

    from vraid.backends.memory import MemoryStore
    from vraid.engine.events import PrefetchEvent


    g = Geometry(level=0, ndisks=4, stripes=16, block_size=BS, strip_size=4 * BS, data_offset=65536)
    stores = [SlowStore(MemoryStore(g.member_size), 0.01) for _ in range(g.ndisks)]
    model = np.random.default_rng(7).integers(0, 256, g.capacity, dtype=np.uint8).tobytes()
    strip = g.strip_size

    async def main():
        msp = MspPrefetch(g, sc_max=4, sc_thresh=3, sps_max=2)
        async with running(EngineConfig(g, stores, read_cache_size=64 * strip, instances={"prefetch": msp})) as array:
            events = []
            array.events.subscribe(lambda e: events.append(e) if isinstance(e, PrefetchEvent) else None)
            await array.write(0, model)
            for k in range(6 * g.data_disks):  # one stream, a strip at a time
                assert await array.read(k * strip, strip) == model[k * strip : (k + 1) * strip]
            await trio.sleep(1)
            rc = array.reads.read_cache
            st = array.status()["reads"]
            assert rc.metrics.prefetch_hits > 0 and st["prefetch_hits"] == rc.metrics.prefetch_hits
            assert st["policy_state"]["sc"] == 4 and st["policy_state"]["active"]
            assert [e.state["sc"] for e in events][:5] == [0, 1, 2, 3, 4]  # strip 0 is line 17's no-op
            # whole stripes: every block of every stripe after the fourth is held or was read
            for b in rc._blocks:
                assert rc._blocks[b] == model[b * BS : (b + 1) * BS]
            # the prefetches went to every member in the PREFETCH class
            assert st["prefetch_member_requests"] > 0

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_vraid_status_shows_the_read_cache_and_prefetch_table():
    import io

    import trio
    from rich.console import Console

    from vraid.backends.memory import MemoryStore
    from vraid.tui.render import status_tables

    g = Geometry(level=0, ndisks=4, stripes=8, block_size=BS, strip_size=4 * BS, data_offset=65536)

    async def main() -> dict:
        stores = [MemoryStore(g.member_size) for _ in range(g.ndisks)]
        async with running(EngineConfig(g, stores, read_cache_size=16 * g.strip_size, instances={"prefetch": MspPrefetch(g, sc_max=3, sc_thresh=2, sps_max=2)})) as array:
            for k in range(8):
                await array.read(k * g.strip_size, g.strip_size)
            await trio.sleep(0)
            return array.status() | {"state": "active"}

    st = trio.run(main)
    assert st["reads"]["policy_state"]["active"] and st["reads"]["prefetch_hits"] > 0
    out = io.StringIO()
    for t in status_tables(st):
        Console(file=out, width=200).print(t)
    text = out.getvalue()
    assert "read cache and prefetch (paper 001)" in text and "prefetch-hit" in text and "idle-waiting" in text


def test_msp_sees_reads_in_arrival_order_not_completion_order():
    """Seed 001's RAID driver runs MSP as each request arrives. Two strip reads in flight on
    two members (SASEQP keeps two) may complete in swapped order; the read path consults the
    policy on arrival, so MSP sees strips 1, 2, 3, ... and SC rises by one per strip. Fed the
    completion order (2, 1, 4, 3, ...) the same detector stays at SC = 1."""
    import trio
    import trio.testing

    from vraid.backends.memory import MemoryStore


    g = Geometry(level=0, ndisks=4, stripes=16, block_size=BS, strip_size=4 * BS, data_offset=65536)
    # strips 1, 3, 5 live on members 1 and 3: slow; strips 2, 4, 6 on members 2 and 0: fast
    stores = [SlowStore(MemoryStore(g.member_size), 0.02 if d % 2 else 0.005) for d in range(g.ndisks)]
    strip = g.strip_size
    arrived: list[int] = []
    completed: list[int] = []

    class Recording(MspPrefetch):
        def after_read(self, read):
            arrived.append(read.first // self.geometry.u)
            return super().after_read(read)

    async def main():
        msp = Recording(g)
        async with running(EngineConfig(g, stores, read_cache_size=64 * strip, instances={"prefetch": msp})) as array:

            async def read(k: int) -> None:
                await array.read(k * strip, strip)
                completed.append(k)

            for k in (1, 3, 5):  # two overlapping reads at a time, the earlier one slower
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(read, k)
                    await trio.sleep(0.001)
                    nursery.start_soon(read, k + 1)
            assert completed == [2, 1, 4, 3, 6, 5]
            assert arrived == [1, 2, 3, 4, 5, 6]
            assert msp.sc == 6 and msp.sn_p == 6 and msp.sn_pp == 5

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    late = MspPrefetch(g)  # what advice on completion would have shown MSP
    for k in completed:
        late.after_read(_read(k * g.u, g.u))
    assert late.sc == 1

"""The placement family (seed 004): LW/PW formation, LRW vs FIFO, DPSR's fallback, the cleaner (Fig. 2)."""

from __future__ import annotations

import pytest

from vraid.core.directory import DIRTY, FREE, LIVE, LW, PW, Dirty, Release, StripeDirectory, StripeWrite, Swap
from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.policies import registry
from vraid.policies.placement import InPlace
from vraid.policies.placement.cleaner import choose_victim, generate
from vraid.policies.placement.dpsr import DpsrPlacement
from vraid.policies.placement.multibuffer import MultibufferPlacement


def _g(ndisks=4, stripes=8):
    return Geometry(5, ndisks, stripes, 4096, 4096)


def _apply(d, steps):
    for s in steps:
        if not isinstance(s, InPlace):
            d.apply(s)
    d.check()


def _strip_on(d, member, skip=()):
    """Logical strips whose home is ``member``, lowest first."""
    return [L for L in range(d.strips) if d.home(L) == member and L not in skip]


def test_registry_builds_the_three_and_checks_order():
    assert type(registry.create("placement", None)).__name__ == "StaticPlacement"
    p = registry.create("placement", "multibuffer:buffer=8,order=fifo")
    assert (p.buffer, p.order) == (8, "fifo") and registry.spec_of(p).startswith("multibuffer:buffer=8,order=fifo")
    assert registry.spec_of(registry.create("placement", "dpsr")) == "dpsr:buffer=100,spare=0.05"
    with pytest.raises(VraidError, match="order='lru'"):
        registry.create("placement", "multibuffer:order=lru")


def test_the_engine_refuses_a_placement_with_a_write_cache_or_raid0():
    from vraid.engine.build import EngineConfig

    EngineConfig(_g(), policies={"placement": "static"}).check()
    EngineConfig(_g(), policies={"placement": "multibuffer"}).check()
    with pytest.raises(VraidError, match="runs without a write-back cache"):
        EngineConfig(_g(), policies={"placement": "multibuffer", "cache": "stripe"}).check()
    with pytest.raises(VraidError, match="needs RAID-5"):
        EngineConfig(Geometry(0, 4, 8, 4096, 4096, data_offset=0), policies={"placement": "dpsr"}).check()


def test_a_write_miss_on_a_full_pool_forms_a_large_write_one_strip_per_buffer():
    g = _g(4, 6)
    p = MultibufferPlacement(buffer=4, hot=0.5)
    d = p.make_directory(g, 4)  # stripes 4 and 5 free
    p.attach(d)
    order = [_strip_on(d, m)[0] for m in range(4)]  # one strip per member
    for L in order:
        steps = p.write(L)
        assert steps == [Dirty(L)]
        _apply(d, steps)
    assert p.buffered() == {0: 1, 1: 1, 2: 1, 3: 1}
    extra = _strip_on(d, 0, skip=order)[0]
    steps = p.write(extra)
    w = steps[0]
    assert isinstance(w, StripeWrite) and w.kind == LW and w.size == 3 and steps[-1] == Dirty(extra)
    # all four buffers hold a strip: the parity goes to the round-robin member, the other three are written
    assert w.parity == d.next_parity and {m for m, _ in w.slots} == set(range(4)) - {w.parity}
    assert all(d.home(L) == m for m, L in w.slots)  # no strip leaves its home member
    assert w.stripe in (4, 5)
    _apply(d, steps)
    assert d.free_count[w.stripe] == 0 and d.parity[w.stripe] == w.parity
    assert p.stats["LW"] == 1 and p.stats["sizes"] == {3: 1}


def test_buffers_on_too_few_members_make_a_partial_write_into_a_pfs():
    g = _g(4, 6)
    p = MultibufferPlacement(buffer=2)
    d = p.make_directory(g, 4)
    p.attach(d)
    a, b, c = _strip_on(d, 1)[:3]
    _apply(d, p.write(a))
    _apply(d, p.write(b))
    steps = p.write(c)  # only member 1 has strips: no LW; a PW of one strip
    pw = [s for s in steps if isinstance(s, StripeWrite)]
    assert len(pw) == 1 and pw[0].kind == PW and pw[0].slots == ((1, a),)
    assert pw[0].parity == d.parity[pw[0].stripe]
    _apply(d, steps)
    assert d.loc[a][0] == pw[0].stripe and p.buffered()[1] == 2


def test_lrw_keeps_a_rewritten_strip_fifo_does_not():
    g = _g(4, 6)
    out = {}
    for order in ("lrw", "fifo"):
        p = MultibufferPlacement(buffer=2, order=order)
        d = p.make_directory(g, 4)
        p.attach(d)
        x, y, z = _strip_on(d, 2)[:3]
        for L in (x, y, x, z):  # x is rewritten (a hit), then z misses on a full pool
            _apply(d, p.write(L))
        out[order] = set(p.queues[2])
        assert p.stats["write_hits"] == 1
    assert out["lrw"] == {x, z}  # y was the least recently written
    assert out["fifo"] == {y, z}  # x entered first
    assert p.read([x, y, z]) == {y, z}  # the buffer is a read cache (FIFO's here: x was cast out)
    assert list(p.queues[2]) == [y, z]  # a read changes no order


def test_dpsr_new_stripes_migrate_blocks_and_fall_back_to_raid5_without_dirty_blocks():
    g = _g(4, 9)
    p = DpsrPlacement(buffer=3, spare=0.125)
    d = p.make_directory(g, 8)  # one spare stripe (8)
    p.attach(d)
    s0 = _strip_on(d, 0)  # the six strips homed on member 0
    for L in s0[:3]:
        assert p.write(L) == []
    steps = p.write(s0[3])
    (w,) = steps
    assert w.kind == LW and w.stripe == 8 and sorted(L for _, L in w.slots) == s0[:3]
    assert {m for m, _ in w.slots} == {1, 2, 3} - {w.parity} | ({0} - {w.parity})
    _apply(d, steps)
    assert {d.home(L) for L in s0[:3]} != {0}  # they left member 0: blocks migrate in DPSR
    # the next stripe: no free stripe; the collector needs a dirty block on every member the victim
    # has live data on, but only member 0 has dirty blocks: external fragmentation, a RAID-5 write
    for L in s0[4:6]:
        assert p.write(L) == []
    steps = p.write(s0[0])
    assert steps == [InPlace((s0[3],))] and p.stats["fallbacks"] == 1


def test_the_cleaner_picks_the_fewest_active_and_same_member_partners_hot_first():
    g = _g(4, 8)
    d = StripeDirectory.fresh(g, 8, hot=4)  # stripes 4..7 hot
    # dirty a strip on each of two members of stripe 6 and one of stripe 2 (cold)
    def member_strip(s, m):
        return d.owner[s][m]
    live6 = d.live_members(6)
    for m in live6[:2]:
        d.apply(Dirty(member_strip(6, m)))
    d.apply(Dirty(member_strip(2, live6[2])))
    d.apply(Dirty(member_strip(5, live6[2])))
    assert choose_victim(d) == 6  # one live slot left, fewer than 5 and 2 (two each)
    plan = generate(d)
    (swap, release) = plan.steps
    assert swap == Swap(6, live6[2], 5)  # the hot partner (5) before the cold one (2)
    assert release == Release(6) and plan.whole and plan.victim == 6
    _apply(d, plan.steps)
    assert d.is_free(6)


def test_fig2_no_dirty_block_on_one_disk_gives_a_partial_free_stripe():
    """Seed 004 Fig. 2: the victim has an active block on a disk with no dirty block anywhere
    (disk 4 in the figure); the generator swaps what it can and yields a PFS, where DPSR fails."""
    g = _g(5, 6)
    d = StripeDirectory.fresh(g, 6)
    v, partner = 0, 1
    data = d.live_members(v)  # four data members of the victim
    lone = data[-1]  # the paper's "disk 4": no dirty block on it anywhere
    for m in data[:2]:
        d.apply(Dirty(d.owner[v][m]))  # the victim: two dirty, two active
    m_swap = data[2]
    d.apply(Dirty(d.owner[partner][m_swap]))  # the partner: a dirty block aligned with an active one
    for s in range(2, 6):  # other stripes have dirty blocks too, never on the lone member
        d.apply(Dirty(d.owner[s][next(m for m in d.live_members(s) if m != lone)]))
    assert not d.dirty_on[lone]
    plan = generate(d, victim=v)
    assert plan.steps[0] == Swap(v, m_swap, partner) and isinstance(plan.steps[-1], Release)
    assert not plan.whole and lone not in plan.free and set(data[:3]) <= set(plan.free)
    _apply(d, plan.steps)
    assert d.state[v][lone] == LIVE and [d.state[v][m] for m in data[:3]] == [FREE] * 3
    assert d.state[partner][m_swap] == LIVE and not d.is_free(v)
    # DPSR's collector wants a whole free stripe: the same plan is no use to it
    assert DIRTY not in d.state[v]


def test_create_says_which_writes_multibuffering_buffers(tmp_path):
    from mountutil import vraid

    small = " ".join(vraid("create", tmp_path / "a", "--disks", "4", "--disk-size", "8M", "--strip", "4K",
                           "--placement", "multibuffer").stdout.split())
    assert "only whole-strip writes are buffered" in small and "mkfs.ext4 -b 4096" in small
    large = " ".join(vraid("create", tmp_path / "b", "--disks", "4", "--disk-size", "8M", "--placement", "dpsr").stdout.split())
    assert "create with --strip 4K" in large

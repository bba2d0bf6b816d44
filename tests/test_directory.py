"""The stripe directory (seed 004 section 2.1) against a plain dict model, and its durable form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from vraid.core.directory import (DIRTY, LW, NOWHERE, PW, Dirty, DirectoryError, Forget, Release, StripeDirectory,
                                  StripeWrite, Swap)
from vraid.core.directory_format import (DirectoryFormatError, decode_checkpoint, decode_journal,
                                         encode_checkpoint, encode_step, records_after, recover)
from vraid.core.geometry import Geometry
from vraid.core.mapping import StaticMapping
from vraid.policies.placement import InPlace
from vraid.policies.placement.dpsr import DpsrPlacement
from vraid.policies.placement.multibuffer import MultibufferPlacement


def _geometry(ndisks=4, stripes=8, u=1):
    return Geometry(5, ndisks, stripes, 4096, 4096 * u)


# -- the mapping contract ----------------------------------------------------------------------
@pytest.mark.parametrize("u", [1, 4])
def test_a_fresh_directory_answers_as_the_static_layout(u):
    g = _geometry(5, 12, u)
    d, sm = StripeDirectory.fresh(g, 12), StaticMapping(g)
    assert d.capacity == sm.capacity and d.stripes == sm.stripes
    for b in range(g.blocks):
        assert d.locate(b) == sm.locate(b)
        a = d.locate(b)
        assert d.block_of(a.stripe, a.strip, a.row) == b
    for s in range(g.stripes):
        assert d.columns(s) == sm.columns(s) and d.parity_disks(s) == sm.parity_disks(s)
    for off, n in [(0, g.capacity), (100, 70000), (4096 * u * 3 + 5, 4096 * u * 7)]:
        assert list(d.extents(off, n)) == list(sm.extents(off, n))


def test_moved_strips_cut_extents_and_block_of_names_only_current_copies():
    g = _geometry(4, 6)
    d = StripeDirectory.fresh(g, 4)  # stripes 4, 5 free
    L = 1  # stripe 0, some member
    m = d.home(L)
    others = [(mm, x) for x in range(d.strips) for mm in [d.home(x)] if x != L and mm != m][:0]
    assert not others
    # a partial write of strip 1 alone into free stripe 4 (its parity kept where it is)
    w = StripeWrite(PW, 4, d.parity[4], ((m, L),))
    d.apply(w)
    d.check()
    assert d.locate(L).stripe == 4 and d.locate(L).disk == m
    k0 = d.locate(0).strip
    with pytest.raises(LookupError):
        d.block_of(0, [k for k in range(3) if d.data_disk(0, k) == m][0], 0)
    pieces = list(d.extents(0, 3 * 4096))
    assert [p.stripe for p in pieces] == [0, 4, 0] and sum(p.length for p in pieces) == 3 * 4096
    assert pieces[0].start == k0 * 4096


def test_steps_that_do_not_fit_are_refused_and_change_nothing():
    g = _geometry(4, 6)
    d = StripeDirectory.fresh(g, 4)
    before = d.snapshot()
    bad = [StripeWrite(LW, 0, 0, ((1, 0),)),                     # stripe 0 is not free
           StripeWrite(LW, 4, 1, ((1, 0),)),                     # slot is the parity member
           StripeWrite(PW, 4, d.parity[4], ((d.home(0) ^ 1 if d.home(0) ^ 1 != d.parity[4] else d.home(0) ^ 2, 0),)),
           Swap(0, d.home(0), 1),                                 # the partner slot is not dirty
           Forget(0, d.home(0))]                                  # nor is this one
    for step in bad:
        with pytest.raises(DirectoryError):
            d.apply(step)
        assert d.snapshot() == before


# -- the model ---------------------------------------------------------------------------------
class Model:
    """A plain dict model of what the steps mean (independent of the directory's code)."""

    def __init__(self, d: StripeDirectory) -> None:
        self.loc = {L: s for L, s in enumerate(d.loc)}
        self.slots = {}  # (stripe, member) -> (state, strip)
        for L, s in self.loc.items():
            self.slots[s] = ("live", L)

    def apply(self, step) -> None:
        if isinstance(step, Dirty):
            at = self.loc.get(step.strip)
            if at is not None and self.slots[at][0] == "live":
                self.slots[at] = ("dirty", step.strip)
        elif isinstance(step, StripeWrite):
            for m, L in step.slots:
                at = self.loc.get(L)
                if at is not None and self.slots[at][0] == "live":
                    self.slots[at] = ("dirty", L)
                self.slots[(step.stripe, m)] = ("live", L)
                self.loc[L] = (step.stripe, m)
        elif isinstance(step, Swap):
            _, L = self.slots[(step.stripe, step.member)]
            _, old = self.slots[(step.partner, step.member)]
            if self.loc.get(old) == (step.partner, step.member):
                del self.loc[old]
            self.slots[(step.partner, step.member)] = ("live", L)
            self.slots[(step.stripe, step.member)] = ("dirty", L)
            self.loc[L] = (step.partner, step.member)
        elif isinstance(step, Release):
            for (s, m), (state, L) in list(self.slots.items()):
                if s == step.stripe and state == "dirty":
                    if self.loc.get(L) == (s, m):
                        del self.loc[L]
                    del self.slots[(s, m)]

    def view(self):
        return dict(self.loc), {k: v[0] for k, v in self.slots.items()}


def _view(d: StripeDirectory):
    loc = {L: at for L, at in enumerate(d.loc) if at != NOWHERE}
    states = {(s, m): {2: "live", 3: "dirty"}[d.state[s][m]]
              for s in range(d.stripes) for m in range(d.geometry.ndisks) if d.state[s][m] in (2, 3)}
    return loc, states


ops = st.lists(st.one_of(st.tuples(st.just("write"), st.integers(0, 23), st.integers(1, 4)),
                         st.tuples(st.just("flush"), st.just(0), st.just(0)),
                         st.tuples(st.just("clean"), st.just(0), st.just(0)),
                         st.tuples(st.just("checkpoint"), st.just(0), st.just(0))), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(ops=ops, buffer=st.integers(3, 9), order=st.sampled_from(["lrw", "fifo", "dpsr"]), cut=st.floats(0, 1),
       flip=st.booleans())
def test_directory_equals_the_model_and_a_crash_replays_to_the_last_durable_step(ops, buffer, order, cut, flip):
    g = _geometry(4, 10)
    policy = DpsrPlacement(buffer=buffer) if order == "dpsr" else \
        MultibufferPlacement(buffer=buffer, order=order, hot=0.3, spare=0.25)
    d = policy.make_directory(g, 8)  # 24 strips, 2 spare stripes
    policy.attach(d)
    model = Model(d)
    checkpoint, journal, views = encode_checkpoint(d), bytearray(), [model.view()]
    ends = []

    def perform(steps):
        for step in steps:
            if isinstance(step, InPlace):  # a RAID-5 small write: no directory change, no record
                continue
            journal.extend(encode_step(d.seq + 1, step))  # the record first, then the change
            ends.append(len(journal))
            d.apply(step)
            model.apply(step)
            views.append(model.view())
            assert _view(d) == model.view()

    for kind, a, n in ops:
        if kind == "write":
            for L in range(a, min(a + n, d.strips)):
                perform(policy.write(L))
        elif kind == "flush":
            perform(policy.flush())
        elif kind == "clean":
            from vraid.policies.placement.cleaner import generate
            plan = generate(d)
            if plan is not None:
                perform(plan.steps)
        else:  # a checkpoint: the journal starts afresh after it
            checkpoint, base = encode_checkpoint(d), len(views) - 1
            journal.clear()
            ends.clear()
            views[:] = views[base:]
        d.check()
    # a power cut anywhere in the journal's last bytes: every whole record survives, the torn one is dropped
    at = int(cut * len(journal))
    data = bytes(journal[:at])
    whole = sum(1 for e in ends if e <= at)
    if flip and whole:
        pos = ends[whole - 1] - 3  # a byte of the last whole record's CRC: that record is dropped too
        data = data[:pos] + bytes([data[pos] ^ 0xFF]) + data[pos + 1:]
        whole -= 1
    records, end, torn = decode_journal(data)
    assert len(records) == whole and torn == (end != len(data))
    got = recover(checkpoint, data, g)
    got.check()
    assert _view(got) == views[whole]


def test_forget_gives_up_a_named_stale_copy_and_keeps_the_slot_dirty():
    g = _geometry(4, 6)
    d = StripeDirectory.fresh(g, 4)
    slot = d.loc[2]
    d.apply(Dirty(2))  # the update is in a buffer: the slot is dirty and still named
    assert d.named(*slot) == 2 and d.locate(2 * g.u).stripe == slot[0]
    d.apply(Forget(*slot))
    assert d.named(*slot) == -1 and d.loc[2] == NOWHERE and d.state[slot[0]][slot[1]] == DIRTY
    with pytest.raises(LookupError):
        d.locate(2 * g.u)
    d.check()


def test_checkpoint_crc_shape_and_torn_records():
    g = _geometry(4, 10)
    d = StripeDirectory.fresh(g, 8, hot=3)
    cp = encode_checkpoint(d)
    assert decode_checkpoint(cp, g).snapshot() == d.snapshot()
    with pytest.raises(DirectoryFormatError, match="CRC"):
        decode_checkpoint(cp[:40] + bytes([cp[40] ^ 1]) + cp[41:], g)
    with pytest.raises(DirectoryFormatError, match="truncated"):
        decode_checkpoint(cp[:-5], g)
    with pytest.raises(DirectoryFormatError, match="the array has 5"):
        decode_checkpoint(cp, _geometry(5, 10))
    with pytest.raises(DirectoryFormatError, match="magic"):
        decode_checkpoint(b"x" * len(cp), g)
    rec = encode_step(1, Dirty(3)) + encode_step(2, Release(9)) + encode_step(3, Forget(7, 2))
    assert decode_journal(rec) == ([(1, Dirty(3)), (2, Release(9)), (3, Forget(7, 2))], len(rec), False)
    assert decode_journal(rec[:-1])[0] == [(1, Dirty(3)), (2, Release(9))] and decode_journal(rec[:-1])[2]
    skipped = encode_step(1, Dirty(3)) + encode_step(3, Dirty(4))  # a gap in the sequence ends the journal
    assert decode_journal(skipped)[0] == [(1, Dirty(3))]



@settings(max_examples=60, deadline=None)
@given(gaps=st.lists(st.integers(0, 300), min_size=1, max_size=4), junk=st.binary(max_size=40), after=st.integers(0, 3))
def test_records_after_finds_records_between_zeros_as_a_byte_by_byte_scan_does(gaps, junk, after):
    """``records_after`` skips zeroed stretches (no record starts with a zero length) and finds
    exactly what trying every byte offset finds (the reference below, one offset at a time)."""
    data = bytearray(junk)
    for i, gap in enumerate(gaps):
        data += bytes(gap) + encode_step(i + 1, Dirty(i + 3))
    data = bytes(data + bytes(64))

    want, pos = [], 0
    while pos < len(data):
        first = decode_journal(data[pos:])[0][:1]  # a whole record starting at pos, if any
        if first and first[0][0] > after:
            want.append(first[0])
            pos += len(encode_step(*first[0]))
        else:
            pos += 1
    assert records_after(data, 0, after) == want
    assert [r for r in want if r[1] == Dirty(r[0] + 2)] == [(i + 1, Dirty(i + 3)) for i in range(len(gaps)) if i + 1 > after]

"""What a crash keeps on a remapped array (seed 004), block by block, as a disk must.

Two holes the model machine found once it checked blocks rather than strips
(vraid.testing.placed_machines):

* a write of part of a strip used to carry the strip's other blocks, flushed long ago,
  into the volatile write buffer; once the strip's old slot was recycled, a crash lost
  them (ext4 on 1 KiB blocks over 4 KiB strips lost a fsynced file this way under
  kill -9). Such a write is now made in place;
* a swap used to overwrite a dirty slot whose stale copy the directory on the members
  still named; after a crash the strip read back as the swapped strip's bytes. The
  engine now journals a Forget of that copy first.

Each scenario runs the machine's own rules, whose crash rule checks every block.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from vraid.testing.machines import Config
from vraid.testing.placed_machines import PlacedArrayMatchesModel

ONCE = settings(max_examples=1, database=None, deadline=None)


def _machine(tmp_path: Path, config: Config, spec: str) -> PlacedArrayMatchesModel:
    return PlacedArrayMatchesModel(config, spec, tmp_path)


@ONCE
@given(st.none())
def test_a_write_of_part_of_a_strip_keeps_its_other_blocks_through_a_crash(tmp_path_factory, _none) -> None:
    m = _machine(tmp_path_factory.mktemp("partial"), Config(5, 4, 8192, 4096, 16),
                 "multibuffer:buffer=3,order=lrw,hot=0.1,spare=0.15")
    try:
        S, B = m.g.strip_size, m.g.block_size
        m._write(0, m.capacity, 1, "everything")
        m.flush()
        for round_ in range(3):  # the first block of every strip, then the cleaner: slots get recycled
            for L in range(m.capacity // S):
                m._write(L * S, B, 100 * round_ + L, "first block of a strip")
            m.clean()
        placed = m.portal.array.placed
        assert placed.stats["partial_in_place"] == 3 * (m.capacity // S)
        assert not placed.buffer, "a write of part of a strip not in the buffer is made in place"
        m.crash()  # every second block of every strip reads back as flushed
    finally:
        m.teardown()


@ONCE
@given(st.none())
def test_a_swap_never_leaves_a_strip_named_where_another_strip_now_is(tmp_path_factory, _none) -> None:
    m = _machine(tmp_path_factory.mktemp("swap"), Config(5, 5, 4096, 4096, 24),
                 "multibuffer:buffer=8,order=lrw,hot=0.25,spare=0.2")
    try:
        S = m.g.strip_size
        strips = m.capacity // S
        m._write(0, m.capacity, 1, "everything")
        m.flush()
        for L in range(0, strips, 3):  # whole strips into the buffers; the cleaner swaps into their dirty slots
            m._write(L * S, S, 1000 + L, "a whole strip")
            if L % 4 == 0:
                m.clean()
        for _ in range(6):
            m.clean()
        placed = m.portal.array.placed
        assert placed.stats["swaps"] > 0 and placed.stats["forgets"] > 0, placed.stats
        m.crash()  # each rewritten strip reads back as its flushed bytes, its new bytes or zeros
    finally:
        m.teardown()

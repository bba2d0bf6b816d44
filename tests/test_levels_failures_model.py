"""RAID-1, RAID-4 and RAID-10 with failures, spares and rebuilds against the bytearray model.

The machine of tests/test_failures_model.py (writes, reads, flushes, remounts, failing and
breaking members, spares, rebuilds a few stripes at a time, a spare dying mid-rebuild), with
failures up to each level's tolerance: a member is failed or broken only while the array
survives losing it as well (RAID-1 all but one member, RAID-10 one of each pair, or on an odd
count any that are not neighbours, RAID-4 one).
Every read must equal the model. At each flush every member is checked against what the
model says it holds, computed here without the code under test: a data strip's bytes, a copy
of its data strip (mirrors), or the XOR of the stripe's data (RAID-4); a missing member is
skipped, a member being rebuilt is checked below the rebuild position.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from test_array_model import K, Config
from test_failures_model import SETTINGS, FailuresMatchModel
from vraid.core.geometry import Geometry
from vraid.engine.chain import CacheConfig

CONFIGS = [Config(1, 3, 4 * K, 4 * K, 12, "mirror"), Config(10, 4, 8 * K, 4 * K, 10, "near-2"),
           Config(10, 6, 4 * K, 512, 8, "near-2"), Config(4, 4, 8 * K, 4 * K, 12, "parity-last"),
           # md's near-2 on an odd count: a stripe is two chunk rows, two strips of every member
           Config(10, 3, 8 * K, 4 * K, 8, "near-2"), Config(10, 5, 4 * K, 4 * K, 8, "near-2")]


def expected_areas(g: Geometry, model: bytes) -> np.ndarray:
    """(member, stripe, lane, row, block): what each member must hold for the image ``model``
    (a lane is one of the ``g.depth`` strips a member holds of a stripe)."""
    nd, bs = g.data_disks, g.block_size
    image = np.frombuffer(model, np.uint8).reshape(g.stripes, nd, g.u, bs)
    copies = {j: k for k in range(nd) for j in g.redundancy.copies(k)}
    areas = np.empty((g.ndisks, g.stripes, g.depth, g.u, bs), np.uint8)
    for s in range(g.stripes):
        cols, lanes = g.columns(s), g.lanes(s)
        for k in range(nd):
            areas[cols[k], s, lanes[k]] = image[s, k]
        for j in range(len(cols) - nd):
            want = image[s, copies[j]] if j in copies else np.bitwise_xor.reduce(image[s], axis=0)
            areas[cols[nd + j], s, lanes[nd + j]] = want
    return areas


class LevelFailuresMatchModel(FailuresMatchModel):
    def _can_lose(self) -> list[int]:
        """Members whose loss, on top of the missing ones, the array survives."""
        if any(getattr(s, "broken", False) for s in self.stores):
            return []  # one about to fail already
        missing = set(self._missing())
        return [d for d in range(self.g.ndisks) if d not in missing and self.g.survives_members(missing | {d})]

    def _redundant(self) -> bool:
        return bool(self._can_lose())

    def _draw_disk(self, data) -> int:
        """A member whose loss the level survives (RAID-10: not the partner of a missing one)."""
        return data.draw(st.sampled_from(self._can_lose()), label="disk")

    @precondition(lambda self: self._can_lose())
    @rule(data=st.data())
    def break_member(self, data) -> None:
        disk = data.draw(st.sampled_from(self._can_lose()), label="disk")
        note(f"member {disk} starts failing every request; the whole image is rewritten and flushed")
        self.stores[disk].broken = True
        # a write of every stripe reaches the member now (with a cache: when the flush drains
        # it), so it is failed before the next rule: what the rules may do next must not
        # depend on when a background destage happens to hit it (hypothesis replays them)
        self.portal.write(0, bytes(self.model))
        self.portal.flush()
        assert disk in self._missing()
        self._sync()

    def check_members(self) -> None:
        g = self.g
        missing = set(self._missing())
        assert g.survives_members(missing), f"members {sorted(missing)} missing: more than {g.redundancy.name} survives"
        want = expected_areas(g, bytes(self.model))
        rb = self.array.raid.rebuild
        for d in range(g.ndisks):
            got = np.frombuffer(self._raw(d), np.uint8).reshape(g.stripes, g.depth, g.u, g.block_size)
            upto = g.stripes
            if d in missing:
                upto = rb.pos if rb is not None and d in rb.roles else 0
            bad = [s for s in range(upto) if not np.array_equal(got[s], want[d, s])]
            assert not bad, f"member {d} differs from the model in stripes {bad[:5]} (missing {sorted(missing)})"

    def _raw(self, disk: int) -> bytes:
        g = self.g
        return self.stores[disk].read_sync(g.data_offset, g.member_data_bytes)


@pytest.mark.parametrize("cache", ["none", "stripe", "pbg"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.id)
def test_levels_with_failures_spares_and_rebuilds_match_the_model(config, cache, tmp_path):
    unit = config.geometry().stripe_data_bytes
    cfg = CacheConfig(cache, size=3 * unit, destage="hlwm:high=0.6,low=0.3")
    run_state_machine_as_test(lambda: LevelFailuresMatchModel(config, cfg, tmp_path), settings=SETTINGS)

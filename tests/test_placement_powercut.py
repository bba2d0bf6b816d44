"""Power cuts on a remapped array (seed 004) against a model, block by block.

The machine is :class:`vraid.testing.placed_crash_machine.PlacedCrashMachine` (its
docstring says what it does and checks): cuts during writes, flushes (stripe writes,
directory commits, checkpoints of a journal kept small) and cleanings (swaps, releases).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from vraid.testing.placed_crash_machine import PlacedCrashMachine

SETTINGS = settings(max_examples=12, stateful_step_count=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SPECS = ["multibuffer:buffer=4,order=lrw,hot=0.25,spare=0.25", "dpsr:buffer=4,spare=0.25"]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.split(":")[0])
def test_a_power_cut_keeps_every_flushed_block_and_leaves_no_mismatch(spec, tmp_path):
    run_state_machine_as_test(lambda: PlacedCrashMachine(spec, tmp_path), settings=SETTINGS)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.split(":")[0])
def test_placement_power_cuts_thorough(spec, tmp_path):
    run_state_machine_as_test(lambda: PlacedCrashMachine(spec, tmp_path),
                              settings=settings(SETTINGS, max_examples=150, stateful_step_count=30))


class _Draws:
    """Stands in for hypothesis' ``data``: the given draws, in order."""

    def __init__(self, *values) -> None:
        self.values = list(values)

    def draw(self, strategy, label=None):
        return self.values.pop(0)


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_a_flush_cut_short_by_the_power_is_not_reported_durable(tmp_path_factory, _none):
    """The case the machine found: the power goes during a flush's directory commit. The
    flush, retried without the failed members, used to return as if durable."""
    m = PlacedCrashMachine(SPECS[1], tmp_path_factory.mktemp("cut"))
    try:
        # 4 whole strips at 0, then a flush; the cut 15 member requests on: in the commit
        m.crash(_Draws(15, "strips", 0, 4, 0), "flush")
    finally:
        m.teardown()

"""The remapped array (seed 004: multibuffer, dpsr) against a bytearray model.

The machine is :class:`vraid.testing.placed_machines.PlacedArrayMatchesModel`: reads equal
the model through buffering, stripe writes, the cleaner's swaps and DPSR's RAID-5
fallback; after each flush the raw members hold every strip where the directory says,
every parity block group XORs to zero, and the directory read back from the members
equals the one in memory; a crash keeps every strip not written since the last flush.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from vraid.testing.placed_machines import CASES, PlacedArrayMatchesModel

SETTINGS = settings(deadline=None, max_examples=25, stateful_step_count=40,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("config,spec", CASES, ids=[f"{c.id}-{s.split(':')[0]}-{i}" for i, (c, s) in enumerate(CASES)])
def test_placed_array_matches_model(config, spec, tmp_path: Path) -> None:
    run_state_machine_as_test(lambda: PlacedArrayMatchesModel(config, spec, tmp_path), settings=SETTINGS)


@pytest.mark.slow
@pytest.mark.parametrize("config,spec", CASES, ids=[f"{c.id}-{s.split(':')[0]}-{i}" for i, (c, s) in enumerate(CASES)])
def test_placed_array_matches_model_thorough(config, spec, tmp_path: Path) -> None:
    run_state_machine_as_test(lambda: PlacedArrayMatchesModel(config, spec, tmp_path),
                              settings=settings(SETTINGS, max_examples=200, stateful_step_count=80))

"""The log disk (seed 002) against a model, in every configuration, with power cuts.

The machine is :class:`vraid.testing.log_machine.LogCrashMachine` (its docstring says what
it does and checks): nothing acknowledged before an fsync is lost after a cut, scrub finds
0 mismatches after recovery, a clean remount replays nothing.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from vraid.testing.log_machine import LogCrashMachine

SETTINGS = settings(max_examples=3, stateful_step_count=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
KINDS = ["scd", "mcd:2", "mirrored", "per-disk"]


@pytest.mark.parametrize("kind", KINDS)
def test_log_model_with_power_cuts(kind, tmp_path):
    run_state_machine_as_test(lambda: LogCrashMachine(kind, tmp_path), settings=SETTINGS)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_log_model_thorough(kind, tmp_path):
    run_state_machine_as_test(lambda: LogCrashMachine(kind, tmp_path),
                              settings=settings(SETTINGS, max_examples=80, stateful_step_count=30))

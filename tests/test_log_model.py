"""The log disk (seed 002) against a model, in every configuration, with power cuts.

The machine is :class:`vraid.testing.log_machine.LogCrashMachine` (its docstring says what
it does and checks): nothing acknowledged before an fsync is lost after a cut (also one cut
short in the next recovery), scrub finds 0 mismatches after recovery, a clean remount
replays nothing; alone and under a write-back cache, on stores that lose what was not
flushed (volatile) or keep every completed write (kill -9).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
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


#: the layers the builder stacks on a log (vraid.engine.build): none, or a write-back cache
#: above it; each with member and log stores that keep writes only once flushed (volatile)
LAYERS = [(None, True), ("stripe", False), ("stripe", True), ("pbg", True)]


CASES = [(kind, cache, volatile) for kind in KINDS for cache, volatile in LAYERS]


@pytest.mark.parametrize("kind,cache,volatile", CASES)
def test_log_model_under_every_layer_with_power_cuts(kind, cache, volatile, tmp_path):
    run_state_machine_as_test(lambda: LogCrashMachine(kind, tmp_path, cache=cache, volatile=volatile),
                              settings=settings(SETTINGS, max_examples=2, phases=[Phase.explicit, Phase.generate]))


@pytest.mark.slow
@pytest.mark.parametrize("kind,cache,volatile", CASES)
def test_log_model_under_every_layer_thorough(kind, cache, volatile, tmp_path):
    run_state_machine_as_test(lambda: LogCrashMachine(kind, tmp_path, cache=cache, volatile=volatile),
                              settings=settings(SETTINGS, max_examples=40, stateful_step_count=30))

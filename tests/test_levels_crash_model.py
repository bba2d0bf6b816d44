"""Power cuts on RAID-1, RAID-4 and RAID-10: nothing acknowledged is lost, and the resync from
the write-intent bitmap leaves every copy (or parity block) agreeing with its data: the crash
machine of tests/test_crash_model.py (:class:`vraid.testing.crash_machine.CrashMachine`) on
each level."""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

from test_crash_model import SETTINGS
from vraid.testing.crash_machine import CrashMachine


LEVELS = pytest.mark.parametrize("level, ndisks", [(1, 3), (4, 4), (10, 4), (10, 3)],
                                 ids=["raid1", "raid4", "raid10", "raid10-odd"])


@pytest.mark.parametrize("mode", ["write-through", "nvram"])
@LEVELS
def test_a_power_cut_on_each_level_loses_nothing_acknowledged(level, ndisks, mode, tmp_path):
    run_state_machine_as_test(lambda: CrashMachine(mode, tmp_path, level=level, ndisks=ndisks),
                              settings=settings(SETTINGS, max_examples=4))


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mode", ["write-through", "nvram"])
@LEVELS
def test_power_cuts_on_each_level_thorough(level, ndisks, mode, tmp_path):
    run_state_machine_as_test(lambda: CrashMachine(mode, tmp_path, level=level, ndisks=ndisks), settings=SETTINGS)

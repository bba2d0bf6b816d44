"""The model state machines with the MSC contiguity transform on every plan.

With ``ct=load_ct("msc", random limits)`` the array must still return exactly what the
bytearray model holds, and leave the data and the parity of every PBG right on the members
(``check_members`` after each flush and at teardown: every PBG XORs to zero); the
machines are in :mod:`vraid.testing.ct_machines` (shared with ``vraid fuzz --ct``). The limits are
drawn by hypothesis at the start of each run (generous ones included, so every gap of a
stripe can be filled), for both cache organisations and for write-through.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from test_cache_model import SETTINGS
from vraid.engine.chain import CacheConfig
from vraid.testing.ct_machines import CHANGED, CT_GEOMETRY, WT_CONFIGS, CtArrayMatchesModel, CtCachedMatchesModel


@pytest.mark.parametrize("org", ["pbg", "stripe"])
@pytest.mark.parametrize("order", ["lrw", "cscan"])
def test_cached_array_with_ct_matches_the_model(org, order, tmp_path):
    unit = CT_GEOMETRY.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, order=order, destage="hlwm:high=0.6,low=0.3")
    key = f"{org}-{order}"
    run_state_machine_as_test(lambda: CtCachedMatchesModel(cfg, "memory", tmp_path, key),
                              settings=settings(SETTINGS, max_examples=12))
    if org == "stripe":  # a PBG unit is one row: nothing to join
        assert CHANGED.get(key, 0) > 0, "no plan was transformed: the test exercised nothing"


WT_SETTINGS = settings(max_examples=25, deadline=None,
                       suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("config", WT_CONFIGS, ids=lambda c: c.id)
def test_write_through_with_ct_matches_the_model(config, tmp_path):
    key = f"wt-{config.id}"
    run_state_machine_as_test(lambda: CtArrayMatchesModel(config, "memory", tmp_path, key), settings=WT_SETTINGS)
    if config.level == 5:  # RAID-0 write-through: dirty rows are contiguous, nothing to join
        assert CHANGED.get(key, 0) > 0, "no plan was transformed: the test exercised nothing"

"""kill -9 of a mount whose ``pbg`` cache destages adjacent rows of a stripe together
(``WriteBackCache.coalesce``, on for every mount): every write acknowledged into the
NVRAM survives, as with ``stripe`` (tests/test_e2e_crash.py)."""

from __future__ import annotations

import pytest

from mountutil import requires_mount
from test_e2e_crash import _crash_points

pytestmark = [requires_mount, pytest.mark.mount]


@pytest.mark.slow
def test_kill_9_with_a_coalescing_pbg_cache_and_nvram_two_points(tmp_path, session):
    nv = tmp_path / "nvram.bin"
    _crash_points(tmp_path, session, points=2, seed=7,
                  extra=("--cache", "pbg", "--cache-size", "8M", "--nvram", str(nv)))

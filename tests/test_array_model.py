"""The async Array against the dumbest correct model: one bytearray.

The machine (:class:`vraid.testing.machines.ArrayMatchesModel`, shared with ``vraid fuzz``)
writes (aligned, unaligned, sub-block, across strips and stripes), reads (also past the
end), flushes and remounts, and after every flush (and at the end) looks at the member
stores *directly*:

* every logical block sits on the member and at the offset the geometry says,
  holding the model's bytes;
* RAID-5: every parity block group XORs to zero, i.e. each parity block is
  the XOR of the data blocks of its PBG.

The array runs in a trio loop on a helper thread (vraid/testing/portal.py): stateful
hypothesis tests cannot run async rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from portal import ArrayPortal
from vraid.backends.memory import MemoryStore
from vraid.errors import OutOfRange
from vraid.core.geometry import Geometry
from vraid.testing.machines import CONFIGS, K, ArrayMatchesModel, Config

__all__ = ["CONFIGS", "K", "ArrayMatchesModel", "Config"]  # tests/test_failures_model.py imports them from here


#: configurations whose file-backed run is in the quick suite; every configuration runs on
#: memory stores, and on files with --run-slow
FILE_QUICK = {"raid5-4d-s8K-b512-x16-ls", "raid0-4d-s64K-b512-x3"}


def _cases():
    for config in CONFIGS:
        for backend in ("memory", "file"):
            slow = backend == "file" and config.id not in FILE_QUICK
            yield pytest.param(config, backend, id=f"{config.id}-{backend}", marks=(pytest.mark.slow,) if slow else ())


@pytest.mark.parametrize("config, backend", list(_cases()))
def test_array_matches_model(config: Config, backend: str, tmp_path: Path) -> None:
    run_state_machine_as_test(
        lambda: ArrayMatchesModel(config, backend, tmp_path),
        settings=settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]),
    )


def test_portal_basics(tmp_path: Path) -> None:
    """The portal on its own: round trip, errors come through, close is idempotent."""
    g = Geometry(5, 3, 4, 4 * K, 4 * K, data_offset=4 * K)
    stores = [MemoryStore(g.member_size) for _ in range(3)]
    with ArrayPortal(g, stores) as portal:
        portal.write(100, b"hello")
        assert portal.read(98, 9) == b"\0\0hello\0\0"
        portal.flush()
        with pytest.raises(OutOfRange):
            portal.write(g.capacity - 1, b"xy")
    portal.close()
    with pytest.raises(RuntimeError):
        portal.read(0, 1)
    with ArrayPortal(g, stores) as again:  # a new loop over the same stores
        assert again.read(100, 5) == b"hello"

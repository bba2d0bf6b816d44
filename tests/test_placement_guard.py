"""A placement is student code too: whatever it raises or returns, the array keeps serving,
loses nothing, and says which policy failed (vraid.engine.placement.writes's guard)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session

G = Geometry(5, 5, 48, 4096, 4096, data_offset=4096)

STUDENT = textwrap.dedent('''
    from vraid.core.directory import LW, StripeWrite
    from vraid.policies.placement.dpsr import DpsrPlacement
    from vraid.policies.placement.multibuffer import MultibufferPlacement


    class RaisesLater(MultibufferPlacement):
        """Correct for 30 writes, then raises."""
        name = "raises-later"

        def write(self, strip):
            self.calls = getattr(self, "calls", 0) + 1
            if self.calls > 30:
                raise ZeroDivisionError("student bug")
            return super().write(strip)


    class BadStep(DpsrPlacement):
        """Puts a large write into stripe 0, which holds data (it is not free)."""
        name = "bad-step"

        def write(self, strip):
            return [StripeWrite(LW, 0, 4, ((0, strip),))] + super().write(strip)
''')


def _workload(s: Session) -> bytes:
    rng = np.random.default_rng(3)
    model = bytearray(s.array.capacity)
    for _ in range(80):
        off = int(rng.integers(0, len(model) - 9000))
        data = rng.integers(0, 256, int(rng.integers(1, 9000)), dtype=np.uint8).tobytes()
        s.write(off, data)
        model[off : off + len(data)] = data
    return bytes(model)


@pytest.mark.parametrize("cls, fallback", [("RaisesLater", "multibuffer"), ("BadStep", "dpsr")])
def test_a_failing_placement_is_replaced_and_nothing_is_lost(tmp_path: Path, cls: str, fallback: str):
    path = tmp_path / "student_placement.py"
    path.write_text(STUDENT)
    with Session(EngineConfig(G, policies={"placement": f"{path}:{cls}:buffer=8"})) as s:
        model = _workload(s)
        assert s.read(0, len(model)) == model
        s.flush()
        assert s.read(0, len(model)) == model
        st = s.status()
    faults = st["policy_faults"]
    assert len(faults) == 1 and faults[0]["family"] == "placement", faults
    assert faults[0]["fallback"].startswith(fallback)
    assert st["placement"]["policy"] == fallback


def test_a_simulation_stops_on_a_placement_fault(tmp_path: Path):
    path = tmp_path / "student_placement.py"
    path.write_text(STUDENT)
    with pytest.raises(Exception) as info:
        with Session(EngineConfig(G, policies={"placement": f"{path}:RaisesLater:buffer=8"}, on_policy_fault="stop")) as s:
            _workload(s)
    assert "student bug" in repr(info.value) or "student bug" in str(getattr(info.value, "exceptions", ""))


def test_vraid_fuzz_finds_a_placement_that_returns_a_bad_step(tmp_path: Path):
    from vraid.testing.fuzz import run

    path = tmp_path / "student_placement.py"
    path.write_text(STUDENT)
    found = run("placement", f"{path}:BadStep", examples=10, seed=1).failure
    assert found is not None and "refuses" in str(found.error), found
    assert run("placement", "multibuffer:buffer=4", examples=3, seed=1).failure is None


def test_vraid_fuzz_with_crashes_cuts_the_power_under_a_placement(tmp_path: Path):
    from vraid.testing.fuzz import cases, run

    names = [c.name for c in cases("placement", "multibuffer:buffer=4", with_crashes=True)]
    assert names[-1] == "crash-placement" and "crash-placement" not in [c.name for c in cases("placement", "dpsr")]
    assert run("placement", "dpsr:buffer=4", examples=3, seed=1, with_crashes=True, case="crash-placement").failure is None

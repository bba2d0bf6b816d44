"""bench/sim_speed.py's "model alone" replays the member requests of a real run on fresh disk
models and gets the same charged times, so what it times is the model's work of that run.
Its figures are measurements (docs/performance.md), not asserted."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("sim_speed", BENCH / "sim_speed.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(BENCH))
    return mod


@pytest.mark.parametrize("model", ["hdd:st373454lc", "ssd"])
def test_the_model_alone_replays_every_member_request_of_a_run(model):
    ss = _module()
    out = ss.model_alone(model, 200, seed=3)  # raises if a replayed charge differs from the run's
    assert out["member_requests"] == 4 * 200  # a small write: two reads, two writes
    assert out["requests_per_s"] > 0


def test_a_replay_that_differs_from_the_run_is_refused(monkeypatch):
    ss = _module()
    from vraid.backends.hdd import HddModel

    real = HddModel.charge
    calls = []

    def drifting(self, op, offset, length):
        calls.append(1)
        return real(self, op, offset, length) + (1e-9 if len(calls) > 800 else 0.0)  # only the replay drifts

    monkeypatch.setattr(HddModel, "charge", drifting)
    with pytest.raises(RuntimeError, match="replayed model"):
        ss.model_alone("hdd:st373454lc", 200, seed=3)

"""``vraid sim --no-data``: metadata only, same plans, timing and metrics as the full run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vraid.backends.memory import NullStore
from vraid.sim.simulator import SimConfig, run_sim

CASES = [
    dict(workload="random-write"),
    dict(disk_model="none", workload="random-write:threads=4"),
    dict(disk_model="ssd", workload="zipf"),
    dict(workload="random-write:threads=4", policies={"cache": "pbg", "cache_size": "1M"}),
    dict(workload="zipf", policies={"cache": "stripe", "cache_size": "2M", "destage": "lt",
                                    "read_cache_size": "1M"}),
    dict(workload="exp-stride", policies={"ct": "msc", "queue_order": "clook"}),
    dict(workload="random-write:iat=5ms", bitmap_chunk="1M"),
]


@pytest.mark.parametrize("settings", CASES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
def test_no_data_metrics_equal_the_full_runs(settings):
    full = run_sim(SimConfig(requests=200, seed=7, **settings))
    meta = run_sim(SimConfig(requests=200, seed=7, no_data=True, **settings))
    assert full.metrics["host_writes"] + full.metrics["host_reads"] > 0
    assert meta.metrics == full.metrics
    assert meta.config.to_dict()["no_data"] is True
    assert "no_data" not in full.config.to_dict()  # the JSON of a full run is as before


def test_null_store_keeps_nothing_and_checks_ranges():
    import trio

    store = NullStore(8192, name="d0")

    async def main():
        await store.write(0, b"x" * 4096)
        assert await store.read(0, 4096) == bytes(4096)
        with pytest.raises(ValueError):
            await store.write(8192 - 512, b"y" * 1024)

    trio.run(main)
    with pytest.raises(ValueError):
        store.read_sync(8000, 512)


def test_cli_no_data_flag():
    out = subprocess.run([sys.executable, "-m", "vraid", "sim", "--requests", "50", "--no-data", "--json"],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    assert result["config"]["no_data"] is True
    assert result["metrics"]["host_writes"] == 50

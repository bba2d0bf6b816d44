"""The simulator (vraid.sim.simulator, `vraid sim`): the real engine under a workload in virtual time."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from vraid.errors import VraidError
from vraid.sim.simulator import SimConfig, run_sim

M = 1 << 20
#: small members: 5 x 8 MiB, 112 stripes, 28 MiB of data
BASE = SimConfig(disk_size=8 * M, requests=300)


def sim(**changes) -> dict:
    return run_sim(replace(BASE, **changes)).metrics


# -- determinism --------------------------------------------------------------------
@pytest.mark.parametrize("workload", ["random-write:threads=4", "zipf:iat=2ms,write_ratio=0.5,blocks=2000"])
def test_same_config_gives_byte_identical_json(workload):
    cfg = replace(BASE, workload=workload, seed=7)
    a, b = run_sim(cfg).to_json(), run_sim(cfg).to_json()
    assert a == b
    assert json.loads(a)["config"]["seed"] == 7


def test_different_seed_gives_different_results():
    cfg = replace(BASE, workload="random-write:threads=4")
    assert run_sim(cfg).to_json() != run_sim(replace(cfg, seed=1)).to_json()


def test_identical_across_processes():
    """Each process has its own hash seed and trio RNG state; the JSON must not care."""
    args = [sys.executable, "-m", "vraid", "sim", "--disk-size", "8M", "--requests", "200",
            "--workload", "random-write:threads=8", "--json"]
    outs = {subprocess.run(args, capture_output=True, text=True, check=True).stdout for _ in range(2)}
    assert len(outs) == 1


# -- metrics ------------------------------------------------------------------------
def test_raid5_small_writes_metrics_are_sane():
    m = sim(workload="random-write")
    assert m["host_writes"] == 300 and m["host_reads"] == 0
    assert m["host_bytes"] == 300 * 4096
    # read-modify-write: old data + old parity, new data + new parity
    assert m["disk_read_requests"] == 2 * m["host_writes"]
    assert m["disk_write_requests"] == 2 * m["host_writes"]
    assert m["disk_read_requests"] + m["disk_write_requests"] >= m["host_writes"]
    assert m["disk_read_blocks"] == m["disk_read_requests"]
    assert m["pbg_rmw"] == 300
    assert m["virtual_seconds"] > 0
    assert all(0.0 <= b <= 1.0 for b in m["disk_busy"])
    assert len(m["disk_busy"]) == 5
    assert m["throughput_mb_s"] == pytest.approx(m["host_bytes"] / 1e6 / m["virtual_seconds"], rel=1e-6)
    assert m["read_hit_ratio"] == 0.0 and m["overwrite_ratio"] == 0.0
    assert 0 < m["mean_response_ms"] <= m["p99_response_ms"] <= m["max_response_ms"]
    # the hdd model's own counters are there
    assert m["seeks"] > 0 and m["missed_rotations"] > 0 and m["mean_seek_ms"] > 0


def test_reads_touch_one_member_each():
    m = sim(workload="random-read")
    assert m["host_reads"] == 300
    assert m["disk_read_requests"] == 300 and m["disk_write_requests"] == 0


def test_no_timing_model_takes_no_virtual_time():
    m = sim(disk_model="none")
    assert m["virtual_seconds"] == 0.0 and m["throughput_mb_s"] == 0.0
    assert "missed_rotations" not in m


def test_busy_disks_under_heavy_open_loop_load():
    # far more than 5 disks can serve, even with their command queues on (the default since
    # the hdd presets queue as the seeds' SCSI disks: at iat=1ms the mean response fell from
    # about 620 ms one command at a time to about 85 ms, so the load is doubled here)
    m = sim(workload="random-write:iat=0.5ms")
    busy = m["disk_busy"]
    assert all(0.7 <= b <= 1.0 for b in busy) and sum(busy) / len(busy) > 0.85  # the tail drains unevenly
    assert m["mean_response_ms"] > 100


# -- open and closed loop -----------------------------------------------------------
def test_open_loop_requests_start_at_their_arrival():
    # instant members: each request completes the moment it arrives
    m = sim(disk_model="none", workload="random-write:iat=10ms,arrival=fixed", requests=50)
    assert m["virtual_seconds"] == pytest.approx(50 * 0.010)
    assert m["mean_response_ms"] == 0.0


def test_open_loop_response_counts_from_arrival_and_idle_gaps_pass():
    # one request per second: the disks are idle at every arrival
    m = sim(workload="random-write:iat=1s,arrival=fixed", requests=20)
    assert 20.0 < m["virtual_seconds"] < 20.1
    assert m["max_outstanding"] == 1
    assert m["mean_response_ms"] < 30
    assert max(m["disk_busy"]) < 0.01


def test_open_loop_in_flight_limit():
    m = sim(workload="random-write:iat=1ms", requests=200, max_in_flight=8)
    assert m["max_outstanding"] == 8
    assert m["throttled"] > 0


@pytest.mark.parametrize("workload, n", [("random-write:threads=4", 4), ("random-write:outstanding=3", 3),
                                         ("random-write", 1)])
def test_closed_loop_keeps_n_outstanding(workload, n):
    m = sim(workload=workload)
    assert m["max_outstanding"] == n
    assert m["host_writes"] == 300


def test_more_outstanding_means_more_throughput_and_longer_responses():
    one = sim(workload="random-write", requests=400)
    eight = sim(workload="random-write:threads=8", requests=400)
    assert eight["iops"] > 1.5 * one["iops"]
    assert eight["mean_response_ms"] > one["mean_response_ms"]


def test_flush_requests_call_array_flush(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("# vraid-trace v1 capacity=0 block=4096\n"
                     "0.000 W 0 4096\n0.001 F 0 0\n0.002 W 65536 8192\n0.010 R 0 4096\n0.011 F 0 0\n")
    m = sim(workload=f"replay:{trace}")
    assert m["host_flushes"] == 2
    assert m["host_writes"] == 2 and m["host_reads"] == 1
    assert m["mean_flush_ms"] > 0  # the hdd model charges a command overhead
    dropped = sim(workload=f"replay:{trace},flush=drop")
    assert dropped["host_flushes"] == 0


# -- configuration ------------------------------------------------------------------
def test_capacity_rounds_up_to_whole_stripes():
    cfg = SimConfig(capacity=10 * M)
    g = cfg.geometry()
    assert 10 * M <= g.capacity < 10 * M + g.stripe_data_bytes
    with pytest.raises(VraidError):
        SimConfig(capacity=10 * M, disk_size=8 * M).geometry()


def test_config_json_is_canonical_and_carries_policies():
    d = run_sim(replace(BASE, requests=10, disk_model="st39175fc", workload="random-write")).to_dict()["config"]
    assert d["disk_model"] == "hdd:st39175fc"
    assert d["workload"].startswith("random-write:")
    assert d["policies"] == {}


@pytest.mark.parametrize("changes, words", [
    ({"workload": "nope"}, "unknown workload"),
    ({"workload": "random-write:bogus=1"}, "no parameter"),
    ({"disk_model": "hdd:nope"}, "unknown hdd preset"),
    ({"disk_model": "tape"}, "unknown disk model"),
    ({"policies": {"cache": "lru"}}, "unknown cache organisation"),
    ({"policies": {"placement": "multibuffer", "cache": "pbg"}}, "runs without a write-back cache"),
    ({"policies": {"log_disk": "on"}}, "unknown policy"),
    ({"policies": {"prefetch": "seqp", "read_cache_size": "0"}}, "needs a read cache"),  # alone: a default one
    ({"disks": 2}, "RAID-5 needs at least 3 disks"),
    ({"workload": "random-write:workspace=1G"}, "does not fit"),
])
def test_bad_settings_raise_vraid_error(changes, words):
    with pytest.raises(VraidError, match=words):
        run_sim(replace(BASE, **changes))


# -- the command line ---------------------------------------------------------------
def vraid(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vraid", *args], capture_output=True, text=True)


def test_cli_sim_json_parses():
    r = vraid("sim", "--level", "5", "--disks", "5", "--strip", "64K", "--disk-size", "8M",
              "--disk-model", "hdd:st373454lc", "--workload", "random-write", "--requests", "100",
              "--seed", "3", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"config", "metrics"}
    assert out["config"]["requests"] == 100 and out["config"]["seed"] == 3
    assert out["metrics"]["host_writes"] == 100


def test_cli_sim_text_output():
    r = vraid("sim", "--disk-size", "8M", "--requests", "50", "--workload", "random-read")
    assert r.returncode == 0, r.stderr
    assert "mean response" in r.stdout and "per member" in r.stdout


@pytest.mark.parametrize("args, words", [
    (["--workload", "nope"], "unknown workload"),
    (["--disk-model", "hdd:nope"], "unknown hdd preset"),
])
def test_cli_bad_specs_exit_1_with_a_message(args, words):
    r = vraid("sim", "--disk-size", "8M", "--requests", "10", *args)
    assert r.returncode == 1
    assert words in r.stderr and "hint" in r.stderr


def test_cli_models():
    r = vraid("models", "--json")
    assert r.returncode == 0
    names = [d["name"] for d in json.loads(r.stdout)]
    assert {"st373454lc", "st39175fc", "dnes-318350", "ssd"} <= set(names)
    r = vraid("models")
    assert r.returncode == 0 and "st373454lc" in r.stdout


def test_a_failing_policy_stops_a_simulation_with_one_line(tmp_path):
    """docs/policies.md: a simulation does not fall back quietly; --on-policy-fault fallback goes on."""
    import subprocess
    import sys

    (tmp_path / "brk.py").write_text(
        "from vraid.policies.destage.base import DestageScheduler\n"
        "class Broken(DestageScheduler):\n"
        "    def decide(self, state):\n"
        "        raise ZeroDivisionError('student bug')\n")
    args = [sys.executable, "-m", "vraid", "sim", "--cache", "stripe", "--cache-size", "1M", "--requests", "300",
            "--disk-model", "none", "--destage", f"{tmp_path}/brk.py:Broken"]
    env = {**__import__("os").environ, "COLUMNS": "300"}
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    first = out.stderr.splitlines()[0]
    assert "destage scheduler" in first and "brk.py:Broken failed in decide: ZeroDivisionError: student bug" in first
    debug = subprocess.run(args + ["--debug"], capture_output=True, text=True, env=env)
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "raise ZeroDivisionError" in debug.stderr
    fallback = subprocess.run(args + ["--on-policy-fault", "fallback", "--json"], capture_output=True, text=True, env=env)
    assert fallback.returncode == 0, fallback.stderr
    result = json.loads(fallback.stdout)
    (fault,) = result["metrics"]["policy_faults"]
    assert fault["call"] == "decide" and fault["fallback"].startswith("hlwm")
    assert result["config"]["on_policy_fault"] == "fallback"

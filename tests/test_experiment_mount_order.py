"""A sweep's runs that mount (spec ``"mount": True``, msc-ct's mount part) run in real time:
after the pool's runs, one at a time, in the process that runs ``vraid experiment``."""

from __future__ import annotations

import os

from vraid.sim import experiment
from vraid.sim.experiment.runner import run_experiment


def test_runs_that_mount_run_last_in_the_main_process(tmp_path, monkeypatch):
    monkeypatch.setitem(experiment.EXPERIMENTS, "fake-mount", "fake_mount_experiment")
    done = run_experiment("fake-mount", tmp_path, quick=True, jobs=2)
    res = done.results
    assert set(res) == {"pool-a", "mounts", "pool-b"}
    assert res["mounts"]["pid"] == os.getpid()
    assert res["pool-a"]["pid"] != os.getpid() and res["pool-b"]["pid"] != os.getpid()
    assert res["mounts"]["at"] > max(res["pool-a"]["at"], res["pool-b"]["at"])

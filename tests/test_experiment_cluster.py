"""`vraid experiment --cluster`: the sweep's runs on Dask give byte-identical results to
``--jobs 1`` and ``--jobs N`` (issue 36, item 1); bad addresses and sizes are one-line errors;
``--estimate`` prints every size."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vraid.sim.experiment.cluster import MOUNT, parse_address
from vraid.errors import VraidError

HAVE_DASK = importlib.util.find_spec("distributed") is not None


def vraid(*args: str, pre: str = "pass") -> subprocess.CompletedProcess:
    code = f"import sys; {pre}; from vraid.cli.main import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, COLUMNS="200")  # rich wraps at 80 columns where there is no terminal
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, env=env)


def outputs(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "meta.json"}


@pytest.mark.skipif(not HAVE_DASK, reason="Dask's distributed is not installed (pip install 'vraid[cluster]')")
def test_stride_on_a_local_cluster_is_byte_identical_to_one_process(tmp_path):
    one = vraid("experiment", "stride", "--quick", "--jobs", "1", "--out", str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    pool = vraid("experiment", "stride", "--quick", "--jobs", "2", "--out", str(tmp_path / "pool"))
    assert pool.returncode == 0, pool.stderr
    dask = vraid("experiment", "stride", "--quick", "--cluster", "local:2", "--out", str(tmp_path / "dask"))
    assert dask.returncode == 0, dask.stderr
    files = outputs(tmp_path / "one")
    assert {"results.json", "results.md", "fig1.json", "detail.json"} <= set(files)
    assert outputs(tmp_path / "pool") == files and outputs(tmp_path / "dask") == files
    meta = json.loads((tmp_path / "dask" / "meta.json").read_text())
    from vraid.sim.experiment import stride

    n = len(stride.runs(True))
    assert meta["cluster"] == "local:2" and meta["runs"] == n and meta["resumed"] == 0
    # progress (stderr is no terminal: a line per run) names each run's worker, two Dask workers in all
    lines = [ln for ln in dask.stderr.splitlines() if ln.startswith("stride: ")]
    assert len(lines) == n and lines[-1].startswith(f"stride: {n}/{n} ")
    workers = {ln.rsplit(" on ", 1)[1].split(",")[0] for ln in lines}
    assert all(w.startswith("tcp://127.0.0.1:") for w in workers) and 1 <= len(workers) <= 2
    assert any(", ETA " in ln for ln in lines)
    stored = [json.loads(p.read_text()) for p in (tmp_path / "dask" / "runs" / "stride").glob("*.json")]
    assert len(stored) == n and {r["worker"] for r in stored} == workers
    # the same command again: every run is stored, nothing is sent to a cluster
    again = vraid("experiment", "stride", "--quick", "--cluster", "local:2", "--out", str(tmp_path / "dask"))
    assert again.returncode == 0 and f"{n} of {n} runs from an earlier session" in again.stdout
    assert outputs(tmp_path / "dask") == files


def test_without_dask_cluster_says_what_to_install(tmp_path):
    r = vraid("experiment", "stride", "--quick", "--cluster", "local:2", "--out", str(tmp_path),
              pre="sys.modules['distributed'] = None")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "not installed" in r.stderr and "pip install 'vraid[cluster]'" in r.stderr
    assert not any(tmp_path.iterdir())                       # nothing ran, nothing written


@pytest.mark.parametrize("args, words", [
    (["--cluster", "somewhere"], "not a cluster address"),
    (["--cluster", "local:0"], "not a positive number of workers"),
    (["--cluster", "local:two"], "not a positive number of workers"),
    (["--cluster", "local:2", "--jobs", "2"], "--jobs and --cluster both given"),
    (["--size", "huge"], "unknown size"),
    (["--quick", "--size", "paper"], "--quick and --size paper both given"),
])
def test_bad_input_is_one_error(tmp_path, args, words):
    r = vraid("experiment", "stride", *args, "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and words in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) <= 2            # the error and its hint
    assert not (tmp_path / "out").exists()


def test_addresses():
    assert parse_address("local:3").workers == 3 and parse_address("local:3").local
    remote = parse_address("tcp://10.0.0.5:8786")
    assert remote.url == "tcp://10.0.0.5:8786" and not remote.local
    for bad in ("tcp://host", "http://host:80", "local:", ""):
        with pytest.raises(VraidError):
            parse_address(bad)
    assert MOUNT == "mount"


@pytest.mark.parametrize("size", ["quick", "default", "paper"])
def test_every_spec_of_every_experiment_has_a_work_to_estimate(size):
    """``--estimate`` weighs every run of every size (msc-ct's eq. (1) and Table II runs once had
    no ``writes`` and made it fail with a KeyError)."""
    from vraid.sim.experiment import get, names
    from vraid.sim.experiment.estimate import WORK, work_of
    from vraid.sim.experiment.sizes import specs_for

    assert set(WORK) == set(names())
    for name in names():
        for spec in specs_for(get(name), name, size):
            assert work_of(name, spec) >= 0, (name, spec.get("id"))


def test_estimate_prints_every_size():
    from vraid.sim.experiment import get
    from vraid.sim.experiment.sizes import specs_for

    r = vraid("experiment", "levels", "--estimate")
    assert r.returncode == 0, r.stderr
    cells = [[c.strip() for c in ln.split("│")[1:-1]] for ln in r.stdout.splitlines() if ln.count("│") >= 6]
    rows = {c[0]: c for c in cells}
    assert {"quick", "default", "paper"} <= set(rows)
    for size in ("quick", "default", "paper"):
        assert rows[size][1] == f"{len(specs_for(get('levels'), 'levels', size)):,}"
        minutes, seconds = rows[size][4].split(":")[-2:]          # the wall time, m:ss
        assert minutes.isdigit() and seconds.isdigit()
    assert "calibration" in r.stdout

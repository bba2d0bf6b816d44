"""vraid installs and runs without pyfuse3 (issue 35 item 7: a laptop with no root and no FUSE).

pyfuse3 is the extra ``vraid[mount]``. The wheel is built from the source, installed with
``--no-deps`` into a fresh venv, and given every other dependency through a directory that
links this environment's installed packages except pyfuse3 (so the test needs no network).
Then the commands that need no mount must run there, and ``vraid mount`` must say in one
line what to install.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from test_packaging import build_wheel

REPO = Path(__file__).resolve().parent.parent
#: this environment's installed packages that the FUSE-less venv must not see
LEFT_OUT = ("pyfuse3", "vraid", "__editable__", "_vraid")


def _deps_without_pyfuse3(into: Path) -> Path:
    """A directory linking every installed package of this environment but pyfuse3 and vraid."""
    into.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.startswith(LEFT_OUT) or entry.suffix == ".pth":
            continue
        (into / entry.name).symlink_to(entry)
    return into


@pytest.fixture(scope="module")
def fuseless(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("nofuse")
    wheel = build_wheel(REPO, work / "wheel")
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    deps = _deps_without_pyfuse3(work / "deps")
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "vraid-test-deps.pth").write_text(f"{deps}\n")
    run = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q",
                          "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env |= {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "COLUMNS": "80"}
    return {"vraid": env_dir / "bin" / "vraid", "python": py, "env": env, "cwd": home}


def _run(fuseless: dict, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(fuseless["vraid"]), *args], capture_output=True, text=True,
                          env=fuseless["env"], cwd=fuseless["cwd"], timeout=timeout)


def test_the_venv_really_lacks_pyfuse3_and_runs_the_installed_vraid(fuseless):
    out = subprocess.run([str(fuseless["python"]), "-c",
                          "import importlib.util, vraid; print(importlib.util.find_spec('pyfuse3'), vraid.__file__)"],
                         capture_output=True, text=True, env=fuseless["env"], cwd=fuseless["cwd"], check=True)
    spec, where = out.stdout.split()
    assert spec == "None"
    assert str(REPO) not in where  # the wheel's copy, not this work tree


@pytest.mark.parametrize("args, expect", [
    (("lab", "run", "rxw-matrix", "--batch"), "all agree"),
    (("sim", "--requests", "300"), "virtual time"),
    (("fuzz", "--ct", "msc", "--examples", "2"), "no failure"),
    (("top", "--once", "--sim"), "members"),
    (("rxw", "--z", "DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE"), "M"),
    (("layout", "--level", "5", "--disks", "4"), "P"),
], ids=["lab", "sim", "fuzz", "top-sim", "rxw", "layout"])
def test_commands_that_need_no_mount_run_without_pyfuse3(fuseless, args, expect):
    run = _run(fuseless, *args)
    assert run.returncode == 0, f"vraid {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    assert expect in run.stdout
    assert "Traceback" not in run.stderr
    assert not (fuseless["cwd"] / ".hypothesis").exists()


def test_mount_says_what_to_install(fuseless, tmp_path):
    (tmp_path / "mnt").mkdir()
    run = _run(fuseless, "mount", str(tmp_path / "array"), str(tmp_path / "mnt"))
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "pip install 'vraid[mount]'" in " ".join(run.stderr.split())
    assert not (tmp_path / "array").exists()

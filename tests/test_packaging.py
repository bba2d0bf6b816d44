"""The package list of pyproject.toml, and the wheel built from it, hold the whole source tree.

pyproject.toml maps the design card's four top-level folders onto one namespace
(``package-dir``: ``vraid/`` is ``vraid``, ``backends/`` is ``vraid.backends``, ``policies/``
is ``vraid.policies``, ``labs/`` is ``vraid.labs``) and lists every package by hand. A new
sub-package that is not added there is left out of the wheel: an editable install still finds
it, a real install does not. These tests fail naming the package (or module) that is missing.

The wheel is built from a copy of the source in a temporary directory (the work tree gets no
``build/``), with ``pip wheel --no-deps``; without build isolation when this environment's
setuptools is new enough for pyproject.toml, which keeps it to seconds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _pyproject(repo: Path = REPO) -> dict:
    return tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]


def source_packages(repo: Path, package_dir: dict[str, str]) -> dict[str, list[str]]:
    """Package name -> its .py files (names only) for every directory under a mapped folder
    that holds .py files."""
    out: dict[str, list[str]] = {}
    for package, folder in package_dir.items():
        if "." in package and any(package.startswith(p + ".") and folder.startswith(f + "/")
                                  for p, f in package_dir.items()):
            continue  # nested mapping inside another mapped folder: reached from there
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.parent.relative_to(base).parts
            out.setdefault(".".join((package, *rel)), []).append(path.name)
    return out


def packaging_problems(listed: list[str], source: dict[str, list[str]]) -> list[str]:
    """What is wrong with pyproject.toml's ``packages`` against the source tree."""
    problems = [f"package {name} is not listed in pyproject.toml [tool.setuptools] packages"
                for name in sorted(set(source) - set(listed))]
    problems += [f"pyproject.toml lists {name}, which has no .py files in the source tree"
                 for name in sorted(set(listed) - set(source))]
    problems += [f"pyproject.toml lists {name} twice" for name in sorted({n for n in listed if listed.count(n) > 1})]
    return problems


def wheel_problems(names: list[str], source: dict[str, list[str]]) -> list[str]:
    """Packages and modules of the source tree that the wheel (its file ``names``) lacks."""
    have = set(names)
    problems = []
    for package, files in sorted(source.items()):
        where = package.replace(".", "/")
        missing = [f for f in files if f"{where}/{f}" not in have]
        if len(missing) == len(files):
            problems.append(f"package {package} is missing from the wheel")
        elif missing:
            problems.append(f"package {package} lacks {', '.join(missing)} in the wheel")
    return problems


def build_wheel(repo: Path, work: Path) -> Path:
    """A wheel built from a copy of the source (pyproject.toml, README and the mapped folders)."""
    src = work / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(repo / name, src / name)
    for folder in {f.split("/")[0] for f in _pyproject(repo)["package-dir"].values()}:
        shutil.copytree(repo / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    cmd = [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(work / "dist")]
    if _setuptools_major() >= _needed_setuptools(repo):
        cmd.append("--no-build-isolation")
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=work)
    assert run.returncode == 0, f"pip wheel failed:\n{run.stdout}\n{run.stderr}"
    (wheel,) = (work / "dist").glob("vraid-*.whl")
    return wheel


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 0


def _needed_setuptools(repo: Path) -> int:
    requires = tomllib.loads((repo / "pyproject.toml").read_text())["build-system"]["requires"]
    for req in requires:
        m = re.fullmatch(r"\s*setuptools\s*>=\s*(\d+).*", req)
        if m:
            return int(m.group(1))
    return 10**6  # no readable bound: build isolated


# ---------------------------------------------------------------------- the repository


def test_package_dir_maps_the_four_folders() -> None:
    assert _pyproject()["package-dir"] == {"vraid": "vraid", "vraid.backends": "backends",
                                           "vraid.policies": "policies", "vraid.labs": "labs"}


def test_pyproject_lists_exactly_the_source_packages() -> None:
    cfg = _pyproject()
    source = source_packages(REPO, cfg["package-dir"])
    assert {"vraid", "vraid.engine", "vraid.backends", "vraid.policies.ct", "vraid.labs"} <= set(source)
    problems = packaging_problems(cfg["packages"], source)
    assert not problems, "\n".join(problems) + "\n(add it to `packages` in pyproject.toml and re-run setup.sh)"


def test_every_source_package_has_an_init() -> None:
    source = source_packages(REPO, _pyproject()["package-dir"])
    bare = sorted(p for p, files in source.items() if "__init__.py" not in files)
    assert not bare, f"directories with modules but no __init__.py: {', '.join(bare)}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(REPO, tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_every_package_and_module(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    source = source_packages(REPO, _pyproject()["package-dir"])
    problems = wheel_problems(names, source)
    assert not problems, "\n".join(problems)
    # and the console script's module is in it
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry).decode()
    assert re.search(r"^vraid = vraid\.cli\.main:main$", text, re.M) and "vraid/cli/main.py" in names


# ---------------------------------------------------------------------- the checks themselves


def _tree(root: Path, files: list[str]) -> Path:
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    return root


def test_a_forgotten_package_is_named(tmp_path: Path) -> None:
    repo = _tree(tmp_path, ["top/__init__.py", "top/a.py", "top/sub/__init__.py", "top/sub/deep/__init__.py",
                            "top/sub/deep/m.py", "plug/__init__.py", "plug/x.py", "top/data.txt"])
    source = source_packages(repo, {"top": "top", "top.plug": "plug"})
    assert source == {"top": ["__init__.py", "a.py"], "top.sub": ["__init__.py"],
                      "top.sub.deep": ["__init__.py", "m.py"], "top.plug": ["__init__.py", "x.py"]}
    assert packaging_problems(["top", "top.sub", "top.sub.deep", "top.plug"], source) == []
    problems = packaging_problems(["top", "top.sub", "top.plug", "top.gone", "top"], source)
    assert problems == ["package top.sub.deep is not listed in pyproject.toml [tool.setuptools] packages",
                        "pyproject.toml lists top.gone, which has no .py files in the source tree",
                        "pyproject.toml lists top twice"]


def test_a_package_or_module_missing_from_the_wheel_is_named() -> None:
    source = {"vraid": ["__init__.py", "errors.py"], "vraid.labs": ["__init__.py"],
              "vraid.sim": ["__init__.py", "table.py"]}
    names = ["vraid/__init__.py", "vraid/errors.py", "vraid/sim/__init__.py", "vraid-0.1.0.dist-info/RECORD"]
    assert wheel_problems(names, source) == ["package vraid.labs is missing from the wheel",
                                             "package vraid.sim lacks table.py in the wheel"]
    assert wheel_problems(names + ["vraid/labs/__init__.py", "vraid/sim/table.py"], source) == []

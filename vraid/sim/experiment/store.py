"""The run store: every finished run of a sweep, kept under the output directory.

A sweep of hours must survive an interruption (issue 36, item 2). Each finished run is
written, as soon as it finishes, to ``OUT/runs/EXPERIMENT/KEY.json``, where ``KEY`` hashes
what decides the run's output: the experiment, the run's spec, vraid's version and the
code's commit (:func:`code_identity`). Rerunning the same command finds the runs already
there and runs only the rest; a run of other code, another size or other options has
another key and is run again. ``--fresh`` (:meth:`RunStore.clear`) starts over. The files are
plain JSON: committed with a partial sweep, they let another session or machine continue it.

Each file holds the run's output as JSON and, beside it, where and how long it ran (the
worker, the seconds), which :mod:`.runner` sums into meta.json. Files are written whole
(a temporary file renamed over the target), so an interruption never leaves half a run.

A re-analysis (``vraid experiment NAME --runs-of COMMIT``) reads the runs another commit's
code stored and writes the report with this code: :func:`stored_identity` finds that code's
identity among the stored records, and while the report is written :func:`runs_made_by`
makes :func:`source_commit` name both commits, so every results.md says which code made the
runs and which wrote the rows. With ``--fill`` the runs the sweep lacks are made by this code
(stored under its own identity), once it has remade one of the stored runs and found every
number that run's output holds unchanged (:func:`same_output`); the report names those runs'
code and the run the check remade.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from vraid import __version__
from vraid.errors import VraidError

#: the directory under the output directory that holds the finished runs
STORE_DIR = "runs"
#: the top-level packages whose sources make up the code of a run (pyproject's package-dir)
PACKAGES = ("vraid", "vraid.backends", "vraid.policies", "vraid.labs")


def _package_dirs() -> list[Path]:
    import importlib

    return [Path(importlib.import_module(p).__path__[0]) for p in PACKAGES]


def source_hash() -> str:
    """A hash of every ``.py`` file of vraid's packages (names and contents)."""
    h = hashlib.sha256()
    for top in _package_dirs():
        for path in sorted(top.rglob("*.py")):
            h.update(str(path.relative_to(top.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _git(cwd: Path, *args: str) -> str | None:
    try:
        r = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


@lru_cache(maxsize=1)
def code_identity() -> str:
    """The code a run ran: the commit that last changed vraid's package sources in the git
    checkout vraid is imported from (``git rev-list -1 HEAD -- PACKAGES``: committing results
    or docs does not change it, so a stored sweep stays valid), with ``+src:HASH`` when the
    sources differ from that commit; ``src:HASH`` (a hash of the package sources) where
    vraid is not a git checkout (an installed wheel)."""
    dirs = _package_dirs()
    top = _git(dirs[0], "rev-parse", "--show-toplevel")
    tracked = top is not None and _git(dirs[0], "ls-files", "--error-unmatch", "__init__.py") is not None
    commit = _git(Path(top), "rev-list", "-1", "HEAD", "--", *(str(d) for d in dirs)) if tracked else None
    if not commit:
        return f"src:{source_hash()}"
    dirty = _git(Path(top), "status", "--porcelain", "--", *(str(d) for d in dirs))
    return commit if dirty == "" else f"{commit}+src:{source_hash()}"


#: the code that made the runs of a re-analysis being reported (as printed), and what ``--fill``
#: added (:func:`runs_made_by`); empty outside one
_RUNS_CODE: list[tuple[str, str]] = []


def _short(identity: str) -> str:
    if identity.startswith("src:"):
        return identity
    commit, _, changed = identity.partition("+")
    return commit[:7] + (" + uncommitted changes" if changed else "")


def source_commit() -> str:
    """The code a run ran as a report prints it: :func:`code_identity`'s commit, short, with
    ``+ uncommitted changes`` when the sources differ from it (the same code ``meta.json``'s
    ``code`` records); ``src:HASH`` outside git. During a re-analysis (:func:`runs_made_by`):
    ``RUNS (the runs); REPORT (this report's rows)``."""
    here = _short(code_identity())
    if _RUNS_CODE:
        runs, filled = _RUNS_CODE[-1]
        return f"{runs} (the runs{filled}); {here} (this report's rows)"
    return here


def _ids(ids: list[str], most: int = 4) -> str:
    return ", ".join(ids[:most]) + (" ..." if len(ids) > most else "")


class runs_made_by:
    """``with runs_made_by(identity):`` the report written inside names ``identity`` as the code
    that made its runs (:func:`source_commit`); ``filled``: the ids of the runs this code made
    in their place (``--fill``), ``checked``: the stored runs it remade to check it first.

    ``identity`` may be a mapping of several codes to the ids of the runs each made (``--runs-of
    A,B``): the report then names each code and its share, e.g. ``1c58995 (37 of the 39 runs),
    414e901 (2: raid5-fig7-8, raid0-fig7-8) (the runs); ...``."""

    def __init__(self, identity: str | dict[str, list[str]], filled: list[str] | None = None,
                 checked: list[str] | None = None) -> None:
        if isinstance(identity, dict):
            total = sum(len(ids) for ids in identity.values()) + len(filled or [])
            identity = ", ".join(f"{_short(code)} ({len(ids)}: {_ids(ids)})" if len(ids) <= 3 else
                                 f"{_short(code)} ({len(ids)} of the {total} runs)" for code, ids in identity.items())
        else:
            identity = _short(identity)
        self.identity = identity  # as the report prints it
        remade = f"run {checked[0]}" if checked and len(checked) == 1 else f"runs {', '.join(checked or [])}"
        self.note = (f"; {len(filled)} of them ({_ids(filled)}) made by "
                     f"this code, which remade the stored {remade} with every number the same"
                     if filled else "")

    def __enter__(self) -> "runs_made_by":
        _RUNS_CODE.append((self.identity, self.note))
        return self

    def __exit__(self, *exc: object) -> None:
        _RUNS_CODE.pop()


def stored_identity(out_dir: Path, experiment: str, commit: str) -> str:
    """The full code identity of the runs stored under ``out_dir`` whose code starts with
    ``commit`` (a commit, short or whole, or an identity as meta.json's ``code`` prints it).

    Raises:
        VraidError: no stored run of that code, or a prefix that names more than one.
    """
    found: set[str] = set()
    for path in (Path(out_dir) / STORE_DIR / experiment).glob("*.json"):
        try:
            code = json.loads(path.read_text()).get("code")
        except (OSError, ValueError):
            continue
        if isinstance(code, str) and commit and code.startswith(commit):
            found.add(code)
    if not found:
        raise VraidError(f"no run of {experiment} stored in {Path(out_dir) / STORE_DIR / experiment} was made by "
                         f"code {commit!r}",
                         "give the commit that made the stored runs (each run's file names it under \"code\"), "
                         "or --out the directory that holds them")
    if len(found) > 1:
        raise VraidError(f"code {commit!r} names {len(found)} stored codes: {', '.join(sorted(found))}",
                         "give more of the commit")
    return found.pop()


def same_output(old: Any, new: Any, path: str = "") -> str | None:
    """Where ``new`` differs from ``old`` in what ``old`` holds (None: nowhere): every key of
    an old mapping must be in the new one with the same value, recursively; keys only the new
    one has (a counter added since) are allowed; lists and values must be equal."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return path or "(the output)"
        for k, v in old.items():
            if k not in new:
                return f"{path}.{k}".lstrip(".")
            where = same_output(v, new[k], f"{path}.{k}")
            if where is not None:
                return where.lstrip(".")
        return None
    if isinstance(old, list):
        if not isinstance(new, list) or len(old) != len(new):
            return path or "(the output)"
        for i, (a, b) in enumerate(zip(old, new)):
            where = same_output(a, b, f"{path}[{i}]")
            if where is not None:
                return where
        return None
    return None if old == new else (path or "(the output)")


def run_key(experiment: str, spec: dict[str, Any], identity: str) -> str:
    """The key of one run: a hash of the experiment, the spec, vraid's version and ``identity``."""
    text = json.dumps({"experiment": experiment, "spec": spec, "vraid": __version__, "code": identity},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class RunStore:
    """The finished runs of experiment ``experiment`` under ``out_dir`` for code ``identity``."""

    def __init__(self, out_dir: Path, experiment: str, identity: str | None = None) -> None:
        self.dir = Path(out_dir) / STORE_DIR / experiment
        self.experiment = experiment
        self.identity = identity or code_identity()

    def path(self, spec: dict[str, Any]) -> Path:
        """The file that holds the run of ``spec``."""
        return self.dir / f"{run_key(self.experiment, spec, self.identity)}.json"

    def load(self, spec: dict[str, Any]) -> dict[str, Any] | None:
        """The stored record of ``spec`` (``{"output", "worker", "seconds", ...}``), or None."""
        try:
            record = json.loads(self.path(spec).read_text())
        except (OSError, ValueError):
            return None
        return record if record.get("spec") == json.loads(json.dumps(spec)) else None

    def save(self, spec: dict[str, Any], output: Any, *, worker: str, seconds: float) -> dict[str, Any]:
        """Store a finished run; returns the record as a later :meth:`load` reads it."""
        record = {"experiment": self.experiment, "id": spec.get("id"), "vraid": __version__, "code": self.identity,
                  "worker": worker, "seconds": round(seconds, 3), "spec": spec, "output": output}
        text = json.dumps(record, indent=1) + "\n"  # key order kept: collect() may depend on it
        path = self.path(spec)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text)
            os.replace(tmp, path)
        except OSError as exc:
            raise VraidError(f"cannot store a finished run in {self.dir}: {exc.strerror}",
                             "choose another --out directory") from exc
        return json.loads(text)

    def clear(self) -> None:
        """Forget every stored run of this experiment (``--fresh``), of any code or size."""
        shutil.rmtree(self.dir, ignore_errors=True)


__all__ = ["PACKAGES", "STORE_DIR", "RunStore", "code_identity", "run_key", "runs_made_by", "same_output",
           "source_commit", "source_hash", "stored_identity"]

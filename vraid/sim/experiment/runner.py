"""Run an experiment: its independent runs in parallel processes, then collect and report.

``run_experiment("stride", Path("out"), quick=True, jobs=2)`` runs every spec of
``module.runs(quick)`` with ``module.run`` in a :class:`concurrent.futures.ProcessPoolExecutor`
of ``jobs`` workers (``jobs=1``: in this process, no pool), telling an optional ``progress``
callback how far it is (the CLI draws the bar: no terminal library down here), then writes ``DIR/results.json`` (``module.collect``), any extra JSON files (``module.extras``),
``DIR/results.md`` and ``DIR/*.png`` (``module.report``) and ``DIR/meta.json`` (the
settings and wall time of this run: the one file that differs between identical runs).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: ``progress(done, total, run_id)``: ``done`` runs of ``total`` finished; ``run_id`` is the
#: run just started (one process) or just finished (a pool)
Progress = Callable[[int, int, str], None]

from vraid import __version__
from vraid.errors import VraidError
from . import get


@dataclass
class ExperimentRun:
    """What :func:`run_experiment` did: the collected results and the files it wrote."""

    name: str
    out_dir: Path
    results: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    wall_seconds: float = 0.0


def _run_one(module_path: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Worker entry point: import the experiment module and run one spec."""
    import importlib

    return importlib.import_module(module_path).run(spec)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def run_experiment(name: str, out_dir: Path, *, quick: bool = False, jobs: int | None = None,
                   progress: Progress | None = None, options: dict[str, Any] | None = None) -> ExperimentRun:
    """Run experiment ``name`` and write its results to ``out_dir`` (created if missing).

    ``options``: keyword arguments for the module's ``runs(quick, **options)`` (a size between
    quick and full, e.g. ``{"nw": 1024}`` for ``adaptive-hlwm``); recorded in meta.json.

    Raises:
        VraidError: for an unknown experiment, a bad ``jobs``, or an ``out_dir`` that cannot
            be written.
    """
    module = get(name)
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise VraidError(f"--jobs {jobs} is not a positive number", "e.g. --jobs 2")
    if getattr(module, "SERIAL", False):  # real-time runs (vc-raid): one after another
        jobs = 1
    try:  # before the output directory is made: a refused option leaves nothing behind
        specs = module.runs(quick, **(options or {}))
    except TypeError as exc:
        raise VraidError(f"experiment {name} does not take options {sorted(options or {})}: {exc}",
                         "see the experiment's runs() in vraid/sim/experiment/ for the options it takes") from exc
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VraidError(f"cannot create {out_dir}: {exc.strerror}", "choose another --out directory") from exc
    ids = [s["id"] for s in specs]
    if len(set(ids)) != len(ids):  # pragma: no cover - a bug in the experiment module
        raise ValueError(f"experiment {name}: run ids are not unique")
    tell = progress or (lambda done, total, run_id: None)
    started = time.perf_counter()
    outputs: list[dict[str, Any] | None] = [None] * len(specs)
    tell(0, len(specs), "")
    if jobs == 1 or len(specs) <= 1:
        for i, spec in enumerate(specs):
            tell(i, len(specs), spec["id"])
            outputs[i] = module.run(spec)
        tell(len(specs), len(specs), specs[-1]["id"] if specs else "")
    else:
        with cf.ProcessPoolExecutor(max_workers=min(jobs, len(specs))) as pool:
            futures = {pool.submit(_run_one, module.__name__, spec): i for i, spec in enumerate(specs)}
            for done, fut in enumerate(cf.as_completed(futures), 1):
                i = futures[fut]
                outputs[i] = fut.result()
                tell(done, len(specs), specs[i]["id"])
    pairs = [(spec, out) for spec, out in zip(specs, outputs)]
    results = module.collect(pairs)
    files = [_write_json(out_dir / "results.json", results)]
    extras = getattr(module, "extras", None)
    if extras is not None:
        for fname, data in extras(pairs).items():
            files.append(_write_json(out_dir / fname, data))
    files += list(module.report(results, out_dir))
    wall = time.perf_counter() - started
    meta = {"experiment": name, "quick": quick, **({"options": options} if options else {}), "jobs": jobs,
            "runs": len(specs),
            "wall_seconds": round(wall, 3), "vraid": __version__}
    files.append(_write_json(out_dir / "meta.json", meta))
    return ExperimentRun(name, out_dir, results, files, wall)


def _write_json(path: Path, data: Any) -> Path:
    try:
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as exc:
        raise VraidError(f"cannot write {path}: {exc.strerror}", "choose another --out directory") from exc
    return path


def load_json(path: Path) -> dict[str, Any]:
    """A JSON file an experiment wrote next to results.json; {} when missing or unreadable."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}

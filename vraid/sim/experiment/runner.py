"""Run an experiment: its independent runs here, in parallel processes or on a Dask cluster,
then collect and report.

``run_experiment("stride", Path("out"), size="quick", jobs=2)`` takes the specs of the
experiment at a named size (:mod:`.sizes`), skips those already finished under ``out``
(:mod:`.store`: a sweep resumes where it was interrupted; ``fresh=True`` starts over), runs
the rest with ``module.run`` (``jobs=1``: in this process; ``jobs=N``: a
:class:`concurrent.futures.ProcessPoolExecutor`; ``cluster="local:N"`` or
``"tcp://HOST:PORT"``: Dask, :mod:`.cluster`), storing each as it finishes and telling an
optional ``progress`` callback how far it is (the CLI draws the bar: no terminal library
down here), then writes ``DIR/results.json`` (``module.collect``), any extra JSON files
(``module.extras``), ``DIR/results.md`` and ``DIR/*.png`` (``module.report``) and
``DIR/meta.json`` (the settings, the code and the wall time of this run: the one file that
differs between identical runs). Every output reaches ``collect`` as the store keeps it (JSON),
whether it ran now or in an earlier session, so results are byte-identical either way and
between ``--jobs 1``, ``--jobs N`` and a cluster. ``runs_of="COMMIT"`` runs nothing: it
writes the report with this code from the runs another commit's code stored (a re-analysis,
e.g. new rows over a paper-size sweep that took a day to make; ``"A,B"``: the runs of two
codes, each from the first that stored it); with ``fill=True`` the runs
that commit did not store (new runs the new rows need) are made by this code, after it has
remade a stored run like them and found every number of that run's output unchanged.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

#: ``progress(done, total, run_id, worker)``: ``done`` runs of ``total`` finished (those an
#: earlier session stored count as done from the first call on); ``run_id`` is the run just
#: started (in this process) or just finished (a pool, a cluster), ``worker`` where it ran
Progress = Callable[[int, int, str, str], None]

from vraid import __version__
from vraid.errors import VraidError
from . import get
from .sizes import check_size, specs_for
from .store import RunStore, code_identity, runs_made_by, same_output, stored_identity
from .task import timed_run

#: the worker name of a run in this process (``jobs=1``)
HERE = "local"


@dataclass
class ExperimentRun:
    """What :func:`run_experiment` did: the collected results and the files it wrote."""

    name: str
    out_dir: Path
    results: dict[str, Any]
    files: list[Path] = field(default_factory=list)
    wall_seconds: float = 0.0
    #: runs taken from the store (finished by an earlier session) and runs made now
    resumed: int = 0
    ran: int = 0


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _in_pool(module_path: str, specs: list[dict[str, Any]], pending: list[int],
             jobs: int) -> Iterator[tuple[int, dict[str, Any]]]:
    with cf.ProcessPoolExecutor(max_workers=min(jobs, len(pending))) as pool:
        futures = {pool.submit(timed_run, module_path, specs[i]): i for i in pending}
        try:
            for fut in cf.as_completed(futures):
                yield futures[fut], fut.result()
        finally:  # interrupted: runs not yet started are dropped, not run after the fact
            for fut in futures:
                fut.cancel()


def run_experiment(name: str, out_dir: Path, *, quick: bool = False, size: str | None = None,
                   jobs: int | None = None, progress: Progress | None = None,
                   options: dict[str, Any] | None = None, cluster: str | None = None,
                   fresh: bool = False, runs_of: str | None = None, fill: bool = False) -> ExperimentRun:
    """Run experiment ``name`` and write its results to ``out_dir`` (created if missing).

    ``size``: ``quick``, ``default`` or ``paper`` (:mod:`.sizes`; ``quick=True`` is
    ``size="quick"``). ``options``: keyword arguments for the module's ``runs()`` laid over
    the size's (e.g. ``{"nw": 1024}`` for ``adaptive-hlwm``); recorded in meta.json.
    ``cluster``: run on Dask (:func:`.cluster.parse_address`) instead of ``jobs`` processes.
    ``fresh``: forget the runs stored under ``out_dir`` by earlier sessions.
    ``runs_of``: a re-analysis: run nothing, and write the report with this code from the runs
    that commit's code stored under ``out_dir`` (every run of the sweep must be there); meta.json
    records both (``code``: this report's, ``runs_code``: the runs'). Several commits separated
    by commas: each run from the first that stored it (:func:`_stored_codes`); ``runs_code``
    then lists the codes and ``runs_by`` the ids of the runs each made. ``fill``: with ``runs_of``,
    make the runs that code did not store with this code (:func:`_check_fill` first; meta.json's
    ``filled`` lists them).

    Raises:
        VraidError: for an unknown experiment or size, a bad ``jobs`` or ``cluster``, an
            ``out_dir`` that cannot be written, or a cluster that cannot run the sweep; with
            ``runs_of``, for ``fresh`` or ``cluster`` beside it, a code with no stored runs, or a
            sweep with runs missing (without ``fill``); with ``fill``, for runs in real time (their
            outputs differ every time) or this code remaking a stored run differently.
    """
    module = get(name)
    size = check_size(size or ("quick" if quick else "default"))
    address = None
    if cluster is not None:
        from .cluster import parse_address, require_distributed

        if jobs is not None:
            raise VraidError("--jobs and --cluster both given", "--jobs counts processes on this machine; with "
                             "--cluster the cluster's workers run the sweep: give one of them")
        address = parse_address(cluster)
        require_distributed()
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise VraidError(f"--jobs {jobs} is not a positive number", "e.g. --jobs 2")
    if getattr(module, "SERIAL", False):  # real-time runs (vc-raid): one after another
        jobs = 1
    specs = specs_for(module, name, size, options)  # before the output directory is made
    out_dir = Path(out_dir)
    runs_codes: list[str] = []
    if fill and runs_of is None:
        raise VraidError("--fill without --runs-of", "--fill makes the runs a re-analysis lacks: give --runs-of "
                         "COMMIT, the code that stored the others")
    if runs_of is not None:  # before the output directory is made too: a bad one changes nothing
        if fresh or address is not None:
            raise VraidError(f"--runs-of with {'--fresh' if fresh else '--cluster'}",
                             "--runs-of runs nothing: it writes the report from runs already stored")
        runs_codes = _stored_codes(out_dir, name, runs_of)
    runs_code = runs_codes[0] if runs_codes else None
    created = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VraidError(f"cannot create {out_dir}: {exc.strerror}", "choose another --out directory") from exc
    ids = [s["id"] for s in specs]
    if len(set(ids)) != len(ids):  # pragma: no cover - a bug in the experiment module
        raise ValueError(f"experiment {name}: run ids are not unique")
    identity = code_identity()
    store = RunStore(out_dir, name, runs_code or identity)
    if fresh:
        store.clear()
    # each run from the first code, in the order given, that has it (this code's alone without --runs-of)
    records = _load_first(out_dir, name, specs, runs_codes or [identity])
    made_by: dict[str, list[str]] = {}
    if len(runs_codes) > 1:  # runs of several codes: which made which
        made_by = {c: [s["id"] for s, r in zip(specs, records) if r is not None and r["code"] == c] for c in runs_codes}
        idle = [c for c, ids in made_by.items() if not ids]
        if idle:
            raise VraidError(f"--runs-of: code {idle[0][:12]} stored no run of this sweep of {name} ({size}) that "
                             "an earlier code of the list did not", "leave it out of --runs-of, or give the size "
                             "and --set options its runs were made with")
    pending = [i for i, r in enumerate(records) if r is None]
    checked: list[str] = []
    filled: list[str] = []
    if runs_code is not None and pending and fill:
        checked = _check_fill(module, name, specs, records, pending, runs_code)
        store = RunStore(out_dir, name, identity)  # the filled runs: this code's, under its own key
        records = [r if r is not None else store.load(spec) for spec, r in zip(specs, records)]
        filled = [specs[i]["id"] for i in pending]
        pending = [i for i, r in enumerate(records) if r is None]
    elif runs_code is not None and pending:
        missing = [specs[i]["id"] for i in pending]
        raise VraidError(f"{len(missing)} of {len(specs)} runs of {name} ({size}) are not stored for code "
                         f"{' or '.join(c[:12] for c in runs_codes)}: {', '.join(missing[:8])}"
                         f"{' ...' if len(missing) > 8 else ''}",
                         "make them with that code (e.g. a git worktree at that commit, the same command without "
                         "--runs-of), then write the report again; or --fill to make them with this code")
    pending.sort(key=lambda i: bool(specs[i].get("mount")))  # runs that mount last, one at a time
    tell = progress or (lambda done, total, run_id, worker: None)
    started = time.perf_counter()
    resumed = done = len(specs) - len(pending)
    tell(done, len(specs), "", "")
    here = address is None and (jobs == 1 or len(pending) <= 1)  # in this process: told as each run starts
    if here:
        finished = _here(module.__name__, specs, pending,
                         lambda k, i: tell(resumed + k, len(specs), specs[i]["id"], HERE))
    elif not pending:
        finished = iter(())
    elif address is not None:
        from .cluster import run_on_cluster

        finished = run_on_cluster(address, module, name, specs, pending, identity)
    else:
        # a run that mounts (spec "mount": msc-ct's mount part) runs in real time: alone, after the pool
        mounts = [i for i in pending if specs[i].get("mount")]
        pooled = [i for i in pending if i not in mounts]
        finished = itertools.chain(_in_pool(module.__name__, specs, pooled, jobs) if pooled else iter(()),
                                   _here(module.__name__, specs, mounts, lambda k, i: None))
    try:
        for i, rec in finished:
            records[i] = store.save(specs[i], rec["output"], worker=rec["worker"], seconds=rec["seconds"])
            done += 1
            if not here:
                tell(done, len(specs), specs[i]["id"], rec["worker"])
    except BaseException:
        if created and not any(out_dir.iterdir()):  # nothing finished (a cluster out of reach): leave nothing
            out_dir.rmdir()
        raise
    if here and pending:
        tell(len(specs), len(specs), specs[pending[-1]]["id"], HERE)
    pairs = [(spec, rec["output"]) for spec, rec in zip(specs, records)]
    with runs_made_by(made_by or runs_code, filled, checked) if runs_code else contextlib.nullcontext():
        results = module.collect(pairs)
        files = [_write_json(out_dir / "results.json", results)]
        extras = getattr(module, "extras", None)
        if extras is not None:
            for fname, data in extras(pairs).items():
                files.append(_write_json(out_dir / fname, data))
        files += list(module.report(results, out_dir))
    wall = time.perf_counter() - started
    meta = {"experiment": name, "size": size, "quick": size == "quick", **({"options": options} if options else {}),
            **({"cluster": cluster} if address is not None else {"jobs": jobs}),
            "runs": len(specs), "resumed": resumed,
            "wall_seconds": round(wall, 3), "run_seconds": round(sum(r["seconds"] for r in records), 3),
            "vraid": __version__, "code": identity,
            **({"runs_code": list(made_by), "runs_by": made_by} if made_by else {"runs_code": runs_code} if runs_code
               else {}),
            **({"filled": {"runs": filled, "checked": checked}} if checked else {})}
    files.append(_write_json(out_dir / "meta.json", meta))
    return ExperimentRun(name, out_dir, results, files, wall, resumed, len(pending))


#: at most this many stored runs are remade by ``--fill``'s check
FILL_CHECKS = 3


def _stored_codes(out_dir: Path, name: str, runs_of: str) -> list[str]:
    """The code identities ``runs_of`` names: one commit, or several separated by commas (the
    runs of a sweep made partly by one code and partly by another; each run is read from the
    first code in this order that stored it).

    Raises:
        VraidError: an empty name, a code with no stored run, or one code named twice."""
    names = [c.strip() for c in runs_of.split(",")]
    if not all(names):
        raise VraidError(f"--runs-of {runs_of!r} names an empty commit",
                         "give one commit, or several separated by commas: --runs-of 1c58995,414e901")
    codes = [stored_identity(out_dir, name, c) for c in names]
    twice = [c for k, c in enumerate(codes) if c in codes[:k]]
    if twice:
        raise VraidError(f"--runs-of names code {twice[0][:12]} twice", "give each commit once")
    return codes


def _load_first(out_dir: Path, name: str, specs: list[dict[str, Any]],
                codes: list[str]) -> list[dict[str, Any] | None]:
    """Each spec's stored record from the first of ``codes`` that has one (None: none has)."""
    stores = [RunStore(out_dir, name, c) for c in codes]
    return [next((r for r in (s.load(spec) for s in stores) if r is not None), None) for spec in specs]


def _check_fill(module: Any, name: str, specs: list[dict[str, Any]], records: list[dict[str, Any] | None],
                pending: list[int], runs_code: str) -> list[str]:
    """Before ``--fill`` mixes this code's runs with ``runs_code``'s: remake stored runs and
    compare (:func:`.store.same_output`). Returns their ids. The runs remade are the stored ones
    most like a missing one (the most spec settings in common with any of them, so that they go
    through the code the missing runs need), every one that ties, the quickest first, at most
    :data:`FILL_CHECKS`.

    Raises:
        VraidError: runs in real time (never the same twice), no stored run to remake, or a
            number of a remade run that differs."""
    if getattr(module, "SERIAL", False) or any(specs[i].get("mount") for i in pending):
        raise VraidError(f"--fill for runs of {name} in real time",
                         "a mounted run's output differs every time, so this code cannot be checked against "
                         f"{runs_code[:12]}'s: make the missing runs with that code (a git worktree at that commit)")
    stored = [i for i, r in enumerate(records) if r is not None]
    if not stored:  # pragma: no cover - stored_identity found a run of that code
        raise VraidError(f"--fill with no run of {name} stored for code {runs_code[:12]}",
                         "without one to remake, nothing shows that this code gives what that code gave: run the "
                         "sweep without --runs-of")

    def settings(spec: dict[str, Any]) -> set[tuple[str, str]]:
        return {(k, json.dumps(v, sort_keys=True)) for k, v in spec.items() if k != "id"}

    wanted = [settings(specs[j]) for j in pending]
    alike = {k: max(len(settings(specs[k]) & w) for w in wanted) for k in stored}
    most = max(alike.values())
    chosen = sorted((k for k in stored if alike[k] == most),
                    key=lambda k: (records[k] or {}).get("seconds", 0.0))[:FILL_CHECKS]
    for i in chosen:
        old = (records[i] or {})["output"]
        new = json.loads(json.dumps(timed_run(module.__name__, specs[i], worker=HERE)["output"]))
        where = same_output(old, new)
        if where is not None:
            raise VraidError(f"--fill: this code remade run {specs[i]['id']} of {(records[i] or {})['code'][:12]} "
                             f"and its {where} "
                             "differs", "the two codes do not give the same runs, so they cannot share a report: "
                             "make the missing runs with that code (a git worktree at that commit), or the whole "
                             "sweep with this one")
    return [specs[i]["id"] for i in chosen]


def _here(module_path: str, specs: list[dict[str, Any]], pending: list[int],
          starting: Callable[[int, int], None]) -> Iterator[tuple[int, dict[str, Any]]]:
    """The pending runs one after another in this process, ``starting(k, i)`` told before the
    k-th of them, ``specs[i]``."""
    for k, i in enumerate(pending):
        starting(k, i)
        yield i, timed_run(module_path, specs[i], worker=HERE)


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

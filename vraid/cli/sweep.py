"""The terminal side of ``vraid experiment``'s sweeps: the progress of a run and ``--estimate``.

:func:`progress_bar` is the ``progress`` callback of
:func:`vraid.sim.experiment.runner.run_experiment`: done/total, the run and the worker it ran
on, and an ETA from this session's pace (:class:`Pace`: runs an earlier session stored do not
count toward it), for a sweep here, in a pool or on a cluster alike. :func:`print_estimate`
prints :func:`vraid.sim.experiment.estimate.estimate`'s table. :func:`default_out` is where a
sweep writes without ``--out``; :func:`parse_set` reads its ``--set KEY=VALUE`` options.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from rich.markup import escape

from .common import console


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Pace:
    """The ETA of a sweep from the runs finished since its first report."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self.first: tuple[int, float] | None = None

    def tell(self, done: int, total: int) -> str:
        """``", ETA m:ss"`` once this session has finished a run ('' before, and at the end)."""
        t = self.now()
        if self.first is None:
            self.first = (done, t)
        d0, t0 = self.first
        if done <= d0 or done >= total:
            return ""
        return f", ETA {_clock((t - t0) / (done - d0) * (total - done))}"


@contextmanager
def progress_bar(name: str) -> Iterator[Callable[[int, int, str, str], None]]:
    """A rich bar on stderr on a terminal, a line per run otherwise (a sweep left running in
    the background, its stderr in a file)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    err = Console(stderr=True, emoji=False)
    pace = Pace()
    if not err.is_terminal:
        def line(done: int, total: int, run_id: str, worker: str) -> None:
            eta = pace.tell(done, total)
            if run_id:
                print(f"{name}: {done}/{total} {run_id} on {worker}{eta}", file=sys.stderr, flush=True)

        yield line
        return
    columns = (TextColumn(f"[bold]{name}[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=err, transient=False) as bar:
        task = bar.add_task("", total=None)

        def progress(done: int, total: int, run_id: str, worker: str) -> None:
            eta = pace.tell(done, total)
            bar.update(task, completed=done, total=total,
                       description=escape(f"{run_id} on {worker}{eta}" if run_id else ""))

        yield progress


def print_estimate(name: str, options: dict[str, Any], *, jobs: int | None, cluster: str | None) -> int:
    """Calibrate here, then print each size's runs and time, serial and on the workers."""
    from rich.table import Table

    from vraid.sim.experiment.estimate import CALIBRATION_SECONDS, estimate
    from vraid.sim.experiment.runner import default_jobs

    workers = jobs or default_jobs()
    where = f"{workers} worker processes here"
    if cluster is not None:
        from vraid.sim.experiment.cluster import parse_address

        address = parse_address(cluster)
        if address.local:
            workers, where = address.workers, f"{address.workers} workers of --cluster {cluster}"
        else:
            where += " (a cluster of W such workers: about the serial time / W)"
    print(f"{name}: calibrating (quick-size runs, about {CALIBRATION_SECONDS:.0f} s)...", file=sys.stderr, flush=True)
    cal, sizes = estimate(name, options, workers=workers)
    if sizes and sizes[0].workers == 1 and workers > 1:
        where = "one run at a time (its runs share the machine's real time)"
    t = Table(title=f"{name}: estimated wall time here", title_justify="left")
    for col in ("size", "runs", "work", "one process", "wall time"):
        t.add_column(col, justify="right" if col != "size" else "left")
    for s in sizes:
        t.add_row(s.size, f"{s.runs:,}", f"{s.work:,.0f}", _clock(s.serial_seconds), _clock(s.wall_seconds))
    console.print(t)
    console.print(escape(f"wall time: on {where}, never less than the longest run. From {cal.runs} calibration "
                         f"run(s) of the quick size, {cal.seconds:.1f} s in all: a run takes {cal.overhead:.3g} s + "
                         f"{cal.rate * 1e3:.4g} ms per unit of work (docs/experiments.md, sizes and estimates)"),
                  highlight=False)
    return 0


def paper_is_default(module, name: str) -> bool:
    """Whether experiment ``name``'s paper size runs exactly its default size's runs (stride,
    levels, adaptive-hlwm: the default is the paper's scale), so a paper run writes where the
    default one does instead of a copy of it in results/NAME/paper.

    Decided on the sizes alone, not on a run's ``--set`` options: a part of a paper-size sweep
    (vc-raid's ``--set configs=...``, whose runs the two sizes happen to share) still writes its
    store and its report to results/NAME/paper, never over the default's committed results."""
    from vraid.sim.experiment.sizes import specs_for

    return specs_for(module, name, "paper", {}) == specs_for(module, name, "default", {})


def default_out(name: str, size: str) -> Path:
    """Where an experiment writes without --out: results/NAME for the default size,
    results/NAME/paper for the paper's; a quick run goes to a scratch directory instead of
    over the committed results."""
    if size == "paper":
        return Path("results") / name / "paper"
    if size != "quick":
        return Path("results") / name
    import tempfile

    return Path(tempfile.gettempdir()) / f"vraid-quick-{name}"



def parse_set(items: list[str]) -> dict[str, object]:
    """``vraid experiment --set``: ``["nw=1024", "hosts=direct", "workspaces_gb=[1,8]"]`` ->
    ``{"nw": 1024, "hosts": "direct", "workspaces_gb": [1, 8]}``: a value that reads as JSON is
    taken as such."""
    import json

    from vraid.errors import VraidError

    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise VraidError(f"--set {item!r} is not KEY=VALUE", "e.g. --set nw=1024")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


__all__ = ["Pace", "default_out", "paper_is_default", "parse_set", "print_estimate", "progress_bar"]

"""Experiments: reproductions of the seed papers' figures, run in virtual time.

An experiment is a module registered in :data:`EXPERIMENTS` that provides

* ``NAME`` and ``describe() -> str``: a one-line description (paper, figure);
* ``runs(quick: bool) -> list[dict]``: independent run specs (picklable dicts, each with a
  unique ``"id"``); ``quick`` keeps the result's shape and finishes in under a minute;
* ``run(spec) -> dict``: one run; executed in a worker process by :mod:`.runner`, so it
  must depend on nothing but ``spec``;
* ``collect(results) -> dict``: ``results`` is the list of ``(spec, output)`` pairs in the
  order of ``runs``; the returned dict is written to ``DIR/results.json``;
* ``report(results, out_dir) -> list[Path]``: writes ``DIR/results.md`` and any
  ``DIR/*.png`` from the collected results; returns the files written;

and optionally ``SERIAL = True`` (its runs share real time and the machine: never in parallel),
``extras(results) -> dict[str, object]``: further JSON files
(``{"fig1.json": {...}}``) written before ``report`` runs (it may read them back), and
``summary(results) -> vraid.sim.table.TextTable`` for the terminal (the CLI draws it).

``vraid experiment list`` lists them; ``vraid experiment NAME --out DIR [--size
quick|default|paper] [--jobs N | --cluster ADDRESS]`` runs one
(:func:`vraid.sim.experiment.runner.run_experiment`; sizes in :mod:`.sizes`, the stored runs a
sweep resumes from in :mod:`.store`, Dask in :mod:`.cluster`). docs/experiments.md has more.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from vraid.errors import VraidError

#: name -> module path
EXPERIMENTS: dict[str, str] = {
    "stride": "vraid.sim.experiment.stride",
    "adaptive-hlwm": "vraid.sim.experiment.adaptive_hlwm",
    "msc-ct": "vraid.sim.experiment.msc_ct",
    "prefetch": "vraid.sim.experiment.prefetch",
    "multibuffer": "vraid.sim.experiment.multibuffer",
    "vc-raid": "vraid.sim.experiment.vc_raid",
    "levels": "vraid.sim.experiment.levels",
}


def names() -> list[str]:
    """Registered experiment names, in registry order."""
    return list(EXPERIMENTS)


def get(name: str) -> ModuleType:
    """The module of experiment ``name``.

    Raises:
        VraidError: for an unknown name, listing the known ones.
    """
    path = EXPERIMENTS.get(name)
    if path is None:
        raise VraidError(f"unknown experiment {name!r}",
                         f"choose one of: {', '.join(EXPERIMENTS)} (see `vraid experiment list`)")
    return importlib.import_module(path)


__all__ = ["EXPERIMENTS", "get", "names"]

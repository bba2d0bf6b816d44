"""Destage schedulers: *when* to destage and how many destages to keep in flight (``--destage``).

Each scheduler is one module holding one :class:`DestageScheduler` subclass, and one entry
in :data:`SCHEDULERS` (name -> ``"module:Class"``, imported only when used):

=========  ======================================================================  ==========
name       what it does                                                            source
=========  ======================================================================  ==========
hlwm       static high/low water marks (hysteresis), 95 % / 85 %                   seed 000, 003
adaptive   HLWM whose marks follow the fill/drain rates, eq. (1)-(4)               seed 003
lt         linear threshold: concurrency grows linearly with occupancy             seed 000 [5]
pi         PI controller on the dirty fraction, outputs a destage rate             vraid/bcache
idle       destage in host idle time, and always above a high mark                 seed 002
=========  ======================================================================  ==========

:func:`load_scheduler` builds one from a spec: ``NAME``, ``NAME:k=v,k=v``, or a student's own
class as ``pkg.mod:Class[:k=v,...]`` (importable from the current directory or ``PYTHONPATH``)
or ``path/to/file.py:Class[:k=v,...]``; the one parser is :mod:`vraid.policies.registry`. :func:`describe_schedulers` lists them all with
their parameters for ``--help`` and the docs.

Adding a scheduler: write ``policies/destage/NAME.py`` with a :class:`DestageScheduler`
subclass (``name``, ``summary``, ``source``, ``params``, ``decide``) and add
``"NAME": "vraid.policies.destage.NAME:Class"`` to the ``destage`` row of
:data:`vraid.policies.registry.FAMILIES`.
"""

from __future__ import annotations

from dataclasses import dataclass

from vraid.errors import VraidError
from vraid.policies import registry

from .base import CacheState, Decision, DestageScheduler, Fraction, Hysteresis, Seconds, check, must_drain

#: name -> "module:Class": the destage row of vraid.policies.registry.FAMILIES
SCHEDULERS: dict[str, str] = dict(registry.FAMILIES["destage"].builtins)  # type: ignore[arg-type]

DEFAULT = registry.FAMILIES["destage"].default


def scheduler_class(name: str) -> type[DestageScheduler]:
    """The class registered as ``name`` (imported now).

    Raises:
        VraidError: for a name that is not registered, listing those that are.
    """
    if name not in SCHEDULERS:
        raise VraidError(f"unknown destage scheduler {name!r}", registry._syntax(registry.FAMILIES["destage"]))
    cls = registry.policy_class(registry.parse("destage", name))
    assert cls is not None
    return cls


def load_scheduler(spec: str) -> DestageScheduler:
    """A scheduler from ``NAME``, ``NAME:k=v,k=v``, ``module:Class[:k=v,...]`` or
    ``path/file.py:Class[:k=v,...]`` (:func:`vraid.policies.registry.parse`).

    Registered names win: ``hlwm:high=0.9`` is the built-in ``hlwm``. Values are converted by
    the scheduler's ``params`` types (``high=90%``, ``period=3s``).

    Raises:
        VraidError: for an empty or malformed spec, an unknown name, module, class or key, or a
            bad value; the message names the problem and the hint lists what would be valid.
    """
    return registry.create("destage", spec)


@dataclass(frozen=True, slots=True)
class SchedulerInfo:
    """What ``--help`` and the docs show of one scheduler; params are (key, default, help)."""

    name: str
    target: str
    summary: str
    source: str
    params: tuple[tuple[str, str, str], ...]


def describe_schedulers() -> list[SchedulerInfo]:
    """Every registered scheduler with its one-line summary, source and parameters (imports them)."""
    from vraid.policies.describe import describe

    return [SchedulerInfo(p.name, p.target or "", p.summary, p.source,
                          tuple((q.name, str(q.default), q.doc) for q in p.params))
            for p in describe("destage") if p.name in SCHEDULERS]


def schedulers_help() -> str:
    """:func:`describe_schedulers` as plain text for ``--help``."""
    lines: list[str] = []
    for s in describe_schedulers():
        lines.append(f"{s.name}: {s.summary}  [{s.source}]")
        lines.extend(f"    {k}={d}  {h}" for k, d, h in s.params)
    lines.append("or your own: module:Class[:key=value,...] or file.py:Class[...] (a DestageScheduler subclass)")
    return "\n".join(lines)


__all__ = ["DEFAULT", "SCHEDULERS", "CacheState", "Decision", "DestageScheduler", "Fraction", "Hysteresis",
           "SchedulerInfo", "Seconds", "check", "describe_schedulers", "load_scheduler", "must_drain", "scheduler_class",
           "schedulers_help"]

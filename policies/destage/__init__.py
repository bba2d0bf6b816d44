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
class as ``pkg.mod:Class`` or ``pkg.mod:Class:k=v,k=v`` (the module must be importable, e.g.
from the current directory or ``PYTHONPATH``). :func:`describe_schedulers` lists them all with
their parameters for ``--help`` and the docs.

Adding a scheduler: write ``policies/destage/NAME.py`` with a :class:`DestageScheduler`
subclass (``name``, ``summary``, ``source``, ``params``, ``decide``) and add
``"NAME": "vraid.policies.destage.NAME:Class"`` to :data:`SCHEDULERS`.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from vraid.errors import VraidError

from .base import CacheState, Decision, DestageScheduler, Fraction, Hysteresis, Seconds, check

SCHEDULERS: dict[str, str] = {
    "hlwm": "vraid.policies.destage.hlwm:HlwmScheduler",
    "adaptive": "vraid.policies.destage.adaptive:AdaptiveScheduler",
    "lt": "vraid.policies.destage.lt:LinearThresholdScheduler",
    "pi": "vraid.policies.destage.pi:PiScheduler",
    "idle": "vraid.policies.destage.idle:IdleScheduler",
}

DEFAULT = "hlwm"

_SPEC_HINT = ("write NAME or NAME:key=value,... with NAME one of " + ", ".join(SCHEDULERS)
              + ", or your own class as module:Class[:key=value,...]")


def _import_target(target: str, what: str) -> type[DestageScheduler]:
    """The class named by ``"module:Class"`` (Class may be dotted), checked to be a scheduler."""
    module_name, _, attr_path = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise VraidError(f"{what}: cannot import module {module_name!r} ({exc})",
                         "check the module name and that its directory is on PYTHONPATH "
                         "(or run from the directory that holds it)") from exc
    except Exception as exc:       # the module exists but fails while importing
        raise VraidError(f"{what}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}",
                         "fix the error in that module") from exc
    obj: object = module
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            found = sorted(n for n, v in vars(module).items()
                           if inspect.isclass(v) and issubclass(v, DestageScheduler) and v is not DestageScheduler)
            raise VraidError(f"{what}: module {module_name!r} has no {attr_path!r}",
                             f"destage schedulers in {module_name}: {', '.join(found) or '(none)'}") from None
    if not (inspect.isclass(obj) and issubclass(obj, DestageScheduler)):
        raise VraidError(f"{what}: {attr_path!r} in module {module_name!r} is not a DestageScheduler subclass",
                         "subclass vraid.policies.destage.DestageScheduler and implement decide()")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise VraidError(f"{what}: class {attr_path!r} does not implement {missing}",
                         "define decide(self, state) -> Decision in your class")
    return obj


def scheduler_class(name: str) -> type[DestageScheduler]:
    """The class registered as ``name`` (imported now).

    Raises:
        VraidError: for a name that is not registered, listing those that are.
    """
    target = SCHEDULERS.get(name)
    if target is None:
        raise VraidError(f"unknown destage scheduler {name!r}", _SPEC_HINT)
    return _import_target(target, f"destage scheduler {name!r}")


def _parse_params(text: str, what: str, cls: type[DestageScheduler]) -> dict[str, str]:
    params: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if not eq or not key:
            raise VraidError(f"{what}: {item!r} is not key=value",
                             f"valid parameters: {', '.join(cls.params) or '(none)'}")
        if key in params:
            raise VraidError(f"{what}: {key} is given twice", "give each key once")
        params[key] = value
    return params


def load_scheduler(spec: str) -> DestageScheduler:
    """A scheduler from ``NAME``, ``NAME:k=v,k=v``, ``module:Class`` or ``module:Class:k=v,k=v``.

    Registered names win: ``hlwm:high=0.9`` is the built-in ``hlwm``. Anything else must be
    ``module:Class`` with an importable module and a :class:`DestageScheduler` subclass.
    Values are converted by the scheduler's ``params`` types (``high=90%``, ``period=3s``).

    Raises:
        VraidError: for an empty or malformed spec, an unknown name, module, class or key, or a
            bad value; the message names the problem and the hint lists what would be valid.
    """
    text = (spec or "").strip()
    if not text:
        raise VraidError("empty destage scheduler spec", _SPEC_HINT)
    head, _, rest = text.partition(":")
    head = head.strip()
    if head in SCHEDULERS:
        cls = scheduler_class(head)
        what, kv = f"destage scheduler {head}", rest
    else:
        cls_name, _, kv = rest.partition(":")
        cls_name = cls_name.strip()
        module_ok = bool(head) and all(p.isidentifier() for p in head.split("."))
        class_ok = bool(cls_name) and all(p.isidentifier() for p in cls_name.split("."))
        if not (module_ok and class_ok):
            raise VraidError(f"unknown destage scheduler {head!r}", _SPEC_HINT)
        target = f"{head}:{cls_name}"
        cls = _import_target(target, f"destage scheduler {target}")
        what = f"destage scheduler {target}"
    return cls(**_parse_params(kv, what, cls))


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
    out = []
    for name, target in SCHEDULERS.items():
        cls = scheduler_class(name)
        out.append(SchedulerInfo(name, target, cls.summary, cls.source,
                                 tuple((k, str(d), h) for k, (_t, d, h) in cls.params.items())))
    return out


def schedulers_help() -> str:
    """:func:`describe_schedulers` as plain text for ``--help``."""
    lines: list[str] = []
    for s in describe_schedulers():
        lines.append(f"{s.name}: {s.summary}  [{s.source}]")
        lines.extend(f"    {k}={d}  {h}" for k, d, h in s.params)
    lines.append("or your own: module:Class[:key=value,...] (a DestageScheduler subclass)")
    return "\n".join(lines)


__all__ = ["DEFAULT", "SCHEDULERS", "CacheState", "Decision", "DestageScheduler", "Fraction", "Hysteresis",
           "SchedulerInfo", "Seconds", "check", "describe_schedulers", "load_scheduler", "scheduler_class",
           "schedulers_help"]

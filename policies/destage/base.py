"""The destage-scheduler interface: *when* to destage and how hard.

A scheduler answers one question for the controller: given the state of the write-back
cache right now, how many destages may be in flight? It is pure and synchronous (no trio,
no I/O, no clock of its own): the controller builds a :class:`CacheState` after every cache
change (a write absorbed, a destage finished) and at the ``recheck`` times a scheduler asks
for, calls :meth:`DestageScheduler.decide`, and obeys the :class:`Decision`. *Which* unit
to destage next is a different policy (``vraid.policies.order``).

Writing one: subclass :class:`DestageScheduler`, set ``name``, ``summary``, ``source`` and
``params`` (key -> (type, default, help)), override :meth:`DestageScheduler._check` to
reject values that make no sense, and implement :meth:`DestageScheduler.decide`, reading the
parameters from ``self.values``. Load it with
``--destage mypkg.mymod:MyScheduler:k=v`` (see :func:`vraid.policies.destage.load_scheduler`).

Parameter types: ``int``, ``float``, ``bool``, ``str`` and the two markers below,
:class:`Fraction` (``0.95`` or ``95%``, within 0..1) and :class:`Seconds` (``3``, ``3s``,
``100ms``, ``10us``, ``2min``). Values arrive as spec strings or as typed Python values;
either way they are converted, and a bad one raises :class:`vraid.errors.VraidError`.
"""

from __future__ import annotations

import abc
import math
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from vraid.errors import VraidError


@dataclass(frozen=True, slots=True)
class CacheState:
    """What the controller tells the scheduler about the write cache at time ``now``.

    ``now``: seconds on the injected clock (virtual in the simulator). ``dirty``: dirty cache
    units now (seed 003's N_W^D(t)). ``capacity``: all cache units (N_W). ``destaging``:
    destages in flight. ``host_idle``: seconds since the last host request arrived.
    ``waiters``: host writes blocked for lack of clean units (write-cache misses in progress).
    """

    now: float
    dirty: int
    capacity: int
    destaging: int = 0
    host_idle: float = 0.0
    waiters: int = 0

    def __post_init__(self) -> None:
        if self.capacity <= 0:
            raise ValueError(f"CacheState.capacity must be positive, not {self.capacity}")
        if self.dirty < 0 or self.destaging < 0 or self.waiters < 0:
            raise ValueError(f"CacheState counts must not be negative: {self}")

    @property
    def occupancy(self) -> float:
        """Dirty fraction ``dirty / capacity`` (seed 003's N_W^D(t) / N_W); may exceed 1 only
        if the controller counts units written while being destaged (DDIRTY) as extra."""
        return self.dirty / self.capacity


@dataclass(frozen=True, slots=True)
class Decision:
    """What the controller should do until the next call.

    ``concurrency``: how many destages may be in flight now (0 stops issuing new ones; those
    in flight finish). ``hwm``/``lwm``: the current high/low water marks as fractions, for
    display and metrics (None when the scheduler has none). ``rate``: an optional cap in
    destages per second (None = unlimited). ``recheck``: call ``decide`` again at this time
    even if nothing in the cache changes (None = no need).
    """

    concurrency: int
    hwm: float | None = None
    lwm: float | None = None
    rate: float | None = None
    recheck: float | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 0:
            raise ValueError(f"Decision.concurrency must not be negative, not {self.concurrency}")


class Fraction(float):
    """Parameter type marker: a fraction of the cache within 0..1, written ``0.95`` or ``95%``."""


class Seconds(float):
    """Parameter type marker: a duration in seconds, written ``3``, ``3s``, ``100ms``, ``10us``, ``2min``."""


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*(ns|us|µs|ms|s|min|h)?\s*$", re.I)
_SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
_KIND = {int: "whole number", float: "number", Fraction: "fraction within 0..1 (e.g. 0.9 or 90%)",
         Seconds: "duration (e.g. 3s or 100ms)", bool: "true/false"}


def _convert(typ: type, value: Any) -> Any:
    """``value`` (spec text or a typed value) as ``typ``; ValueError when it is not one."""
    if isinstance(value, bool) and typ is not bool:
        raise ValueError("a boolean is not a number")
    if typ is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(text)
    if typ is int:
        if isinstance(value, str):
            return int(value.strip())
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        return int(value)
    if typ is Fraction:
        if isinstance(value, str) and value.strip().endswith("%"):
            number = float(value.strip()[:-1]) / 100.0
        else:
            number = float(value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(value)
        return number
    if typ is Seconds:
        if isinstance(value, str):
            m = _DURATION.match(value)
            if not m:
                raise ValueError(value)
            return float(m.group(1)) * _SECONDS_PER[(m.group(2) or "s").lower()]
        return float(value)
    if typ is float:
        number = float(value)
        if math.isnan(number):
            raise ValueError(value)
        return number
    return typ(value)


def check(ok: bool, message: str, hint: str) -> None:
    """Raise ``VraidError(message, hint)`` unless ``ok`` (for :meth:`DestageScheduler._check`)."""
    if not ok:
        raise VraidError(message, hint)


class DestageScheduler(abc.ABC):
    """Base of every destage scheduler: validated ``params`` and :meth:`decide`.

    Class attributes: ``name`` (the registry name; defaults to the class name for a student's
    own class), ``summary`` (one line), ``source`` (paper and section), ``params`` (key ->
    (type, default, help)). After ``__init__``, ``self.values`` holds the converted value of
    every parameter (``self.params`` stays the class's table of types, defaults and help).
    """

    name: ClassVar[str] = "scheduler"
    summary: ClassVar[str] = ""
    source: ClassVar[str] = ""
    params: ClassVar[dict[str, tuple[type, object, str]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("name"), str):
            cls.name = cls.__name__     # a subclass that names nothing is known by its class name

    def __init__(self, **params: Any) -> None:
        spec = type(self).params
        unknown = [k for k in params if k not in spec]
        if unknown:
            raise VraidError(f"destage scheduler {self.name!r} has no parameter {', '.join(map(repr, unknown))}",
                             f"valid parameters of {self.name}: {', '.join(spec) or '(none)'}")
        values: dict[str, Any] = {}
        for key, (typ, default, _help) in spec.items():
            value = params.get(key, default)
            if value is None:
                values[key] = None
                continue
            try:
                values[key] = _convert(typ, value)
            except (TypeError, ValueError):
                raise VraidError(f"destage scheduler {self.name}: {key}={value!r} is not a "
                                 f"{_KIND.get(typ, typ.__name__)}",
                                 f"e.g. {key}={default}  ({_help})") from None
        self.values: dict[str, Any] = values
        self._check()

    def _check(self) -> None:
        """Raise VraidError (see :func:`check`) for parameter values that make no sense together."""

    @abc.abstractmethod
    def decide(self, state: CacheState) -> Decision:
        """The decision for ``state``; called after every cache change and at ``recheck`` times."""

    @property
    def spec(self) -> str:
        """A spec string that rebuilds this scheduler with ``load_scheduler``."""
        from . import SCHEDULERS   # late: the registry imports this module
        target = f"{type(self).__module__}:{type(self).__qualname__}"
        head = self.name if SCHEDULERS.get(self.name) == target else target
        items = ",".join(f"{k}={v}" for k, v in self.values.items() if v is not None)
        return head + (":" + items if items else "")

    def describe(self) -> dict[str, Any]:
        """Name, spec and current parameters (adaptive schedulers add what they learned)."""
        return {"name": self.name, "spec": self.spec, "params": dict(self.values)}

    def __repr__(self) -> str:
        return f"<destage {self.spec}>"


def must_drain(state: CacheState) -> bool:
    """True when host writes are blocked for lack of clean units: every built-in scheduler
    then destages at full concurrency whatever its thresholds say (a full cache must drain)."""
    return state.waiters > 0


class Hysteresis:
    """The on/off latch of a high/low water mark scheduler (seed 003 sec. 3.3; seed 000 III-G).

    :meth:`step` starts destaging when the occupancy reaches ``high`` (and something is dirty)
    and stops it when the occupancy falls to ``low``; at most one transition per call, so
    ``low == high`` cannot start and stop in the same instant. Returns "H" on a start, "L" on
    a stop, None otherwise; ``active`` tells the current state.
    """

    __slots__ = ("active",)

    def __init__(self) -> None:
        self.active = False

    def step(self, occupancy: float, dirty: int, high: float, low: float) -> str | None:
        if not self.active:
            if dirty > 0 and occupancy >= high:
                self.active = True
                return "H"
        elif occupancy <= low:
            self.active = False
            return "L"
        return None

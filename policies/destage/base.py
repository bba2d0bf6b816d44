"""The destage-scheduler interface: *when* to destage and how hard.

A scheduler answers one question for the controller: given the state of the write-back
cache right now, how many destages may be in flight? It is pure and synchronous (no trio,
no I/O, no clock of its own): the controller builds a :class:`CacheState` after every cache
change (a write absorbed, a destage finished) and at the ``recheck`` times a scheduler asks
for, calls :meth:`DestageScheduler.decide`, and obeys the :class:`Decision`. *Which* unit
to destage next is a different policy (``vraid.policies.order``).

Writing one: subclass :class:`DestageScheduler`, set ``name``, ``summary``, ``source`` and
``params`` (key -> (type, default, help[, (low, high)])), override :meth:`DestageScheduler._check` to
reject values that make no sense, and implement :meth:`DestageScheduler.decide`, reading the
parameters from ``self.values``. Load it with
``--destage mypkg.mymod:MyScheduler:k=v`` or ``--destage path/to/file.py:MyScheduler:k=v``
(see :mod:`vraid.policies.registry`).

Parameter types and ranges: the schema of :mod:`vraid.policies.params` (``int``, ``float``,
``bool``, ``str``, :class:`Fraction` ``0.95``/``95%``, :class:`Seconds` ``3s``/``100ms``; an
optional ``(low, high)`` fourth element). Values arrive as spec strings or as typed Python
values; either way they are converted, and a bad one raises :class:`vraid.errors.VraidError`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

from vraid.errors import VraidError
from vraid.policies.params import Fraction, Seconds, bind, check, schema

__all__ = ["CacheState", "Decision", "DestageScheduler", "Fraction", "Hysteresis", "Seconds", "check", "must_drain"]


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
    #: True when :meth:`decide` depends only on ``dirty``, ``capacity``, ``destaging`` and
    #: ``waiters`` (not on ``now`` or ``host_idle``), and any state of its own changes only
    #: with them. The controller then skips the call after a host write that leaves those
    #: unchanged (an overwrite of dirty blocks): the answer would be the same, and on a
    #: mount that call is a wake-up of the destager per write. False (the default) keeps
    #: the call after every write.
    decides_on_counts: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("name"), str):
            cls.name = cls.__name__     # a subclass that names nothing is known by its class name

    def __init__(self, **params: Any) -> None:
        self.values: dict[str, Any] = bind(schema(type(self)), params, f"destage scheduler {self.name}")
        self._check()

    def _check(self) -> None:
        """Raise VraidError (see :func:`check`) for parameter values that make no sense together."""

    @abc.abstractmethod
    def decide(self, state: CacheState) -> Decision:
        """The decision for ``state``; called after every cache change and at ``recheck`` times."""

    @property
    def spec(self) -> str:
        """A spec string that rebuilds this scheduler with ``load_scheduler``."""
        from vraid.policies.registry import head_of

        head = head_of("destage", type(self), self.name)
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

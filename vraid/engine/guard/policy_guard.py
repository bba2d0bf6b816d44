"""The policy guard: a student's policy may fail, the mount may not (hardening issue, item 1).

Every policy the engine runs is student code as far as the engine knows: whatever it raises,
returns or stalls on, the array keeps serving and loses nothing. The engine never calls a
policy directly; it calls the guarded wrapper :meth:`PolicyGuard.wrap` made for it, one class
per family, each checking what the policy answers:

==============  ===========================  ==================================================
family          calls guarded                what counts as a fault (besides raising)
==============  ===========================  ==================================================
destage         ``decide``                   not a Decision; concurrency not a whole number
                                             >= 0; a NaN/infinite/out-of-range hwm, lwm, rate or
                                             recheck; asking for no destage at all for
                                             ``stall_limit`` s since host writes first waited
destage_order   ``dirtied written read       ``next`` naming a unit that is not waiting (not
                removed next keys``          dirty, or being destaged), or None while units
                                             wait; ``keys`` not exactly the waiting units
cache           ``units span unit_blocks``   spans outside the stripe, overlapping, not covering
                                             the rows asked for, larger than ``unit_blocks``,
                                             or a key the cache holds for other rows
ct              ``__call__``                 not a Plan, another stripe/Z/basic matrix, or a
                                             matrix breaking the consistency rules eq. (6)/(7)
                                             (:func:`vraid.core.rxw.transform_violation`)
queue_order     ``add pop``                  ``pop`` returning a request that is not queued
prefetch        ``after_read``               ranges that are not (start, count) inside the array
placement       ``write flush clean          a step the stripe directory refuses (checked before
                restore``                    its I/O); ``flush`` that does not empty the buffers
==============  ===========================  ==================================================

The placement's calls are checked by its layer (:mod:`vraid.engine.placement.writes`), which
reports the fault here and takes the replacement from :meth:`PolicyGuard.replacement`. The log
family answers only when an array is made or built, never on the data path: a configuration
that answers wrongly is refused then (:func:`vraid.policies.log.layout`); the log's level-2
scheduler is a ``destage`` policy behind the destage guard.

The wrappers are in :mod:`vraid.engine.guard.guarded` (the cache organisation's in
:mod:`vraid.engine.guard.guarded_cache`); this module holds the guard itself.

"Raising" is any of :data:`vraid.errors.POLICY_ERRORS`: every Exception, and SystemExit and
GeneratorExit, which must not end the daemon (hardening issue 33, item 4).

On a fault the wrapper disables the policy for good, replaces it with the family's default
(``vraid.policies.registry``; the replacement is seeded with what the failed one held: every
waiting dirty unit, every queued request), logs the traceback, publishes a
:class:`~vraid.engine.events.PolicyFaultEvent` and keeps a :class:`Fault` record (``vraid
status``, ``vraid ctl get``, the TUI). The call that failed is answered by the replacement.

The cache organisation cannot be swapped while units are cached under its keys (its default,
``none``, is no cache at all): a faulting organisation is replaced by :class:`PinnedOrganisation`,
which keeps every unit the cache holds under its key and rows and maps every other row to a
one-row unit (the ``pbg`` layout) under keys no held unit uses.

Limits: a call that never returns (an endless loop in Python) cannot be interrupted from
the same thread; the guard cannot stop it, and the mount hangs with it. What it bounds is a
scheduler that keeps *answering* "no destage" while writers wait: the destager destages one
unit at a time anyway (so writers and fsync progress), and a scheduler that has not asked for
a single destage for ``stall_limit`` seconds since writers first waited on it is disabled as
hanging.

``mode="stop"`` (``vraid sim``'s default) raises :class:`PolicyFault` at the first fault
instead of falling back: a simulation must not quietly measure the default policy.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any

from vraid.errors import VraidError
from vraid.engine.events import EventBus, PolicyFaultEvent
from .guarded import (Fault, Guarded, GuardedCalls, GuardedOrder, GuardedPrefetch, GuardedQueueFactory,
                      GuardedScheduler, GuardedTransform, Invalid, PolicyFault)
from .guarded_cache import GuardedOrganisation

__all__ = ["MODES", "PolicyGuard", "STALL_LIMIT"]

log = logging.getLogger(__name__)

MODES = ("fallback", "stop")
#: seconds a scheduler may ask for no destage while host writes wait for room
STALL_LIMIT = 2.0


class PolicyGuard:
    """Faults of one engine's policies; :meth:`wrap` puts a policy behind its family's guard."""

    def __init__(self, mode: str = "fallback", *, stall_limit: float = STALL_LIMIT) -> None:
        if mode not in MODES:
            raise VraidError(f"unknown policy-fault mode {mode!r}", f"use {' or '.join(MODES)}")
        self.mode = mode
        self.stall_limit = stall_limit
        self.faults: list[Fault] = []
        self.events: EventBus | None = None
        self.clock = None
        self.geometry = None

    def attach(self, events: EventBus, clock: Any, geometry: Any) -> None:
        """The array's event bus, clock and geometry (the Array calls this)."""
        self.events, self.clock, self.geometry = events, clock, geometry

    def default(self, family: str) -> Any:
        """A fresh instance of ``family``'s default policy."""
        from vraid.policies.registry import Context, create

        return create(family, None, Context(geometry=self.geometry))

    def replacement(self, family: str, failed: Any, **context: Any) -> Any:
        """A fresh instance of the built-in that takes over from ``failed`` (the registry's
        ``fallback`` of the family: its default, or for a placement the built-in of the stripe
        directory's kind; ``context``: :class:`~vraid.policies.registry.Context` fields)."""
        from vraid.policies.registry import Context, fallback

        return fallback(family, failed, Context(geometry=self.geometry, **context))

    def wrap(self, family: str, policy: Any, **extra: Any) -> Any:
        """``policy`` behind the guard of ``family`` (None and already guarded ones unchanged)."""
        if policy is None or isinstance(policy, Guarded):
            return policy
        cls = _WRAPPERS.get(family)
        if cls is None:  # a family without a wrapper of its own: its calls that raise
            return GuardedCalls(self, policy, family=family)
        return cls(self, policy, **extra)

    def fault(self, family: str, policy: str, call: str, exc: BaseException, fallback: str) -> None:
        """Record a fault (see the module docstring); raises :class:`PolicyFault` in stop mode."""
        error = str(exc) if isinstance(exc, Invalid) else f"{type(exc).__name__}: {exc}"
        now = self.clock.now() if self.clock is not None else 0.0
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        fault = Fault(family, policy, call, error, fallback if self.mode == "fallback" else "stopped", now)
        if self.mode == "stop":
            raise PolicyFault(fault, tb) from (None if isinstance(exc, Invalid) else exc)
        self.faults.append(fault)
        log.error("policy fault: %s\n%s", fault.line(), tb.rstrip())
        if self.events is not None:
            self.events.publish(PolicyFaultEvent(time=now, family=family, policy=policy, call=call, error=error,
                                                 fallback=fallback))

    def status(self) -> list[dict[str, Any]]:
        """The faults so far, oldest first (``vraid status``'s ``policy_faults``)."""
        return [f.to_dict() for f in self.faults]


_WRAPPERS: dict[str, type] = {
    "destage": GuardedScheduler, "destage_order": GuardedOrder, "cache": GuardedOrganisation,
    "ct": GuardedTransform, "queue_order": GuardedQueueFactory, "prefetch": GuardedPrefetch,
}

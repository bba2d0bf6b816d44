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
==============  ===========================  ==================================================

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

import dataclasses
import logging
import math
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from vraid.errors import VraidError
from .events import EventBus, PolicyFaultEvent

log = logging.getLogger(__name__)

MODES = ("fallback", "stop")
#: seconds a scheduler may ask for no destage while host writes wait for room
STALL_LIMIT = 2.0


@dataclass(frozen=True)
class Fault:
    """One policy that failed: family key, its spec, the call, what went wrong, what replaced it."""

    family: str
    policy: str
    call: str
    error: str
    fallback: str
    time: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def line(self) -> str:
        return f"{_title(self.family)} {self.policy} failed in {self.call}: {self.error}; now {self.fallback}"


class PolicyFault(VraidError):
    """A policy failed while the guard runs in ``stop`` mode (a simulation)."""

    def __init__(self, fault: Fault, tb: str = "") -> None:
        super().__init__(f"{_title(fault.family)} {fault.policy} failed in {fault.call}: {fault.error}",
                         "fix the policy (rerun with --debug for the traceback), or give --on-policy-fault fallback "
                         "to go on with the family's default")
        self.fault = fault
        self.traceback = tb


class _Invalid(Exception):
    """A policy's answer broke the family's rules (raised and caught inside the guard)."""


def _title(family: str) -> str:
    from vraid.policies.registry import FAMILIES

    fam = FAMILIES.get(family)
    return fam.title if fam is not None else family


def _spec(policy: Any) -> str:
    from vraid.policies.registry import spec_of

    try:
        return spec_of(policy)
    except Exception:  # a student's spec property may fail too
        return type(policy).__name__


def _finite(value: Any, lo: float = -math.inf, hi: float = math.inf) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            and lo <= value <= hi)


def _whole(value: Any, lo: int = 0) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and value >= lo


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

    def wrap(self, family: str, policy: Any, **extra: Any) -> Any:
        """``policy`` behind the guard of ``family`` (None and already guarded ones unchanged)."""
        if policy is None or isinstance(policy, Guarded):
            return policy
        cls = _WRAPPERS[family]
        return cls(self, policy, **extra)

    def fault(self, family: str, policy: str, call: str, exc: BaseException, fallback: str) -> None:
        """Record a fault (see the module docstring); raises :class:`PolicyFault` in stop mode."""
        error = str(exc) if isinstance(exc, _Invalid) else f"{type(exc).__name__}: {exc}"
        now = self.clock.now() if self.clock is not None else 0.0
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        fault = Fault(family, policy, call, error, fallback if self.mode == "fallback" else "stopped", now)
        if self.mode == "stop":
            raise PolicyFault(fault, tb) from (None if isinstance(exc, _Invalid) else exc)
        self.faults.append(fault)
        log.error("policy fault: %s\n%s", fault.line(), tb.rstrip())
        if self.events is not None:
            self.events.publish(PolicyFaultEvent(time=now, family=family, policy=policy, call=call, error=error,
                                                 fallback=fallback))

    def status(self) -> list[dict[str, Any]]:
        """The faults so far, oldest first (``vraid status``'s ``policy_faults``)."""
        return [f.to_dict() for f in self.faults]


class Guarded:
    """Base of the wrappers: the policy in force (``inner``) and the switch to its fallback.

    Attributes the engine reads (``name``, ``describe``, ``limits``...) are the inner policy's.
    """

    family = ""

    def __init__(self, guard: PolicyGuard, policy: Any) -> None:
        self._guard = guard
        self.inner = policy
        self.faulted = False

    @property
    def spec(self) -> str:
        return _spec(self.inner)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("inner", "_guard"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"<guarded {self.family} {self.spec}>"

    def _replacement(self) -> Any:
        return self._guard.default(self.family)

    def _fail(self, call: str, exc: BaseException) -> None:
        """Disable the policy: the replacement is in force when this returns."""
        old = self.spec
        new = self._replacement()
        self._guard.fault(self.family, old, call, exc, _spec(new))
        self.inner = new
        self.faulted = True

    def _call(self, call: str, fn: Callable[[Any], Any], check: Callable[[Any], None] | None = None) -> Any:
        """``fn(inner)``, checked; on a fault, the same on the replacement (trusted)."""
        try:
            out = fn(self.inner)
            if check is not None:
                check(out)
            return out
        except Exception as exc:
            if self.faulted:  # the default failed too: nothing sane is left to fall back on
                raise
            self._fail(call, exc)
        return fn(self.inner)


# -- destage scheduler ------------------------------------------------------------------------
class GuardedScheduler(Guarded):
    family = "destage"

    def __init__(self, guard: PolicyGuard, policy: Any) -> None:
        super().__init__(guard, policy)
        self._stalled_since: float | None = None

    def describe(self) -> dict[str, Any]:
        try:
            out = self.inner.describe()
            return dict(out) if isinstance(out, dict) else {"name": str(self.inner.name), "spec": self.spec}
        except Exception:
            return {"name": type(self.inner).__name__, "spec": self.spec}

    def decide(self, state: Any) -> Any:
        decision = self._call("decide", lambda p: p.decide(state), _check_decision)
        if self.faulted or decision.concurrency > 0:
            self._stalled_since = None
            return decision
        if state.waiters > 0 and self._stalled_since is None:
            self._stalled_since = state.now  # writers wait, and it asks for nothing
        if self._stalled_since is None:
            return decision
        stalled = state.now - self._stalled_since
        if stalled >= self._guard.stall_limit:
            self._fail("decide", _Invalid(f"asked for no destage for {stalled:.3g} s since host writes first waited "
                                          f"for room (the limit is {self._guard.stall_limit:g} s)"))
            return self.inner.decide(state)
        due = self._stalled_since + self._guard.stall_limit
        if state.waiters > 0 and (decision.recheck is None or decision.recheck > due):
            decision = dataclasses.replace(decision, recheck=due)  # come back to judge the stall
        return decision


def _check_decision(d: Any) -> None:
    from vraid.policies.destage.base import Decision

    if not isinstance(d, Decision):
        raise _Invalid(f"returned {type(d).__name__}, not a Decision")
    if not _whole(d.concurrency):
        raise _Invalid(f"Decision.concurrency {d.concurrency!r} is not a whole number >= 0")
    for name in ("hwm", "lwm"):
        value = getattr(d, name)
        if value is not None and not _finite(value, 0.0, 1.0):
            raise _Invalid(f"Decision.{name} {value!r} is not a fraction from 0 to 1")
    if d.rate is not None and not _finite(d.rate, 0.0):
        raise _Invalid(f"Decision.rate {d.rate!r} is not a finite number >= 0")
    if d.recheck is not None and not _finite(d.recheck):
        raise _Invalid(f"Decision.recheck {d.recheck!r} is not a finite time")


# -- destage order ----------------------------------------------------------------------------
class GuardedOrder(Guarded):
    """Keeps the set of waiting units itself (dirtied minus removed: the cache's dirty units
    not being destaged), to check ``next``/``keys`` and to seed the replacement."""

    family = "destage_order"

    def __init__(self, guard: PolicyGuard, policy: Any) -> None:
        super().__init__(guard, policy)
        self.waiting: dict[int, None] = {}

    def _replacement(self) -> Any:
        new = self._guard.default(self.family)
        for key in self.waiting:
            new.dirtied(key)
        return new

    def dirtied(self, key: int) -> None:
        self._call("dirtied", lambda p: p.dirtied(key))
        self.waiting[key] = None

    def written(self, key: int) -> None:
        self._call("written", lambda p: p.written(key))

    def read(self, key: int) -> None:
        self._call("read", lambda p: p.read(key))

    def removed(self, key: int) -> None:
        self._call("removed", lambda p: p.removed(key))
        self.waiting.pop(key, None)

    def _check_next(self, key: Any) -> None:
        if key is None:
            if self.waiting:
                raise _Invalid(f"returned None while {len(self.waiting)} dirty unit(s) wait")
        elif isinstance(key, bool) or not isinstance(key, int) or key not in self.waiting:
            raise _Invalid(f"returned {key!r}, which is not a dirty unit waiting to be destaged")

    def next(self) -> int | None:
        return self._call("next", lambda p: p.next(), self._check_next)

    def _check_keys(self, keys: list) -> None:
        if len(keys) != len(self.waiting) or set(keys) != self.waiting.keys():
            raise _Invalid(f"keys() gave {len(keys)} unit(s), not the {len(self.waiting)} waiting ones")

    def keys(self) -> list[int]:
        return self._call("keys", lambda p: list(p.keys()), self._check_keys)

    def __len__(self) -> int:
        return len(self.waiting)


# -- cache organisation ------------------------------------------------------------------------
class PinnedOrganisation:
    """What replaces a failed cache organisation: every unit the cache holds keeps its key and
    rows; any other row is a one-row unit (as ``pbg``) keyed ``base + stripe*u + row``, above
    every held key."""

    name = "pinned"
    summary = "fallback of a failed cache organisation: held units kept, other rows one unit each"

    def __init__(self, geometry: Any, unit_blocks: int, held: list[Any]) -> None:
        self.geometry = geometry
        self._unit_blocks = max(unit_blocks, geometry.data_disks)
        self._by_key = {s.key: s for s in held}
        self._by_stripe: dict[int, list[Any]] = {}
        for s in held:
            self._by_stripe.setdefault(s.stripe, []).append(s)
        self.base = max(self._by_key, default=-1) + 1
        self._vraid_spec = f"pinned({len(held)} held units, the rest as pbg)"

    def unit_blocks(self) -> int:
        return self._unit_blocks

    def span(self, key: int) -> Any:
        from vraid.policies.cache import UnitSpan

        if key in self._by_key:
            return self._by_key[key]
        stripe, row = divmod(key - self.base, self.geometry.u)
        return UnitSpan(key, stripe, row, 1)

    def units(self, stripe: int, first_row: int, last_row: int) -> list[Any]:
        from vraid.policies.cache import UnitSpan

        held = self._by_stripe.get(stripe, ())
        out: list[Any] = []
        for row in range(first_row, last_row + 1):
            span = next((s for s in held if s.row0 <= row < s.row0 + s.rows), None)
            if span is None:
                span = UnitSpan(self.base + stripe * self.geometry.u + row, stripe, row, 1)
            if not out or out[-1] is not span:
                out.append(span)
        return out


class GuardedOrganisation(Guarded):
    """``units`` checked against the geometry and against the units the cache holds
    (``units``: the cache's key -> Unit dict, read live)."""

    family = "cache"

    def __init__(self, guard: PolicyGuard, policy: Any, units: dict | None = None) -> None:
        super().__init__(guard, policy)
        self.held = units if units is not None else {}
        self._blocks: int | None = None

    def _replacement(self) -> Any:
        g = self._guard.geometry
        return PinnedOrganisation(g, self._blocks or g.data_disks, [u.span for u in self.held.values()])

    def _check_blocks(self, n: Any) -> None:
        g = self._guard.geometry
        if not _whole(n, 1) or n > g.data_disks * g.u:
            raise _Invalid(f"unit_blocks() {n!r} is not a whole number from 1 to {g.data_disks * g.u}")

    def unit_blocks(self) -> int:
        n = self._call("unit_blocks", lambda p: p.unit_blocks(), self._check_blocks)
        if not self.faulted:
            self._blocks = n
        return n

    def span(self, key: int) -> Any:
        return self._call("span", lambda p: p.span(key), lambda s: self._check_span(s, getattr(s, "stripe", None)))

    def _check_span(self, s: Any, stripe: Any) -> None:
        from vraid.policies.cache import UnitSpan

        g = self._guard.geometry
        if not isinstance(s, UnitSpan):
            raise _Invalid(f"gave {type(s).__name__}, not a UnitSpan")
        if not (_whole(s.key) and s.stripe == stripe and _whole(s.row0) and _whole(s.rows, 1) and s.row0 + s.rows <= g.u):
            raise _Invalid(f"{s} is not rows of stripe {stripe} (0..{g.u - 1})")
        if self._blocks is not None and s.rows * g.data_disks > self._blocks:
            raise _Invalid(f"{s} holds more than unit_blocks() = {self._blocks} blocks")
        unit = self.held.get(s.key)
        if unit is not None and unit.span != s:
            raise _Invalid(f"{s} reuses key {s.key}, which the cache holds for {unit.span}")

    def _check_units(self, spans: list, stripe: int, first: int, last: int) -> None:
        covered = set()
        for s in spans:
            self._check_span(s, stripe)
            rows = set(range(s.row0, s.row0 + s.rows))
            if rows & covered:
                raise _Invalid(f"units overlap: {s} shares rows with another unit of the answer")
            covered |= rows
        if not covered >= set(range(first, last + 1)):
            raise _Invalid(f"units of stripe {stripe} do not cover rows {first}..{last}")

    def units(self, stripe: int, first_row: int, last_row: int) -> list[Any]:
        return self._call("units", lambda p: list(p.units(stripe, first_row, last_row)),
                          lambda spans: self._check_units(spans, stripe, first_row, last_row))


# -- contiguity transform ----------------------------------------------------------------------
class GuardedTransform(Guarded):
    family = "ct"

    @property
    def limits(self) -> Any:
        return getattr(self.inner, "limits", None)

    def __call__(self, plan: Any) -> Any:
        from vraid.core.rxw import transform_violation

        def check(out: Any) -> None:
            problem = transform_violation(plan, out)
            if problem:
                raise _Invalid(problem)

        return self._call("__call__", lambda p: plan if p is None else p(plan), check)


# -- member queue order ------------------------------------------------------------------------
class GuardedQueueFactory(Guarded):
    """Makes guarded queues; a fault in any of them disables the order in all of them."""

    family = "queue_order"

    def __init__(self, guard: PolicyGuard, policy: Any) -> None:
        from vraid.policies.queue import queue_order

        super().__init__(guard, queue_order(policy))
        self.generation = 0

    def __call__(self) -> "GuardedQueue":
        return GuardedQueue(self, self.inner())

    def disable(self, call: str, exc: BaseException) -> None:
        if not self.faulted:
            self._fail(call, exc)
            self.generation += 1


class GuardedQueue:
    """One member queue of one priority class; keeps the queued requests itself (arrival order)."""

    def __init__(self, factory: GuardedQueueFactory, queue: Any) -> None:
        self.factory = factory
        self.inner = queue
        self.generation = factory.generation
        self.queued: dict[int, Any] = {}

    def _follow(self) -> None:
        """Move to the replacement once the factory's order is disabled."""
        if self.generation != self.factory.generation:
            self.generation = self.factory.generation
            self.inner = self.factory.inner()
            for req in self.queued.values():
                self.inner.add(req)

    def _guarded(self, call: str, fn: Callable[[Any], Any], check: Callable[[Any], None] | None = None) -> Any:
        self._follow()
        try:
            out = fn(self.inner)
            if check is not None:
                check(out)
            return out
        except Exception as exc:
            if self.factory.faulted:
                raise
            self.factory.disable(call, exc)
        self._follow()
        return fn(self.inner)

    def add(self, request: Any) -> None:
        self._guarded("add", lambda q: q.add(request))
        self.queued[id(request)] = request

    def pop(self, head_position: int) -> Any:
        if not self.queued:
            raise IndexError("pop from an empty queue")

        def check(req: Any) -> None:
            if self.queued.get(id(req)) is not req:
                raise _Invalid(f"pop returned {req!r}, which is not queued")

        req = self._guarded("pop", lambda q: q.pop(head_position), check)
        del self.queued[id(req)]
        return req

    def __len__(self) -> int:
        return len(self.queued)

    def __bool__(self) -> bool:
        return bool(self.queued)


# -- prefetch ----------------------------------------------------------------------------------
class GuardedPrefetch(Guarded):
    family = "prefetch"

    def describe(self) -> str:
        try:
            return str(self.inner.describe())
        except Exception:
            return self.spec

    def after_read(self, read: Any) -> list[tuple[int, int]]:
        g = self._guard.geometry
        total = g.capacity // g.block_size

        def check(ranges: list) -> None:
            for r in ranges:
                if not (isinstance(r, tuple) and len(r) == 2 and _whole(r[0]) and _whole(r[1])
                        and r[0] + r[1] <= total):
                    raise _Invalid(f"range {r!r} is not (first block, count) inside the array's {total} blocks")

        return self._call("after_read", lambda p: [tuple(r) if isinstance(r, list) else r for r in p.after_read(read)],
                          check)


_WRAPPERS: dict[str, type] = {
    "destage": GuardedScheduler, "destage_order": GuardedOrder, "cache": GuardedOrganisation,
    "ct": GuardedTransform, "queue_order": GuardedQueueFactory, "prefetch": GuardedPrefetch,
}

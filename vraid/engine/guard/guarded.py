"""The policy guard's wrappers (:mod:`vraid.engine.guard.policy_guard` says what they check and why).

One class per family puts a policy behind the guard: the policy in force is ``inner``, every
call checks the answer, and a fault swaps ``inner`` for the family's default (seeded with
what the failed one held) through :meth:`Guarded._fail`. The cache organisation's wrapper is
in :mod:`vraid.engine.guard.guarded_cache`.

A wrapper knows its guard only as :class:`Guard`, the few calls it makes of it, so that
this module and the cache organisation's need not import the guard (which imports them).
:class:`Invalid` and :func:`whole` are shared with :mod:`vraid.engine.guard.guarded_cache`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from vraid.errors import POLICY_ERRORS, VraidError


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


class Guard(Protocol):
    """What a wrapper asks of the guard that made it
    (:class:`~vraid.engine.guard.policy_guard.PolicyGuard` is the one there is)."""

    #: seconds a scheduler may ask for no destage while host writes wait for room
    stall_limit: float
    #: the array's geometry (None until the guard is attached)
    geometry: Any

    def default(self, family: str) -> Any:
        """A fresh instance of ``family``'s default policy."""
        ...

    def fault(self, family: str, policy: str, call: str, exc: BaseException, fallback: str) -> None:
        """Record a fault; raises :class:`PolicyFault` in stop mode."""
        ...


class Invalid(Exception):
    """A policy's answer broke the family's rules (raised and caught inside the guard)."""


def _title(family: str) -> str:
    from vraid.policies.registry import FAMILIES

    fam = FAMILIES.get(family)
    return fam.title if fam is not None else family


def _spec(policy: Any) -> str:
    from vraid.policies.registry import spec_of

    try:
        return spec_of(policy)
    except POLICY_ERRORS:  # a student's spec property may fail too
        return type(policy).__name__


def _finite(value: Any, lo: float = -math.inf, hi: float = math.inf) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
            and lo <= value <= hi)


def whole(value: Any, lo: int = 0) -> bool:
    """Whether ``value`` is a whole number (an int, not a bool) of at least ``lo``."""
    return not isinstance(value, bool) and isinstance(value, int) and value >= lo


class Guarded:
    """Base of the wrappers: the policy in force (``inner``) and the switch to its fallback.

    Attributes the engine reads (``name``, ``describe``, ``limits``...) are the inner policy's.
    """

    family = ""

    def __init__(self, guard: Guard, policy: Any) -> None:
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
        return self._guard.replacement(self.family, self.inner)  # the registry's fallback of the family

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
        except POLICY_ERRORS as exc:
            if self.faulted:  # the default failed too: nothing sane is left to fall back on
                raise
            self._fail(call, exc)
        return fn(self.inner)


# -- destage scheduler ------------------------------------------------------------------------
class GuardedScheduler(Guarded):
    family = "destage"

    def __init__(self, guard: Guard, policy: Any) -> None:
        super().__init__(guard, policy)
        self._stalled_since: float | None = None

    def describe(self) -> dict[str, Any]:
        try:
            out = self.inner.describe()
            return dict(out) if isinstance(out, dict) else {"name": str(self.inner.name), "spec": self.spec}
        except POLICY_ERRORS:
            return {"name": type(self.inner).__name__, "spec": self.spec}

    @property
    def decides_on_counts(self) -> bool:
        """The policy's own claim (see DestageScheduler.decides_on_counts); anything but a
        plain True counts as False."""
        try:
            return getattr(self.inner, "decides_on_counts", False) is True
        except POLICY_ERRORS:
            return False

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
            self._fail("decide", Invalid(f"asked for no destage for {stalled:.3g} s since host writes first waited "
                                          f"for room (the limit is {self._guard.stall_limit:g} s)"))
            return self.inner.decide(state)
        due = self._stalled_since + self._guard.stall_limit
        if state.waiters > 0 and (decision.recheck is None or decision.recheck > due):
            decision = dataclasses.replace(decision, recheck=due)  # come back to judge the stall
        return decision


def _check_decision(d: Any) -> None:
    from vraid.policies.destage.base import Decision

    if not isinstance(d, Decision):
        raise Invalid(f"returned {type(d).__name__}, not a Decision")
    if not whole(d.concurrency):
        raise Invalid(f"Decision.concurrency {d.concurrency!r} is not a whole number >= 0")
    for name in ("hwm", "lwm"):
        value = getattr(d, name)
        if value is not None and not _finite(value, 0.0, 1.0):
            raise Invalid(f"Decision.{name} {value!r} is not a fraction from 0 to 1")
    if d.rate is not None and not _finite(d.rate, 0.0):
        raise Invalid(f"Decision.rate {d.rate!r} is not a finite number >= 0")
    if d.recheck is not None and not _finite(d.recheck):
        raise Invalid(f"Decision.recheck {d.recheck!r} is not a finite time")


# -- destage order ----------------------------------------------------------------------------
class GuardedOrder(Guarded):
    """Keeps the set of waiting units itself (dirtied minus removed: the cache's dirty units
    not being destaged), to check ``next``/``keys`` and to seed the replacement."""

    family = "destage_order"

    def __init__(self, guard: Guard, policy: Any) -> None:
        super().__init__(guard, policy)
        self.waiting: dict[int, None] = {}

    def _replacement(self) -> Any:
        new = self._guard.replacement(self.family, self.inner)
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
                raise Invalid(f"returned None while {len(self.waiting)} dirty unit(s) wait")
        elif isinstance(key, bool) or not isinstance(key, int) or key not in self.waiting:
            raise Invalid(f"returned {key!r}, which is not a dirty unit waiting to be destaged")

    def next(self) -> int | None:
        return self._call("next", lambda p: p.next(), self._check_next)

    def _check_keys(self, keys: list) -> None:
        if len(keys) != len(self.waiting) or set(keys) != self.waiting.keys():
            raise Invalid(f"keys() gave {len(keys)} unit(s), not the {len(self.waiting)} waiting ones")

    def keys(self) -> list[int]:
        return self._call("keys", lambda p: list(p.keys()), self._check_keys)

    def __len__(self) -> int:
        return len(self.waiting)


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
                raise Invalid(problem)

        return self._call("__call__", lambda p: plan if p is None else p(plan), check)


# -- member queue order ------------------------------------------------------------------------
class GuardedQueueFactory(Guarded):
    """Makes guarded queues; a fault in any of them disables the order in all of them."""

    family = "queue_order"

    def __init__(self, guard: Guard, policy: Any) -> None:
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
        except POLICY_ERRORS as exc:
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
                raise Invalid(f"pop returned {req!r}, which is not queued")

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
        except POLICY_ERRORS:
            return self.spec

    def after_read(self, read: Any) -> list[tuple[int, int]]:
        g = self._guard.geometry
        total = g.capacity // g.block_size

        def check(ranges: list) -> None:
            for r in ranges:
                if not (isinstance(r, tuple) and len(r) == 2 and whole(r[0]) and whole(r[1])
                        and r[0] + r[1] <= total):
                    raise Invalid(f"range {r!r} is not (first block, count) inside the array's {total} blocks")

        return self._call("after_read", lambda p: [tuple(r) if isinstance(r, list) else r for r in p.after_read(read)],
                          check)


# -- a family without a wrapper of its own ----------------------------------------------------
class GuardedCalls(Guarded):
    """Any family the guard has no wrapper for (a new family: one folder and one registry row):
    every public method of the policy is called through :meth:`Guarded._call`, so one that
    raises is replaced by the family's fallback (:func:`vraid.policies.registry.fallback`) and
    the call is answered by it. What it answers is not checked: a family whose answers have
    rules gets a wrapper of its own."""

    def __init__(self, guard: PolicyGuard, policy: Any, *, family: str) -> None:
        super().__init__(guard, policy)
        self.family = family

    def __getattr__(self, name: str) -> Any:
        attr = super().__getattr__(name)
        if name.startswith("_") or not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._call(name, lambda p: getattr(p, name)(*args, **kwargs))

        return call

"""The invariants ``vraid fuzz`` adds to the model machines, one mixin per family that has its own.

The model machines (:mod:`vraid.testing.machines` and siblings) check the data: what the host
reads back and what the members hold. Every engine ``vraid fuzz`` opens also runs its policy
guard in ``stop`` mode (:mod:`vraid.engine.guard`), so a policy that raises or answers
something its family forbids ends the example with :class:`~vraid.engine.guard.PolicyFault`
instead of being replaced by the default. On top of that:

* :class:`Settle` (every machine ``vraid fuzz`` runs): after each step the engine's loop runs
  until every task waits, so a policy fault in a background task (the destager) ends the
  step that caused it, not a later one (hypothesis then shrinks and replays it reliably).
* :class:`DestageChecks` (a destage scheduler, order or cache organisation): the guard's
  stall limit is 0, so a scheduler must ask for at least one destage whenever host writes
  wait for room; a ``burst`` rule writes more than the cache holds with the scheduler in
  charge; ``idle`` lets virtual time pass with no host request; every drain (a flush, a
  remount, the end) must empty the cache within :data:`DRAIN_LIMIT` seconds of virtual time.
* :class:`CtChecks` (a contiguity transform): besides eq. (6)/(7), which the guard checks on
  every plan, a transformed plan never has more member requests than the basic one
  (the point of a CT is to join requests, seed 000 III-B).
"""

from __future__ import annotations

import threading
from typing import Any

import trio
import trio.testing
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import invariant, rule

from vraid.core.rxw import column_requests

#: seconds of virtual time a drain may take before the cache counts as not draining
DRAIN_LIMIT = 60.0


class PolicyFailure(AssertionError):
    """The engine stopped on a policy fault (or its loop died): one failure, raised from one place
    with no exception context, so that hypothesis sees the same failure whichever step meets it."""

    def __init__(self, message: str, tb: str = "") -> None:
        super().__init__(message)
        self.traceback = tb


def find(exc: BaseException | None, kind: type) -> Any:
    """The first ``kind`` in ``exc``, its causes, contexts and exception groups."""
    todo, seen = [exc], set()
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kind):
            return e
        todo += [e.__cause__, e.__context__, *(e.exceptions if isinstance(e, BaseExceptionGroup) else ())]
    return None


def _failure(exc: BaseException, portal) -> PolicyFailure:
    from vraid.engine.guard import PolicyFault
    if not isinstance(exc, PolicyFault) and portal._thread is not threading.current_thread():
        portal._thread.join(5.0)  # the loop is ending: let it record what ended it
    fault = find(exc, PolicyFault) or find(portal.error, PolicyFault)
    if fault is not None:
        return PolicyFailure(f"policy fault: {fault.message}", fault.traceback)
    import traceback

    root = portal.error or exc
    return PolicyFailure(f"the engine stopped: {type(root).__name__}: {root}", "".join(traceback.format_exception(root)))


def _raise_bare(failure: PolicyFailure) -> None:
    """Raise ``failure`` with no ``__context__``, even inside an except or finally clause."""
    try:
        raise failure
    except PolicyFailure as exc:
        exc.__context__ = None
        raise


def _stabilise(machine, portal) -> None:
    """Route the portal's calls through :func:`_failure` (see :class:`PolicyFailure`)."""
    from vraid.engine.guard import PolicyFault
    from vraid.testing.session import SessionError

    def wrap(inner):
        def call(*args):
            failure = None
            try:
                return inner(*args)
            except (PolicyFault, SessionError) as exc:
                machine.failed = True
                failure = _failure(exc, portal)
            _raise_bare(failure)

        return call

    portal.call = wrap(portal.call)
    portal.call_sync = wrap(portal.call_sync)
    portal.close = wrap(portal.close)


class Settle:
    """Mixin over any model machine with a ``portal`` (see the module docstring)."""

    failed = False

    def _open(self, *args, **kw):
        portal = super()._open(*args, **kw)
        _stabilise(self, portal)
        return portal

    def _mount(self) -> None:  # the crash machine opens its engine here
        super()._mount()
        _stabilise(self, self.portal)

    @invariant()
    def settled(self) -> None:
        portal = getattr(self, "portal", None)
        if portal is not None and not portal._closed:
            portal.call(trio.testing.wait_all_tasks_blocked)

    def teardown(self) -> None:
        if not self.failed:
            return super().teardown()
        try:  # the failure is reported already: clean up, raise nothing more
            super().teardown()
        except Exception:  # noqa: BLE001
            pass


class DestageChecks(Settle):
    """Mixin over :class:`~vraid.testing.machines.CachedArrayMatchesModel`."""

    def _open(self, **kw):
        portal = super()._open(**kw)
        portal.array.guard.stall_limit = 0.0  # writers wait: the scheduler must ask for a destage now
        return portal

    def _drain(self) -> None:
        async def drain() -> bool:
            with trio.move_on_after(DRAIN_LIMIT) as scope:
                await self.portal.array.shutdown()
            return scope.cancelled_caught

        if self.portal.call(drain):
            dirty = len(self.portal.array.cache.dirty_keys)
            raise AssertionError(f"the cache did not drain within {DRAIN_LIMIT:g} s of virtual time "
                                 f"({dirty} dirty unit(s) left)")

    @rule(data=st.data())
    def burst(self, data) -> None:
        """More than the cache holds, block by block: host writes wait for room."""
        g = self.g
        size = self.portal.array.cache.capacity * self.portal.array.cache.unit_bytes
        n = min(self.capacity, size + data.draw(st.integers(1, 2 * g.stripe_data_bytes), label="bytes over the cache"))
        first = data.draw(st.integers(0, (self.capacity - n) // g.block_size), label="first block") * g.block_size
        seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
        self.portal.call_sync(self.portal.array.cache.resume)
        self._write(first, n, seed, "burst over the cache size")

    @rule(seconds=st.sampled_from([0.001, 0.05, 1.0, 10.0]))
    def idle(self, seconds: float) -> None:
        """No host request for a while: the scheduler's rechecks and idle destages run."""
        note(f"idle for {seconds} s of virtual time")
        self.portal.advance(seconds)


class CtChecks(Settle):
    """Mixin over the machines of :mod:`vraid.testing.ct_machines`."""

    worse: list[str] | None = None

    def on_plan(self, plan) -> None:
        if plan.transformed == plan.basic:
            return
        before, after = len(column_requests(plan.basic)), len(plan.requests)
        if after > before:
            if self.worse is None:
                self.worse = []
            self.worse.append(f"stripe {plan.stripe}: {before} member request(s) before the transform, "
                              f"{after} after (z={['' .join(r) for r in plan.z]})")

    @invariant()
    def never_more_member_requests(self) -> None:
        if self.worse:
            raise AssertionError("the transform added member requests: " + "; ".join(self.worse[:3]))

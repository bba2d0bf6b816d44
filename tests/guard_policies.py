"""Broken policies of every family, for the policy guard's tests (tests/test_guard*.py).

Each fails after ``after`` calls, in the way ``how`` says: ``raise`` (an exception),
``bogus`` (an answer out of the family's rules) or ``none``/``never`` (the "hang" an answer
can be). Loaded as ``tests/guard_policies.py:Class:after=N,how=...`` or built directly.
"""

from __future__ import annotations

from vraid.policies.ct.base import ContiguityTransform
from vraid.policies.destage.base import Decision, DestageScheduler
from vraid.policies.destage.hlwm import HlwmScheduler
from vraid.policies.order import Lrw
from vraid.policies.prefetch import PrefetchPolicy
from vraid.policies.queue.fifo import FifoOrder

_FAIL = {"after": (int, 0, "calls that succeed before the failure"),
         "how": (str, "raise", "raise | bogus | none")}


class FlakyScheduler(DestageScheduler):
    """HLWM until ``after`` decisions, then broken."""

    params = dict(_FAIL)

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.calls = 0
        self.good = HlwmScheduler(high=0.6, low=0.3)

    def decide(self, state):
        self.calls += 1
        if self.calls > self.values["after"]:
            how = self.values["how"]
            if how == "raise":
                raise ZeroDivisionError("student scheduler bug")
            if how == "bogus":
                return Decision(float("nan"))
            if how == "none":
                return None
            return Decision(0)  # never destage
        return self.good.decide(state)


class NeverScheduler(DestageScheduler):
    """Never destages, whoever waits."""

    def decide(self, state):
        return Decision(0)


class BrokenScheduler(DestageScheduler):
    def decide(self, state):
        raise RuntimeError("broken on purpose")


class FlakyOrder(Lrw):
    """LRW until ``after`` calls, then broken: ``raise``, ``bogus`` (next names a unit that is
    not dirty) or ``none`` (next says nothing waits, and it forgets what it held)."""

    params = dict(_FAIL)

    def __init__(self, after: int = 0, how: str = "raise") -> None:
        super().__init__()
        self.after, self.how, self.calls = after, how, 0

    def _tick(self) -> None:
        self.calls += 1
        if self.calls > self.after and self.how == "raise":
            raise KeyError("student order bug")

    def dirtied(self, key):
        self._tick()
        super().dirtied(key)

    def written(self, key):
        self._tick()
        super().written(key)

    def removed(self, key):
        self._tick()
        super().removed(key)

    def next(self):
        self._tick()
        if self.calls > self.after:
            if self.how == "bogus":
                return 10**9
            if self.how == "none":
                self._list.clear()
                return None
        return super().next()


class RaisingTransform(ContiguityTransform):
    def __call__(self, plan):
        raise ValueError("student transform bug")


class PrefetchTooFar(PrefetchPolicy):
    def after_read(self, read):
        return [(read.first + read.count, 1 << 40)]


class RaisingQueue(FifoOrder):
    def pop(self, head_position):
        raise RuntimeError("student queue bug")

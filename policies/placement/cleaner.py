"""The free-stripe generator (seed 004, section 2.2, Fig. 2): pure logic over a directory.

1. The *victim* is the stripe with the fewest active (LIVE) slots; vraid considers only
   stripes where cleaning gains something (not already free, not all LIVE) and breaks
   ties by preferring the hot region, then the lower stripe number.
2. For each active slot of the victim on member ``m``, a *partner* stripe with a DIRTY
   slot on the same member ``m``; the active strip moves there (a :class:`Swap`). A
   partner in the hot region is preferred; one in the cold region is used only when no
   hot one has a dirty slot on ``m`` (the paper's rule).
3. If every active slot found a partner, the victim's slots are all dirty now and
   :class:`Release` makes it a free stripe; otherwise its dirty slots become free and
   it is a partial free stripe (PFS), ready for a partial write (Fig. 2(b)).

:func:`generate` returns the plan (the steps, in the order they must be applied) and
what the victim will be after it, without changing the directory.
"""

from __future__ import annotations

from dataclasses import dataclass

from vraid.core.directory import Release, Step, StripeDirectory, Swap


@dataclass(frozen=True)
class CleanPlan:
    steps: tuple[Step, ...]
    victim: int
    #: data members of the victim that are free once the plan is applied
    free: tuple[int, ...]
    #: the victim becomes a whole free stripe
    whole: bool
    swaps: int


def choose_victim(d: StripeDirectory, exclude: frozenset[int] = frozenset()) -> int | None:
    """The stripe with the fewest active slots among those cleaning can improve."""
    for c in range(d.geometry.ndisks - 1):  # a stripe with all n-1 data slots live gains nothing
        bucket = d.by_live[c]
        if not bucket:
            continue
        best = min((s for s in bucket if s not in exclude), key=lambda s: (not d.is_hot(s), s), default=None)
        if best is not None:
            return best
    return None


def find_partner(d: StripeDirectory, member: int, victim: int, used: set[tuple[int, int]]) -> int | None:
    """A stripe other than ``victim`` with an unused DIRTY slot on ``member``; hot first."""
    for pool in (d.dirty_hot[member], d.dirty_on[member]):
        for s in pool:
            if s != victim and (s, member) not in used:
                return s
    return None


def generate(d: StripeDirectory, *, exclude: frozenset[int] = frozenset(), victim: int | None = None) -> CleanPlan | None:
    """The plan that turns the victim into a free stripe or a PFS (None: nothing to clean)."""
    v = choose_victim(d, exclude) if victim is None else victim
    if v is None:
        return None
    steps: list[Step] = []
    used: set[tuple[int, int]] = set()
    stuck = []
    for m in d.live_members(v):
        p = find_partner(d, m, v, used)
        if p is None:
            stuck.append(m)
            continue
        used.add((p, m))
        steps.append(Swap(v, m, p))
    n = d.geometry.ndisks
    gained = len(steps) + len(d.dirty_members(v))
    if not gained:
        return None
    steps.append(Release(v))
    parity = d.parity[v]
    free = tuple(m for m in range(n) if m != parity and m not in stuck)
    return CleanPlan(tuple(steps), v, free, not stuck, len(steps) - 1)


def generate_whole(d: StripeDirectory, *, attempts: int = 1 << 30) -> CleanPlan | None:
    """A plan that yields a whole free stripe (DPSR has no partial writes): the victims in
    order of fewest active slots, the first whose every active slot finds a partner; None
    when none does (external fragmentation: some member has no dirty block, and every
    candidate has a live block on it)."""
    tried = 0
    for c in range(d.geometry.ndisks - 1):
        for v in sorted(d.by_live[c], key=lambda s: (not d.is_hot(s), s)):
            dirty = d.dirty_on
            if all(len(dirty[m]) > (v in dirty[m]) for m in d.live_members(v)):  # a partner on every member
                plan = generate(d, victim=v)
                if plan is not None and plan.whole:
                    return plan
            tried += 1
            if tried >= attempts:
                return None
    return None

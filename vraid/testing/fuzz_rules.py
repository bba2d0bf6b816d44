"""What each family rule means and how the built-in policies keep it: the explanation
``vraid fuzz`` prints under a failure that broke one (docs/fuzz.md, "Reading a failure").

The guard (:mod:`vraid.engine.guard.guarded`, :mod:`vraid.engine.guard.guarded_cache`) and the fuzz checks
(:mod:`vraid.testing.fuzz_checks`) say *what* went wrong in one line; a student then needs the
rule behind it and the way the built-ins satisfy it. :func:`explain` matches the failure's
headline against :data:`RULES` and returns those lines (none for a plain exception or a data
mismatch, whose message is the whole story).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: where every family's rules are listed
DOC = "docs/policies.md#when-your-policy-fails"


@dataclass(frozen=True)
class Rule:
    """A family rule: ``pattern`` finds it in a failure's headline; ``rule`` says it,
    ``how`` says how the built-ins keep it, ``doc`` where to read more."""

    pattern: str
    rule: str
    how: str
    doc: str = DOC


RULES: tuple[Rule, ...] = (
    Rule(r"failed in decide: asked for no destage for .* since host writes first waited",
         "when host writes wait for a clean unit (state.waiters > 0), decide must ask for at least one "
         "destage (Decision.concurrency >= 1): a full cache drains only by destaging. vraid fuzz allows "
         "0 s of such a stall, a mount 2 s.",
         "every built-in scheduler starts with `if must_drain(state): return Decision(<its maximum>)` "
         "(from vraid.policies.destage import must_drain; must_drain(state) is state.waiters > 0), "
         "whatever its thresholds say; see policies/destage/hlwm.py"),
    Rule(r"failed in decide: (returned \w+, not a Decision|Decision\.)",
         "decide returns a Decision: concurrency a whole number >= 0, hwm/lwm fractions 0..1 or None, "
         "rate a finite number >= 0 or None, recheck a finite time or None.",
         "the built-ins return Decision(n, hwm=..., lwm=...) with n an int; see policies/destage/base.py"),
    Rule(r"failed in next: returned None while",
         "next() names a dirty unit waiting to be destaged, or None only when none waits.",
         "the built-in orders keep the waiting units from dirtied()/removed() calls and pick from them; "
         "see policies/order/__init__.py"),
    Rule(r"failed in next: returned .*not a dirty unit waiting",
         "next() returns a key the cache reported through dirtied() and has not reported through removed().",
         "the built-in orders add a key in dirtied(), drop it in removed(), and return only keys they hold"),
    Rule(r"failed in keys: keys\(\) gave",
         "keys() lists exactly the units waiting (dirtied and not yet removed), each once.",
         "the built-in orders return their whole waiting set"),
    Rule(r"failed in (units|span|unit_blocks):",
         "a cache organisation's units of a stripe lie inside it (rows 0..u-1), do not overlap, together "
         "cover the rows asked for, hold at most unit_blocks() blocks, and never reuse a held key for other rows.",
         "stripe gives one unit per stripe (key = stripe), pbg one per row (key = stripe * u + row); "
         "see policies/cache/__init__.py"),
    Rule(r"contiguity transform .* failed in __call__:",
         "a contiguity transform only adds operations to the basic matrix: r on clean or empty blocks, t only "
         "on dirty ones, w only where the block is cached or read, parity written only after it is read "
         "(paper 000 eq. (6)/(7), Fig. 10 line 24; vraid.core.rxw.transform_violation).",
         "msc starts from plan.basic and adds r/t/w only between two requests of a column it joins; "
         "see policies/ct/msc.py and docs/ct.md"),
    Rule(r"the transform added member requests",
         "a contiguity transform joins member requests; it must never leave more of them than the basic plan "
         "(paper 000 III-B).",
         "msc fills a gap only when that turns two requests of a column into one; see policies/ct/msc.py",
         "docs/fuzz.md"),
    Rule(r"failed in pop: pop returned",
         "pop() returns a request that add() queued and no pop() has returned yet.",
         "fifo and clook keep the added requests in a list and remove the one they return; see policies/queue/fifo.py"),
    Rule(r"failed in after_read: range",
         "after_read returns (first block, count) ranges inside the array: 0 <= first, count >= 1, "
         "first + count <= the array's blocks.",
         "seqp and msp clip every range at the array's end (min(count, total - first)); see policies/prefetch/seqp.py",
         "docs/prefetch.md"),
    Rule(r"the cache did not drain within",
         "every drain (a flush, a remount, the end) must empty the write cache within 60 s of virtual time; "
         "while draining the controller keeps at least 8 destages in flight whatever decide answers.",
         "so a drain that stalls has an order whose next() gives None while dirty units wait, or a "
         "Decision.rate that throttles destaging: the built-in orders always hand out a waiting unit, and "
         "the built-in schedulers return no rate while must_drain(state) is true",
         "docs/fuzz.md"),
)


def explain(headline: str) -> list[str]:
    """The lines explaining the rule ``headline`` broke (empty when it names no family rule)."""
    for r in RULES:
        if re.search(r.pattern, headline):
            return [f"the rule: {r.rule}", f"how the built-ins keep it: {r.how}", f"see {r.doc}"]
    return []

"""CLI command ``vraid fuzz``: hypothesis state machines with your policy plugged in (docs/fuzz.md).

``vraid fuzz --destage mysched.py:Eager`` (or ``--ct mymod:MyCT``, ``--destage-order``,
``--cache``, ``--queue-order``, ``--prefetch``) runs :mod:`vraid.testing.fuzz`: the array
against a bytearray model under every organisation and order the policy applies to, plus the
family's own invariants. Exit status: 0 when nothing failed, 3 when a failure was found (its
shrunk steps and a replay command are printed), 1 for a bad spec or setting (nothing ran).
"""

from __future__ import annotations

import argparse
import logging
import random
import shlex
import sys

from vraid.errors import VraidError
from vraid.policies import registry

#: the exit status of a run that found a failure (1 is a user error, 2 bad usage)
FOUND = 3


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``fuzz`` on the ``vraid`` parser."""
    from vraid.testing.fuzz_budget import DEFAULT_EXAMPLES, DEFAULT_STEPS

    p = sub.add_parser(
        "fuzz", help="fuzz your own policy: the array against a model with it plugged in (hypothesis)",
        description="Run hypothesis state machines with one policy plugged in: random aligned and unaligned "
                    "reads and writes, flushes and remounts (and power cuts with --with-crashes) against a "
                    "bytearray model, under every cache organisation and order the policy applies to, plus the "
                    "family's own rules. A policy that raises or answers what its family forbids is a failure. "
                    "Prints the shrunk failing steps and a command that replays them, or 'no failure in N "
                    "examples'. Exit status 0: no failure; 3: a failure; 1: a bad spec. See docs/fuzz.md.",
        epilog="e.g. vraid fuzz --destage mysched.py:Eager --examples 30;  vraid fuzz --ct mymod:MyCT --seed 7")
    g = p.add_mutually_exclusive_group(required=True)
    for key, fam in registry.FAMILIES.items():
        g.add_argument(fam.flag, dest="family_spec", metavar="SPEC", action=_Family, family=key,
                       help=f"fuzz this {fam.title} (NAME[:k=v,...], module:Class or file.py:Class)")
    p.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES, metavar="N",
                   help=f"examples (random runs) per case (default {DEFAULT_EXAMPLES})")
    p.add_argument("--steps", type=int, default=DEFAULT_STEPS, metavar="N",
                   help=f"most steps per example (default {DEFAULT_STEPS})")
    p.add_argument("--seed", type=int, help="hypothesis seed (default: a random one, printed; the same seed and "
                                            "options repeat the run)")
    p.add_argument("--with-crashes", action="store_true",
                   help="also run the power-cut machine (crash mid-write, reassemble, recover)")
    p.add_argument("--case", metavar="NAME", help="run only this case (the names are printed as they run)")
    p.add_argument("--replay", metavar="BLOB", help="replay one failing example (with --case), as printed by a failure")
    p.add_argument("--debug", action="store_true", help="print the full traceback of a failure")
    p.set_defaults(func=cmd_fuzz)


class _Family(argparse.Action):
    def __init__(self, *args, family: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.family = family

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        namespace.family = self.family
        namespace.family_spec = values


def _say(text: str = "") -> None:
    print(text, flush=True)


def cmd_fuzz(args) -> int:
    from vraid.testing.fuzz import DEFAULT_STEPS, run

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    if not args.debug:  # power cuts make the engine log failed destages: expected here, not news
        logging.getLogger("vraid").setLevel(logging.CRITICAL)
    if args.replay is not None and args.case is None:
        raise VraidError("--replay needs --case", "copy the whole replay command a failure printed")
    flag = registry.family(args.family).flag
    base = ["vraid", "fuzz", flag, args.family_spec]
    if args.steps != DEFAULT_STEPS:
        base += ["--steps", str(args.steps)]
    result = run(args.family, args.family_spec, examples=args.examples, seed=seed, steps=args.steps,
                 with_crashes=args.with_crashes, case=args.case, blob=args.replay,
                 progress=lambda line: _say(f"  case {line}"))
    failure = result.failure
    if failure is None:
        if args.replay is not None:
            _say(f"case {args.case}: the replayed example passes now")
            return 0
        _say(f"{flag} {result.spec}: no failure in {result.examples} examples "
             f"(each of {len(result.cases)} cases; seed {seed})")
        return 0
    from vraid.testing.fuzz_rules import explain

    headline = failure.headline()
    _say(f"\nFAILED: {flag} {result.spec}, case {failure.case}: {headline}")
    for line in explain(headline):
        _say(f"  {line}")
    _say("\nthe shrunk failing sequence (hypothesis):")
    for line in failure.report:
        for sub in line.rstrip().splitlines():
            _say(f"    {sub}")
    if args.debug:
        _say("\ntraceback:")
        print(failure.traceback(), end="", file=sys.stderr)
    _say("\nreplay it:")
    if args.replay is not None:
        _say("  " + shlex.join(base + ["--case", failure.case, "--replay", args.replay]))
        return FOUND
    if failure.blob:
        _say("  " + shlex.join(base + ["--case", failure.case, "--replay", failure.blob]))
        _say("  or in Python (raises the failure with its traceback):")
        _say(f"    from vraid.testing.fuzz import replay; replay({args.family!r}, {result.spec!r}, "
             f"{failure.case!r}, {failure.blob!r}" + (f", steps={args.steps}" if args.steps != DEFAULT_STEPS else "") + ")")
    else:
        _say("  (hypothesis gave no replay blob: the failure did not happen again when it re-ran the example. "
             "Does the policy keep state outside its object, in a file, the clock or a random number "
             "generator? vraid fuzz builds a fresh policy object for every engine and resets the policy "
             "module's globals before every example.)")
    again = base + ["--examples", str(args.examples), "--seed", str(seed)]
    if args.with_crashes:
        again.append("--with-crashes")
    _say("  the whole run again: " + shlex.join(again))
    if not failure.blob:
        _say("  only this case: " + shlex.join(again + ["--case", failure.case]))
    return FOUND

"""CLI command ``vraid lab``: seeded exercises with checked answers (docs/labs/README.md).

``list`` names the labs; ``run NAME`` deals a seed's questions (asked one by one on a terminal,
printed otherwise), ``--answers`` prints the worked answers (``--json``: as an answer file),
``--batch`` runs the lab end to end with its own answers; ``check NAME FILE`` grades an answer
file. The labs themselves live in :mod:`vraid.labs`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vraid.errors import VraidError


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``lab`` on the ``vraid`` parser."""
    p = sub.add_parser("lab", help="seeded lab exercises with checked answers (vraid lab list)",
                       description="Labs deal questions from a seed; you predict, vraid computes and reveals. "
                                   "See docs/labs/README.md.")
    labsub = p.add_subparsers(dest="lab_command", required=True, metavar="ACTION")

    q = labsub.add_parser("list", help="the labs, with the papers each covers")
    q.add_argument("--json", action="store_true", help='print [{"name", "title", "seeds", "mount"}, ...]')
    q.set_defaults(func=cmd_list)

    q = labsub.add_parser("run", help="deal a lab's questions and check your predictions",
                          epilog="e.g. vraid lab run layouts --seed 3 (then --answers to see the worked answers)")
    q.add_argument("name", help="the lab (vraid lab list)")
    q.add_argument("--seed", type=int, default=None,
                   help="deals the questions (default: a random seed from 2 to 999, printed; the instructors' "
                        "answer keys cover seeds 0 and 1, and seed 0 of a paper lab is the paper's own example)")
    q.add_argument("--answers", action="store_true", help="print the worked answers instead of asking (OSTEP's -c)")
    q.add_argument("--json", action="store_true", help="with --answers: print them as an answer file")
    q.add_argument("--mount", type=Path, metavar="DIR", help="a mount lab: work directory for its array (default: a temporary one)")
    q.add_argument("--batch", action="store_true", help="run end to end with the lab's own answers; non-zero exit on any disagreement")
    q.set_defaults(func=cmd_run)

    q = labsub.add_parser("check", help="grade an answer file (non-zero exit when an answer is wrong)")
    q.add_argument("name", help="the lab")
    q.add_argument("answers", type=Path, help='JSON file {"lab": NAME, "seed": N, "answers": {"q1": ...}}')
    q.add_argument("--seed", type=int, help="the seed the questions were dealt with (default: the file's, else 0)")
    q.set_defaults(func=cmd_check)


def _say(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `vraid lab run NAME --answers | head`: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(0) from None


def cmd_list(args) -> int:
    from vraid.labs import all_labs

    labs = all_labs()
    if args.json:
        print(json.dumps([lab.describe() for lab in labs], indent=2))
        return 0
    import shutil
    import textwrap

    width = max(len(lab.name) for lab in labs)
    indent = " " * (width + 2 + 9 + 2)
    columns = max(40, min(shutil.get_terminal_size().columns, 100))  # titles fold under themselves
    print(f"{'lab':<{width}}  {'papers':<9}  title")
    for lab in labs:
        papers = ",".join(lab.seeds) if lab.seeds else "basics"
        mount = " (mount)" if lab.mount else ""
        head = f"{lab.name:<{width}}  {papers:<9}  "
        print(textwrap.fill(lab.title + mount, columns, initial_indent=head, subsequent_indent=indent))
    print("\npapers: the seed papers a lab follows (000 to 004, see README); "
          "basics: none\nrun one: vraid lab run NAME --seed N   (--answers shows the worked answers)")
    return 0


def cmd_run(args) -> int:
    from vraid.labs import get, runner

    lab = get(args.name)
    if args.seed is None:  # never one the answer keys (docs/labs/instructor/) show
        import random

        from vraid.labs.sheets import KEY_SEEDS

        args.seed = random.SystemRandom().choice([n for n in range(1000) if n not in KEY_SEEDS])
    if args.json and not args.answers:
        raise VraidError("--json goes with --answers", f"vraid lab run {lab.name} --answers --json")
    if args.mount is not None and not lab.mount:
        raise VraidError(f"lab {lab.name} runs in virtual time and takes no --mount", "drop --mount")
    if args.batch:
        wrong = runner.batch(lab, args.seed, _say, args.mount)
        _say(f"batch {lab.name} seed {args.seed}: " + ("all agree" if not wrong else f"{wrong} disagreement(s)"))
        return 1 if wrong else 0
    questions = lab.questions(args.seed)
    if args.answers:
        if args.json:
            print(json.dumps(runner.answer_file(lab, args.seed, questions), indent=2))
        else:
            runner.worked(lab, args.seed, questions, _say)
        return 0
    if not sys.stdin.isatty():
        runner.show_questions(lab, args.seed, questions, _say)
        return 0
    try:
        wrong = runner.ask_all(lab, args.seed, questions, input, _say)
    except EOFError:
        return 1
    if lab.mount:
        _say("\nnow the real thing (a mount; this takes a few seconds):")
        wrong += runner.observe(lab, args.seed, questions, args.mount, _say)
    return 1 if wrong else 0


def cmd_check(args) -> int:
    from vraid.labs import get, runner

    lab = get(args.name)
    seed, answers = runner.read_answers(args.answers, lab, args.seed)
    wrong = runner.grade(lab, seed, lab.questions(seed), answers, _say)
    return 1 if wrong else 0

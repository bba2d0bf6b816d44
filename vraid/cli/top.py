"""CLI commands of the live view and run-time control: ``top``, ``ctl``.

``vraid top MOUNTPOINT`` watches a running mount; ``vraid top [OPTIONS] --sim SIM-ARGS...``
runs ``vraid sim``'s engine in-process, paced to be watchable. ``vraid ctl MOUNTPOINT get``
shows the policies in force and ``vraid ctl MOUNTPOINT set KEY=VALUE`` swaps one between
destages. See docs/top.md.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.markup import escape

from vraid.errors import VraidError

from .common import console


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""
    p = sub.add_parser(
        "top", help="live view of a mount (or of a simulation): rxw-matrices, watermarks, members, counters",
        description="Watch a running mount, or a simulation run in-process with --sim.\n"
                    "Keys: p pauses destaging, s destages one stripe and freezes its plan, r resumes,\n"
                    "q quits (the mount is left as it is); with --sim also + faster, - slower,\n"
                    "space stops time. docs/top.md says how to read each panel.",
        epilog="examples:\n  vraid top /mnt/vraid\n  vraid top --sim --cache stripe --cache-size 4M --workload random-write\n"
               "  vraid top --once --sim --cache stripe --requests 2000   (one frame, no terminal needed)\n"
               "top's own options go before --sim; everything after --sim is `vraid sim`'s.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("mountpoint", type=Path, nargs="?", help="a vraid mountpoint (omit with --sim)")
    p.add_argument("--once", action="store_true",
                   help="print one frame and exit (with --sim: after running the whole workload in virtual time)")
    p.add_argument("--interval", type=float, default=0.25, help="seconds between updates (default 0.25)")
    p.add_argument("--duration", type=float, help="quit by itself after this many seconds")
    p.add_argument("--rate", type=float, default=None,
                   help="--sim: virtual seconds per real second at the start (default 0.05; + and - change it)")
    p.add_argument("--width", type=int, help="draw this many columns wide (default: the terminal's)")
    p.add_argument("--height", type=int,
                   help="fit the frame in this many lines (default: the terminal's in the live view; "
                        "--once prints the panels at full height unless --height is given)")
    p.add_argument("--sim", nargs=argparse.REMAINDER, metavar="SIM-ARGS",
                   help="run a simulation instead of attaching: the arguments of `vraid sim` follow")
    p.set_defaults(func=cmd_top)

    p = sub.add_parser(
        "ctl", help="show or change a policy of a running mount (those `vraid policies` marks run-time)",
        description="get: the policies in force. set KEY=VALUE: swap one between destages\n"
                    "(a destage in flight finishes under the old one). A bad key or value changes nothing.",
        epilog=_ctl_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("mountpoint", type=Path, help="a vraid mountpoint")
    p.add_argument("action", choices=("get", "set"), help="get the policies, or set one")
    p.add_argument("assignment", nargs="?", metavar="KEY=VALUE", help="with set: the policy and its new spec")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_ctl)


def _ctl_epilog() -> str:
    """The keys ``vraid ctl set`` takes: the registry's families that can change at run time."""
    from vraid.policies.registry import FAMILIES

    rows = [f"  {key:<15}{fam.title}: {' | '.join(fam.builtins)}, NAME[:k=v,...] or pkg.mod:Class (as {fam.flag})"
            for key, fam in FAMILIES.items() if fam.runtime]
    return "keys:\n" + "\n".join(rows) + "\n`vraid policies KEY` lists each one's parameters."


def _console():
    return console


# -- top ------------------------------------------------------------------------
def _sim_config(sim_args: list[str]):
    """A SimConfig from `vraid sim`'s own arguments (parsed by its own parser)."""
    from vraid.cli.sim import sim_config, sim_parser

    parser = sim_parser()
    try:
        args = parser.parse_args(sim_args)
    except SystemExit as exc:
        raise VraidError(f"--sim: the simulation arguments {' '.join(sim_args)!r} are not valid for `vraid sim`",
                         "see `vraid sim --help`; top's own options go before --sim") from exc
    if args.json:
        raise VraidError("vraid top --sim draws frames; --json is an option of `vraid sim`", "drop --json")
    if getattr(args, "host_readahead", None) not in (None, "none"):
        raise VraidError("vraid top --sim does not run the host read-ahead model", "drop --host-readahead, or use `vraid sim`")
    return sim_config(args)  # every setting, --fault, --nvram and --bitmap-chunk included; sizes checked


def cmd_top(args) -> int:
    from rich.console import Console

    from vraid.engine.host.live import derive_rates
    from vraid.tui.panels import frame
    from vraid.tui.top import DEFAULT_RATE, MountSource, SimSource, buckets_for, run_view, sim_snapshots

    if args.sim is None and args.mountpoint is None:
        raise VraidError("vraid top needs a mountpoint, or --sim followed by the arguments of `vraid sim`",
                         "e.g. `vraid top /mnt/vraid` or `vraid top --sim --cache stripe`")
    if args.sim is not None and args.mountpoint is not None:
        raise VraidError("give either a mountpoint or --sim, not both", "vraid top MOUNTPOINT | vraid top --sim ...")
    if args.interval <= 0:
        raise VraidError(f"--interval {args.interval} is not positive", "e.g. --interval 0.25")
    if args.duration is not None and args.duration < 0:
        raise VraidError(f"--duration {args.duration} is negative", "give seconds, e.g. --duration 5")
    rate = DEFAULT_RATE if args.rate is None else args.rate
    if rate <= 0:
        raise VraidError(f"--rate {rate} is not positive", "virtual seconds per real second, e.g. 0.05")
    for name in ("width", "height"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise VraidError(f"--{name} {value} is not positive", f"give the terminal's {name}, e.g. --{name} "
                             + ("80" if name == "width" else "24"))
    console = _console() if args.width is None and args.height is None else Console(width=args.width,
                                                                                     height=args.height, emoji=False)
    if args.once:
        if args.sim is not None:
            first, snap = sim_snapshots(_sim_config(args.sim))
            snap["rates"] = derive_rates(first, snap)
        else:
            import time

            source = MountSource(args.mountpoint)
            first = source.snapshot(buckets_for(console.width))
            time.sleep(min(1.0, args.interval * 4))
            snap = source.snapshot(buckets_for(console.width))
            snap["rates"] = derive_rates(first, snap)
        console.print(frame(snap, width=console.width, height=args.height, sim=args.sim is not None, keys=False))
        return 0
    source = SimSource(_sim_config(args.sim), rate) if args.sim is not None else MountSource(args.mountpoint)
    try:
        return run_view(source, interval=args.interval, duration=args.duration, console=console, height=args.height)
    finally:
        source.close()


# -- ctl ------------------------------------------------------------------------
def _absolute_file(spec: str) -> str:
    """A spec naming a policy file (``path/to/file.py:Class[:...]``) with the path made absolute:
    the daemon loads it, and its current directory is not the caller's.

    A ``pkg.mod:Class`` whose module is a file under the caller's directory is sent as that
    file's absolute path, for the same reason."""
    from vraid.policies.loader import is_file_target, is_module_target

    head, sep, rest = spec.strip().partition(":")
    if not sep:
        return spec
    if is_file_target(head):
        path = os.path.expanduser(head)
        return spec if os.path.isabs(path) else os.path.abspath(path) + sep + rest
    local = head.replace(".", os.sep) + ".py"
    if is_module_target(head, rest.partition(":")[0].strip()) and os.path.isfile(local):
        return os.path.abspath(local) + sep + rest
    return spec


def cmd_ctl(args) -> int:
    from vraid.tui.top import MountSource

    source = MountSource(args.mountpoint)
    if args.action == "get":
        if args.assignment is not None:
            raise VraidError(f"`vraid ctl get` takes no KEY=VALUE (got {args.assignment!r})",
                             "use `vraid ctl MOUNTPOINT set KEY=VALUE` to change a policy")
        answer = source.command("ctl_get")
        faults = answer.get("faults") or []
        if args.json:
            print(json.dumps({"policies": answer["policies"], "keys": answer["keys"], "faults": faults,
                              "sources": answer.get("sources") or {}}, indent=2))
            return 0
        from rich.table import Table
        from rich.text import Text

        t = Table(title=Text(f"policies of {args.mountpoint}"), title_justify="left")
        t.add_column("key", style="bold")
        t.add_column("value")
        t.add_column("settable with ctl set")
        sources = answer.get("sources") or {}
        for key, value in answer["policies"].items():
            shown = Text(value) if key not in sources else Text(f"{value}\n({sources[key]})")
            t.add_row(key, shown, answer["keys"].get(key, "no (fixed at mount)"))
        _console().print(t)
        from vraid.tui.render import fault_line

        for fault in faults:
            _console().print(f"[bold red]policy fault:[/] {escape(fault_line(fault))}", highlight=False)
        return 0
    if not args.assignment or "=" not in args.assignment:
        raise VraidError("`vraid ctl set` needs KEY=VALUE", "e.g. `vraid ctl /mnt/vraid set destage=adaptive`")
    key, _, value = args.assignment.partition("=")
    answer = source.command("ctl_set", key=key.strip(), value=_absolute_file(value))
    change = {k: answer[k] for k in ("key", "old", "new")} | ({"source": answer["source"]} if answer.get("source") else {})
    if args.json:
        print(json.dumps(change, indent=2))
    else:
        line = f"{change['key']}: {change['old']} -> {change['new']}"
        _console().print(line + (f" ({change['source']})" if "source" in change else ""),
                         markup=False, emoji=False, highlight=False)
    return 0

"""``vraid policies [FAMILY] [--json]``: every policy family, its policies and their parameters.

Everything shown comes from :mod:`vraid.policies.registry` (through :mod:`vraid.policies.describe`) (built-ins and installed plugins of
the entry-point groups ``vraid.policies.<family>``); docs/policies.md says how to add your own.
"""

from __future__ import annotations

import argparse
import json

from .common import console


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register ``policies`` on the ``vraid`` parser."""
    from vraid.policies.registry import FAMILIES

    p = sub.add_parser(
        "policies", help="list the policy families, their policies and parameters (--cache, --destage, ...)",
        description="Every policy family (a flag of mount/sim/top, a vraid.toml key, a status line), each "
                    "policy with its parameters: default, type, range and what it does. A spec is "
                    "NAME[:key=value,...], pkg.mod:Class[:...] or path/to/file.py:Class[:...] (docs/policies.md).",
    )
    p.add_argument("family", nargs="?", metavar="FAMILY", help=f"only this family: {', '.join(FAMILIES)}")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_policies)


def cmd_policies(args) -> int:
    from vraid.policies.describe import describe_all
    from vraid.policies.registry import family

    keys = [family(args.family.replace("-", "_")).key] if args.family else None
    doc = describe_all(keys)
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    for fam in doc["families"]:
        console.print(_table(fam))
    return 0


def _table(fam: dict):
    from rich.table import Table

    runtime = "; `vraid ctl set` may change it while mounted" if fam["runtime"] else ""
    settings = "".join(f"; {s['key'].replace('_', '-')}: {s['doc']} (default {s['default']})" for s in fam["settings"])
    t = Table(title=f"{fam['flag']}  {fam['title']}: {fam['doc']}", title_justify="left",
              caption=f"default {fam['default']}{runtime}{settings}; your own: subclass {fam['base']}",
              caption_justify="left")
    for col in ("policy", "parameter", "default", "type", "range", "what it does"):
        t.add_column(col, overflow="fold")
    for pol in fam["policies"]:
        source = f" [dim]({pol['source']})[/]" if pol["source"] else ""
        origin = "" if pol["origin"] == "built-in" else f" [dim][{pol['origin']}][/]"
        t.add_row(f"[bold]{pol['name']}[/]", "", "", "", "", f"{pol['summary']}{source}{origin}")
        for prm in pol["params"]:
            default = "(see doc)" if prm["default"] is None else str(prm["default"])
            t.add_row("", prm["name"], default, prm["type"], prm["range"], prm["doc"])
        t.add_section()
    return t

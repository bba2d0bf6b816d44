"""What every ``vraid`` subcommand module shares: the consoles, argument types, the geometry
options, and the policy options generated from :mod:`vraid.policies.registry`.

Every module of ``vraid.cli`` imports from here, and ``vraid.cli.main`` imports them: nothing
here imports another CLI module, so there is no import cycle among them.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterable

from rich.console import Console

from vraid.core.geometry import DEFAULT_BLOCK, DEFAULT_STRIP, default_layout
from vraid.core.redundancy import LAYOUT_NAMES, for_level, levels
from vraid.core.units import parse_size
from vraid.errors import VraidError
from vraid.policies import registry

#: emoji off: a spec like ``/x/nosuch.py:X:`` must print as written, not as an emoji; text a user
#: gave (specs, paths, messages) goes through :func:`rich.markup.escape` or a ``Text``
console = Console(emoji=False)
err = Console(stderr=True, emoji=False)


def size_type(what: str):
    def parse(text: str) -> int:
        try:
            return parse_size(text, what)
        except VraidError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from exc

    return parse


def add_geometry_args(p: argparse.ArgumentParser, *, disk_size: bool) -> None:
    p.add_argument("--level", type=int, choices=levels(), default=5, help="RAID level (default 5; docs/levels.md)")
    p.add_argument("--disks", type=int, default=5, help="number of member disks (default 5; RAID-4/5 need 3 or more, "
                                                          "RAID-6 4, RAID-1 2, RAID-10 2: odd counts as md's near-2)")
    p.add_argument("--strip", type=size_type("strip size"), default=DEFAULT_STRIP, help="strip size: blocks per disk per stripe (default 64K)")
    p.add_argument("--block", type=size_type("block size"), default=DEFAULT_BLOCK, help="block size (default 4K)")
    p.add_argument("--layout", choices=LAYOUT_NAMES, default=None,
                   help="where parity (or the copies) go, md's names: RAID-5 and RAID-6 left-symmetric (default), "
                        "left-asymmetric, right-symmetric, right-asymmetric (RAID-6 puts Q after P); RAID-4 "
                        "parity-last (default) or parity-first; RAID-1 mirror; RAID-10 near-2")
    if disk_size:
        p.add_argument("--disk-size", type=size_type("disk size"), default=parse_size("256M"), help="size of each member file (default 256M)")


def layout_of(args: argparse.Namespace) -> str:
    """``--layout``, or md's default for ``--level`` when it is not given.

    Raises:
        VraidError: the layout is not one of the level's.
    """
    if args.layout is None:
        return default_layout(args.level)
    names = for_level(args.level).layouts if args.level in levels() else LAYOUT_NAMES
    if args.layout not in names:
        raise VraidError(f"--layout {args.layout} is not a RAID-{args.level} layout",
                         f"give one of {', '.join(names)} (or leave --layout out: {names[0]})")
    return args.layout


def add_policy_flags(group: Any, keys: Iterable[str] | None = None) -> None:
    """``--KEY NAME[:k=v,...]`` for every family of the registry (or those of ``keys``), and
    ``--SETTING`` for its plain settings (``--cache-size``, ``--log-size``); all default to None
    (the caller's defaults apply). The one place a family's option is defined."""
    for key in (registry.FAMILIES if keys is None else keys):
        fam = registry.FAMILIES[key]
        group.add_argument(fam.flag, dest=key, metavar="NAME[:k=v,...]", help=registry.flag_help(key))
        for s in fam.settings:
            group.add_argument("--" + s.key.replace("_", "-"), dest=s.key, metavar=s.metavar,
                               help=f"{s.doc} (default {s.default})")


def mount_families() -> list[str]:
    """The families a mount may choose (not those chosen at create: the log disk)."""
    return [key for key, fam in registry.FAMILIES.items() if not fam.at_create]


def policy_args(args: argparse.Namespace) -> dict[str, str]:
    """The policy flags given on the command line: key -> spec (families and settings)."""
    return {key: getattr(args, key) for key in registry.settings() if getattr(args, key, None) is not None}

"""CLI commands of the the live view and run-time control: ``top``, ``ctl``."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""

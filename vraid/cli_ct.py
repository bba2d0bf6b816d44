"""CLI commands of the contiguity transform: ``rxw`` and ``stride-bench``."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""

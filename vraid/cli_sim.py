"""CLI commands of the simulation side: ``models``, ``sim``, ``experiment``."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register the simulation subcommands on the ``vraid`` parser."""

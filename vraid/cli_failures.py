"""CLI commands of the failures and recovery: ``fail``, ``add``, ``rebuild``, ``check``."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register these subcommands on the ``vraid`` parser."""

"""Every command's output fits 80 columns (issue 35 item 4): no line is longer, and no table
loses a border. Each command runs as a user runs it, with ``COLUMNS=80``; a bordered table
row must end with its right border (rich crops a table too wide for the terminal, and the
border goes first). ``vraid status`` and the live ``vraid top`` need a mount: their panels are
rendered at 80 columns in tests/test_narrow_tables.py and the snapshot tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

LEFT = "│┃├┡┢┣┏┌└┗╭╰"
RIGHT = "│┃┤┩┪┫┓┐┘┛╮╯"

COMMANDS = [
    ("sim", "--requests", "300"),
    ("sim", "--requests", "600", "--cache", "stripe", "--cache-size", "1M"),
    ("sim", "--requests", "600", "--log", "scd"),
    ("sim", "--requests", "300", "--strip", "4K", "--placement", "multibuffer"),
    ("rxw", "--z", "DEEE,ECED,EEEE,DDDD,DCDD,EDEE,DEEE", "--ct", "msc"),
    ("rxw", "--random", "--answer"),
    ("rxw", "--random"),
    ("layout", "--level", "5", "--disks", "5", "--stripes", "6"),
    ("models",),
    ("policies",),
    ("lab", "list"),
    ("top", "--once", "--sim", "--requests", "300"),
    ("top", "--once", "--sim", "--requests", "300", "--cache", "stripe", "--cache-size", "1M"),
]


def problems(text: str, width: int = 80) -> list[str]:
    """Lines longer than ``width``, and table rows that start with a border but lost the right one."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        body = line.rstrip()
        if len(line) > width:
            out.append(f"line {n} is {len(line)} columns: {line!r}")
        elif body[:1] in LEFT and body[-1:] not in RIGHT:
            out.append(f"line {n} lost its right border: {line!r}")
    return out


def test_the_checker_finds_long_lines_and_lost_borders():
    assert problems("│ a │\n┃ b ┃") == []
    assert problems("│ a  b") == ["line 1 lost its right border: '│ a  b'"]
    assert problems("x" * 81)[0].startswith("line 1 is 81 columns")


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_output_fits_80_columns(args, tmp_path: Path):
    env = dict(os.environ, COLUMNS="80", LINES="40", XDG_CACHE_HOME=str(tmp_path))
    run = subprocess.run([sys.executable, "-m", "vraid", *args], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stderr
    bad = problems(run.stdout)
    assert not bad, "\n".join(bad[:10])


def test_examine_fits_80_columns(tmp_path: Path):
    env = dict(os.environ, COLUMNS="80")
    subprocess.run([sys.executable, "-m", "vraid", "create", str(tmp_path / "a"), "--disk-size", "16M"],
                   check=True, capture_output=True, env=env)
    run = subprocess.run([sys.executable, "-m", "vraid", "examine", str(tmp_path / "a")], capture_output=True,
                         text=True, env=env, check=True)
    bad = problems(run.stdout)
    assert not bad, "\n".join(bad[:10])

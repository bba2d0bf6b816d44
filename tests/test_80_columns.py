"""Every command's output fits 80 columns (issue 35 item 4): no line is longer, and no table
loses a border. Each command runs as a user runs it, with ``COLUMNS=80``; a bordered table
row must end with its right border (rich crops a table too wide for the terminal, and the
border goes first). ``vraid status`` (and ``vraid demo``, which prints the same tables) needs a
mount: its tables are rendered here from a recorded status document (tests/data/status_mounted.json,
what ``vraid status --json`` prints), as ``vraid status`` renders them; the live ``vraid top``'s
panels are rendered at 80 columns in tests/test_narrow_tables.py and the snapshot tests."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from vraid.tui.render import status_tables

STATUS = Path(__file__).parent / "data" / "status_mounted.json"

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


def wrapped_rows(text: str) -> list[str]:
    """Rows of a table with a header that continue on a second line: the continuation line's
    first cell (the row's name or first value, never blank) is empty."""
    out, body = [], False
    for n, line in enumerate(text.splitlines(), 1):
        first = line.lstrip()[:1]
        body = first in ("┡", "├") or (body and first == "│")  # below a header rule, until the bottom
        cells = line.strip().split("│")
        if body and line.lstrip()[:1] == "│" and len(cells) > 2 and not cells[1].strip():
            out.append(f"line {n} continues a wrapped row: {line!r}")
    return out


def render_status(st: dict, width: int = 80) -> str:
    """``vraid status``'s output for the status document ``st`` on a ``width``-column terminal."""
    out = io.StringIO()
    console = Console(width=width, file=out, color_system=None)
    for t in status_tables(st):
        console.print(t)
    return out.getvalue()


def test_the_checker_finds_long_lines_and_lost_borders():
    assert problems("│ a │\n┃ b ┃") == []
    assert problems("│ a  b") == ["line 1 lost its right border: '│ a  b'"]
    assert problems("x" * 81)[0].startswith("line 1 is 81 columns")
    table = "┏━━━┳━━━┓\n┃ a ┃ b ┃\n┡━━━╇━━━┩\n│ 1 │ 2 │\n│   │ 3 │\n└───┴───┘"
    assert wrapped_rows(table) == ["line 5 continues a wrapped row: '│   │ 3 │'"]
    assert wrapped_rows(table.replace("│   │ 3 │\n", "")) == []


def test_status_of_a_recorded_mount_fits_80_columns():
    st = json.loads(STATUS.read_text())
    text = render_status(st)
    bad = problems(text) + wrapped_rows(text)
    assert not bad, "\n".join(bad[:10]) + "\n" + text
    assert "…" not in text
    for word in ("reads", "read bytes", "write bytes", "RCW PBGs", "p99 ms", "prefetch-hit", "idle-waiting",
                 "destages", st["cache"]["scheduler"]["spec"], "spare0.img"):
        assert word in text  # every header and value whole on one line
    for m in st["members"]:  # each member's file by name, its folder once above
        assert f"{m['disk']} │ {Path(m['store']).name} " in text
    assert text.count(str(Path(st["members"][0]["store"]).parent)) == 1


def test_status_with_members_in_different_folders_and_long_counters_fits_80_columns():
    st = json.loads(STATUS.read_text())
    st["members"] = [m | {"store": f"/srv/disk{m['disk']}/a/long/folder/of/member/{m['disk']}/disk.img",
                          "reads": 123456789012, "writes": 98765432109, "read_bytes": 10 ** 15}
                     for m in st["members"]]
    text = render_status(st)
    bad = problems(text) + wrapped_rows(text)
    assert not bad, "\n".join(bad[:10]) + "\n" + text
    assert "123456789012" in text and "98765432109" in text


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


def test_status_of_an_unmounted_array_fits_80_columns_and_shows_no_empty_counters(tmp_path: Path):
    env = dict(os.environ, COLUMNS="80")
    subprocess.run([sys.executable, "-m", "vraid", "create", str(tmp_path / "a"), "--disk-size", "16M", "--spares", "1"],
                   check=True, capture_output=True, env=env)
    run = subprocess.run([sys.executable, "-m", "vraid", "status", str(tmp_path / "a")], capture_output=True,
                         text=True, env=env, check=True)
    bad = problems(run.stdout) + wrapped_rows(run.stdout)
    assert not bad, "\n".join(bad[:10])
    assert "│ spare │ spare0.img │ spare " in run.stdout and "read bytes" not in run.stdout  # unmounted: no counters

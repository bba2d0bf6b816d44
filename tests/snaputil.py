"""Snapshot files for rendered text: compare, or rewrite with VRAID_UPDATE_SNAPSHOTS=1.

``assert_snapshot("name", text)`` compares ``text`` with ``tests/snapshots/name.txt``. After
a deliberate change of a panel, run the tests once with ``VRAID_UPDATE_SNAPSHOTS=1`` to
rewrite the files, look at ``git diff tests/snapshots`` and commit them with the change.
"""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def render_text(renderable, width: int = 100, height: int = 25) -> str:
    """``renderable`` as plain text on a fixed-size console without colours (a Layout
    fills ``height`` lines)."""
    from rich.console import Console

    console = Console(width=width, height=height, record=True, color_system=None, file=open(os.devnull, "w"))
    console.print(renderable)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines()) + "\n"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("VRAID_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text)
        if os.environ.get("VRAID_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"{path} did not exist and was written; check it and commit it")
        return
    expected = path.read_text()
    assert text == expected, (f"{name} differs from {path}; if the change is intended, rerun with "
                              f"VRAID_UPDATE_SNAPSHOTS=1 and commit the new file\n--- got ---\n{text}")

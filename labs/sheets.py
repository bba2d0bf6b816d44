"""The answer keys of the instructor sheets (docs/labs/NAME.md), generated from the labs.

Each sheet ends with a block between ``<!-- answer key begin -->`` and ``<!-- answer key end -->``
holding ``vraid lab run NAME --answers --seed N`` for the seeds the sheet names; ``python -m
vraid.labs.sheets DOCS_DIR`` rewrites those blocks, and tests/test_labs.py checks they are
current (a change of the code that changes an answer changes the sheet).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import all_labs, runner

BEGIN, END = "<!-- answer key begin -->", "<!-- answer key end -->"
#: the seeds each sheet's key shows
KEY_SEEDS = (0, 1)


def answer_key(lab, seeds=KEY_SEEDS) -> str:
    parts = []
    for seed in seeds:
        lines: list[str] = []
        runner.worked(lab, seed, lab.questions(seed), lines.append)
        parts.append(f"### Seed {seed}\n\n`vraid lab run {lab.name} --answers --seed {seed}`:\n\n```text\n"
                     + "\n".join(lines) + "\n```\n")
    return "\n".join(parts)


def block(lab) -> str:
    return f"{BEGIN}\n{answer_key(lab)}{END}"


def current_block(text: str) -> str | None:
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    return m.group(0) if m else None


def refresh(docs: Path) -> list[Path]:
    """Rewrite the answer-key block of every sheet in ``docs``; returns the sheets changed."""
    changed = []
    for lab in all_labs():
        path = docs / f"{lab.name}.md"
        text = path.read_text()
        old, new = current_block(text), block(lab)
        if old is None:
            text = text.rstrip("\n") + "\n\n## Answer key\n\n" + new + "\n"
        elif old != new:
            text = text.replace(old, new)
        else:
            continue
        path.write_text(text)
        changed.append(path)
    return changed


if __name__ == "__main__":
    for p in refresh(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/labs")):
        print(f"updated {p}")

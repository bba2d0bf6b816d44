"""The experiments' figures: matplotlib with no display, and one way to finish a figure.

Every experiment draws its PNGs with matplotlib's Agg backend (a test machine and a CI run
have no display) and ends each figure the same way: lay it out, write it at 90 dpi, free it.
matplotlib is imported here, on first use, so that importing an experiment never needs it
(an experiment whose plots are optional catches the ImportError).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the Agg backend (ImportError without matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    """Lay ``fig`` out, write it to ``path`` and close it; ``path``."""
    plt = pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path

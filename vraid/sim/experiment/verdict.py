"""Paper vs vraid: one verdict per headline number, shared by every experiment.

An experiment that reproduces a paper states each headline number twice, the paper's and
ours, and judges them the same way (issue 16):

* ``reproduced``: ours is within ``tolerance`` (default 25 %) of the paper's, relative to
  the paper's value, and on the same side of ``baseline`` (a 0.95x loss never reproduces a
  1.10x gain, however close);
* ``direction``: not within the tolerance, but on the same side of ``baseline`` as the
  paper's (the same sign of a change, ``baseline=0``; a gain above or below 1,
  ``baseline=1``);
* ``not reproduced``: on the other side of ``baseline`` (or exactly on it where the paper
  is not).

Where ours differs, the experiment names the cause (a measured physical reason, or a
deviation of vraid's own); :func:`markdown_table` prints it beside the verdict.

Use::

    rows = [compare("CT gain, MSC-CT over SC, 1 GB", 2.7, 2.2, baseline=1.0, unit="x",
                    cause="...")]
    results["paper_vs_vraid"] = paper_vs_vraid(rows)        # results.json
    text = markdown_table(from_json(results["paper_vs_vraid"]))  # results.md

The JSON form of a row is ``{"item", "paper", "vraid", "verdict", "cause", "unit"}``: the
first four are the issue's format and stay; ``cause`` and ``unit`` may be empty strings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

REPRODUCED = "reproduced"
DIRECTION = "direction"
NOT_REPRODUCED = "not reproduced"
#: every verdict, best first
VERDICTS = (REPRODUCED, DIRECTION, NOT_REPRODUCED)
#: the issue's tolerance for ``reproduced``
TOLERANCE = 0.25


def judge(paper: float, vraid: float, *, tolerance: float = TOLERANCE,
          baseline: float = 0.0) -> str:
    """The verdict for ``vraid`` against ``paper`` (see the module docstring).

    ``tolerance`` is relative to ``|paper|``; a paper value of 0 needs ours within
    ``tolerance`` absolute. ``baseline`` is the value that separates the two directions.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance {tolerance} is negative")
    if any(math.isnan(v) for v in (paper, vraid)):
        return NOT_REPRODUCED
    scale = abs(paper) if paper != 0 else 1.0
    side_paper = _side(paper, baseline)
    same_side = side_paper == _side(vraid, baseline)
    if abs(vraid - paper) <= tolerance * scale and (same_side or side_paper == 0):
        return REPRODUCED
    if side_paper != 0 and same_side:
        return DIRECTION
    return NOT_REPRODUCED


def _side(value: float, baseline: float) -> int:
    return (value > baseline) - (value < baseline)


@dataclass(frozen=True)
class Comparison:
    """One headline number: the paper's, ours, the verdict and, where they differ, why."""

    item: str
    paper: float
    vraid: float
    verdict: str
    cause: str = ""
    unit: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"item": self.item, "paper": self.paper, "vraid": self.vraid,
                "verdict": self.verdict, "cause": self.cause, "unit": self.unit}


def compare(item: str, paper: float, vraid: float, *, tolerance: float = TOLERANCE,
            baseline: float = 0.0, cause: str = "", unit: str = "") -> Comparison:
    """A :class:`Comparison` judged by :func:`judge`.

    ``unit`` is printed after both numbers (``"x"``, ``"%"``, ``" ms"``...): give
    percentages as percent numbers (36.0, not 0.36). ``cause`` is printed in the table's
    last column; say it where the verdict is not ``reproduced``.
    """
    verdict = judge(float(paper), float(vraid), tolerance=tolerance, baseline=baseline)
    return Comparison(item, float(paper), float(vraid), verdict, cause, unit)


def paper_vs_vraid(rows: Iterable[Comparison]) -> list[dict[str, Any]]:
    """The ``paper_vs_vraid`` list of results.json."""
    return [r.as_json() for r in rows]


def from_json(items: Sequence[dict[str, Any]]) -> list[Comparison]:
    """Rows back from a ``paper_vs_vraid`` list (``cause``/``unit`` may be missing)."""
    out = []
    for d in items:
        verdict = d["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {verdict!r} for {d.get('item')!r}")
        out.append(Comparison(d["item"], float(d["paper"]), float(d["vraid"]), verdict,
                              d.get("cause", "") or "", d.get("unit", "") or ""))
    return out


def fmt_value(value: float, unit: str = "") -> str:
    """A number as the tables print it: three significant digits, then the unit."""
    if math.isnan(value):
        return "n/a"
    if value == 0 or 0.01 <= abs(value) < 1e5:
        digits = max(0, 2 - int(math.floor(math.log10(abs(value))))) if value else 0
        text = f"{value:.{digits}f}"
    else:
        text = f"{value:.3g}"
    return f"{text}{unit}" if unit in ("x", "%") else f"{text}{(' ' + unit) if unit else ''}"


def markdown_table(rows: Sequence[Comparison]) -> str:
    """The results.md table: item, paper, ours, verdict, cause."""
    lines = ["| item | paper | vraid | verdict | cause |", "|---|---:|---:|---|---|"]
    for r in rows:
        cause = r.cause.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.item} | {fmt_value(r.paper, r.unit)} | {fmt_value(r.vraid, r.unit)} "
                     f"| {r.verdict} | {cause} |")
    return "\n".join(lines) + "\n"


def tally(rows: Sequence[Comparison]) -> dict[str, int]:
    """How many rows got each verdict (for a one-line summary)."""
    return {v: sum(1 for r in rows if r.verdict == v) for v in VERDICTS}


__all__ = ["Comparison", "DIRECTION", "NOT_REPRODUCED", "REPRODUCED", "TOLERANCE", "VERDICTS",
           "compare", "fmt_value", "from_json", "judge", "markdown_table", "paper_vs_vraid", "tally"]

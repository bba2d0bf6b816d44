"""Paper vs vraid: one verdict rule for every experiment (issue 16, issue 34).

An experiment that reproduces a paper states each of the paper's claims twice, the paper's
number and ours, and judges them all by :func:`judge`:

* ``reproduced``: ours is within ``tolerance`` (25 %, :data:`TOLERANCE`) of the paper's,
  relative to the paper's value (absolute where the paper's value is 0), and on the same
  side of ``baseline`` (a 0.95x loss never reproduces a 1.10x gain, however close);
* ``direction``: not within the tolerance, but on the same side of ``baseline`` as the
  paper's (the same sign of a change, ``baseline=0``; a gain above or below 1,
  ``baseline=1``);
* ``inconclusive``: the run-to-run range of ours (``spread``: the lowest and highest value
  over repeated runs) has values on the paper's side of ``baseline`` and values off it, so
  one run can say either; or the range reaches into the tolerance band around the paper's
  value without lying inside it (some runs reproduce, some do not);
* ``not reproduced``: on the other side of ``baseline`` (or exactly on it where the paper
  is not);
* ``not run``: vraid has no run for the claim (:func:`not_run`; the cause says why).

Numbers vraid takes *from* the paper (a disk's revolution time, a buffer size) are no
reproduction: :func:`given` lists them with the verdict ``input``, which :func:`tally`
does not count and :func:`markdown_table` prints apart. A yes/no claim ("multibuffering
is best at every point") is judged by the same rule on 1 (holds) and 0 (does not), with
baseline 0.5 (:func:`holds`); a claim that two numbers are the same ("almost equal") is
their ratio against 1.00x (:func:`same`). Every results.md prints :func:`rule_text`, the
tolerance included.

Where ours differs, the experiment names the cause (a measured physical reason, an
ablation, or a deviation of vraid's own); :func:`markdown_table` prints it beside the
verdict.

Use::

    rows = [compare("CT gain, MSC-CT over SC, 1 GB", 2.7, 2.2, baseline=1.0, unit="x",
                    cause="...")]
    results["paper_vs_vraid"] = paper_vs_vraid(rows)        # results.json
    text = markdown_table(from_json(results["paper_vs_vraid"]))  # results.md

The JSON form of a row is ``{"item", "paper", "vraid", "verdict", "cause", "unit",
"tolerance", "baseline"}`` and ``"spread"`` where there were repeated runs: the first four
are the issue's format and stay; ``cause`` and ``unit`` may be empty strings; ``tolerance``
and ``baseline`` (what the verdict was judged with) may be missing in rows written before
they were added.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

REPRODUCED = "reproduced"
DIRECTION = "direction"
INCONCLUSIVE = "inconclusive"
NOT_REPRODUCED = "not reproduced"
NOT_RUN = "not run"
#: every verdict, best first
VERDICTS = (REPRODUCED, DIRECTION, INCONCLUSIVE, NOT_REPRODUCED, NOT_RUN)
#: a number taken from the paper (no verdict)
INPUT = "input"
#: the issue's tolerance for ``reproduced``
TOLERANCE = 0.25
#: the unit of a yes/no claim (:func:`holds`)
YES_NO = "yes/no"


def judge(paper: float, vraid: float, *, tolerance: float = TOLERANCE, baseline: float = 0.0,
          spread: tuple[float, float] | None = None) -> str:
    """The verdict for ``vraid`` against ``paper`` (see the module docstring).

    ``tolerance`` is relative to ``|paper|``; a paper value of 0 needs ours within
    ``tolerance`` absolute. ``baseline`` is the value that separates the two directions.
    ``spread``: the (lowest, highest) of ours over repeated runs, if there were any; a spread
    that crosses ``baseline``, or overlaps the tolerance band around ``paper`` without lying
    inside it (:func:`crosses_band`), is ``inconclusive``.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance {tolerance} is negative")
    if any(math.isnan(v) for v in (paper, vraid)):
        return NOT_REPRODUCED
    side_paper = _side(paper, baseline)
    if spread is not None and side_paper != 0:
        on = {_side(v, baseline) == side_paper for v in spread}
        if len(on) == 2:
            return INCONCLUSIVE
    if spread is not None and crosses_band(paper, spread, tolerance):
        return INCONCLUSIVE
    scale = abs(paper) if paper != 0 else 1.0
    same_side = side_paper == _side(vraid, baseline)
    if abs(vraid - paper) <= tolerance * scale and (same_side or side_paper == 0):
        return REPRODUCED
    if side_paper != 0 and same_side:
        return DIRECTION
    return NOT_REPRODUCED


def crosses_band(paper: float, spread: tuple[float, float], tolerance: float = TOLERANCE) -> bool:
    """Whether the range ``spread`` = (lowest, highest) has values within ``tolerance`` of
    ``paper`` and values outside it (relative to ``|paper|``, absolute where it is 0)."""
    lo, hi = min(spread), max(spread)
    width = tolerance * (abs(paper) if paper != 0 else 1.0)
    inside = paper - width <= lo and hi <= paper + width
    overlaps = lo <= paper + width and hi >= paper - width
    return overlaps and not inside


def ratio_spread(top: Sequence[float], bottom: Sequence[float]) -> tuple[float, float]:
    """The range of ``a / b`` over repeated runs of two unpaired sides: (min a / max b,
    max a / min b), the widest the runs allow (runs of different arrays are not paired)."""
    if not top or not bottom or min(bottom) <= 0:
        raise ValueError("a ratio's range needs runs on both sides and a positive denominator")
    return (min(top) / max(bottom), max(top) / min(bottom))


def _side(value: float, baseline: float) -> int:
    return (value > baseline) - (value < baseline)


@dataclass(frozen=True)
class Comparison:
    """One claim: the paper's number, ours, the verdict and, where they differ, why."""

    item: str
    paper: float
    vraid: float
    verdict: str
    cause: str = ""
    unit: str = ""
    tolerance: float = TOLERANCE
    baseline: float = 0.0
    #: the (lowest, highest) of ours over repeated runs, if there were any
    spread: tuple[float, float] | None = None

    def as_json(self) -> dict[str, Any]:
        out = {"item": self.item, "paper": self.paper, "vraid": self.vraid,
               "verdict": self.verdict, "cause": self.cause, "unit": self.unit,
               "tolerance": self.tolerance, "baseline": self.baseline}
        if self.spread is not None:
            out["spread"] = list(self.spread)
        return out


def compare(item: str, paper: float, vraid: float, *, tolerance: float = TOLERANCE,
            baseline: float = 0.0, cause: str = "", unit: str = "",
            spread: tuple[float, float] | None = None) -> Comparison:
    """A :class:`Comparison` judged by :func:`judge`.

    ``unit`` is printed after both numbers (``"x"``, ``"%"``, ``" ms"``...): give
    percentages as percent numbers (36.0, not 0.36). ``cause`` is printed in the table's
    last column; say it where the verdict is not ``reproduced``. ``spread``: see
    :func:`judge`.
    """
    rng = None if spread is None else (float(min(spread)), float(max(spread)))
    verdict = judge(float(paper), float(vraid), tolerance=tolerance, baseline=baseline, spread=rng)
    return Comparison(item, float(paper), float(vraid), verdict, cause, unit, float(tolerance), float(baseline), rng)


def same(item: str, ours: float, against: float, *, cause: str = "") -> Comparison:
    """A claim that two of ours are the same ("almost the same", "almost equal"): ``ours /
    against`` judged against 1.00x, within the tolerance like every ratio (as a change against
    0 % it would get the rule's absolute tolerance for a zero, far stricter than the words)."""
    return compare(item, 1.0, ours / against if against else float("nan"), baseline=1.0, unit="x", cause=cause)


def holds(item: str, paper: bool, vraid: bool, *, cause: str = "",
          spread: Sequence[bool] | None = None) -> Comparison:
    """A yes/no claim judged by the rule: 1 (holds) or 0 against the paper's, baseline 0.5;
    ``spread``: whether it held in each repeated run (both ways: ``inconclusive``)."""
    rng = None if spread is None else (float(min(spread)), float(max(spread)))
    return compare(item, 1.0 if paper else 0.0, 1.0 if vraid else 0.0, baseline=0.5, cause=cause, unit=YES_NO,
                   spread=rng)


def not_run(item: str, paper: float, reason: str, *, unit: str = "") -> Comparison:
    """A claim vraid has no run for; ``reason`` says why (e.g. the trace is not public)."""
    if not reason:
        raise ValueError(f"a claim that is not run needs its reason: {item!r}")
    return Comparison(item, float(paper), float("nan"), NOT_RUN, reason, unit)


def given(item: str, paper: float, vraid: float, *, unit: str = "", cause: str = "") -> Comparison:
    """A number vraid takes from the paper (an input), listed without a verdict."""
    return Comparison(item, float(paper), float(vraid), INPUT, cause, unit)


def paper_vs_vraid(rows: Iterable[Comparison]) -> list[dict[str, Any]]:
    """The ``paper_vs_vraid`` list of results.json."""
    return [r.as_json() for r in rows]


def from_json(items: Sequence[dict[str, Any]]) -> list[Comparison]:
    """Rows back from a ``paper_vs_vraid`` list (``cause``/``unit``/``tolerance``/``baseline``
    may be missing)."""
    out = []
    for d in items:
        verdict = d["verdict"]
        if verdict not in VERDICTS and verdict != INPUT:
            raise ValueError(f"unknown verdict {verdict!r} for {d.get('item')!r}")
        out.append(Comparison(d["item"], float(d["paper"]), float(d["vraid"]), verdict,
                              d.get("cause", "") or "", d.get("unit", "") or "",
                              float(d.get("tolerance", TOLERANCE)), float(d.get("baseline", 0.0)),
                              tuple(map(float, d["spread"])) if d.get("spread") is not None else None))
    return out


def fmt_value(value: float, unit: str = "") -> str:
    """A number as the tables print it: three significant digits, then the unit."""
    if math.isnan(value):
        return "n/a"
    if unit == YES_NO:
        return "yes" if value >= 0.5 else "no"
    if value == 0 or 0.01 <= abs(value) < 1e5:
        digits = max(0, 2 - int(math.floor(math.log10(abs(value))))) if value else 0
        text = f"{value:.{digits}f}"
    else:
        text = f"{value:.3g}"
    return f"{text}{unit}" if unit in ("x", "%") else f"{text}{(' ' + unit) if unit else ''}"


def rule_text(tolerance: float = TOLERANCE) -> str:
    """The rule as results.md prints it, with the tolerance used."""
    return (f"Verdicts (one rule, `vraid/sim/experiment/verdict.py`, tolerance {100 * tolerance:g} %): "
            f"*reproduced* = ours within {100 * tolerance:g} % of the paper's value (absolute where the paper's "
            "is 0) and on its side of the baseline; *direction* = outside that, on the paper's side; "
            "*inconclusive* = the run-to-run range crosses the paper's side, or reaches into the tolerance "
            "band around the paper's value without lying inside it; *not reproduced* = on the other "
            "side; *not run* = no run (the cause says why). Numbers taken from the paper are listed as inputs.")


def _line(r: Comparison) -> str:
    cause = r.cause.replace("|", "\\|").replace("\n", " ")
    verdict = r.verdict
    if r.verdict not in (NOT_RUN, INPUT) and not math.isclose(r.tolerance, TOLERANCE):
        verdict += f" (tolerance {100 * r.tolerance:g} %)"
    ours = fmt_value(r.vraid, r.unit)
    if r.spread is not None:
        ours += f" (runs {fmt_value(r.spread[0], r.unit)} to {fmt_value(r.spread[1], r.unit)})"
    return f"| {r.item} | {fmt_value(r.paper, r.unit)} | {ours} | {verdict} | {cause} |"


def markdown_table(rows: Sequence[Comparison], *, rule: bool = False) -> str:
    """The results.md table: item, paper, ours, verdict, cause (after :func:`rule_text` with
    ``rule=True``, for a report whose own text does not state the rule); the inputs taken
    from the paper in a table of their own below."""
    judged = [r for r in rows if r.verdict != INPUT]
    inputs = [r for r in rows if r.verdict == INPUT]
    lines = [rule_text(), ""] if rule else []
    lines += ["| item | paper | vraid | verdict | cause |", "|---|---:|---:|---|---|"]
    lines += [_line(r) for r in judged]
    if inputs:
        lines += ["", "Inputs taken from the paper (no verdict):", "",
                  "| input | paper | vraid | note |", "|---|---:|---:|---|"]
        lines += [f"| {r.item} | {fmt_value(r.paper, r.unit)} | {fmt_value(r.vraid, r.unit)} | "
                  f"{r.cause.replace('|', chr(92) + '|')} |" for r in inputs]
    return "\n".join(lines) + "\n"


def tally(rows: Sequence[Comparison]) -> dict[str, int]:
    """How many rows got each verdict (for a one-line summary; inputs are not counted)."""
    return {v: sum(1 for r in rows if r.verdict == v) for v in VERDICTS}


__all__ = ["Comparison", "DIRECTION", "INCONCLUSIVE", "INPUT", "NOT_REPRODUCED", "NOT_RUN", "REPRODUCED",
           "TOLERANCE", "VERDICTS", "YES_NO", "compare", "crosses_band", "fmt_value", "from_json", "given", "holds", "judge",
           "markdown_table", "not_run", "paper_vs_vraid", "ratio_spread", "rule_text", "tally"]

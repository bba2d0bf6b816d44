"""The shared frame of ``vraid lab``: a lab deals seeded questions whose answers vraid computes.

A :class:`Lab` has a name, a title, the seeds (papers) it covers, whether it needs a real mount,
and :meth:`Lab.questions`: for a seed, a list of :class:`Question` dealt from a
``random.Random(seed)``. Every answer is computed by running vraid's own code (the geometry,
the rxw planner, the contiguity transform, the destage policies, a virtual-time
:class:`~vraid.testing.session.Session`), never written down by hand, so a lab stays true
when the code changes and a changed answer shows up in the lab's tests.

A question is checked one of three ways (:data:`CHECKS`): ``exact`` (an integer, a word or an
ordered list), ``tolerance`` (a number within ``tolerance`` of the answer) or ``set`` (the
same elements in any order). Its ``explanation`` is revealed after the prediction.

A lab that needs a mount also implements :meth:`Lab.live`: it sets up and tears down its own
array, mount and loop device and returns what it *observed* for some questions; the runner
checks those observations against the computed answers as well ("the real thing agrees").

The answer-file format (``vraid lab run NAME --answers --json``, read by ``vraid lab check``)::

    {"lab": "layouts", "seed": 1, "answers": {"q1": 3, "q2": [0, 2], ...}}

A value may also be given as text (``"0,2"`` for a list); see :func:`normalise`.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

CHECKS = ("exact", "tolerance", "set")
KINDS = ("int", "float", "word", "list", "set")


@dataclass
class Question:
    """One question: ``key`` names it in an answer file; ``kind`` says what an answer is."""

    key: str
    prompt: str
    answer: Any
    kind: str = "int"
    explanation: str = ""
    tolerance: float = 0.0
    #: what to type, shown with the prompt (e.g. "comma-separated disks")
    form: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"question {self.key}: kind {self.kind!r} is not one of {KINDS}")
        self.answer = normalise(self.kind, self.answer)

    @property
    def check(self) -> str:
        """How the answer is compared: exact, tolerance or set."""
        return {"float": "tolerance", "set": "set"}.get(self.kind, "exact")

    def grade(self, given: Any) -> tuple[bool, str]:
        """(right?, a one-line verdict). A value that cannot be read is wrong, and says why."""
        try:
            value = normalise(self.kind, given)
        except ValueError as exc:
            return False, f"cannot read {given!r}: {exc}"
        if self.kind == "float":
            ok = math.isclose(value, self.answer, rel_tol=0.0, abs_tol=self.tolerance or 1e-9)
        else:
            ok = value == self.answer
        if ok:
            return True, "right"
        extra = ""
        if self.kind == "set":
            missing, more = self.answer - value, value - self.answer
            extra = "; " + ", ".join(p for p in (
                f"missing {show(sorted(missing, key=str))}" if missing else "",
                f"not in the answer {show(sorted(more, key=str))}" if more else "") if p)
        return False, f"wrong: you said {show(value)}, the answer is {show(self.answer)}{extra}"

    def json_answer(self) -> Any:
        """The answer as it goes into an answer file."""
        if self.kind == "set":
            return sorted(self.answer, key=lambda v: (isinstance(v, str), v))
        if self.kind == "list":
            return list(self.answer)
        return self.answer


def _item(text: Any) -> Any:
    """One element of a list or set: an int where it reads as one, else a lower-case word."""
    if isinstance(text, bool):
        raise ValueError("true/false is not an answer here")
    if isinstance(text, int):
        return text
    if isinstance(text, float) and text.is_integer():
        return int(text)
    s = str(text).strip().lower()
    try:
        return int(s)
    except ValueError:
        if not s:
            raise ValueError("an empty element") from None
        return s


def normalise(kind: str, value: Any) -> Any:
    """``value`` (typed, or from JSON) as the comparable form of ``kind``.

    int: ``3`` or ``"3"``; float: ``0.25`` or ``"0.25"``; word: any text (case and spaces
    ignored); list and set: a JSON list, or text separated by commas or spaces (``"0,2"``;
    ``"-"`` or ``"none"`` is the empty list).

    Raises:
        ValueError: naming what is wrong with the value.
    """
    if kind == "int":
        if isinstance(value, bool) or isinstance(value, (list, dict)):
            raise ValueError("give a whole number")
        try:
            f = float(str(value).strip())
        except ValueError:
            raise ValueError("give a whole number") from None
        if not f.is_integer():
            raise ValueError("give a whole number")
        return int(f)
    if kind == "float":
        if isinstance(value, bool) or isinstance(value, (list, dict)):
            raise ValueError("give a number")
        try:
            f = float(str(value).strip().rstrip("%")) / (100 if str(value).strip().endswith("%") else 1)
        except ValueError:
            raise ValueError("give a number") from None
        if not math.isfinite(f):
            raise ValueError("give a finite number")
        return round(f, 9)
    if kind == "word":
        if isinstance(value, (list, dict)):
            raise ValueError("give one word")
        return " ".join(str(value).split()).lower()
    if kind in ("list", "set"):
        if isinstance(value, dict):
            raise ValueError("give a list")
        if isinstance(value, (list, tuple, set, frozenset)):
            items = [_item(v) for v in value]
        else:
            text = str(value).replace(",", " ").split()
            items = [] if text in ([], ["-"], ["none"]) else [_item(v) for v in text]
        return frozenset(items) if kind == "set" else tuple(items)
    raise ValueError(f"unknown kind {kind!r}")


def show(value: Any) -> str:
    """An answer as a student would type it."""
    if isinstance(value, (frozenset, set)):
        value = sorted(value, key=lambda v: (isinstance(v, str), v))
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


@dataclass
class Lab:
    """A lab: subclass and define :meth:`questions` (and :meth:`live` for a mount lab)."""

    name: str = ""
    title: str = ""
    #: the papers covered, as the directory /work/shared/seeds numbers them ("000".."004"); empty for RAID basics
    seeds: list[str] = field(default_factory=list)
    mount: bool = False
    #: what the lab sets up, shown before the questions
    intro: str = ""

    def questions(self, seed: int) -> list[Question]:
        raise NotImplementedError

    def setting(self, seed: int) -> str:
        """The dealt situation, shown before the questions (default: the intro)."""
        return self.intro

    def live(self, seed: int, workdir: Path, say: Callable[[str], None]) -> dict[str, Any]:
        """A mount lab's real run: question key -> observed value (virtual-time labs: nothing)."""
        return {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "seeds": list(self.seeds), "mount": self.mount}


def rng(lab: Lab, seed: int) -> random.Random:
    """The lab's dealer: the same seed deals the same questions, different labs deal differently."""
    return random.Random(f"{lab.name}:{seed}")

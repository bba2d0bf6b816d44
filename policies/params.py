"""Parameter schemas of policies: name, type, default, one-line doc, range.

Every policy class of every family declares its parameters in a class attribute ``params``,
key -> ``(type, default, doc)`` or ``(type, default, doc, (low, high))`` (either bound may be
None) or a :class:`Param`. The registry (:mod:`vraid.policies.registry`) reads the schema to
parse ``NAME:k=v,...`` specs, to convert and range-check the values, to print
``vraid policies`` and to format a spec back.

Types: ``int``, ``float``, ``bool``, ``str`` and four markers:

* :class:`Fraction`: a fraction within 0..1, written ``0.95`` or ``95%``;
* :class:`Seconds`: a duration, written ``3``, ``3s``, ``100ms``, ``10us``, ``2min``;
* :class:`Size`: a number of bytes, written ``16M``, ``64K``, ``1G`` or ``4096`` (binary units);
* :class:`Regions`: inclusive ranges of whole numbers, written ``a-b;c-d`` (``5`` is ``5-5``),
  as the excluded stride regions of seed 000 eq. (8)/(9); the lower bound of the range applies
  to every region (``(1, None)``: stride distances start at 1).

Values arrive as spec text or typed Python values; either way they are converted, and a bad
one raises :class:`ParamError` (the registry turns it into a :class:`~vraid.errors.VraidError`
naming family, policy, key and value).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

from vraid.errors import VraidError


class Fraction(float):
    """Parameter type marker: a fraction of the cache within 0..1, written ``0.95`` or ``95%``."""


class Seconds(float):
    """Parameter type marker: a duration in seconds, written ``3``, ``3s``, ``100ms``, ``10us``, ``2min``."""


class Size(int):
    """Parameter type marker: a number of bytes, written ``16M``, ``64K`` or ``4096`` (binary units)."""


class Regions(tuple):
    """Parameter type marker: inclusive ranges ``((a, b), ...)`` of whole numbers, written ``a-b;c-d``."""


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*(ns|us|µs|ms|s|min|h)?\s*$", re.I)
_SECONDS_PER = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
KIND = {int: "whole number", float: "number", Fraction: "fraction within 0..1 (e.g. 0.9 or 90%)",
        Seconds: "duration (e.g. 3s or 100ms)", bool: "true/false", str: "text",
        Regions: "list of regions a-b;c-d", Size: "size (e.g. 16M or 64K)"}
TYPE_NAME = {int: "int", float: "float", Fraction: "fraction", Seconds: "seconds", bool: "bool", str: "str",
             Regions: "regions", Size: "size"}


class ParamError(ValueError):
    """A value that is not of its parameter's type or range: ``detail`` completes
    ``KEY=VALUE ...`` (e.g. "is not a whole number"), ``hint`` says what would do."""

    def __init__(self, detail: str, hint: str = "", shown: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.hint = hint
        #: the value as the message shows it (the converted one for a range error)
        self.shown = shown


@dataclass(frozen=True)
class Param:
    """One parameter of a policy: what ``vraid policies`` shows and the parser checks."""

    name: str
    type: type
    default: Any
    doc: str
    low: Any = None
    high: Any = None

    @property
    def kind(self) -> str:
        return KIND.get(self.type, self.type.__name__)

    @property
    def type_name(self) -> str:
        return TYPE_NAME.get(self.type, self.type.__name__)

    def range_text(self) -> str:
        """``0..1``, ``>= 1``, ``<= 8``, ``1..64`` or "" (no bound)."""
        low, high = self.low, self.high
        if self.type is Fraction:
            low = 0 if low is None else low
            high = 1 if high is None else high
        shown = (lambda x: format_value(Size, x)) if self.type is Size else _num
        if low is not None and high is not None:
            return f"{shown(low)}..{shown(high)}"
        if low is not None:
            return f">= {shown(low)}"
        if high is not None:
            return f"<= {shown(high)}"
        return ""

    def example(self) -> str:
        """``key=value`` to show in a hint."""
        value = self.default if self.default is not None else (self.low if self.low is not None else 8)
        if self.type is Regions and not isinstance(value, tuple):
            return f"{self.name}=3-4;9-10"
        return f"{self.name}={format_value(self.type, value)}"

    def convert(self, value: Any) -> Any:
        """``value`` (spec text or typed) as this parameter's type, range-checked.

        Raises:
            ParamError: when it is not one, or out of range.
        """
        try:
            out = _convert(self.type, value)
        except ParamError:
            raise
        except (TypeError, ValueError):
            raise ParamError(f"is not a {self.kind}", f"e.g. {self.example()}  ({self.doc})") from None
        if self.type is Regions:
            for a, _b in out:
                if self.low is not None and a < self.low:
                    raise ParamError(f"region {a}-{_b} starts below {_num(self.low)}",
                                     f"regions start at {_num(self.low)} or more")
            return out
        shown = (lambda x: format_value(Size, x)) if self.type is Size else _num
        if self.low is not None and out < self.low:
            raise ParamError(f"is below {shown(self.low)}", f"{self.name} must be at least {shown(self.low)}",
                             shown(out))
        if self.high is not None and out > self.high:
            raise ParamError(f"is above {shown(self.high)}", f"{self.name} must be at most {shown(self.high)}",
                             shown(out))
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``vraid policies --json`` prints."""
        default = self.default
        if isinstance(default, tuple):
            default = format_value(self.type, default)
        return {"name": self.name, "type": self.type_name, "default": default, "doc": self.doc,
                "range": self.range_text()}


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _convert(typ: type, value: Any) -> Any:
    """``value`` (spec text or a typed value) as ``typ``; ValueError when it is not one."""
    if isinstance(value, bool) and typ not in (bool, str):
        raise ValueError("a boolean is not a number")
    if typ is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE | _FALSE:
            return text in _TRUE
        raise ValueError(text)
    if typ is int:
        if isinstance(value, str):
            return int(value.strip())
        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        return int(value)
    if typ is Fraction:
        if isinstance(value, str) and value.strip().endswith("%"):
            number = float(value.strip()[:-1]) / 100.0
        else:
            number = float(value)
        if not 0.0 <= number <= 1.0:
            raise ValueError(value)
        return number
    if typ is Seconds:
        if isinstance(value, str):
            m = _DURATION.match(value)
            if not m:
                raise ValueError(value)
            return float(m.group(1)) * _SECONDS_PER[(m.group(2) or "s").lower()]
        return float(value)
    if typ is float:
        number = float(value)
        if math.isnan(number):
            raise ValueError(value)
        return number
    if typ is Regions:
        return _regions(value)
    if typ is Size:
        from vraid.core.units import parse_size

        if isinstance(value, float) and not value.is_integer():
            raise ValueError(value)
        try:
            return parse_size(value if isinstance(value, str) else int(value))
        except VraidError:
            raise ValueError(value) from None
    return typ(value)


def _regions(value: Any) -> tuple[tuple[int, int], ...]:
    """``"3-4;9-10"`` or ``[(3, 4), (9, 10)]`` -> ``((3, 4), (9, 10))`` (sorted)."""
    out = []
    if isinstance(value, str):
        for part in value.split(";"):
            part = part.strip()
            if not part:
                continue
            a, dash, b = part.partition("-")
            try:
                lo, hi = int(a), int(b if dash else a)
            except ValueError:
                raise ParamError(f"region {part!r} is not a-b with integers",
                                 "write regions as a-b;c-d, e.g. 3-4;9-10") from None
            if lo > hi:
                raise ParamError(f"region {part!r} has a > b", f"write the smaller end first: {hi}-{lo}")
            out.append((lo, hi))
    else:
        for region in value:
            try:
                lo, hi = (int(x) for x in region)
            except (TypeError, ValueError):
                raise ParamError(f"region {region!r} is not a pair a, b", "give each region as two numbers a <= b") from None
            if lo > hi:
                raise ParamError(f"region {lo}-{hi} has a > b", f"write the smaller end first: {hi}-{lo}")
            out.append((lo, hi))
    return tuple(sorted(out))


def format_value(typ: type, value: Any) -> str:
    """The spec spelling of a converted value (``parse`` gives it back)."""
    if typ is Regions or (isinstance(value, tuple) and all(isinstance(r, tuple) for r in value)):
        return ";".join(f"{a}-{b}" for a, b in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if typ is Size:
        from vraid.core.units import format_size

        return format_size(int(value))
    if isinstance(value, float):
        return repr(float(value))
    return str(value)


def schema(cls: type) -> tuple[Param, ...]:
    """The :class:`Param` list a policy class declares in ``params`` (empty when none)."""
    declared: Mapping[str, Any] = getattr(cls, "params", None) or {}
    out = []
    for key, row in declared.items():
        if isinstance(row, Param):
            out.append(row if row.name == key else Param(key, row.type, row.default, row.doc, row.low, row.high))
            continue
        typ, default, doc, *rest = row
        low, high = rest[0] if rest else (None, None)
        out.append(Param(key, typ, default, doc, low, high))
    return tuple(out)


def bind(params: tuple[Param, ...], given: Mapping[str, Any], what: str, *, fill: bool = True) -> dict[str, Any]:
    """``given`` (key -> text or value) converted by ``params``; with ``fill`` every key, defaults
    for those not given (a None default stays None).

    Raises:
        VraidError: for an unknown key or a bad value, naming ``what`` (e.g. "destage scheduler
            hlwm"), the key and the value; the hint lists the valid keys or gives an example.
    """
    by_name = {p.name: p for p in params}
    unknown = [k for k in given if k not in by_name]
    if unknown:
        name = what.rsplit(" ", 1)[-1]
        raise VraidError(f"{what} has no parameter {', '.join(map(repr, unknown))}",
                         f"valid parameters of {name}: {', '.join(by_name) or '(none)'}")
    values: dict[str, Any] = {}
    for p in params:
        if p.name in given:
            value = given[p.name]
        elif fill:
            value = p.default
        else:
            continue
        if value is None:
            values[p.name] = None
            continue
        try:
            values[p.name] = p.convert(value)
        except ParamError as exc:
            if exc.detail.startswith("region"):
                raise VraidError(f"{what}: {p.name} {exc.detail}", exc.hint) from None
            shown = exc.shown if exc.shown is not None else repr(value)
            raise VraidError(f"{what}: {p.name}={shown} {exc.detail}", exc.hint) from None
    return values


def check(ok: bool, message: str, hint: str) -> None:
    """Raise ``VraidError(message, hint)`` unless ``ok`` (for a policy's own cross-checks)."""
    if not ok:
        raise VraidError(message, hint)

"""Control requests, parsed and checked before any handler sees them.

A mount's control socket (``vraid.fuse.control``) reads one JSON object per
line from any local client. Two things here keep a bad line from reaching the
engine (ISSUE-12 item 1):

* :func:`parse` bounds the size and the nesting depth *before* ``json.loads``
  (whose recursion a line of ``[[[[...`` would otherwise exhaust) and refuses
  NaN and Infinity, which Python's json accepts by default;
* :func:`validate` checks the fields against the command's schema: a dict of
  field name -> :class:`Field` made with :func:`Int`, :func:`Num`, :func:`Bool`,
  :func:`Str` or :func:`IntOrStr`. Unknown fields are refused (a typo such as
  ``"repiar"`` would otherwise be ignored), numbers must be finite and in range,
  and a boolean must be a JSON ``true``/``false``: ``"repair": "false"`` is a
  string and is refused, not run as a repair.

A handler declares its schema with :func:`takes`; :class:`BadRequest` is a
:class:`~vraid.errors.VraidError`, answered ``{"ok": false, "error", "hint"}``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Callable

from vraid.errors import VraidError

#: longest request line, bytes
MAX_LINE = 1 << 16
#: deepest nesting of arrays/objects in a request (the commands need 1)
MAX_DEPTH = 8


class BadRequest(VraidError):
    """A control request that is not well-formed JSON, or does not fit its command's schema."""


@dataclass(frozen=True)
class Field:
    kind: str  # "int", "num", "bool", "str", "int|str"
    lo: float | None = None
    hi: float | None = None
    nullable: bool = False
    max_len: int = 4096
    what: str = ""

    def check(self, cmd: str, name: str, value: Any) -> None:
        if value is None and self.nullable:
            return
        ok = {
            "bool": lambda v: isinstance(v, bool),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "num": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "str": lambda v: isinstance(v, str),
            "int|str": lambda v: isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)),
        }[self.kind](value)
        if not ok:
            raise BadRequest(f"{cmd}: {name} must be {self.describe()}, not {_show(value)}", self.example(cmd, name))
        if isinstance(value, str):
            if len(value) > self.max_len:
                raise BadRequest(f"{cmd}: {name} is {len(value)} characters long, more than {self.max_len}", "send a shorter value")
            if "\0" in value:
                raise BadRequest(f"{cmd}: {name} holds a NUL character", "send plain text")
            return
        if isinstance(value, float) and not math.isfinite(value):
            raise BadRequest(f"{cmd}: {name} must be a finite number, not {value}", self.example(cmd, name))
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise BadRequest(f"{cmd}: {name} {value!r} is out of range: {self.describe()}", self.example(cmd, name))

    def describe(self) -> str:
        base = {"bool": "true or false (a JSON boolean)", "int": "a whole number", "num": "a number",
                "str": "a string", "int|str": "a whole number or a string"}[self.kind]
        if self.lo is not None and self.hi is not None:
            base += f" from {self.lo:g} to {self.hi:g}"
        elif self.lo is not None:
            base += f" of at least {self.lo:g}"
        if self.nullable:
            base += " (or null)"
        return base + (f" ({self.what})" if self.what else "")

    def example(self, cmd: str, name: str) -> str:
        sample = {"bool": "true", "int": str(int(self.lo or 1)), "num": f"{self.lo or 1:g}", "str": '"..."',
                  "int|str": "0"}[self.kind]
        return f'e.g. {{"cmd": "{cmd}", "{name}": {sample}}}'


def Int(lo: int | None = None, hi: int | None = None, what: str = "") -> Field:
    return Field("int", lo, hi, what=what)


def Num(lo: float | None = None, hi: float | None = None, *, nullable: bool = False, what: str = "") -> Field:
    return Field("num", lo, hi, nullable=nullable, what=what)


def Bool() -> Field:
    return Field("bool")


def Str(max_len: int = 4096, what: str = "") -> Field:
    return Field("str", max_len=max_len, what=what)


def IntOrStr(max_len: int = 4096, what: str = "") -> Field:
    return Field("int|str", max_len=max_len, what=what)


Schema = dict[str, Field]


def takes(**fields: Field) -> Callable:
    """Decorator: the schema of a control command's handler (``handler.schema``)."""

    def mark(fn):
        fn.schema = dict(fields)
        return fn

    return mark


def _reject_constant(name: str) -> Any:
    raise BadRequest(f"malformed request: {name} is not a number vraid accepts", "send finite numbers only")


def depth(line: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in a JSON text (brackets inside strings do not count)."""
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return 0
    deepest = level = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            level += 1
            deepest = max(deepest, level)
        elif byte in (0x5D, 0x7D):
            level -= 1
    return deepest


def parse(line: bytes) -> dict[str, Any]:
    """One request line as a dict with a string ``cmd``.

    Raises:
        BadRequest: too long, too deeply nested, not JSON, NaN/Infinity, or not ``{"cmd": NAME, ...}``.
    """
    if len(line) > MAX_LINE:
        raise BadRequest(f"request too long: {len(line)} bytes, at most {MAX_LINE}", "send one short JSON object per line")
    if depth(line) > MAX_DEPTH:
        raise BadRequest(f"malformed request: nested deeper than {MAX_DEPTH} levels",
                         'send one flat JSON object per line: {"cmd": NAME, ...}')
    try:
        request = json.loads(line, parse_constant=_reject_constant)
    except BadRequest:
        raise
    except (ValueError, RecursionError):
        raise BadRequest("malformed request: not JSON", 'send one JSON object per line: {"cmd": NAME, ...}') from None
    if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
        raise BadRequest('malformed request: expected {"cmd": NAME, ...}', 'e.g. {"cmd": "ping"}')
    return request


def validate(request: dict[str, Any], schema: Schema) -> None:
    """Check ``request``'s fields (all but ``cmd``) against ``schema``.

    Raises:
        BadRequest: naming the field, what it must be and an example.
    """
    cmd = request["cmd"]
    unknown = sorted(set(request) - set(schema) - {"cmd"})
    if unknown:
        known = ", ".join(sorted(schema)) or "none"
        raise BadRequest(f"{cmd}: unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}",
                         f"fields of {cmd}: {known}")
    for name, spec in schema.items():
        if name in request:
            spec.check(cmd, name, request[name])


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."

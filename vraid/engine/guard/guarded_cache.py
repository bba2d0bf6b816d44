"""The policy guard's wrapper of the cache organisation, and what replaces a failed one.

A cache organisation cannot be swapped for its family's default (``none``: no cache) while
units are cached under its keys; :class:`PinnedOrganisation` keeps them (see
:mod:`vraid.engine.guard.policy_guard`).
"""

from __future__ import annotations

from typing import Any

from .guarded import Guard, Guarded, Invalid, whole


_UNIT_SPAN: Any = None


def _unit_span() -> Any:
    """vraid.policies.cache.UnitSpan, imported on first use (the policies import the engine)."""
    global _UNIT_SPAN
    if _UNIT_SPAN is None:
        from vraid.policies.cache import UnitSpan

        _UNIT_SPAN = UnitSpan
    return _UNIT_SPAN


# -- cache organisation ------------------------------------------------------------------------
class PinnedOrganisation:
    """What replaces a failed cache organisation: every unit the cache holds keeps its key and
    rows; any other row is a one-row unit (as ``pbg``) keyed ``base + stripe*u + row``, above
    every held key."""

    name = "pinned"
    summary = "fallback of a failed cache organisation: held units kept, other rows one unit each"

    def __init__(self, geometry: Any, unit_blocks: int, held: list[Any]) -> None:
        self.geometry = geometry
        self._unit_blocks = max(unit_blocks, geometry.data_disks)
        self._by_key = {s.key: s for s in held}
        self._by_stripe: dict[int, list[Any]] = {}
        for s in held:
            self._by_stripe.setdefault(s.stripe, []).append(s)
        self.base = max(self._by_key, default=-1) + 1
        self._vraid_spec = f"pinned({len(held)} held units, the rest as pbg)"

    def unit_blocks(self) -> int:
        return self._unit_blocks

    def span(self, key: int) -> Any:
        from vraid.policies.cache import UnitSpan

        if key in self._by_key:
            return self._by_key[key]
        stripe, row = divmod(key - self.base, self.geometry.u)
        return UnitSpan(key, stripe, row, 1)

    def units(self, stripe: int, first_row: int, last_row: int) -> list[Any]:
        from vraid.policies.cache import UnitSpan

        held = self._by_stripe.get(stripe, ())
        out: list[Any] = []
        for row in range(first_row, last_row + 1):
            span = next((s for s in held if s.row0 <= row < s.row0 + s.rows), None)
            if span is None:
                span = UnitSpan(self.base + stripe * self.geometry.u + row, stripe, row, 1)
            if not out or out[-1] is not span:
                out.append(span)
        return out


class GuardedOrganisation(Guarded):
    """``units`` checked against the geometry and against the units the cache holds
    (``units``: the cache's key -> Unit dict, read live)."""

    family = "cache"

    def __init__(self, guard: Guard, policy: Any, units: dict | None = None) -> None:
        super().__init__(guard, policy)
        self.held = units if units is not None else {}
        self._blocks: int | None = None

    def _replacement(self) -> Any:
        g = self._guard.geometry
        return PinnedOrganisation(g, self._blocks or g.data_disks, [u.span for u in self.held.values()])

    def _check_blocks(self, n: Any) -> None:
        g = self._guard.geometry
        if not whole(n, 1) or n > g.data_disks * g.u:
            raise Invalid(f"unit_blocks() {n!r} is not a whole number from 1 to {g.data_disks * g.u}")

    def unit_blocks(self) -> int:
        n = self._call("unit_blocks", lambda p: p.unit_blocks(), self._check_blocks)
        if not self.faulted:
            self._blocks = n
        return n

    def span(self, key: int) -> Any:
        return self._call("span", lambda p: p.span(key), lambda s: self._check_span(s, getattr(s, "stripe", None)))

    def _check_span(self, s: Any, stripe: Any) -> None:
        g = self._guard.geometry
        if not isinstance(s, _unit_span()):
            raise Invalid(f"gave {type(s).__name__}, not a UnitSpan")
        key, row0, rows = s.key, s.row0, s.rows
        # plain ints first (what every organisation gives): the same test without whole's calls
        if not (type(key) is int and type(row0) is int and type(rows) is int and key >= 0 and row0 >= 0 and rows >= 1
                and s.stripe == stripe and row0 + rows <= g.u):
            if not (whole(key) and s.stripe == stripe and whole(row0) and whole(rows, 1) and row0 + rows <= g.u):
                raise Invalid(f"{s} is not rows of stripe {stripe} (0..{g.u - 1})")
        if self._blocks is not None and rows * g.data_disks > self._blocks:
            raise Invalid(f"{s} holds more than unit_blocks() = {self._blocks} blocks")
        unit = self.held.get(key)
        if unit is not None and unit.span is not s and unit.span != s:
            raise Invalid(f"{s} reuses key {key}, which the cache holds for {unit.span}")

    def _check_units(self, spans: list, stripe: int, first: int, last: int) -> None:
        for s in spans:
            self._check_span(s, stripe)
        if len(spans) == 1:  # one unit (most answers): it must hold rows first..last itself
            s = spans[0]
            if not (s.row0 <= first and last < s.row0 + s.rows):
                raise Invalid(f"units of stripe {stripe} do not cover rows {first}..{last}")
            return
        reach, end = first, None  # rows first..reach-1 covered; end: where the previous unit ends
        for s in sorted(spans, key=lambda s: s.row0):
            if end is not None and s.row0 < end:
                raise Invalid(f"units overlap: {s} shares rows with another unit of the answer")
            end = s.row0 + s.rows
            if s.row0 <= reach < end:
                reach = end
        if reach <= last:
            raise Invalid(f"units of stripe {stripe} do not cover rows {first}..{last}")

    def units(self, stripe: int, first_row: int, last_row: int) -> list[Any]:
        return self._call("units", lambda p: list(p.units(stripe, first_row, last_row)),
                          lambda spans: self._check_units(spans, stripe, first_row, last_row))

"""The policies an engine runs: where each family's policy sits, which runs, swapping one.

Every row of the policy table (:data:`vraid.policies.registry.FAMILIES`) names its ``slot``,
an attribute path on the array (``cache.order``, ``ct``); walked from the engine it gives the
object holding the family's policy (:func:`holder`). From it: the spec of every family in force
(:func:`current`, for ``vraid status``), which file a policy loaded from a file came from
(:func:`sources`), and ``vraid ctl set``'s swap at run time (:func:`install`: the spec checked
and the policy built before anything changes).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from vraid.errors import VraidError

from . import loader
from .registry import FAMILIES, Context, Family, PolicySpec, create, family, spec_of


def _parent(fam: Family, engine: Any) -> tuple[Any, str]:
    *path, attr = fam.slot.split(".")
    holder = engine
    for part in path:
        holder = getattr(holder, part, None)
        if holder is None:
            break
    return holder, attr


def holder(key: str, engine: Any) -> tuple[Any, str]:
    """(the object holding family ``key``'s policy on ``engine``, the attribute name): the row's
    ``slot`` walked from the engine; the holder is None where a step is missing (no cache)."""
    return _parent(family(key), engine)


def current(engine: Any) -> dict[str, str]:
    """key -> spec of every family the engine runs now (families whose place is missing,
    e.g. a destage order without a cache, are left out; "none" families say none)."""
    out: dict[str, str] = {}
    for key, fam in FAMILIES.items():
        holder, attr = _parent(fam, engine)
        if holder is None:
            if fam.needs is None:
                out[key] = "none"
            continue
        # a holder without the slot runs the family's default (placement: static, until the
        # engine holds a placement policy)
        out[key] = spec_of(getattr(holder, attr)) if hasattr(holder, attr) else fam.default
    return out


def sources(engine: Any) -> dict[str, str]:
    """key -> which version of which file the policy in force came from (``file.py sha256
    1a2b3c4d5e6f, modified ...``), for every family running a policy loaded from a file."""
    out: dict[str, str] = {}
    for key, fam in FAMILIES.items():
        holder, attr = _parent(fam, engine)
        found = loader.source_of(getattr(holder, attr, None)) if holder is not None else None
        if found is not None:
            out[key] = loader.describe_source(found)
    return out


def install(key: str, engine: Any, spec: "str | PolicySpec", ctx: Context | None = None) -> str:
    """Swap the running policy of family ``key`` for the one ``spec`` names; its new spec.

    The holder's ``set_<attr>`` method is used when it has one (e.g. ``cache.set_order``,
    which carries the dirty units over), plain assignment otherwise.

    Raises:
        VraidError: for a family that cannot change at run time, a missing holder (no cache),
            or a bad spec; nothing changes then.
    """
    fam = family(key)
    if not fam.runtime:
        raise VraidError(f"the {fam.title} cannot change while the array runs",
                         "keys: " + ", ".join(k for k, f in FAMILIES.items() if f.runtime))
    holder, attr = _parent(fam, engine)
    ctx = replace(ctx or Context(), current=getattr(holder, attr, None) if holder is not None else None)
    policy = create(key, spec, ctx)
    if holder is None:
        need = family(fam.needs) if fam.needs else fam
        others = [n for n in need.builtins if n != "none"]
        raise VraidError(f"cannot change the {fam.title}: this array runs with {need.flag} none (no {need.title})",
                         f"mount with {' or '.join(f'{need.flag} {n}' for n in others)} to have a {fam.title}")
    setter = getattr(holder, f"set_{attr}", None)
    if callable(setter):
        setter(policy)
    else:
        setattr(holder, attr, policy)
    return spec_of(policy)

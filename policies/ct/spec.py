"""Contiguity transforms by spec string: ``none | msc[:sr_max=N,...]`` through the one parser.

The CT family's shorthands over :mod:`vraid.policies.registry` (the CT limits themselves live
in :mod:`vraid.policies.ct`, which the registry builds on and so must not import it back).
"""

from __future__ import annotations

from typing import Any, Callable

from vraid.policies import registry
from vraid.policies.ct import CONSERVATIVE, CtLimits, build_transform

_ROW = registry.FAMILIES["ct"]
CHOICES = tuple(_ROW.builtins)

#: name -> "module:Class" (imported when used): the ct row of vraid.policies.registry.FAMILIES
TRANSFORMS: dict[str, str] = {name: target for name, target in _ROW.builtins.items() if target is not None}


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"msc:sr_max=8,sr_except=3-4;9-10"`` -> ``("msc", {"sr_max": 8, "sr_except": ((3, 4), (9, 10))})``.

    Raises:
        VraidError: naming the bad part (:func:`vraid.policies.registry.parse`).
    """
    checked = registry.parse("ct", spec)
    return checked.name, dict(checked.params)


def load_ct(spec: str, defaults: CtLimits | None = None) -> Callable | None:
    """The transform ``spec`` names, or None for ``none``.

    Keys in the spec override ``defaults`` (:data:`CONSERVATIVE` when None).

    Raises:
        VraidError: for a bad spec (unknown name or key, non-integer, N < 1, a > b).
    """
    checked = registry.parse("ct", spec)
    cls = registry.policy_class(checked)
    if cls is None:
        return None
    return build_transform(cls, dict(checked.params), defaults if defaults is not None else CONSERVATIVE)

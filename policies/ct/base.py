"""The contiguity-transform interface: a pure, synchronous ``Plan -> Plan`` hook (``--ct``).

The controller calls the transform between planning and executing every stripe write
(``Array(ct=...)``). A transform is built with the :class:`~vraid.policies.ct.CtLimits` of
eq. (8)/(9) of seed 000 (Baek & Park): the limits a spec gives over the defaults of
:func:`vraid.policies.ct.default_limits` (superblock, disk-model preset, conservative).

Writing one: subclass :class:`ContiguityTransform`, set ``name``, ``summary`` and ``source``,
implement ``__call__(plan) -> Plan`` reading ``self.limits``; extra parameters of your own go in
``params`` (they arrive as keyword arguments after the limits). Load it with
``--ct mypkg.mymod:MyTransform`` or ``--ct path/to/file.py:MyTransform:sw_max=8``.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar

from vraid.policies.params import Regions

if TYPE_CHECKING:
    from vraid.core.rxw import Plan

    from . import CtLimits

_DEFAULTS = "default: the superblock's limits (vraid stride-bench --save), else the disk model's preset, else"

#: the four limits of eq. (8)/(9); every transform takes them
LIMIT_PARAMS: dict[str, tuple[type, Any, str, tuple[Any, Any]]] = {
    "sr_max": (int, None, f"S_r^max: fill read gaps of stride < this (1: no read transform; {_DEFAULTS} 1)", (1, None)),
    "sw_max": (int, None, f"S_w^max: fill write gaps of stride < this (1: no write transform; {_DEFAULTS} 3)", (1, None)),
    "sr_except": (Regions, None, "stride distances a-b;c-d never filled by reads (eq. (8) S_r^except)", (1, None)),
    "sw_except": (Regions, None, "stride distances a-b;c-d never filled by writes (eq. (9) S_w^except)", (1, None)),
}


class ContiguityTransform(abc.ABC):
    """Base of every contiguity transform: ``Class(limits, **own_params)``, callable on a Plan."""

    name: ClassVar[str] = "transform"
    summary: ClassVar[str] = ""
    source: ClassVar[str] = ""
    params: ClassVar[dict[str, Any]] = dict(LIMIT_PARAMS)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.__dict__.get("name"), str):
            cls.name = cls.__name__     # a subclass that names nothing is known by its class name
        if "params" in cls.__dict__:
            cls.params = {**LIMIT_PARAMS, **cls.__dict__["params"]}   # the limits always apply

    def __init__(self, limits: "CtLimits", **values: Any) -> None:
        self.limits = limits
        self.values = values

    @property
    def spec(self) -> str:
        """The canonical ``--ct`` spelling of this transform (limits, then own parameters)."""
        from vraid.policies.params import format_value
        from vraid.policies.registry import head_of

        text = self.limits.spec(head_of("ct", type(self), self.name))
        own = [f"{k}={format_value(type(v), v)}" for k, v in self.values.items() if v is not None]
        return ",".join([text, *own])

    @abc.abstractmethod
    def __call__(self, plan: "Plan") -> "Plan":
        """The plan with its transformed matrix (``plan.transform(M', self.name)``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"

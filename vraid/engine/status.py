"""Status records: what a layer of the data path reports, as a typed, frozen value.

Every layer's ``status()`` (:class:`vraid.engine.layer.Layer`) returns a :class:`StatusRecord`:
a frozen dataclass whose fields are the layer's state at the moment of the call. The frontends
(``vraid status``, ``vraid top``, the control socket, ``vraid sim --json``) read the dict that
:meth:`StatusRecord.as_dict` gives; :meth:`vraid.engine.host.array.Array.status` builds its dict
from the layers' records. The records live beside their layers (``read/status.py``,
``cache/status.py``, ``log/status.py``, ``placement/status.py``, ``raid/status.py``).

``as_dict`` walks the fields in their order and puts each one under its name, except

* a field made with :func:`flat` (a variable bag of counters, e.g. a metrics ``to_dict()``,
  or a part's record): its items are merged in at that point, a key already present keeping
  its place and taking the new value (as ``{**a, **b}`` does);
* a field made with :func:`optional`: left out while it is None;
* a nested record becomes its ``as_dict()``, a tuple a list (of ``as_dict()`` for records), a
  read-only mapping a dict.

Subclasses are ``@dataclass(frozen=True, kw_only=True)`` (so an optional field may come
before a required one, in the order of the dict). A mapping a record holds is a read-only
copy (:func:`frozen_map`, :func:`read_only`; its top level), so the record cannot be
changed, nor does it change when the layer does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Mapping


def flat(*, optional: bool = False) -> Any:
    """A field whose mapping (or record) is merged into ``as_dict()`` at its place, with no
    key of its own; with ``optional``, a field that may be None (then nothing is merged)."""
    if optional:
        return field(default=None, metadata={"flat": True, "optional": True})
    return field(metadata={"flat": True})


def optional() -> Any:
    """A field left out of ``as_dict()`` while it is None (a key the layer gives only sometimes)."""
    return field(default=None, metadata={"optional": True})


def frozen_map(items: Mapping[Any, Any] | None) -> Mapping[Any, Any]:
    """A read-only copy of ``items`` (an empty one for None)."""
    return MappingProxyType(dict(items or {}))


def read_only(value: Any) -> Any:
    """A dict as a read-only copy (:func:`frozen_map`), anything else as it is: for a value a
    policy describes itself with (a name, or a dict of its parameters)."""
    return frozen_map(value) if isinstance(value, dict) else value


def _plain(value: Any) -> Any:
    """``value`` as the dict form shows it (see the module docstring)."""
    if isinstance(value, StatusRecord):
        return value.as_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, MappingProxyType):
        return dict(value)
    return value


@dataclass(frozen=True)
class StatusRecord:
    """A layer's status (see the module docstring); subclasses add the fields."""

    def as_dict(self) -> dict[str, Any]:
        """The record as the JSON of ``vraid status`` shows it."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("optional") and value is None:
                continue
            if f.metadata.get("flat"):
                out.update(value.as_dict() if isinstance(value, StatusRecord) else value)
            else:
                out[f.name] = _plain(value)
        return out

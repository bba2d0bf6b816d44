"""A student's policy starts every ``vraid fuzz`` example as if freshly imported.

Every engine builds its own policy object (each example, and each remount in one), so state
kept on ``self`` never leaks from one example into the next. State kept elsewhere does: a
module global or a class attribute that counts calls goes on counting across examples, so a
fault "after the 600th call" strikes in whichever example happens to cross it, and hypothesis
can neither shrink nor replay it (the issue 35 report: an empty sequence and no replay blob).

:class:`ModuleState` takes a snapshot of the policy's module (its globals, and the attributes
of the classes defined in it) when the run starts and puts it back before every example.
Containers (list, dict, set, bytearray) are restored as copies of the snapshot, so one
mutated in place is reset too. Built-in policies (``vraid.*``) keep no such state and are
left alone.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

#: values restored as a copy of the snapshot (mutable in place)
_CONTAINERS = (list, dict, set, bytearray)


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, _CONTAINERS) else value


class ModuleState:
    """The snapshot of the module of ``cls`` (nothing for a built-in or an unknown module)."""

    def __init__(self, cls: type | None) -> None:
        module = sys.modules.get(getattr(cls, "__module__", "") or "")
        if module is None or module.__name__.startswith("vraid."):
            self.module: ModuleType | None = None
            return
        self.module = module
        self.globals = {k: _copy(v) for k, v in vars(module).items()}
        self.classes = {c: {k: _copy(v) for k, v in vars(c).items()} for c in self._own_classes()}

    def _own_classes(self) -> list[type]:
        assert self.module is not None
        return [v for v in vars(self.module).values()
                if isinstance(v, type) and v.__module__ == self.module.__name__]

    def restore(self) -> None:
        """Put the module's globals and its classes' attributes back as they were at the snapshot."""
        if self.module is None:
            return
        space = vars(self.module)
        for key in [k for k in space if k not in self.globals]:
            del space[key]
        space.update({k: _copy(v) for k, v in self.globals.items()})
        for cls, attrs in self.classes.items():
            for key in [k for k in vars(cls) if k not in attrs]:
                delattr(cls, key)
            for key, value in attrs.items():
                if key in ("__dict__", "__weakref__") or vars(cls).get(key) is value:
                    continue
                try:
                    setattr(cls, key, _copy(value))
                except (AttributeError, TypeError):
                    pass  # read-only slots of the type itself (__doc__ of some types): never changed by a policy

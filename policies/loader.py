"""Finding a policy class: a built-in's ``module:Class``, a student's own class, an installed plugin.

Three ways to name a class that is not built in (any family, see :mod:`vraid.policies.registry`):

* ``pkg.mod:Class``: a module importable from the current directory (it is put on ``sys.path``
  for the import, as ``python -m`` would) or from ``PYTHONPATH``;
* ``path/to/file.py:Class``: a Python file, loaded as a module of its own (once per file);
* an entry point in the group ``vraid.policies.<family>`` of an installed distribution:
  ``[project.entry-points."vraid.policies.destage"] mine = "mypkg.sched:Mine"`` makes
  ``--destage mine`` work.

Every class found is checked to subclass its family's base class and to be concrete.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from vraid.errors import VraidError

ENTRY_POINT_GROUP = "vraid.policies.{key}"
_FILE_MODULES: dict[Path, Any] = {}


def is_file_target(head: str) -> bool:
    """``path/to/file.py`` (a file) rather than ``pkg.mod`` (a module)."""
    return "/" in head or head.endswith(".py")


def is_module_target(head: str, cls: str) -> bool:
    """``pkg.mod`` and ``Class`` are dotted identifiers."""
    return (bool(head) and all(p.isidentifier() for p in head.split("."))
            and bool(cls) and all(p.isidentifier() for p in cls.split(".")))


def entry_points(key: str) -> dict[str, Any]:
    """Installed plugins of family ``key``: name -> ``importlib.metadata.EntryPoint``."""
    try:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP.format(key=key))
    except Exception:  # a broken installation must not break the built-ins
        return {}
    return {ep.name: ep for ep in eps}


def resolve(obj: str) -> Any:
    """The object ``"module:attr.path"`` names (a built-in's target: no user-facing errors)."""
    module_name, _, attr_path = obj.partition(":")
    out: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        out = getattr(out, part)
    return out


def _import_module(module_name: str, what: str):
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)   # `cd pol && vraid sim --destage mysched:Eager` works without PYTHONPATH
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise VraidError(f"{what}: cannot import module {module_name!r} ({exc})",
                         "check the module name and that it is in the current directory or on PYTHONPATH "
                         "(or name the file: path/to/file.py:Class)") from exc
    except Exception as exc:       # the module exists but fails while importing
        raise VraidError(f"{what}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}",
                         "fix the error in that module") from exc


def _import_file(path_text: str, what: str):
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise VraidError(f"{what}: there is no file {path_text!r}",
                         f"give the path of a .py file relative to {os.getcwd()} or absolute")
    real = path.resolve()
    if real in _FILE_MODULES:
        return _FILE_MODULES[real]
    name = f"vraid_policy_{real.stem}_{hashlib.sha1(str(real).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, real)
    if spec is None or spec.loader is None:
        raise VraidError(f"{what}: {path_text!r} cannot be loaded as Python", "give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look classes up there
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise VraidError(f"{what}: loading {path_text!r} failed: {type(exc).__name__}: {exc}",
                         "fix the error in that file") from exc
    _FILE_MODULES[real] = module
    return module


def load_class(head: str, cls_name: str, base: type, what: str) -> type:
    """The class ``cls_name`` in module or file ``head``, checked to be a concrete ``base``.

    Raises:
        VraidError: for a module or file that does not load, a missing class, a class that is
            not a ``base`` subclass, or one that leaves abstract methods undefined.
    """
    module = _import_file(head, what) if is_file_target(head) else _import_module(head, what)
    obj: Any = module
    for part in cls_name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            found = sorted(n for n, v in vars(module).items()
                           if inspect.isclass(v) and issubclass(v, base) and v is not base)
            raise VraidError(f"{what}: {head!r} has no {cls_name!r}",
                             f"{base.__name__} subclasses in {head}: {', '.join(found) or '(none)'}") from None
    check_class(obj, base, what, cls_name, head)
    return obj


def check_class(obj: Any, base: type, what: str, cls_name: str, where: str) -> None:
    """Raise VraidError unless ``obj`` is a concrete subclass of ``base``."""
    if not (inspect.isclass(obj) and issubclass(obj, base)):
        raise VraidError(f"{what}: {cls_name!r} in {where!r} is not a {base.__name__} subclass",
                         f"subclass {base.__module__}.{base.__name__} (see `vraid policies` and docs/policies.md)")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise VraidError(f"{what}: class {cls_name!r} does not implement {missing}",
                         f"define {missing} in your class (see {base.__name__})")


def load_entry_point(ep: Any, base: type, what: str) -> type:
    """The class an entry point names, checked like a student's class."""
    try:
        obj = ep.load()
    except Exception as exc:
        raise VraidError(f"{what}: loading plugin {ep.value!r} failed: {type(exc).__name__}: {exc}",
                         "reinstall the package that provides it, or fix its entry point") from exc
    check_class(obj, base, what, ep.value, f"entry point {ep.name}")
    return obj

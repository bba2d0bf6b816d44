"""Finding a policy class: a built-in's ``module:Class``, a student's own class, an installed plugin.

Three ways to name a class that is not built in (any family, see :mod:`vraid.policies.registry`):

* ``pkg.mod:Class``: a module importable from the current directory (it is put on ``sys.path``
  for the import, as ``python -m`` would) or from ``PYTHONPATH``;
* ``path/to/file.py:Class``: a Python file, loaded as a module of its own, as the file is now:
  an edited file is imported afresh under a new module name (:func:`_import_file`);
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
import types
from pathlib import Path
from typing import Any

from vraid.errors import POLICY_ERRORS, VraidError

ENTRY_POINT_GROUP = "vraid.policies.{key}"
#: the newest module imported from each policy file (see :func:`_import_file`)
_FILE_MODULES: dict[Path, Any] = {}
#: the largest policy file read (a .py file of a policy class is far smaller)
MAX_POLICY_FILE = 1 << 20


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
    except POLICY_ERRORS as exc:   # the module exists but fails (or exits) while importing
        raise VraidError(f"{what}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}",
                         "fix the error in that module") from exc


def _import_file(path_text: str, what: str):
    """The module of a policy file as the file is now (the reload rule, issue 35 item 1).

    A file is imported once per content: asked again while its bytes are the same, the module
    already imported is returned; once the file changed, it is imported afresh under a new
    module name (its path hash and content hash), so a class of the old version and one of
    the new never share a module. A file that no longer loads is refused and the old module,
    if any, stays as it was (a policy running from it keeps running).
    """
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise VraidError(f"{what}: there is no file {path_text!r}",
                         f"give the path of a .py file relative to {os.getcwd()} or absolute")
    real = path.resolve()
    try:
        with open(real, "rb") as f:
            data = f.read(MAX_POLICY_FILE + 1)
        mtime = os.stat(real).st_mtime
    except OSError as exc:
        raise VraidError(f"{what}: cannot read {path_text!r} ({exc.strerror or exc})",
                         "check the file's permissions") from exc
    if len(data) > MAX_POLICY_FILE:
        raise VraidError(f"{what}: {path_text!r} is larger than {MAX_POLICY_FILE >> 20} MiB",
                         "give the .py file that holds your policy class")
    digest = hashlib.sha256(data).hexdigest()
    known = _FILE_MODULES.get(real)
    if known is not None and known.__vraid_source__["sha256"] == digest:
        return known
    try:
        code = compile(data, str(real), "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" + (f", column {exc.offset}" if exc.offset else "")
        raise VraidError(f"{what}: {path_text!r} does not parse: {exc.msg} ({where})",
                         "fix the syntax error" + ("; the policy loaded from its older version keeps running"
                                                   if known is not None else "")) from None
    except (ValueError, TypeError) as exc:  # e.g. a NUL byte in the source
        raise VraidError(f"{what}: {path_text!r} is not Python source ({exc})", "give a .py file") from None
    name = (f"vraid_policy_{_identifier(real.stem)}_{hashlib.sha1(str(real).encode()).hexdigest()[:8]}"
            f"_{digest[:12]}")
    module = types.ModuleType(name)
    module.__file__ = str(real)
    module.__spec__ = importlib.util.spec_from_file_location(name, real)
    module.__vraid_source__ = {"file": str(real), "sha256": digest, "mtime": mtime}
    sys.modules[name] = module  # dataclasses and pickling look classes up there
    try:
        exec(code, module.__dict__)  # noqa: S102 - the student's own policy file, named on the command line
    except POLICY_ERRORS as exc:  # SystemExit and GeneratorExit included: a policy cannot end the process
        del sys.modules[name]
        raise VraidError(f"{what}: loading {path_text!r} failed: {type(exc).__name__}: {exc}",
                         "fix the error in that file") from exc
    _FILE_MODULES[real] = module
    return module


def _identifier(stem: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in stem)


def source_of(policy: Any) -> dict[str, Any] | None:
    """Which version of which file ``policy`` (or a guard's ``inner``) was loaded from:
    ``{"file", "sha256", "mtime"}``, or None for a class that does not come from a file."""
    if type(policy).__module__.startswith("vraid.engine."):  # the policy guard's wrapper
        policy = getattr(policy, "inner", policy)
    module = sys.modules.get(getattr(type(policy), "__module__", ""))
    found = getattr(module, "__vraid_source__", None) if module is not None else None
    return dict(found) if isinstance(found, dict) else None


def describe_source(source: dict[str, Any]) -> str:
    """``file.py sha256 1a2b3c4d5e6f, modified 2026-11-27 19:02:11 UTC`` (``vraid status`` and ``ctl``)."""
    import datetime

    when = datetime.datetime.fromtimestamp(source["mtime"], datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{Path(source['file']).name} sha256 {source['sha256'][:12]}, modified {when}"


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
    except POLICY_ERRORS as exc:
        raise VraidError(f"{what}: loading plugin {ep.value!r} failed: {type(exc).__name__}: {exc}",
                         "reinstall the package that provides it, or fix its entry point") from exc
    check_class(obj, base, what, ep.value, f"entry point {ep.name}")
    return obj

"""Import rules of the write-back cache and policy guard packages (engine-layers issue, items 6 and 8).

Read from the source with ``ast`` through :mod:`tests.test_layers`' graph (nothing imported):

* no module of ``vraid.engine.cache`` or ``vraid.engine.guard`` is in an import cycle, even
  counting imports under ``TYPE_CHECKING`` (the guard's wrappers know the guard only as the
  ``Guard`` protocol);
* no module imports a private name (``_x``) from another module of these packages;
* no module of the cache imports the array (the cache destages to a target);
* every module of both packages is under 500 lines and every class under 400.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from tests.test_layers import REPO, build_graph, cycles

PACKAGES = ("vraid.engine.cache", "vraid.engine.guard")


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PACKAGES)


@lru_cache(maxsize=1)
def _graph():
    return build_graph()


def _imported_from(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module ``node`` imports from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _files():
    for pkg in PACKAGES:
        folder = REPO / pkg.replace(".", "/")
        yield from sorted(folder.glob("*.py"))


def test_the_packages_exist_as_split():
    names = {p.stem for p in _files()}
    assert {"writeback", "units", "absorb", "reads", "destager", "durability", "metrics", "journal"} <= names
    assert {"policy_guard", "guarded", "guarded_cache"} <= names


def test_no_cycle_through_the_cache_or_the_guard_type_checking_included():
    graph = _graph()
    assert any(_ours(m) for m in graph.modules)
    found = [sorted(c) for c in cycles(graph.internal(runtime_only=False)) if any(_ours(m) for m in c)]
    assert found == []


def test_no_private_name_imported_from_another_module():
    graph = _graph()
    bad = []
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                bad += [f"{path.name}:{node.lineno} {a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert bad == []
    # and nothing outside imports a private name from them
    outside = [e for e in graph.edges if _ours(e.target) and not _ours(e.source)]
    assert outside, "no importer of the packages found: the check reads the wrong graph"
    for module, path in graph.modules.items():
        if _ours(module):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and _ours(_imported_from(module, path.name == "__init__.py", node)):
                bad += [f"{module}:{node.lineno} {a.name}" for a in node.names if a.name.startswith("_")]
    assert bad == []


def test_the_cache_does_not_import_the_array():
    graph = _graph()
    found = [str(e) for e in graph.edges
             if e.source.startswith("vraid.engine.cache") and e.target == "vraid.engine.host.array"]
    assert found == []


def test_modules_and_classes_stay_small():
    for path in _files():
        text = path.read_text(encoding="utf-8")
        assert text.count("\n") <= 500, path
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno - node.lineno + 1 <= 400, (path, node.name)

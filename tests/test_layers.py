"""The layer rules of vraid as tests, read from the source with ``ast`` (no module is imported).

The import graph spans the four source folders as they install (pyproject.toml
``package-dir``): ``vraid/`` is ``vraid``, ``backends/`` is ``vraid.backends``, ``policies/`` is
``vraid.policies`` and ``labs/`` is ``vraid.labs``. Every ``import`` and ``from ... import``
counts, at module level and inside functions alike (a deferred import couples the modules as
much as one at the top); relative imports are resolved against the importing module.

An edge goes to the module named, or for ``from P import n`` to ``P.n`` when that is a module
and to ``P`` otherwise. Importing ``a.b.c`` first runs the ``__init__`` of ``a`` and ``a.b``, so
edges also go to those packages, except the ones the importer sits inside itself (those are
already being imported when the importer runs).

Imports under ``if TYPE_CHECKING:`` count for the layer rules (a backend that names a policy
type still depends on it). For cycles there are two rules: none at run time, and (engine-layers
issue, item 8) none counting the ``TYPE_CHECKING`` imports either: a type named across a cycle
still ties the two modules' designs together, so it is a dependency to invert, not to hide.

The rules (engine-seams issue, item 5; engine-layers issue, item 8):

* no import cycle among vraid modules (a strongly connected component of two or more), at
  run time nor counting ``TYPE_CHECKING`` imports;
* ``vraid.backends`` imports neither ``vraid.policies`` nor a frontend (``vraid.fuse``,
  ``vraid.tui``, ``vraid.cli``);
* ``vraid.policies`` imports neither a frontend nor a concrete backend (anything under
  ``vraid.backends`` but ``vraid.backends.base``);
* ``pyfuse3`` is imported only in ``vraid.fuse``; ``rich`` only in the frontends that draw
  (``vraid.tui``, ``vraid.cli``);
* below the host API nothing reaches up to it: no module under ``vraid.engine`` but the
  builder (``vraid.engine.build``) and the host API itself (``vraid.engine.host`` and its
  modules, and ``vraid.engine.host.array`` while it is one) imports ``vraid.engine.host.array`` or
  ``vraid.engine.host``;
* ``vraid.ondisk`` (the on-member formats) imports nothing from ``vraid.engine``;
* no private name (``_x``, not ``__x__``) is imported from another vraid module
  (``from M import _x``): what a module shares is public.

Dynamic imports (``importlib.import_module`` of a ``module:Class`` string) are not seen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: source folder -> the package it installs as (pyproject.toml package-dir)
ROOTS = {"vraid": "vraid", "backends": "vraid.backends", "policies": "vraid.policies", "labs": "vraid.labs"}

FRONTENDS = ("vraid.fuse", "vraid.tui", "vraid.cli")


@dataclass(frozen=True)
class Edge:
    source: str  # importing module
    target: str  # imported module (vraid or third-party top-level name path)
    line: int
    type_checking: bool  # under ``if TYPE_CHECKING:``

    def __str__(self) -> str:
        tc = " (TYPE_CHECKING)" if self.type_checking else ""
        return f"{self.source} -> {self.target}  (line {self.line}){tc}"


@dataclass(frozen=True)
class PrivateImport:
    source: str  # importing module
    module: str  # the vraid module the name comes from
    name: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} imports {self.name} from {self.module}  (line {self.line})"


@dataclass
class Graph:
    modules: dict[str, Path]  # module name -> file
    packages: set[str]  # the module names that are packages (an __init__.py)
    edges: list[Edge]
    #: every ``from M import _x`` of a vraid module M
    private: list[PrivateImport] = field(default_factory=list)

    def internal(self, *, runtime_only: bool) -> dict[str, set[str]]:
        """Adjacency among the modules of the tree (third-party imports left out)."""
        adj: dict[str, set[str]] = {m: set() for m in self.modules}
        for e in self.edges:
            if e.target in self.modules and e.target != e.source and not (runtime_only and e.type_checking):
                adj[e.source].add(e.target)
        return adj


def module_files(repo: Path, roots: dict[str, str]) -> dict[str, Path]:
    """Module name -> file for every .py file under the roots."""
    out: dict[str, Path] = {}
    for folder, package in roots.items():
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """(node, under TYPE_CHECKING) for every Import/ImportFrom, at any depth."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, tc = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, tc
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, True) for child in node.body)
            stack.extend((child, tc) for child in node.orelse)
            continue
        stack.extend((child, tc) for child in ast.iter_child_nodes(node))


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def build_graph(repo: Path = REPO, roots: dict[str, str] = ROOTS) -> Graph:
    modules = module_files(repo, roots)
    packages = {m for m, p in modules.items() if p.name == "__init__.py"}
    edges: list[Edge] = []
    private: list[PrivateImport] = []
    tops = {name.split(".")[0] for name in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        # the package a relative import counts from: the module itself for an __init__
        here = module if module in packages else module.rpartition(".")[0]
        own = set(_ancestors(module))
        for node, tc in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base_parts = here.split(".")
                    up = node.level - 1
                    if up >= len(base_parts):
                        raise AssertionError(f"{path}:{node.lineno}: relative import beyond the top package")
                    base = ".".join(base_parts[: len(base_parts) - up])
                    pkg = f"{base}.{node.module}" if node.module else base
                else:
                    pkg = node.module or ""
                for alias in node.names:
                    sub = f"{pkg}.{alias.name}"
                    targets.append(sub if sub in modules else pkg)
                    if (alias.name.startswith("_") and not alias.name.startswith("__") and sub not in modules
                            and pkg.split(".")[0] in tops):
                        private.append(PrivateImport(module, pkg, alias.name, node.lineno))
            for target in targets:
                for name in dict.fromkeys([*_ancestors(target), target]):
                    if name == module or (name in own and name != target):
                        continue  # the importer's own packages run first anyway
                    if name != target and name not in modules:
                        continue  # a third-party package: only the name imported counts
                    edges.append(Edge(module, name, node.lineno, tc))
    return Graph(modules, packages, edges, private)


def cycles(adj: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of two or more modules (Tarjan, iterative), each
    sorted, the list sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(adj):
        if start in index:
            continue
        work = [(start, iter(sorted(adj[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(adj[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        m = stack.pop()
                        on_stack.discard(m)
                        comp.append(m)
                        if m == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def layer_violations(graph: Graph) -> list[str]:
    """Every edge that breaks a layer rule, as a readable line."""
    out: list[str] = []
    for e in graph.edges:
        src, dst = e.source, e.target
        if _under(src, "vraid.backends") and _under(dst, "vraid.policies", *FRONTENDS):
            out.append(f"backend imports a policy or a frontend: {e}")
        if _under(src, "vraid.policies"):
            if _under(dst, *FRONTENDS):
                out.append(f"policy imports a frontend: {e}")
            elif _under(dst, "vraid.backends") and dst not in ("vraid.backends", "vraid.backends.base"):
                out.append(f"policy imports a concrete backend: {e}")
        if _under(dst, "pyfuse3") and not _under(src, "vraid.fuse"):
            out.append(f"pyfuse3 outside vraid.fuse: {e}")
        if _under(dst, "rich") and not _under(src, "vraid.tui", "vraid.cli"):
            out.append(f"rich below the frontends: {e}")
    return sorted(set(out))


#: the host API's own modules and the builder: the only engine modules that may import it
HOST_API = ("vraid.engine.host",)
BUILDER = ("vraid.engine.build", "vraid.engine.chain")


def host_api_violations(graph: Graph) -> list[str]:
    """Edges from below the host API up to it (``TYPE_CHECKING`` imports included)."""
    out = []
    for e in graph.edges:
        if (_under(e.source, "vraid.engine") and not _under(e.source, *HOST_API, *BUILDER)
                and e.source != "vraid.engine" and _under(e.target, *HOST_API)):
            out.append(f"below the host API, imports it: {e}")
    return sorted(set(out))


def ondisk_violations(graph: Graph) -> list[str]:
    """Edges from ``vraid.ondisk`` into ``vraid.engine`` (``TYPE_CHECKING`` imports included)."""
    return sorted({f"ondisk imports the engine: {e}" for e in graph.edges
                   if _under(e.source, "vraid.ondisk") and _under(e.target, "vraid.engine")})


def private_violations(graph: Graph) -> list[str]:
    """Every private name imported from another vraid module."""
    return sorted({f"private name imported: {p}" for p in graph.private if p.module != p.source})


def describe_cycles(graph: Graph, found: list[list[str]], *, runtime_only: bool = True) -> list[str]:
    lines = []
    for comp in found:
        members = set(comp)
        lines.append("cycle among " + ", ".join(comp) + ":")
        seen = set()
        for e in sorted(graph.edges, key=lambda e: (e.source, e.line, e.target)):
            if (e.source in members and e.target in members and not (runtime_only and e.type_checking)
                    and str(e) not in seen):
                seen.add(str(e))
                lines.append(f"    {e}")
    return lines


# ---------------------------------------------------------------------- the source's rules


@pytest.fixture(scope="module")
def graph() -> Graph:
    return build_graph()


def test_graph_covers_the_source(graph: Graph) -> None:
    # Not vacuous: the tree is there and its known edges are seen.
    assert {"vraid.engine.host.array", "vraid.backends.base", "vraid.policies.registry", "vraid.labs"} <= set(graph.modules)
    targets = {(e.source, e.target) for e in graph.edges}
    assert ("vraid.fuse.image", "pyfuse3") in targets
    assert any(src == "vraid.policies.ct.msc" for src, _ in targets)


def test_no_import_cycles(graph: Graph) -> None:
    found = cycles(graph.internal(runtime_only=True))
    assert not found, "import cycles (break them, or move a type-only import under TYPE_CHECKING):\n" + "\n".join(
        describe_cycles(graph, found))


def test_layer_rules(graph: Graph) -> None:
    bad = layer_violations(graph)
    assert not bad, "layer rules broken:\n" + "\n".join(bad)


def test_no_import_cycles_counting_type_checking_imports(graph: Graph) -> None:
    found = cycles(graph.internal(runtime_only=False))
    assert not found, "import cycles, TYPE_CHECKING imports counted (invert the dependency):\n" + "\n".join(
        describe_cycles(graph, found, runtime_only=False))


def test_nothing_below_the_host_api_imports_it(graph: Graph) -> None:
    bad = host_api_violations(graph)
    assert not bad, "modules below the host API import it (hand them what they need instead):\n" + "\n".join(bad)


def test_ondisk_imports_nothing_from_the_engine(graph: Graph) -> None:
    bad = ondisk_violations(graph)
    assert not bad, "vraid.ondisk imports the engine (name it by a protocol in ondisk):\n" + "\n".join(bad)


def test_no_private_name_is_imported_from_another_module(graph: Graph) -> None:
    bad = private_violations(graph)
    assert not bad, "private names imported across modules (make them public):\n" + "\n".join(bad)


# ---------------------------------------------------------------------- the builder itself


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_builder_finds_a_cycle_and_resolves_relative_imports(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/sub/__init__.py": "",
        "pkg/sub/a.py": "from . import b\n",
        "pkg/sub/b.py": "def f():\n    from ..c import thing\n",
        "pkg/c.py": "from pkg.sub.a import x\nimport os.path\n",
        "pkg/d.py": "from .sub import a\n",
    })
    g = build_graph(repo, {"pkg": "pkg"})
    edges = {(e.source, e.target) for e in g.edges}
    assert ("pkg.sub.a", "pkg.sub.b") in edges  # from . import b: the submodule
    assert ("pkg.sub.b", "pkg.c") in edges  # function-level, two dots up
    assert ("pkg.c", "pkg.sub") in edges  # importing pkg.sub.a runs pkg/sub/__init__ first
    assert ("pkg.c", "os.path") in edges and ("pkg.c", "os") not in edges
    assert ("pkg.d", "pkg.sub.a") in edges
    assert cycles(g.internal(runtime_only=True)) == [["pkg.c", "pkg.sub.a", "pkg.sub.b"]]
    text = "\n".join(describe_cycles(g, cycles(g.internal(runtime_only=True))))
    assert "pkg.sub.b -> pkg.c  (line 2)" in text


def test_type_checking_import_is_exempt_from_cycles_not_from_rules(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "vraid/__init__.py": "",
        "vraid/x.py": "import vraid.y\n",
        "vraid/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from vraid import x\n",
        "backends/__init__.py": "",
        "backends/disk.py": "import typing\nif typing.TYPE_CHECKING:\n    from vraid.policies.p import P\n"
                            "else:\n    import rich\n",
        "policies/__init__.py": "",
        "policies/p.py": "from vraid.backends.base import Store\nfrom ..backends import disk\nimport pyfuse3\n",
    })
    g = build_graph(repo, {"vraid": "vraid", "backends": "vraid.backends", "policies": "vraid.policies"})
    assert ("vraid.y", "vraid.x") in {(e.source, e.target) for e in g.edges}
    assert cycles(g.internal(runtime_only=True)) == []
    assert cycles(g.internal(runtime_only=False)) == [["vraid.backends.disk", "vraid.policies.p"], ["vraid.x", "vraid.y"]]
    bad = layer_violations(g)
    assert any("backend imports a policy" in b and "vraid.policies.p" in b and "TYPE_CHECKING" in b for b in bad)
    assert any(b.startswith("rich below the frontends: vraid.backends.disk -> rich") for b in bad)
    assert any("concrete backend: vraid.policies.p -> vraid.backends.disk" in b for b in bad)
    assert not any("vraid.backends.base" in b for b in bad)  # the Store interface is allowed
    assert any(b.startswith("pyfuse3 outside vraid.fuse: vraid.policies.p") for b in bad)


def test_a_package_init_counts_in_a_cycle(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "vraid/__init__.py": "",
        "vraid/w/__init__.py": "from .zipf import Zipf\n",
        "vraid/w/zipf.py": "",
        "vraid/w/hlwm.py": "from vraid.w import Zipf\n",
        "vraid/w/base.py": "",
        "vraid/w/other.py": "from vraid.w import base\n",
    })
    g = build_graph(repo, {"vraid": "vraid"})
    edges = {(e.source, e.target) for e in g.edges}
    assert ("vraid.w.hlwm", "vraid.w") in edges  # a name from the package: its __init__
    assert ("vraid.w.other", "vraid.w.base") in edges and ("vraid.w.other", "vraid.w") not in edges
    assert cycles(g.internal(runtime_only=True)) == []
    (repo / "vraid/w/zipf.py").write_text("from . import hlwm\n")
    g = build_graph(repo, {"vraid": "vraid"})
    assert cycles(g.internal(runtime_only=True)) == [["vraid.w", "vraid.w.hlwm", "vraid.w.zipf"]]


def test_the_engine_rules_see_what_they_forbid(tmp_path: Path) -> None:
    repo = _tree(tmp_path, {
        "vraid/__init__.py": "",
        "vraid/engine/__init__.py": "",
        "vraid/engine/host/array.py": "from ..raid import plan\n",
        "vraid/engine/build.py": "from .host.array import Array\n",
        "vraid/engine/host/__init__.py": "from .api import Host\n",
        "vraid/engine/host/api.py": "from vraid.engine.host.array import Array\n",
        "vraid/engine/raid.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .host.array import Array\n"
                                "from .helpers import _private, __version__, public\n",
        "vraid/engine/helpers.py": "_private = 1\n",
        "vraid/engine/cache/__init__.py": "",
        "vraid/engine/cache/unit.py": "from vraid.engine.host import api\nfrom os.path import _joinrealpath\n",
        "vraid/engine/members/queues.py": "",
        "vraid/ondisk/__init__.py": "",
        "vraid/ondisk/bitmap.py": "import typing\nif typing.TYPE_CHECKING:\n    from vraid.engine.members.queues import M\n",
    })
    g = build_graph(repo, {"vraid": "vraid"})
    host = host_api_violations(g)
    assert [h.split(": ", 1)[1].split("  ")[0] for h in host] == [
        "vraid.engine.cache.unit -> vraid.engine.host", "vraid.engine.cache.unit -> vraid.engine.host.api",
        "vraid.engine.raid -> vraid.engine.host", "vraid.engine.raid -> vraid.engine.host.array"]  # build and the host package may
    assert ondisk_violations(g) == [f"ondisk imports the engine: vraid.ondisk.bitmap -> {m}  (line 3) (TYPE_CHECKING)"
                                    for m in ("vraid.engine", "vraid.engine.members.queues")]
    assert private_violations(g) == [  # not __version__, not os.path's
        "private name imported: vraid.engine.raid imports _private from vraid.engine.helpers  (line 4)"]
    assert cycles(g.internal(runtime_only=True)) == []
    assert cycles(g.internal(runtime_only=False)) == [["vraid.engine.host", "vraid.engine.host.api", "vraid.engine.host.array",
                                                       "vraid.engine.raid"]]
    text = "\n".join(describe_cycles(g, cycles(g.internal(runtime_only=False)), runtime_only=False))
    assert "vraid.engine.raid -> vraid.engine.host.array  (line 3) (TYPE_CHECKING)" in text

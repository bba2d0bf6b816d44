"""The mapping and redundancy seams stay the only places that know RAID-5.

The source is parsed (AST, nothing imported): outside
``vraid/core/redundancy.py`` no code compares a RAID level with a number
(``level == 5``, ``g.level != 5``, ``st["level"] == 0``, ``level in (0, 5)``)
and none computes XOR (``np.bitwise_xor``, ``a ^ b``, ``a ^= b``): a level's
meaning and parity arithmetic belong to :mod:`vraid.core.redundancy` (and the
modules of its schemes: ``SEAM``).
Strings and comments do not count (they are not code). The allow-list below
names each exception and why it is not parity.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TREES = ("vraid", "policies", "backends", "labs", "bench")
HOME = "vraid/core/redundancy.py"
#: the redundancy seam's modules: the registry (HOME), its base class, P+Q and its field
SEAM = {HOME, "vraid/core/scheme.py", "vraid/core/pq.py", "vraid/core/gf256.py"}
#: oracles: independent parity references the tests and the model machines check the engine
#: with (they must not use the code they check), whole modules
ORACLES = {"vraid/testing/raid6_oracle.py"}

#: (file, a piece of the offending line): why it is not parity
ALLOWED_XOR = {
    # mixes the workload seed into the random generator's seed; no stripe data is involved
    ("vraid/engine/clock.py", "0x5EED ^ seed"): "seeding a random generator",
    # the model machines' own parity check (moved from tests/ for vraid fuzz): an oracle that
    # must not use the code it checks
    ("vraid/testing/machines.py", "pbg = np.bitwise_xor.reduce(areas, axis=0)"): "the model's independent parity check",
    # the placement machine's oracle: the parity of every physical PBG, computed without the
    # code under test
    ("vraid/testing/placed_machines.py", "pbg = np.bitwise_xor.reduce(areas.reshape("): "the placement model's independent parity check",
    # bench/engine_floor.py's baseline: RAID-5 without vraid's code, which it is measured against
    ("bench/engine_floor.py", "par ^ old ^ np.frombuffer(data, np.uint8)"): "the benchmark's minimal RAID-5",
}
ALLOWED_LEVEL: dict[tuple[str, str], str] = {}


def _sources() -> list[Path]:
    out = []
    for tree in TREES:
        base = ROOT / tree
        if base.is_dir():
            out += sorted(p for p in base.rglob("*.py") if ".venv" not in p.parts)
    return out


def _is_level(node: ast.AST) -> bool:
    """``level``, ``x.level``, ``x["level"]``."""
    if isinstance(node, ast.Name):
        return node.id == "level"
    if isinstance(node, ast.Attribute):
        return node.attr == "level"
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value == "level"
    return False


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    return False


def level_checks(tree: ast.AST) -> list[int]:
    """Lines comparing a RAID level with number literals."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_level(s) for s in sides) and any(_is_literal(s) for s in sides):
                lines.append(node.lineno)
    return lines


def xor_uses(tree: ast.AST) -> list[int]:
    """Lines computing XOR: ``^``, ``^=``, ``bitwise_xor``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.BitXor):
            lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr == "bitwise_xor":
            lines.append(node.lineno)
        elif isinstance(node, ast.Name) and node.id == "bitwise_xor":
            lines.append(node.lineno)
    return lines


def _offences(finder, allowed) -> list[str]:
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        if rel in SEAM or rel in ORACLES:
            continue
        text = path.read_text()
        lines = text.splitlines()
        for n in sorted(set(finder(ast.parse(text, rel)))):
            line = lines[n - 1].strip()
            if not any(rel == f and piece in line for f, piece in allowed):
                found.append(f"{rel}:{n}: {line}")
    return found


def test_no_raid_level_checks_outside_redundancy():
    assert _offences(level_checks, ALLOWED_LEVEL) == [], (
        "ask the redundancy scheme (geometry.redundancy: tolerates, parity_columns, survives) instead of the level"
    )


def test_no_xor_outside_redundancy():
    assert _offences(xor_uses, ALLOWED_XOR) == [], "parity arithmetic belongs to vraid.core.redundancy"


def test_every_allowance_still_matches_a_line():
    """An exception whose line is gone must leave the list too."""
    for (rel, piece) in list(ALLOWED_XOR) + list(ALLOWED_LEVEL):
        assert piece in (ROOT / rel).read_text(), f"{rel}: {piece!r} is allowed but no longer there"


@pytest.mark.parametrize(
    "code, level, xor",
    [
        ("if g.level == 5: pass", 1, 0),
        ("x = st['level'] != 0", 1, 0),
        ("ok = level in (0, 5)", 1, 0),
        ("ok = 5 == self.geometry.level", 1, 0),
        ("p = np.bitwise_xor.reduce(d, axis=0)", 0, 1),
        ("p ^= q", 0, 1),
        ("p = a ^ b", 0, 1),
        ("s = 'level == 5 and a ^ b'  # level != 5", 0, 0),
        ("n = level_count == 5", 0, 0),
        ("lvl = g.level", 0, 0),
    ],
)
def test_the_finders_see_code_not_text(code, level, xor):
    tree = ast.parse(code)
    assert len(level_checks(tree)) == level
    assert len(xor_uses(tree)) == xor

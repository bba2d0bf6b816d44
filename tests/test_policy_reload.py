"""A policy file loads as it is now (issue 35, item 1): an edited file is imported afresh under
a new module name, the same bytes give the same module, a file that no longer parses is refused
with its syntax error (the loaded version stays), a class added to the file is found, and the
file's hash and modification time are what :func:`vraid.policies.loader.source_of` reports.
The mounted case (``vraid ctl set`` into a running daemon) is in tests/test_e2e_policy_exit.py."""

from __future__ import annotations

import hashlib
import os

import pytest

from vraid.errors import VraidError
from vraid.policies import loader, registry, running

V1 = '''
from vraid.policies.destage import Decision, DestageScheduler


class HalfFull(DestageScheduler):
    def decide(self, state):
        return Decision(1 if state.dirty else 0)
'''

V2 = V1.replace("Decision(1 if", "Decision(2 if") + '''

class Added(DestageScheduler):
    def decide(self, state):
        return Decision(3)
'''


def write(path, text: str, mtime: int) -> None:
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def test_an_edited_file_is_imported_afresh_and_the_same_bytes_are_not(tmp_path):
    f = tmp_path / "edit.py"
    write(f, V1, 1_000_000)
    first = registry.policy_class(registry.parse("destage", f"{f}:HalfFull"))
    assert registry.policy_class(registry.parse("destage", f"{f}:HalfFull")) is first  # unchanged: same class
    with pytest.raises(VraidError, match="has no 'Added'"):
        registry.parse("destage", f"{f}:Added")
    write(f, V2, 2_000_000)
    second = registry.policy_class(registry.parse("destage", f"{f}:HalfFull"))
    assert second is not first and second.__module__ != first.__module__  # two versions never share a module
    assert registry.policy_class(registry.parse("destage", f"{f}:Added")).__module__ == second.__module__
    old, new = first(), second()
    from vraid.policies.destage.base import CacheState

    st = CacheState(now=0.0, dirty=1, capacity=10)
    assert (old.decide(st).concurrency, new.decide(st).concurrency) == (1, 2)  # the old object keeps its code
    src = loader.source_of(new)
    assert src == {"file": str(f.resolve()), "sha256": hashlib.sha256(V2.encode()).hexdigest(), "mtime": 2_000_000}
    assert loader.source_of(old)["sha256"] == hashlib.sha256(V1.encode()).hexdigest()
    assert "edit.py sha256 " + src["sha256"][:12] in loader.describe_source(src)
    assert "1970-01-24 03:33:20 UTC" in loader.describe_source(src)


def test_a_file_that_no_longer_parses_is_refused_and_the_loaded_version_stays(tmp_path):
    f = tmp_path / "edit.py"
    write(f, V1, 1_000_000)
    running = registry.create("destage", f"{f}:HalfFull")
    write(f, V1 + "\ndef broken(:\n", 2_000_000)
    with pytest.raises(VraidError) as info:
        registry.parse("destage", f"{f}:HalfFull")
    assert "does not parse: invalid syntax (line 9" in info.value.message
    assert "the policy loaded from its older version keeps running" in info.value.hint
    assert loader.source_of(running)["mtime"] == 1_000_000
    write(f, V1, 3_000_000)  # back to the first bytes: the first module again (a touch alone loads nothing)
    assert registry.policy_class(registry.parse("destage", f"{f}:HalfFull")) is type(running)


def test_the_engine_reports_where_each_file_policy_comes_from(tmp_path):
    from vraid.engine.guard import PolicyGuard

    f = tmp_path / "edit.py"
    write(f, V1, 1_000_000)

    class Cache:  # where the registry finds the destage scheduler: engine.cache.scheduler
        scheduler = PolicyGuard().wrap("destage", registry.create("destage", f"{f}:HalfFull"))
        order = registry.create("destage_order", "lrw")

    class Engine:
        cache = Cache()

    got = running.sources(Engine())
    assert list(got) == ["destage"] and got["destage"].startswith("edit.py sha256 ")


def test_a_huge_or_unreadable_policy_file_is_refused(tmp_path):
    f = tmp_path / "big.py"
    f.write_bytes(b"#" * (loader.MAX_POLICY_FILE + 10))
    with pytest.raises(VraidError, match="larger than 1 MiB"):
        registry.parse("destage", f"{f}:X")
    g = tmp_path / "nul.py"
    g.write_bytes(b"x = 1\0\n")
    with pytest.raises(VraidError, match="not Python source|does not parse"):
        registry.parse("destage", f"{g}:X")

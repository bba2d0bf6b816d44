"""The policy registry (vraid.policies.registry): one table, one parser, one error format,
student classes in every family (from the current directory and from a file), entry points,
run-time swaps, and what the CLI, vraid.toml and `vraid ctl` generate from the table."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import trio

from vraid.core.geometry import Geometry
from vraid.errors import VraidError
from vraid.policies import registry, running
from vraid.policies.describe import describe, describe_all
from vraid.policies.params import Fraction, Param, Regions, Seconds, bind, schema

G = Geometry(level=5, ndisks=5, stripes=64, block_size=4096, strip_size=16384)
CTX = registry.Context(geometry=G, disk_model="hdd:st373454lc", disk_preset="st373454lc")

# one student policy per family, written as a file
STUDENT = '''
from vraid.core.rxw import Plan
from vraid.policies.cache import StripeOrganisation
from vraid.policies.ct.base import ContiguityTransform
from vraid.policies.destage import Decision, DestageScheduler
from vraid.policies.order import Fifo


class Eager(DestageScheduler):
    """Destage whenever anything is dirty."""
    params = {"n": (int, 2, "destages in flight", (1, 8))}

    def decide(self, state):
        return Decision(self.values["n"] if state.dirty else 0)


class Backwards(Fifo):
    """FIFO, but a student's."""
    summary = "a student's FIFO"


class Wide(StripeOrganisation):
    """A stripe cache with a knob."""
    params = {"ways": (int, 1, "ways", (1, 4))}

    def __init__(self, geometry, ways=1):
        super().__init__(geometry)
        self.ways = ways


class Same(ContiguityTransform):
    """A transform that changes nothing."""
    params = {"verbose": (bool, False, "say more")}

    def __call__(self, plan: Plan) -> Plan:
        return plan


class Unfinished(DestageScheduler):
    pass


class NotAPolicy:
    pass
'''

OWN = {"destage": "Eager", "destage_order": "Backwards", "cache": "Wide", "ct": "Same"}
BASES = {"cache": "Organisation", "destage_order": "DestageOrder", "destage": "DestageScheduler",
         "ct": "ContiguityTransform", "queue_order": "QueueOrder", "prefetch": "PrefetchPolicy",
         "placement": "Placement", "log": "LogConfiguration"}


@pytest.fixture
def student_dir(tmp_path, monkeypatch):
    """A directory holding ``stud_<tmp name>.py``, made the current directory, NOT on sys.path."""
    module = "stud_" + "".join(c if c.isalnum() else "_" for c in tmp_path.name)
    (tmp_path / f"{module}.py").write_text(STUDENT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path), os.getcwd())])
    yield tmp_path, module
    sys.modules.pop(module, None)


# -- the table -------------------------------------------------------------------------------
def test_every_family_row_is_complete_and_its_builtins_load():
    assert list(registry.FAMILIES) == ["cache", "destage_order", "destage", "ct", "queue_order", "prefetch",
                                     "placement", "log"]
    for key, fam in registry.FAMILIES.items():
        assert fam.title and fam.doc and fam.flag == "--" + key.replace("_", "-")
        base = fam.base_class()
        assert base.__name__ == BASES[key]
        assert fam.default in fam.builtins
        for name, target in fam.builtins.items():
            obj = registry.create(key, name, CTX)
            if target is None:
                assert obj is None
            else:
                # a queue order is built as a factory: the engine makes one per member and class
                assert isinstance(obj() if key == "queue_order" else obj, base)
                assert registry.spec_of(obj).split(":")[0] == name
    assert [k for k, f in registry.FAMILIES.items() if f.runtime] == ["destage_order", "destage", "ct"]


def test_parse_and_format_round_trip_in_every_family():
    specs = {"cache": ["none", "pbg", " STRIPE "], "destage_order": ["lrw", "cscan"],
             "destage": ["hlwm", " hlwm : high=90% , low=0.5,max_destages=2 ", "adaptive:period=500ms", "idle:idle=10us"],
             "ct": ["none", "msc", "msc:sr_max=8,sr_except=9-10;3-4,sw_except=5"]}
    for key, texts in specs.items():
        for text in texts:
            spec = registry.parse(key, text)
            again = registry.parse(key, spec.text)
            assert again == spec and str(again) == spec.text
            assert spec.family == key and spec.name == text.split(":")[0].strip().lower()
    assert registry.parse("destage", " hlwm : high=90% , low=0.5").text == "hlwm:high=0.9,low=0.5"
    assert registry.parse("destage", "adaptive:period=500ms").params == (("period", 0.5),)
    ct = registry.parse("ct", "msc:sr_max=8,sr_except=9-10;3-4,sw_except=5")
    assert ct.text == "msc:sr_max=8,sr_except=3-4;9-10,sw_except=5-5"
    assert dict(ct.params)["sr_except"] == ((3, 4), (9, 10))
    assert registry.parse("destage", None).text == "hlwm" and registry.parse("ct", None).text == "none"


def test_ct_defaults_come_from_the_context_and_spec_keys_override_them():
    ct = registry.create("ct", "msc", CTX)
    assert (ct.limits.sr_max, ct.limits.sw_max) == (4, 4) and "preset st373454lc" in ct.limits.source
    ct = registry.create("ct", "msc:sw_max=9", registry.Context(params={"ct": {"sr_max": 2, "sw_max": 5}}))
    assert (ct.limits.sr_max, ct.limits.sw_max) == (2, 9)
    assert registry.create("ct", "msc").limits.sw_max == 3  # conservative


# -- one error format --------------------------------------------------------------------------
@pytest.mark.parametrize("key, spec, message, hint", [
    ("destage", "", "empty destage scheduler spec", "hlwm, adaptive, lt, pi, idle"),
    ("cache", "lru", "unknown cache organisation 'lru'", "none, pbg, stripe"),
    ("destage_order", "random", "unknown destage order 'random'", "lrw, lru, fifo, cscan"),
    ("ct", "fast", "unknown contiguity transform 'fast'", "none, msc"),
    ("destage", "hlwm:bogus=1", "destage scheduler hlwm has no parameter 'bogus'", "high, low, max_destages"),
    ("ct", "msc:s_max=3", "contiguity transform msc has no parameter 's_max'", "sr_max, sw_max, sr_except, sw_except"),
    ("destage", "hlwm:high", "destage scheduler hlwm: 'high' is not key=value", "high, low, max_destages"),
    ("ct", "msc:sr_max=2,sr_max=3", "contiguity transform msc: sr_max is given twice", "once"),
    ("destage", "hlwm:high=lots", "destage scheduler hlwm: high='lots' is not a fraction", "high=0.95"),
    ("destage", "lt:max_destages=0", "destage scheduler lt: max_destages=0 is below 1", "at least 1"),
    ("ct", "msc:sw_max=0", "contiguity transform msc: sw_max=0 is below 1", "at least 1"),
    ("ct", "msc:sr_except=5-3", "contiguity transform msc: sr_except region '5-3' has a > b", "3-5"),
    ("ct", "msc:sw_except=0-2", "sw_except region 0-2 starts below 1", "1"),
    ("destage_order", "lrw:depth=3", "destage order lrw takes no parameters", "write just lrw"),
    ("cache", "none:x=1", "cache organisation none takes no parameters", "write just none"),
    ("ct", "msc:", "ends with ':' but gives no parameters", "sr_max"),
    ("destage", "no such:Thing", "unknown destage scheduler 'no such'", "module:Class"),
    ("destage", "vraid_no_such_module_xyz:Sched", "cannot import module", "current directory or on PYTHONPATH"),
    ("destage_order", "json:dumps", "'dumps' in 'json' is not a DestageOrder subclass", "subclass"),
    ("destage", "vraid.policies.destage.hlwm:Missing", "has no 'Missing'", "HlwmScheduler"),
    ("cache", "nowhere/cache.py:Mine", "there is no file 'nowhere/cache.py'", ".py file"),
])
def test_every_error_names_family_policy_key_and_value(key, spec, message, hint):
    with pytest.raises(VraidError) as err:
        registry.parse(key, spec)
    assert message in err.value.message
    assert hint in err.value.hint


def test_unknown_family_lists_the_families():
    with pytest.raises(VraidError, match="unknown policy family 'prefetchx'") as err:
        registry.parse("prefetchx", "x")
    assert "cache, destage_order, destage, ct" in err.value.hint


# -- a student's own policy in every family ---------------------------------------------------
def test_students_class_from_the_current_directory_in_every_family(student_dir):
    _, module = student_dir
    for key, cls in OWN.items():
        spec = registry.parse(key, f"{module}:{cls}")
        obj = registry.create(key, spec, CTX)
        assert isinstance(obj, registry.FAMILIES[key].base_class()) and type(obj).__name__ == cls
        assert spec.name == f"{module}:{cls}" and spec.target == f"{module}:{cls}"
    eager = registry.create("destage", f"{module}:Eager:n=3", CTX)
    assert eager.values == {"n": 3} and eager.spec == f"{module}:Eager:n=3"
    assert registry.create("destage", eager.spec).values == {"n": 3}   # spec round trip
    wide = registry.create("cache", f"{module}:Wide:ways=2", CTX)
    assert wide.ways == 2 and registry.spec_of(wide) == f"{module}:Wide:ways=2"
    same = registry.create("ct", f"{module}:Same:sw_max=5,verbose=yes", CTX)
    assert same.limits.sw_max == 5 and same.values == {"verbose": True}
    assert same.spec == f"{module}:Same:sr_max=4,sw_max=5,verbose=true"
    assert registry.parse("ct", same.spec).text == same.spec
    with pytest.raises(VraidError, match=f"cache organisation {module}:Wide: ways=9 is above 4"):
        registry.parse("cache", f"{module}:Wide:ways=9")
    with pytest.raises(VraidError, match="does not implement decide"):
        registry.parse("destage", f"{module}:Unfinished")
    with pytest.raises(VraidError, match="is not a DestageScheduler subclass"):
        registry.parse("destage", f"{module}:Backwards")   # an order is no scheduler
    with pytest.raises(VraidError, match="is not a ContiguityTransform subclass"):
        registry.parse("ct", f"{module}:NotAPolicy")
    with pytest.raises(VraidError, match="has no 'Nope'") as err:
        registry.parse("destage_order", f"{module}:Nope")
    assert "Backwards" in err.value.hint


def test_students_class_from_a_file_path_in_every_family(student_dir):
    tmp, module = student_dir
    sub = tmp / "pol"
    sub.mkdir()
    (sub / "mine.py").write_text(STUDENT)
    for key, cls in OWN.items():
        for path in ("pol/mine.py", str(sub / "mine.py")):
            obj = registry.create(key, f"{path}:{cls}", CTX)
            assert type(obj).__name__ == cls
    first = registry.policy_class(registry.parse("destage", "pol/mine.py:Eager"))
    assert registry.policy_class(registry.parse("destage", "pol/mine.py:Eager")) is first  # loaded once
    s = registry.create("destage", "pol/mine.py:Eager:n=4")
    assert s.spec == "pol/mine.py:Eager:n=4" and registry.create("destage", s.spec).values == {"n": 4}
    (sub / "broken.py").write_text("raise RuntimeError('oops')\n")
    with pytest.raises(VraidError, match="loading 'pol/broken.py' failed: RuntimeError: oops"):
        registry.parse("destage", "pol/broken.py:Eager")


def test_vraid_sim_finds_a_students_module_in_the_current_directory(tmp_path):
    (tmp_path / "mysched.py").write_text(STUDENT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = ["sim", "--requests", "300", "--disk-size", "8M", "--cache", "mysched:Wide:ways=2", "--cache-size", "1M",
            "--destage", "mysched:Eager:n=3", "--destage-order", "mine.py:Backwards", "--ct", "mysched:Same", "--json"]
    (tmp_path / "mine.py").write_text(STUDENT)
    r = subprocess.run([sys.executable, "-m", "vraid", *args], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["config"]["policies"]["destage"] == "mysched:Eager:n=3"
    assert out["metrics"]["host_writes"] > 0


# -- entry points ----------------------------------------------------------------------------
def _entry_points(mapping):
    def fake(*, group=None, **_kw):
        return [importlib.metadata.EntryPoint(name, value, group) for g, name, value in mapping if g == group]
    return fake


def test_installed_plugins_are_found_by_entry_point(student_dir, monkeypatch):
    tmp, module = student_dir
    sys.path.insert(0, str(tmp))
    monkeypatch.setattr(importlib.metadata, "entry_points", _entry_points([
        ("vraid.policies.destage", "eager", f"{module}:Eager"),
        ("vraid.policies.destage", "hlwm", f"{module}:Eager"),          # a built-in's name: ignored
        ("vraid.policies.destage_order", "broken", f"{module}:NotAPolicy"),
    ]))
    s = registry.create("destage", "eager:n=5")
    assert type(s).__name__ == "Eager" and s.values == {"n": 5}
    assert type(registry.create("destage", "hlwm")).__name__ == "HlwmScheduler"
    assert "eager" in registry.family("destage").names()
    with pytest.raises(VraidError) as err:
        registry.parse("destage", "nosuch")
    assert "eager" in err.value.hint
    infos = {p.name: p for p in describe("destage")}
    assert infos["eager"].origin.startswith("entry point") and infos["eager"].params[0].name == "n"
    with pytest.raises(VraidError, match="is not a DestageOrder subclass"):
        registry.parse("destage_order", "broken")
    assert "does not load" in {p.name: p for p in describe("destage_order")}["broken"].summary


# -- run-time swaps --------------------------------------------------------------------------
class _Cache:
    def __init__(self):
        self.organisation = registry.create("cache", "stripe", CTX)
        self.order = registry.create("destage_order", "lrw")
        self.scheduler = registry.create("destage", "hlwm")
        self.set_calls = []

    def set_order(self, order):
        self.set_calls.append(order)
        self.order = order


def test_current_and_install_walk_the_slots():
    engine = SimpleNamespace(cache=_Cache(), ct=None)
    assert running.current(engine) == {"cache": "stripe", "destage_order": "lrw",
                                        "destage": "hlwm:high=0.95,low=0.85,max_destages=4", "ct": "none",
                                        "queue_order": "none", "prefetch": "none",
                                        "placement": "static", "log": "none"}  # the fake has no members, reads
    assert running.install("destage_order", engine, "cscan") == "cscan"
    assert engine.cache.set_calls == [engine.cache.order]              # the holder's set_order
    assert running.install("ct", engine, "msc:sr_max=6,sw_max=7") == "msc:sr_max=6,sw_max=7"
    assert running.install("ct", engine, "msc:sw_max=2") == "msc:sr_max=6,sw_max=2"  # keeps limits in force
    with pytest.raises(VraidError, match="cannot change while the array runs"):
        running.install("cache", engine, "pbg")
    bare = SimpleNamespace(cache=None, ct=None)
    assert running.current(bare) == {"cache": "none", "ct": "none", "queue_order": "none", "prefetch": "none",
                                      "placement": "static", "log": "none"}
    with pytest.raises(VraidError, match="runs with --cache none") as err:
        running.install("destage", bare, "adaptive")
    assert "--cache pbg" in err.value.hint


# -- the schema ------------------------------------------------------------------------------
def test_schema_types_ranges_and_json():
    class P:
        params = {"a": (Fraction, 0.5, "a fraction"), "b": (Seconds, 1.0, "a time"),
                  "c": (int, 3, "count", (1, 9)), "d": Param("d", Regions, None, "regions", 1),
                  "e": (bool, False, "flag")}
    ps = schema(P)
    assert [p.range_text() for p in ps] == ["0..1", "", "1..9", ">= 1", ""]
    assert bind(ps, {"a": "25%", "b": "100ms", "c": "9", "d": "4;1-2", "e": "on"}, "x y") == \
        {"a": 0.25, "b": 0.1, "c": 9, "d": ((1, 2), (4, 4)), "e": True}
    assert [p.to_dict()["type"] for p in ps] == ["fraction", "seconds", "int", "regions", "bool"]
    with pytest.raises(VraidError, match="x y: c=10 is above 9"):
        bind(ps, {"c": 10}, "x y")
    with pytest.raises(VraidError, match="x y: b='soon' is not a duration"):
        bind(ps, {"b": "soon"}, "x y")


# -- what is generated from the table --------------------------------------------------------
def test_settings_flags_toml_ctl_and_sim_keys_come_from_the_table():
    from vraid.cli.common import add_policy_flags, policy_args
    from vraid.engine.host.live import CTL_KEYS
    from vraid.ondisk.config import KNOWN, ArrayConfig
    from vraid.sim.simulator import POLICY_KEYS

    keys = ["cache", "cache_size", "destage_order", "destage", "ct", "queue_order", "prefetch", "read_cache_size",
            "placement"]
    assert list(registry.settings()) == [*keys, "log", "log_size"]
    # the log disk is chosen at create: no vraid.toml default, no mount flag, SimConfig.log in a simulation
    assert list(registry.settings(at_create=False)) == keys and list(registry.settings(at_create=True)) == ["log", "log_size"]
    assert list(KNOWN) == ["image", *keys] and list(POLICY_KEYS) == keys
    assert list(CTL_KEYS) == ["destage_order", "destage", "ct"]
    p = argparse.ArgumentParser()
    add_policy_flags(p)
    args = p.parse_args(["--cache", "pbg", "--cache-size", "4M", "--destage-order", "fifo", "--ct", "msc"])
    assert policy_args(args) == {"cache": "pbg", "cache_size": "4M", "destage_order": "fifo", "ct": "msc"}
    cfg = ArrayConfig(uuid="u", policies={"destage": "adaptive"})
    assert (cfg.cache, cfg.destage, cfg.cache_size, cfg.policy("ct")) == ("none", "adaptive", "64M", "none")
    text = cfg.render("test")
    assert all(f'{k} = "' in text for k in keys)


def test_a_new_family_is_one_row(monkeypatch):
    row = registry.Family("tie_break", "tie break", "which of two equal units goes first", "vraid.policies.order",
                          "vraid.policies.order:DestageOrder", {"lrw": "vraid.policies.order:Lrw"}, "lrw",
                          runtime=True, slot="cache.tie", needs="cache")
    monkeypatch.setitem(registry.FAMILIES, "tie_break", row)
    from vraid.cli.common import add_policy_flags

    p = argparse.ArgumentParser()
    add_policy_flags(p)
    assert p.parse_args(["--tie-break", "lrw"]).tie_break == "lrw"
    assert "tie_break" in registry.settings()
    assert [f["key"] for f in describe_all()["families"]][-1] == "tie_break"
    engine = SimpleNamespace(cache=SimpleNamespace(tie=None), ct=None)
    assert running.install("tie_break", engine, "lrw") == "lrw" and engine.cache.tie.name == "lrw"


class TieBreak:
    """Base of a made-up family: which of two equal units goes first."""

    params: dict = {}

    def pick(self, a: int, b: int) -> int:
        raise NotImplementedError


class Lower(TieBreak):
    """the lower one"""

    name = "lower"

    def pick(self, a: int, b: int) -> int:
        return min(a, b)


class Boom(TieBreak):
    """raises"""

    name = "boom"

    def pick(self, a: int, b: int) -> int:
        raise RuntimeError("boom")


def test_a_new_family_costs_one_folder_and_one_row_the_builder_and_the_guard_follow(monkeypatch):
    """docs/policies.md "What a new family costs": with only a row (and its classes), the
    builder makes the policy, puts it in its slot behind the guard, and a policy that raises is
    replaced by the family's default, the fault recorded."""
    from vraid.engine.build import EngineConfig, build_engine

    here = __name__
    row = registry.Family("tie_break", "tie break", "which of two equal units goes first", here,
                          f"{here}:TieBreak", {"lower": f"{here}:Lower", "boom": f"{here}:Boom"}, "lower", slot="tie")
    monkeypatch.setitem(registry.FAMILIES, "tie_break", row)

    async def fallback() -> None:
        engine = build_engine(EngineConfig(G, policies={"tie_break": "boom"}))
        try:
            tie = engine.array.tie
            assert running.current(engine.array)["tie_break"] == "boom"
            assert tie.pick(7, 3) == 3  # Boom raised: Lower took over and answered the call
            assert running.current(engine.array)["tie_break"] == "lower"
            [fault] = engine.array.guard.faults
            assert (fault.family, fault.policy, fault.call, fault.fallback) == ("tie_break", "boom", "pick", "lower")
            assert "RuntimeError: boom" in fault.error
        finally:
            engine.close()

    async def stop() -> None:  # a simulation stops instead
        engine = build_engine(EngineConfig(G, policies={"tie_break": "boom"}, on_policy_fault="stop"))
        try:
            engine.array.tie.pick(1, 2)
        finally:
            engine.close()

    trio.run(fallback)
    with pytest.raises(VraidError, match="tie break boom failed in pick"):
        trio.run(stop)


def test_vraid_policies_json_schema(capsys):
    from vraid.cli.main import main

    assert main(["policies", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["key"] for f in doc["families"]] == list(registry.FAMILIES)
    for fam in doc["families"]:
        assert {"key", "title", "default", "runtime", "policies"} <= set(fam)
        assert isinstance(fam["runtime"], bool) and fam["default"] in [p["name"] for p in fam["policies"]]
        for pol in fam["policies"]:
            assert {"name", "target", "summary", "source", "params"} <= set(pol) and pol["summary"]
            for prm in pol["params"]:
                assert set(prm) == {"name", "type", "default", "doc", "range"} and prm["doc"]
    hlwm = next(p for p in doc["families"][2]["policies"] if p["name"] == "hlwm")
    assert hlwm["params"][0] == {"name": "high", "type": "fraction", "default": 0.95,
                                 "doc": "start destaging when the dirty fraction reaches this", "range": "0..1"}
    assert main(["policies", "ct", "--json"]) == 0
    ct = json.loads(capsys.readouterr().out)["families"]
    assert len(ct) == 1 and [p["name"] for p in ct[0]["policies"][1]["params"]] == \
        ["sr_max", "sw_max", "sr_except", "sw_except"]
    assert main(["policies", "destage-order"]) == 0 and "cscan" in capsys.readouterr().out
    assert main(["policies", "nope"]) == 1


def test_no_import_cycle_among_the_cli_modules():
    """Function-level imports count: the AST of every vraid/cli module, no import run."""
    import ast

    root = Path(__file__).resolve().parents[1] / "vraid" / "cli"
    mods = {p.stem for p in root.glob("*.py") if p.stem != "__init__"}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m in mods:
        for node in ast.walk(ast.parse((root / f"{m}.py").read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 1:
                    names = [base] if base else [a.name for a in node.names]
                elif base == "vraid.cli":
                    names = [a.name for a in node.names]
                elif base.startswith("vraid.cli."):
                    names = [base.split(".")[2]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[2] for a in node.names if a.name.startswith("vraid.cli.")]
            graph[m] |= {n for n in names if n in mods and n != m}

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = sorted(m for m in mods if m in reach(m))
    assert not cycles, {m: sorted(graph[m]) for m in cycles}
    assert graph["common"] == set()

"""A policy cannot end the process (hardening issue 33, item 4): ``SystemExit`` and
``GeneratorExit`` raised by a student's policy at import, at construction or in any call are
policy faults like any exception, and a command that loaded nothing never exits 0.

Here without a mount (the loader, the registry, the guard, ``vraid sim`` and ``vraid fuzz``);
tests/test_e2e_policy_exit.py has the mounted cases (``vraid ctl set``, ``vraid mount``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vraid.engine.guard import PolicyFault, PolicyGuard
from vraid.errors import VraidError
from vraid.policies import registry
from vraid.policies.destage.base import CacheState, Decision

AT_IMPORT = "import sys\nsys.exit(0)\n"

EXITS = '''
import sys
from vraid.policies.destage.hlwm import HlwmScheduler
from vraid.policies.ct.base import ContiguityTransform
from vraid.policies.placement.multibuffer import MultibufferPlacement


class X(HlwmScheduler):
    def decide(self, state):
        raise SystemExit(0)


class Gen(HlwmScheduler):
    def decide(self, state):
        raise GeneratorExit()


class Init(HlwmScheduler):
    def __init__(self, **values):
        sys.exit(0)


class Ct(ContiguityTransform):
    def __call__(self, plan):
        sys.exit(0)


class Place(MultibufferPlacement):
    def write(self, strip):
        raise SystemExit(3)
'''


@pytest.fixture
def plugins(tmp_path):
    (tmp_path / "exits.py").write_text(EXITS)
    (tmp_path / "at_import.py").write_text(AT_IMPORT)
    return tmp_path


def vraid_cli(*args, cwd: Path, timeout: float = 600, logged: bool = False) -> tuple[int, str]:
    """Exit status and output; no traceback unless ``logged`` (the guard logs a fault's to stderr)."""
    out = subprocess.run([sys.executable, "-m", "vraid", *map(str, args)], capture_output=True, text=True,
                         cwd=cwd, timeout=timeout)
    text = " ".join((out.stdout + out.stderr).split())
    assert logged or "Traceback" not in text, text
    return out.returncode, text


def state(waiters: int = 0) -> CacheState:
    return CacheState(now=0.0, dirty=1, capacity=10, waiters=waiters)


def test_a_file_that_exits_at_import_is_refused(plugins):
    with pytest.raises(VraidError, match="loading .*at_import.py' failed: SystemExit: 0"):
        registry.parse("destage", f"{plugins}/at_import.py:X")
    assert not [m for m in sys.modules if m.startswith("vraid_policy_at_import")]  # nothing half-loaded is kept


def test_a_class_that_exits_in_its_constructor_is_refused(plugins):
    with pytest.raises(VraidError, match="building it failed: SystemExit: 0"):
        registry.create("destage", f"{plugins}/exits.py:Init")


@pytest.mark.parametrize("cls, error", [("X", "SystemExit: 0"), ("Gen", "GeneratorExit")])
def test_an_exit_in_a_call_is_a_fault_and_the_default_takes_over(plugins, cls, error):
    guard = PolicyGuard("fallback")
    sched = guard.wrap("destage", registry.create("destage", f"{plugins}/exits.py:{cls}"))
    decision = sched.decide(state())
    assert isinstance(decision, Decision)
    assert [f.call for f in guard.faults] == ["decide"] and guard.faults[0].error.startswith(error)
    assert guard.faults[0].fallback.startswith("hlwm")
    assert isinstance(sched.decide(state()), Decision)  # the default goes on answering


def test_an_exit_in_a_call_stops_a_simulation_as_a_policy_fault(plugins):
    guard = PolicyGuard("stop")
    sched = guard.wrap("destage", registry.create("destage", f"{plugins}/exits.py:X"))
    with pytest.raises(PolicyFault, match="failed in decide: SystemExit: 0"):
        sched.decide(state())


@pytest.mark.parametrize("args, expect", [
    (["--cache", "stripe", "--destage", "at_import.py:X"], "failed: SystemExit: 0"),
    (["--cache", "stripe", "--destage", "exits.py:X"], "failed in decide: SystemExit: 0"),
    (["--cache", "stripe", "--destage", "exits.py:Init"], "building it failed: SystemExit: 0"),
    (["--ct", "exits.py:Ct"], "failed in __call__: SystemExit: 0"),
], ids=["import", "call", "init", "ct-call"])
def test_vraid_sim_with_an_exiting_policy_exits_1(plugins, args, expect):
    code, text = vraid_cli("sim", "--requests", "200", *args, cwd=plugins)
    assert code == 1 and expect in text and "hint:" in text, text


def test_vraid_sim_with_fallback_reports_the_exit_and_finishes(plugins):
    code, text = vraid_cli("sim", "--requests", "200", "--cache", "stripe", "--destage", "exits.py:X",
                           "--on-policy-fault", "fallback", cwd=plugins, logged=True)
    assert code == 0 and "policy fault:" in text and "SystemExit: 0" in text, text


def test_vraid_fuzz_of_a_placement_that_exits_at_import_exits_1(plugins):
    code, text = vraid_cli("fuzz", "--placement", "at_import.py:X", cwd=plugins)
    assert code == 1 and "placement at_import.py:X: loading" in text and "SystemExit: 0" in text, text


def test_vraid_fuzz_finds_a_placement_that_exits_in_a_call(plugins):
    code, text = vraid_cli("fuzz", "--placement", "exits.py:Place", "--examples", "2", "--seed", "1", cwd=plugins)
    assert code == 3 and "failed in write: SystemExit: 3" in text and "replay it:" in text, text


def test_a_spec_is_printed_as_written_not_as_an_emoji(plugins):
    code, text = vraid_cli("sim", "--ct", "/x/nosuch.py:X", cwd=plugins)
    assert code == 1 and "/x/nosuch.py:X: there is no file" in text and "\u274c" not in text, text


def test_an_exit_that_escapes_every_guard_is_reported_not_passed_on(plugins, monkeypatch):
    """The CLI's last line of defence: an exit raised by code outside vraid ends the command
    with status 1 and a message, never 0."""
    from vraid.cli import main as cli_main

    namespace: dict = {"__name__": "students_module"}
    exec("def run(args):\n    raise SystemExit(0)\n", namespace)  # noqa: S102 - a student's function
    parser = cli_main.build_parser()
    real = parser.parse_args

    def parse(argv=None):
        args = real(argv)
        args.func = namespace["run"]
        return args

    monkeypatch.setattr(cli_main, "build_parser", lambda: type("P", (), {"parse_args": staticmethod(parse)})())
    assert cli_main.main(["policies"]) == 1

"""A default ``vraid fuzz`` run reaches a policy's late calls (issue 35 item 2).

Schedulers that raise after their 50th, 100th and 300th ``decide`` must be found by the
default run (no --examples, no --steps), with a replay command that fails again. A scheduler
that counts in a module global must be found and replayed too: every example starts from the
module as it was imported (:mod:`vraid.testing.fuzz_fresh`). Nothing lands in the working
directory: hypothesis's files go to the vraid cache directory.

Each run stops at its first failing case; with the load of a shared machine one takes about
half a minute, so the seeds are fixed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vraid.testing.fuzz_budget import DEFAULT_EXAMPLES, DEFAULT_STEPS

PLANTED = '''
from vraid.policies.destage import DestageScheduler, Decision, must_drain

CALLS = 0


class Late(DestageScheduler):
    """Destages like a water-mark scheduler, and raises on call LATE + 1 of one object."""

    summary = "planted late fault"
    source = "test"
    params = {"late": (int, 100, "calls before the fault", (1, None))}

    def __init__(self, **params):
        super().__init__(**params)
        self.calls = 0

    def decide(self, state):
        self.calls += 1
        if self.calls > self.values["late"]:
            raise RuntimeError(f"planted after {self.values['late']} calls")
        busy = must_drain(state) or state.occupancy > 0.6
        return Decision(2 if busy and state.dirty else 0)


class GlobalLate(Late):
    """The same fault, counted in a module global (state kept outside the object)."""

    def decide(self, state):
        global CALLS
        CALLS += 1
        if CALLS > self.values["late"]:
            raise RuntimeError(f"planted after {self.values['late']} calls of the module")
        return Decision(2 if state.dirty else 0)
'''


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "planted.py").write_text(PLANTED)
    return tmp_path


def _fuzz(home: Path, *args: str) -> tuple[int, str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(home / "cache"))
    env.pop("HYPOTHESIS_PROFILE", None)  # the suite's CI profile (derandomized, no database) is not a student's
    run = subprocess.run([sys.executable, "-m", "vraid", "fuzz", *args], capture_output=True, text=True,
                         cwd=home, env=env, timeout=900)
    return run.returncode, run.stdout + run.stderr


def test_the_defaults_state_their_budget():
    assert (DEFAULT_EXAMPLES, DEFAULT_STEPS) == (10, 25)


@pytest.mark.parametrize("late, seed", [(50, 1), (100, 2), (300, 3)])
def test_a_default_run_finds_a_late_fault_and_prints_a_replay_that_fails_again(home, late, seed):
    rc, out = _fuzz(home, "--destage", f"planted.py:Late:late={late}", "--seed", str(seed))
    assert rc == 3, out
    assert f"RuntimeError: planted after {late} calls" in out
    # the replay of the shrunk example: an example runs the same way every time (the session
    # settles between calls and seeds trio's order of same-instant tasks), so hypothesis's re-run
    # of the shrunk example fails again and it gives a blob
    m = re.search(r"^  (vraid fuzz .* --replay \S+)$", out, re.M)
    assert m, f"no replay command in:\n{out}"
    args = m.group(1).split()[2:]
    assert not (home / ".hypothesis").exists()
    assert (home / "cache" / "vraid" / "fuzz").is_dir()
    rc2, again = _fuzz(home, *args)
    assert rc2 == 3 and f"planted after {late} calls" in again, again


def test_state_kept_in_a_module_global_is_reset_per_example_so_the_fault_replays(home):
    rc, out = _fuzz(home, "--destage", "planted.py:GlobalLate:late=400", "--seed", "5", "--case", "pbg-lrw")
    assert rc == 3, out
    assert "planted after 400 calls of the module" in out, out
    m = re.search(r"--replay (\S+)$", out, re.M)
    assert m, f"no replay blob in:\n{out}"
    rc2, again = _fuzz(home, "--destage", "planted.py:GlobalLate:late=400", "--case", "pbg-lrw", "--replay", m.group(1))
    assert rc2 == 3 and "planted after 400 calls of the module" in again, again

"""``vraid fuzz``: finds planted bugs in a student's policy, passes correct ones, refuses bad specs.

Kept quick: one case per run (``--case``), few examples and steps, and a short shrinking
budget; what is checked is real (the planted bug is found, the sequence printed replays it).
"""

from __future__ import annotations

import re
import textwrap

import pytest

from vraid.cli.main import main
from vraid.testing import fuzz

STUDENT = textwrap.dedent('''
    from vraid.policies.ct.base import ContiguityTransform
    from vraid.policies.ct.msc import transform_matrix
    from vraid.policies.destage.base import Decision, DestageScheduler


    class MyCt(ContiguityTransform):
        """A student's MSC: the read transform, then the write transform."""

        def __call__(self, plan):
            return plan.transform(transform_matrix(plan.transformed, plan.z, self.limits, parity=plan.parity), "myct")


    class DropsRead(MyCt):
        """Planted bug: drops the first read of a data cell (a read the plan needs)."""

        def __call__(self, plan):
            out = super().__call__(plan)
            m = [list(row) for row in out.transformed]
            for h, row in enumerate(m):
                for j, c in enumerate(row[:-1] if plan.parity else row):
                    if "r" in c:
                        m[h][j] = tuple(op for op in c if op != "r")
                        return plan.transform(tuple(tuple(r) for r in m), "drops-read")
            return out


    class ExtraRead(MyCt):
        """Planted bug, legal under eq. (6): reads a block of an idle column, one request more."""

        def __call__(self, plan):
            out = super().__call__(plan)
            m = [list(row) for row in out.transformed]
            for j in range(len(m[0]) - (1 if plan.parity else 0)):
                if not any(m[h][j] for h in range(len(m))):
                    for h in range(len(m)):
                        if plan.z[h][j] != "D":
                            m[h][j] = ("r",)
                            return plan.transform(tuple(tuple(r) for r in m), "extra")
            return out


    class Flaky(DestageScheduler):
        """Planted bug: raises once the cache is nearly full."""

        def decide(self, state):
            if state.dirty > 1 and state.dirty >= state.capacity - 1:
                raise ZeroDivisionError("planted")
            return Decision(2 if state.occupancy >= 0.5 or state.waiters else 0)


    class Lazy(DestageScheduler):
        """Planted bug: asks for a destage only above 90 %, even while writers wait."""

        def decide(self, state):
            return Decision(1 if state.occupancy > 0.9 else 0)


    class Eager(DestageScheduler):
        """Correct: destage whenever anything is dirty."""

        def decide(self, state):
            return Decision(1 if state.dirty else 0)
''')


@pytest.fixture
def student(tmp_path, monkeypatch):
    path = tmp_path / "mypol.py"
    path.write_text(STUDENT)
    monkeypatch.setattr(fuzz, "SHRINK_SECONDS", 3)
    return str(path)


def _fuzz(capsys, *argv: str) -> tuple[int, str]:
    rc = main(["fuzz", *argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_finds_a_ct_that_drops_a_needed_read_and_the_replay_fails_again(student, capsys):
    rc, out = _fuzz(capsys, "--ct", f"{student}:DropsRead", "--case", "stripe-lrw", "--examples", "10",
                    "--steps", "10", "--seed", "1")
    assert rc == fuzz_cli_found(), out
    assert "FAILED" in out and "dropped operations of the basic matrix" in out, out
    assert "state = FuzzCtCached()" in out and "state.teardown()" in out  # the shrunk steps
    replay = re.search(r"--replay (\S+)", out)
    assert replay, out
    rc, again = _fuzz(capsys, "--ct", f"{student}:DropsRead", "--case", "stripe-lrw", "--steps", "10",
                      "--replay", replay.group(1).strip("'"))
    assert rc == fuzz_cli_found() and "dropped operations of the basic matrix" in again, again
    rc, fixed = _fuzz(capsys, "--ct", f"{student}:MyCt", "--case", "stripe-lrw", "--steps", "10",
                      "--replay", replay.group(1).strip("'"))
    assert rc == 0 and "the replayed example passes now" in fixed, fixed


def test_finds_a_ct_that_adds_member_requests(student, capsys):
    rc, out = _fuzz(capsys, "--ct", f"{student}:ExtraRead", "--case", "stripe-lrw", "--examples", "10",
                    "--steps", "10", "--seed", "1")
    assert rc == fuzz_cli_found(), out
    assert "the transform added member requests" in out, out


def test_finds_a_raising_scheduler(student, capsys):
    rc, out = _fuzz(capsys, "--destage", f"{student}:Flaky", "--case", "stripe-lrw", "--examples", "10",
                    "--steps", "10", "--seed", "1")
    assert rc == fuzz_cli_found(), out
    assert "policy fault: destage scheduler" in out and "ZeroDivisionError: planted" in out, out
    assert "vraid fuzz --destage" in out and "--seed 1" in out


def test_finds_a_scheduler_that_lets_writers_wait(student, capsys):
    rc, out = _fuzz(capsys, "--destage", f"{student}:Lazy", "--case", "pbg-lrw", "--examples", "10",
                    "--steps", "10", "--seed", "1")
    assert rc == fuzz_cli_found(), out
    assert "asked for no destage" in out, out


@pytest.mark.parametrize("argv", [
    ("--ct", "{student}:MyCt", "--case", "stripe-lrw"),
    ("--ct", "msc", "--case", "wt-raid5-4d-s8K-b512-x16-ls"),
    ("--destage", "{student}:Eager", "--case", "stripe-cscan"),
    ("--destage", "adaptive:period=0.05", "--case", "pbg-fifo"),
])
def test_passes_correct_policies(student, capsys, argv):
    rc, out = _fuzz(capsys, *(a.format(student=student) for a in argv), "--examples", "3", "--steps", "10",
                    "--seed", "2")
    assert rc == 0, out
    assert "no failure in 3 examples" in out


@pytest.mark.parametrize("argv, message", [
    (("--ct", "nosuch"), "unknown contiguity transform 'nosuch'"),
    (("--ct", "none"), "there is no contiguity transform to fuzz"),
    (("--destage", "missing.py:Eager"), "there is no file 'missing.py'"),
    (("--destage", "{student}:Nope"), "has no 'Nope'"),
    (("--destage", "{student}:MyCt"), "is not a DestageScheduler subclass"),
    (("--destage", "hlwm:high=2"), "high"),
    (("--ct", "msc", "--examples", "0"), "--examples 0"),
    (("--ct", "msc", "--case", "nope"), "has no case 'nope'"),
    (("--ct", "msc", "--replay", "AAAA"), "--replay needs --case"),
    (("--ct", "msc", "--case", "stripe-lrw", "--replay", "garbage"), "not a failure hypothesis can replay"),
])
def test_bad_specs_are_clear_errors(student, capsys, argv, message):
    rc, out = _fuzz(capsys, *(a.format(student=student) for a in argv))
    assert rc == 1, out
    flat = " ".join(out.split())  # rich wraps the error at the terminal width
    assert message in flat, out
    assert "hint:" in flat


def test_a_family_flag_is_required(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["fuzz", "--examples", "3"])
    assert exc.value.code == 2


def test_every_family_has_cases():
    from vraid.policies import registry

    for key in registry.FAMILIES:
        names = [c.name for c in fuzz.cases(key, registry.FAMILIES[key].default if key not in ("ct", "cache", "log") else
                                            {"ct": "msc", "cache": "stripe", "log": "mcd:2"}[key], with_crashes=True)]
        assert names and len(set(names)) == len(names), (key, names)
        assert any(n.startswith("crash-") for n in names), key


def fuzz_cli_found() -> int:
    from vraid.cli.fuzz import FOUND

    return FOUND


def test_idle_scheduler_never_rechecks_at_now():
    """Found by `vraid fuzz --destage-order cscan`: host_idle rounds to just under ``idle`` and
    now + the rest rounded to now, so the destager asked again at once, forever (virtual time
    stood still)."""
    from vraid.policies.destage.base import CacheState
    from vraid.policies.destage.idle import IdleScheduler

    last = 1000.0
    now = last + 0.001
    state = CacheState(now=now, dirty=1, capacity=10, host_idle=now - last)
    assert state.host_idle < 0.001  # the rounding
    assert IdleScheduler(idle=0.001, high=0.8).decide(state).recheck > now

"""``vraid fuzz``: the model state machines with a student's policy plugged in (docs/fuzz.md).

For a policy of any family of :mod:`vraid.policies.registry`, :func:`cases` lists the machines
it is run under: every cache organisation and destage order it applies to, write-through where
it matters, and (``with_crashes``) the power-cut machine. :func:`run` runs each with hypothesis,
a case at a time, and stops at the first failure with hypothesis's shrunk sequence of steps,
the ``@reproduce_failure`` blob and the seed: :func:`replay` (``vraid fuzz ... --case C
--replay BLOB``) runs that one failing example again.

Every engine runs its policy guard in ``stop`` mode: a policy that raises or answers what its
family forbids is a failure here (on a mount it would be replaced by the default). The
family's own invariants are in :mod:`vraid.testing.fuzz_checks`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import DidNotReproduce, InvalidArgument
from hypothesis.reporting import with_reporter
from hypothesis.stateful import run_state_machine_as_test

from vraid.engine.chain import CacheConfig
from vraid.errors import VraidError
from vraid.policies import registry
from vraid.policies.placement import needs_directory
from vraid.testing.fuzz_budget import DEFAULT_EXAMPLES, DEFAULT_STEPS
from vraid.testing.fuzz_checks import PolicyFailure, find as _find
from vraid.testing.fuzz_fresh import ModuleState
from vraid.testing.fuzz_stretch import Stretch

#: families ``vraid fuzz`` takes, in the registry's order
FAMILIES = tuple(registry.FAMILIES)
#: wall seconds hypothesis may spend shrinking a failure (its own limit is 300 s; every example
#: here starts an engine, so shrinking is what takes the time of a failing run)
SHRINK_SECONDS = 20
#: the other policies of a cached case (a scheduler that destages early, so destages happen)
SCHEDULER = "hlwm:high=0.6,low=0.3"


@dataclass(frozen=True)
class Case:
    """One machine the policy runs under: ``make(workdir)`` builds a fresh machine."""

    name: str
    doc: str
    make: Callable[[Path], Any]


def _options(family: str, spec: str) -> dict[str, Any]:
    return {"policies": {family: spec}, "on_policy_fault": "stop"}


def _cached(name: str, doc: str, org: str, order: str, destage: str, options: dict, *, checks: bool,
            geometry=None) -> Case:
    """A write-back cache case; ``geometry``: a :class:`~vraid.testing.machines.Config` (the
    machines' RAID-5 GEOMETRY when None)."""
    from vraid.testing.fuzz_checks import DestageChecks
    from vraid.testing.machines import GEOMETRY, CachedArrayMatchesModel

    config = geometry or GEOMETRY
    unit = config.geometry().stripe_data_bytes
    cfg = CacheConfig(org, size=3 * unit, order=order, destage=destage)
    machine = type("FuzzCached", (Stretch, DestageChecks, CachedArrayMatchesModel), {}) if checks else CachedArrayMatchesModel
    return Case(name, doc, lambda workdir: machine(cfg, "memory", workdir, options=options, geometry=config))


def _level(level: int, org: str, order: str, destage: str, options: dict) -> Case:
    """The same policy over another RAID level (``machines.LEVEL_CONFIGS``: RAID-6 with md's
    asymmetric syndrome order, RAID-4, and the mirrors RAID-1 and RAID-10; docs/levels.md)."""
    from vraid.testing.machines import LEVEL_CONFIGS

    return _cached(f"raid{level}-{org}-{order}", f"RAID-{level}, {org} cache, {order} order", org, order, destage, options,
                   checks=True, geometry=LEVEL_CONFIGS[level])


def _raid10_odd(org: str, order: str, destage: str, options: dict) -> Case:
    """RAID-10 on five members (``machines.RAID10_ODD``: md's near-2 on an odd count, a stripe
    of two strips of every member; docs/levels.md)."""
    from vraid.testing.machines import RAID10_ODD

    return _cached(f"raid10-odd-{org}-{order}", f"RAID-10 on 5 members, {org} cache, {order} order", org, order, destage,
                   options, checks=True, geometry=RAID10_ODD)


def _settled(base: type, *, stretch: bool = False) -> type:
    """``base`` with :class:`~vraid.testing.fuzz_checks.Settle` (and the long ``stretch`` rule)."""
    from vraid.testing.fuzz_checks import Settle

    return type(f"Fuzz{base.__name__}", (Stretch, Settle, base) if stretch else (Settle, base), {})


def _crash_cases(options: dict, modes: tuple[str, ...]) -> list[Case]:
    from vraid.testing.crash_machine import CrashMachine

    CrashMachine = _settled(CrashMachine)  # noqa: N806

    return [Case(f"crash-{mode}", f"power cuts mid-write ({mode}), reassembly, NVRAM replay and bitmap resync",
                 lambda workdir, mode=mode: CrashMachine(mode, workdir, options=options)) for mode in modes]


def _ct_cases(spec: str, options: dict) -> list[Case]:
    from vraid.testing import ct_machines as ctm
    from vraid.testing.fuzz_checks import CtChecks

    options = {k: v for k, v in options.items() if k != "policies"}  # the machine installs the transform itself
    cached = type("FuzzCtCached", (Stretch, CtChecks, ctm.CtCachedMatchesModel), {"ct_spec": spec})
    wt = type("FuzzCtArray", (Stretch, CtChecks, ctm.CtArrayMatchesModel), {"ct_spec": spec})
    unit = ctm.CT_GEOMETRY.geometry().stripe_data_bytes
    out = []
    for org in ("stripe", "pbg"):
        for order in ("lrw", "cscan"):
            cfg = CacheConfig(org, size=3 * unit, order=order, destage=SCHEDULER)
            out.append(Case(f"{org}-{order}", f"{org} cache, {order} order, limits drawn per run",
                            lambda workdir, cfg=cfg, key=f"{org}-{order}": cached(cfg, "memory", workdir, key, options=options)))
    for config in ctm.WT_CONFIGS:
        out.append(Case(f"wt-{config.id}", f"write-through {config.id}, limits drawn per run",
                        lambda workdir, config=config: wt(config, "memory", workdir, f"wt-{config.id}", options=options)))
    return out


def _read_cases(prefetch: str, options: dict) -> list[Case]:
    from vraid.testing.machines import CachedArrayMatchesModel, GEOMETRY
    from vraid.testing.read_machines import WriteThroughModel, read_cached

    unit = GEOMETRY.geometry().stripe_data_bytes
    out = [Case("write-through", "write-through, a read cache, members taking 0-2 ms per request",
                lambda workdir: _settled(read_cached(WriteThroughModel, prefetch), stretch=True)(
                    None, "memory", workdir, options=options))]
    for org in ("stripe", "pbg"):
        cfg = CacheConfig(org, size=3 * unit, destage=SCHEDULER)
        out.append(Case(org, f"{org} write cache, a read cache, members taking 0-2 ms per request",
                        lambda workdir, cfg=cfg: _settled(read_cached(CachedArrayMatchesModel, prefetch), stretch=True)(
                            cfg, "memory", workdir, options=options)))
    return out


def _placement_cases(spec: str, options: dict, with_crashes: bool = False) -> list[Case]:
    """A remapped array (seed 004) under the placement: reads, flushes, clean remounts and
    crashes against the model (:mod:`vraid.testing.placed_machines`; crashes are always on);
    ``with_crashes``: power cuts too (:mod:`vraid.testing.placed_crash_machine`)."""
    from vraid.testing.placed_crash_machine import PlacedCrashMachine
    from vraid.testing.placed_machines import CASES, PlacedArrayMatchesModel

    options = {k: v for k, v in options.items() if k != "policies"}  # the machine installs the placement
    placed = type("FuzzPlacedArray", (Stretch, PlacedArrayMatchesModel), {})
    seen, out = set(), []
    for config, _builtin in CASES:
        if config in seen:
            continue
        seen.add(config)
        out.append(Case(config.id, f"{config.id}: writes, reads, flushes, remounts and crashes against the model",
                        lambda workdir, config=config: placed(config, spec, workdir, options=options)))
    if with_crashes:
        machine = _settled(PlacedCrashMachine)
        out.append(Case("crash-placement", "power cuts during writes, flushes and cleanings, reassembly, the directory "
                        "recovered and the bitmap resynced; every block checked",
                        lambda workdir: machine(spec, workdir, options=options)))
    return out


def _log_cases(spec: str) -> list[Case]:
    """The log disk (seed 002) made with the configuration, against the model with power cuts
    at random points (:mod:`vraid.testing.log_machine`; a log is about crashes, so always)."""
    from vraid.testing.log_machine import LogCrashMachine

    machine = _settled(LogCrashMachine)
    return [Case("crash-log", "writes, fsyncs, level-1 and level-2 destages, remounts and power cuts; nothing "
                 "fsynced lost, scrub clean after recovery", lambda workdir: machine(spec, workdir))]


def cases(family: str, spec: str, *, with_crashes: bool = False) -> list[Case]:
    """The machines a policy of ``family`` given by ``spec`` runs under (see docs/fuzz.md)."""
    from vraid.testing.machines import GEOMETRY, ORDERS, ORGS

    options = _options(family, spec)
    if family == "destage":
        out = [_cached(f"{org}-{order}", f"{org} cache, {order} order", org, order, spec, options, checks=True)
               for org in ORGS for order in ORDERS] + [_level(n, "stripe", "lrw", spec, options) for n in (6, 10)]
        out.append(_raid10_odd("stripe", "lrw", spec, options))
        return out + (_crash_cases(options, ("nvram",)) if with_crashes else [])
    if family == "destage_order":
        out = [_cached(f"{org}-{name}", f"{org} cache, {sched} scheduler", org, spec, sched, options, checks=True)
               for org in ORGS for name, sched in (("hlwm", SCHEDULER), ("idle", "idle:idle=0.001,high=0.8"))]
        out += [_level(n, "pbg", spec, SCHEDULER, options) for n in (6, 4)]
        return out + (_crash_cases(options, ("nvram",)) if with_crashes else [])
    if family == "cache":
        out = [_cached(f"{order}", f"this organisation, {order} order", spec, order, SCHEDULER, options, checks=True)
               for order in ORDERS] + [_level(n, spec, "lrw", SCHEDULER, options) for n in (6, 1)]
        return out + (_crash_cases(options, ("nvram",)) if with_crashes else [])
    if family == "ct":
        return _ct_cases(spec, options) + (_crash_cases(options, ("write-through", "nvram")) if with_crashes else [])
    if family == "placement" and needs_directory(spec):
        return _placement_cases(spec, options, with_crashes)
    if family in ("queue_order", "placement"):
        return _read_cases("none", options) + (_crash_cases(options, ("write-through", "nvram")) if with_crashes else [])
    if family == "log":
        return _log_cases(spec)
    if family == "prefetch":
        crash = options | {"read_cache_size": 16 * GEOMETRY.geometry().strip_size}
        options = {k: v for k, v in options.items() if k != "policies"}  # read_cached installs it
        return _read_cases(spec, options) + (_crash_cases(crash, ("write-through", "nvram")) if with_crashes else [])
    raise VraidError(f"vraid fuzz has no machines for the {family} family", f"families: {', '.join(FAMILIES)}")


def check(family: str, spec: str) -> str:
    """The canonical spec, after checking it (imports a student's class).

    Raises:
        VraidError: an unknown family, a bad spec, a class that does not load, or "none"
            where there is no policy to fuzz.
    """
    fam = registry.family(family)
    checked = registry.parse(family, spec)
    if checked.target is None:
        raise VraidError(f"{fam.flag} {spec}: there is no {fam.title} to fuzz",
                         f"give a policy: one of {', '.join(n for n in fam.names() if n != 'none')}, "
                         "or your own module:Class or file.py:Class")
    return checked.text


# -- running ---------------------------------------------------------------------------------
@dataclass
class Failure:
    """The first failure found: the case, the error, hypothesis's report of the shrunk steps."""

    case: str
    error: BaseException
    report: list[str] = field(default_factory=list)
    blob: str | None = None

    def headline(self) -> str:
        from vraid.engine.guard import PolicyFault

        fault = _find(self.error, PolicyFault)
        if fault is not None:
            return f"policy fault: {fault.message}"
        stopped = _find(self.error, PolicyFailure)
        if stopped is not None:
            return str(stopped)
        inner = _find(self.error, AssertionError) or _root(self.error)
        return f"{type(inner).__name__}: {inner}"

    def traceback(self) -> str:
        import traceback

        from vraid.engine.guard import PolicyFault

        fault = _find(self.error, PolicyFault) or _find(self.error, PolicyFailure)
        if fault is not None and fault.traceback:
            return fault.traceback
        return "".join(traceback.format_exception(self.error))


@dataclass
class FuzzResult:
    """What :func:`run` did: the checked spec, examples per case, the seed, the cases run (up to
    the failing one) and the failure, if any."""

    family: str
    spec: str
    examples: int
    seed: int
    cases: list[str]
    failure: Failure | None = None


def _root(exc: BaseException) -> BaseException:
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        elif exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            break
    return exc


#: lines of hypothesis's report left out: its header and the settle invariant after every step
_NOISE = ("Failing test case: <state machine>", "state.settled()", "state.never_more_member_requests()")
#: the start of hypothesis's own notes about slow shrinking (said once, in our words, instead)
_SLOW_SHRINK = ("WARNING: Hypothesis has spent more than", "PLEASE REPORT THIS")


def cache_dir() -> Path:
    """Where ``vraid fuzz`` keeps hypothesis's files (its example database, its caches): a
    ``vraid/fuzz`` folder in ``$XDG_CACHE_HOME`` (default ``~/.cache``), never the working
    directory. The database lets a second run try the failures of the first one first."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vraid" / "fuzz"


def _failure_of(case: Case, exc: BaseException, lines: list[str]) -> Failure:
    """The finding: hypothesis's notes (the shrunk steps, the draws, our notes) and the blob."""
    blob, steps = None, []
    for line in [*lines, *getattr(exc, "__notes__", ())]:
        m = re.search(r"@reproduce_failure\('[^']*', b'([^']*)'\)", line)
        if m:
            blob = m.group(1)
        elif line.strip().startswith(_SLOW_SHRINK):
            if not steps or not steps[0].startswith("(shrinking stopped"):
                steps.insert(0, f"(shrinking stopped after {SHRINK_SECONDS} s: a shorter sequence may fail too)")
        elif line.strip() not in _NOISE:
            steps += line.rstrip().splitlines()
    return Failure(case.name, exc, steps, blob)


def _settings(examples: int, steps: int) -> settings:
    return settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                    database=DirectoryBasedExampleDatabase(cache_dir() / "examples"),
                    print_blob=True, report_multiple_bugs=False, verbosity=Verbosity.normal,
                    phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
                    suppress_health_check=list(HealthCheck))


def _run_case(case: Case, workdir: Path, s: settings, seed: int, blob: str | None,
              fresh: ModuleState | None = None) -> Failure | None:
    def factory():
        if fresh is not None:
            fresh.restore()  # every example starts from the module as it was imported
        return case.make(workdir)

    factory = hypothesis.seed(seed)(factory)
    if blob is not None:
        factory = hypothesis.reproduce_failure(hypothesis.__version__, blob.encode())(factory)
    lines: list[str] = []
    from hypothesis.internal.conjecture import engine

    limit, engine.MAX_SHRINKING_SECONDS = engine.MAX_SHRINKING_SECONDS, SHRINK_SECONDS
    with with_reporter(lines.append):
        try:
            run_state_machine_as_test(factory, settings=s)
        except DidNotReproduce:
            return None  # the replayed example passes now (fixed, or another hypothesis/--steps)
        except InvalidArgument as exc:
            if blob is None:
                raise
            raise VraidError(f"--replay {blob}: not a failure hypothesis can replay ({exc})",
                             "copy the BLOB of the replay command a failure printed") from None
        except Exception as exc:  # noqa: BLE001 - whatever the machine or the policy raised is the finding
            return _failure_of(case, exc, lines)
        finally:
            engine.MAX_SHRINKING_SECONDS = limit
    return None


def run(family: str, spec: str, *, examples: int = DEFAULT_EXAMPLES, seed: int = 0, steps: int = DEFAULT_STEPS,
        with_crashes: bool = False, case: str | None = None, blob: str | None = None,
        progress: Callable[[str], None] | None = None) -> FuzzResult:
    """Fuzz ``spec`` of ``family`` (see the module docstring); stops at the first failure.

    Raises:
        VraidError: a bad family, spec, case name or count (before anything runs).
    """
    spec = check(family, spec)
    if examples < 1:
        raise VraidError(f"--examples {examples}: give at least 1", "e.g. --examples 20")
    if steps < 1:
        raise VraidError(f"--steps {steps}: give at least 1", f"e.g. --steps {DEFAULT_STEPS}")
    todo = cases(family, spec, with_crashes=with_crashes)
    if case is not None:
        named = [c for c in todo if c.name == case]
        if not named:
            raise VraidError(f"{registry.family(family).flag} has no case {case!r}",
                             f"cases: {', '.join(c.name for c in todo)} (crash-* with --with-crashes)")
        todo = named
    if blob is not None and len(todo) != 1:
        raise VraidError("--replay replays one case", "give --case NAME, as the failure's replay command does")
    s = _settings(1 if blob is not None else examples, steps)
    result = FuzzResult(family, spec, examples, seed, [c.name for c in todo])
    workdir = Path(tempfile.mkdtemp(prefix="vraid-fuzz-"))
    fresh = ModuleState(registry.policy_class(registry.parse(family, spec)))
    set_hypothesis_home_dir(cache_dir())  # hypothesis's own caches too: nothing in the working directory
    try:
        for c in todo:
            if progress is not None:
                progress(f"{c.name}: {c.doc}")
            result.failure = _run_case(c, workdir, s, seed, blob, fresh)
            if result.failure is not None:
                result.cases = result.cases[: result.cases.index(c.name) + 1]
                break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        set_hypothesis_home_dir(None)
    return result


def replay(family: str, spec: str, case: str, blob: str, *, steps: int = DEFAULT_STEPS) -> None:
    """Run the failing example ``blob`` of ``case`` again and raise what it raises (the
    Python way of ``vraid fuzz --FAMILY SPEC --case CASE --replay BLOB``)."""
    result = run(family, spec, case=case, blob=blob, steps=steps)
    if result.failure is not None:
        raise result.failure.error

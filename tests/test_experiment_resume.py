"""A sweep that is interrupted resumes without redoing its finished runs (issue 36, item 2),
and sizes by name (item 3): vraid.sim.experiment.store, .sizes, .runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vraid.errors import VraidError
from vraid.sim.experiment import get, stride
from vraid.sim.experiment.runner import run_experiment
from vraid.sim.experiment.sizes import PAPER, SIZES, specs_for
from vraid.sim.experiment.store import STORE_DIR, RunStore, code_identity, run_key

PRESET = "st39175fc"


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the experiment wrote but meta.json (its wall time differs) and the store."""
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "meta.json"}


@pytest.fixture
def small(monkeypatch) -> list[str]:
    """stride's quick runs on one disk: three runs of a few tenths of a second each."""
    original = stride.runs

    def runs(quick: bool):
        return [s for s in original(quick) if s["preset"] == PRESET]

    monkeypatch.setattr(stride, "runs", runs)
    return [s["id"] for s in runs(True)]


def test_an_interrupted_sweep_resumes_with_the_rest_only(tmp_path, monkeypatch, small):
    whole = run_experiment("stride", tmp_path / "whole", size="quick", jobs=1)
    assert whole.ran == len(small) and whole.resumed == 0
    real = stride.run
    ran: list[str] = []

    def cut_after_two(spec):
        if len(ran) == 2:
            raise KeyboardInterrupt  # Ctrl-C in the middle of the third run
        ran.append(spec["id"])
        return real(spec)

    monkeypatch.setattr(stride, "run", cut_after_two)
    with pytest.raises(KeyboardInterrupt):
        run_experiment("stride", tmp_path / "cut", size="quick", jobs=1)
    assert not (tmp_path / "cut" / "results.json").exists()
    assert len(list((tmp_path / "cut" / STORE_DIR / "stride").glob("*.json"))) == 2

    def counted(spec):
        ran.append(spec["id"])
        return real(spec)

    monkeypatch.setattr(stride, "run", counted)
    ran.clear()
    calls: list[tuple] = []
    again = run_experiment("stride", tmp_path / "cut", size="quick", jobs=1, progress=lambda *c: calls.append(c))
    assert ran == small[2:]                                   # only the rest ran
    assert again.resumed == 2 and again.ran == len(small) - 2
    assert calls[0] == (2, len(small), "", "")                # the stored runs count as done from the start
    assert outputs(tmp_path / "cut") == outputs(tmp_path / "whole")
    meta = json.loads((tmp_path / "cut" / "meta.json").read_text())
    assert meta["resumed"] == 2 and meta["size"] == "quick" and meta["code"] == code_identity()

    ran.clear()                                               # everything stored: nothing runs
    assert run_experiment("stride", tmp_path / "cut", size="quick", jobs=1).ran == 0 and ran == []
    assert outputs(tmp_path / "cut") == outputs(tmp_path / "whole")
    ran.clear()                                               # --fresh: everything again
    fresh = run_experiment("stride", tmp_path / "cut", size="quick", jobs=1, fresh=True)
    assert ran == small and fresh.resumed == 0
    assert outputs(tmp_path / "cut") == outputs(tmp_path / "whole")


def test_a_run_that_fails_keeps_the_finished_ones(tmp_path, monkeypatch, small):
    real = stride.run

    def fails_on_the_third(spec):
        if spec["id"] == small[2]:
            raise RuntimeError("a worker died")
        return real(spec)

    monkeypatch.setattr(stride, "run", fails_on_the_third)
    with pytest.raises(RuntimeError):
        run_experiment("stride", tmp_path, size="quick", jobs=1)
    monkeypatch.setattr(stride, "run", real)
    assert run_experiment("stride", tmp_path, size="quick", jobs=1).resumed == 2


def test_the_key_is_the_experiment_spec_version_and_code(tmp_path):
    spec = stride.runs(True)[0]
    key = run_key("stride", spec, "abc")
    assert key == run_key("stride", dict(spec), "abc")
    assert len({key, run_key("prefetch", spec, "abc"), run_key("stride", spec, "abd"),
                run_key("stride", {**spec, "passes": 3}, "abc")}) == 4
    store = RunStore(tmp_path, "stride", "abc")
    record = store.save(spec, {"x": [1.5, 2]}, worker="w", seconds=1.25)
    assert store.load(spec) == record and record["output"] == {"x": [1.5, 2]} and record["worker"] == "w"
    assert RunStore(tmp_path, "stride", "other code").load(spec) is None
    store.path(spec).write_text('{"output": ')  # a file cut short is not a finished run
    assert store.load(spec) is None


def test_sizes_by_name():
    assert SIZES == ("quick", "default", "paper") and set(PAPER) == {"stride", "prefetch", "msc-ct", "vc-raid",
                                                                      "adaptive-hlwm", "multibuffer", "levels"}
    prefetch = get("prefetch")
    assert specs_for(prefetch, "prefetch", "quick") == prefetch.runs(True)
    assert specs_for(prefetch, "prefetch", "default") == prefetch.runs(False)
    paper = specs_for(prefetch, "prefetch", "paper")
    fig8 = [s for s in paper if s["id"].startswith(("128k-", "256k-"))]  # Fig. 8's sweep over the readers
    assert {s["total"] for s in paper} == {8 << 30} and {s["streams"] for s in fig8} == {1, 2, 4, 8, 16, 32, 64}
    mb = specs_for(get("multibuffer"), "multibuffer", "paper")
    assert {(s["requests"], s["warmup"]) for s in mb} == {(120_000, 70_000)}
    assert {s["scale"] for s in specs_for(get("msc-ct"), "msc-ct", "paper") if "scale" in s} == {1}  # (eq. (1) has none)
    assert {s["nw"] for s in specs_for(get("adaptive-hlwm"), "adaptive-hlwm", "paper")} == {4096}
    # an option given wins over the size's own
    assert {s["total"] for s in specs_for(prefetch, "prefetch", "paper", {"total": 1 << 30})} == {1 << 30}
    with pytest.raises(VraidError, match="unknown size"):
        specs_for(prefetch, "prefetch", "huge")


def test_a_paper_run_writes_beside_the_default_where_the_runs_are_the_same():
    from vraid.cli.sweep import paper_is_default

    same = {name for name in PAPER if paper_is_default(get(name), name)}
    assert same == {"stride", "levels", "adaptive-hlwm"}  # their default is the paper's scale (vc-raid's tree is not)
    # a part of vc-raid's paper sweep that both sizes share (the floor ablation runs no tree) is still
    # the paper sweep's: it writes to results/vc-raid/paper, never over the default's committed results
    vc, floors = get("vc-raid"), {"configs": ["raid0-floor", "raid5-floor"]}
    assert specs_for(vc, "vc-raid", "paper", floors) == specs_for(vc, "vc-raid", "default", floors)
    assert not paper_is_default(vc, "vc-raid")


@pytest.mark.parametrize("identity, printed", [
    ("0123456789abcdef0123456789abcdef01234567", "0123456"),
    ("0123456789abcdef0123456789abcdef01234567+src:feedbeef", "0123456 + uncommitted changes"),
    ("src:feedbeef", "src:feedbeef"),
])
def test_a_report_prints_the_code_meta_json_records(monkeypatch, identity, printed):
    """results.md's "Produced by commit" is meta.json's ``code`` (the commit that last changed
    the sources, not HEAD at render time), short."""
    from vraid.sim.experiment import store

    monkeypatch.setattr(store, "code_identity", lambda: identity)
    assert store.source_commit() == printed


# ---------------------------------------------------------------------- a re-analysis (--runs-of)
OLD = "feedface" * 5  # the code that made the stored runs (a commit, as code_identity gives one)


def _as_if_made_by(out: Path, experiment: str, identity: str) -> None:
    """Move every stored run of ``out`` to ``identity``'s keys, as if that code had made them."""
    here = RunStore(out, experiment)
    there = RunStore(out, experiment, identity)
    for path in list(here.dir.glob("*.json")):
        rec = json.loads(path.read_text())
        if rec["code"] == here.identity:
            there.save(rec["spec"], rec["output"], worker=rec["worker"], seconds=rec["seconds"])
            path.unlink()


def test_runs_of_writes_the_report_from_another_codes_runs(tmp_path, monkeypatch, small):
    made = run_experiment("stride", tmp_path, size="quick", jobs=1)
    before = outputs(tmp_path)
    _as_if_made_by(tmp_path, "stride", OLD)
    for f in before:
        (tmp_path / f).unlink()

    def no_run(spec):  # a re-analysis runs nothing
        raise AssertionError(f"ran {spec['id']}")

    monkeypatch.setattr(stride, "run", no_run)
    again = run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD[:7])
    assert again.ran == 0 and again.resumed == made.ran
    after = outputs(tmp_path)
    assert after["results.json"] == before["results.json"]  # the rows are the same code's here
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["runs_code"] == OLD and meta["code"] == code_identity()
    md = after["results.md"].decode()
    assert f"{OLD[:7]} (the runs); " in md and "(this report's rows)" in md
    from vraid.sim.experiment.store import source_commit

    assert "(the runs)" not in source_commit()  # only while the report is written


def test_runs_of_refuses_what_it_cannot_report(tmp_path, small):
    run_experiment("stride", tmp_path, size="quick", jobs=1)
    _as_if_made_by(tmp_path, "stride", OLD)
    with pytest.raises(VraidError, match="was made by code 'beefcafe'"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of="beefcafe")
    with pytest.raises(VraidError, match="--runs-of with --fresh"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD, fresh=True)
    gone = next(RunStore(tmp_path, "stride", OLD).dir.glob("*.json"))
    gone_id = json.loads(gone.read_text())["id"]
    gone.unlink()
    with pytest.raises(VraidError, match=f"1 of {len(small)} runs of stride \\(quick\\) are not stored.*{gone_id}"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD)
    assert len(list(RunStore(tmp_path, "stride", OLD).dir.glob("*.json"))) == len(small) - 1  # nothing made
    with pytest.raises(VraidError, match="no run of stride stored"):  # and no directory made for nothing
        run_experiment("stride", tmp_path / "none", size="quick", jobs=1, runs_of=OLD)
    assert not (tmp_path / "none").exists()


NEW = "beefcafe" * 5  # a second code that made the runs the first could not (vc-raid's paper store)


def test_runs_of_two_codes_reads_each_run_from_the_first_code_that_has_it(tmp_path, monkeypatch, small):
    """--runs-of OLD,NEW: a sweep made partly by one code and partly by another (a fix in the
    middle of a day-long real-time sweep) is reported from both, results.md naming each code's
    share and meta.json which runs each made; a code named twice, or one that adds nothing, is
    refused, and a run neither stored is missing."""
    run_experiment("stride", tmp_path, size="quick", jobs=1)
    before = outputs(tmp_path)
    _as_if_made_by(tmp_path, "stride", OLD)
    old, new = RunStore(tmp_path, "stride", OLD), RunStore(tmp_path, "stride", NEW)
    specs = stride.runs(True)
    moved = specs[-1]
    rec = old.load(moved)
    new.save(moved, rec["output"], worker=rec["worker"], seconds=rec["seconds"])
    old.path(moved).unlink()
    for f in before:
        (tmp_path / f).unlink()
    monkeypatch.setattr(stride, "run", lambda spec: pytest.fail(f"ran {spec['id']}"))
    with pytest.raises(VraidError, match=f"1 of {len(specs)} runs .* not stored for code feedfacefeed: {moved['id']}"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD[:7])
    again = run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=f"{OLD[:7]}, {NEW[:8]}")
    assert again.ran == 0 and outputs(tmp_path)["results.json"] == before["results.json"]
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["runs_code"] == [OLD, NEW]
    assert meta["runs_by"] == {OLD: [s["id"] for s in specs[:-1]], NEW: [moved["id"]]}
    md = (tmp_path / "results.md").read_text()
    assert len(specs) == 5  # more than 4 runs: OLD's share is counted, NEW's named
    assert f"{OLD[:7]} (4 of the 5 runs), {NEW[:7]} (1: {moved['id']}) (the runs); " in md
    with pytest.raises(VraidError, match="names code beefcafebeef twice"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=f"{NEW},{OLD},{NEW[:9]}")
    with pytest.raises(VraidError, match="names an empty commit"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=f"{OLD},")
    old.save(moved, rec["output"], worker=rec["worker"], seconds=rec["seconds"])  # OLD has every run now
    with pytest.raises(VraidError, match="code beefcafebeef stored no run of this sweep"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=f"{OLD},{NEW}")


def test_fill_makes_the_missing_runs_with_this_code_once_it_remakes_one_the_same(tmp_path, monkeypatch, small):
    """--runs-of OLD --fill: the runs OLD did not store (new runs new rows need) are made by this
    code, but first it remakes the stored runs of OLD most like them (every one that ties, at most
    three) and must find every number the same: for a missing Fig. 9 write curve, the same curve
    one command at a time (the queue ablation's run: every setting but ``tcq`` in common), not the
    read curve or Fig. 1."""
    run_experiment("stride", tmp_path, size="quick", jobs=1)
    before = outputs(tmp_path)
    _as_if_made_by(tmp_path, "stride", OLD)
    old = RunStore(tmp_path, "stride", OLD)
    gone_id = f"fig9-{PRESET}-write"
    old.path(next(s for s in stride.runs(True) if s["id"] == gone_id)).unlink()
    real = stride.run
    ran: list[str] = []

    def counted(spec):
        ran.append(spec["id"])
        return real(spec)

    monkeypatch.setattr(stride, "run", counted)
    again = run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD, fill=True)
    checked = ran[0]
    assert ran == [f"abl-tcqoff-fig9-{PRESET}-write", gone_id] and again.ran == 1
    assert outputs(tmp_path)["results.json"] == before["results.json"]  # the same numbers either way
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["runs_code"] == OLD and meta["filled"] == {"runs": [gone_id], "checked": [checked]}
    md = (tmp_path / "results.md").read_text()
    assert f"1 of them ({gone_id}) made by this code, which remade the stored run {checked}" in md
    assert RunStore(tmp_path, "stride").load(next(s for s in stride.runs(True) if s["id"] == gone_id))
    ran.clear()  # stored under this code's key: the same command again makes only the check
    assert run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD, fill=True).ran == 0
    assert ran == [checked]


def test_fill_refuses_a_code_that_remakes_a_run_differently(tmp_path, monkeypatch, small):
    run_experiment("stride", tmp_path, size="quick", jobs=1)
    _as_if_made_by(tmp_path, "stride", OLD)
    old = RunStore(tmp_path, "stride", OLD)
    next(iter(sorted(old.dir.glob("*.json")))).unlink()
    stored = len(list(old.dir.glob("*.json")))
    with pytest.raises(VraidError, match="--fill without --runs-of"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, fill=True)
    real = stride.run

    def changed(spec):  # a code whose engine moved: one number differs
        out = real(spec)
        out["points"][-1]["seconds"] *= 1.01
        return out

    monkeypatch.setattr(stride, "run", changed)
    with pytest.raises(VraidError, match="remade run .* and its points\\[.*\\]\\.seconds differs"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD, fill=True)
    assert len(list(old.dir.glob("*.json"))) == stored  # nothing made (the store holds every code's runs)
    monkeypatch.setattr(stride, "run", real)
    monkeypatch.setattr(stride, "SERIAL", True, raising=False)  # runs in real time: never the same twice
    with pytest.raises(VraidError, match="--fill for runs of stride in real time"):
        run_experiment("stride", tmp_path, size="quick", jobs=1, runs_of=OLD, fill=True)

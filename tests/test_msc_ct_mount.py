"""msc-ct's mount part (paper 000 Table II's file-system rows, Figs. 13, 14 on a real mount):
its specs, its rows from run outputs, its refusal without root, and one quick real run."""

from __future__ import annotations

import math
import os

import pytest

from mountutil import requires_mount
from vraid.errors import VraidError
from vraid.sim.experiment import msc_ct, msc_ct_mount, verdict
from vraid.sim.experiment import msc_ct_mount_report as rep
from vraid.sim.experiment.estimate import work_of
from vraid.sim.experiment.sizes import SIZES, specs_for


def _mount_specs(quick=True, **mount):
    return [s for s in msc_ct.runs(quick, parts="fig11,more,mount", mount=mount or None) if s.get("kind") == "mount"]


def test_the_mount_part_is_chosen_not_default():
    assert not [s for s in msc_ct.runs(True) if s.get("mount")]
    specs = _mount_specs()
    assert specs and all(s["mount"] is True for s in specs)
    assert {s["bench"] for s in specs} >= {"table2", "dbench", "aging-16k", "aging-2048k"}
    assert {s["config"] for s in specs if s["bench"] == "table2"} == {"pbgc", "sc", "msc_ct", "sc-floor"}
    # Fig. 14: SC vs MSC-CT (and the floor ablation)
    assert {s["config"] for s in specs if s["bench"].startswith("aging")} == {"sc", "msc_ct", "sc-floor"}
    assert all(s["strip"] == "128K" for s in specs if s["bench"] == "table2")  # Table II's 512 KiB stripe
    ct = {s["config"]: s["ct"] for s in specs if s["bench"] == "dbench"}
    assert ct["sc"] == ct["pbgc"] == "none" and ct["msc_ct"].startswith("msc:sr_max=")


@pytest.mark.parametrize("size", SIZES)
def test_every_mount_spec_has_a_work(size):
    for spec in specs_for(msc_ct, "msc-ct", size, {"parts": "fig11,more,mount"}):
        assert work_of("msc-ct", spec) > 0 if spec.get("kind") == "mount" else work_of("msc-ct", spec) >= 0


def test_bad_mount_options_are_one_error():
    with pytest.raises(VraidError, match="no option nope"):
        _mount_specs(nope=1)
    with pytest.raises(VraidError, match="not a positive number"):
        _mount_specs(time_scale=0)
    with pytest.raises(VraidError, match="without the mount part"):
        msc_ct.runs(True, mount={"dbench_seconds": 3})
    with pytest.raises(VraidError, match="no part"):
        msc_ct.runs(True, parts="fig11,mnt")


def test_without_root_the_run_says_so(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(VraidError, match="needs root") as err:
        msc_ct_mount.run(_mount_specs()[0])
    assert "parts=fig11,more" in err.value.hint


def _outputs(times, mbs, dbench, aging):
    """Run outputs shaped as msc_ct_mount.run's, one per spec, from the given numbers (the floor
    ablation's runs, config ``sc-floor``, only where the numbers name it)."""
    out = []
    for spec in _mount_specs():
        c = spec["config"]
        if c not in times and c not in dbench and c not in aging:
            continue
        if spec["bench"] == "table2":
            t = times[c]
            r = {"mkfs_seconds": t, **{k: {"seconds": t, "mb": 1.0, "mb_s": 1 / t} for k in ("video", "music", "src")},
                 **{k: {"mb_s": mbs[c], "seconds": 1.0, "bytes": 1} for k in ("seq_write", "seq_read", "rand_write",
                                                                               "rand_read")}}
        elif spec["bench"].startswith("dbench"):
            r = {"dbench": [{"clients": n, "mb_s": dbench[c] * (1 + i)} for i, n in enumerate(spec["clients"])]}
        else:
            r = {"aging": [{"cycle": k + 1, "mb_s": v} for k, v in enumerate(aging[c])]}
        out.append((spec, r))
    return out


def test_rows_come_from_the_runs_by_the_one_verdict_rule():
    pairs = _outputs(times={"pbgc": 30.0, "sc": 20.0, "msc_ct": 10.0}, mbs={"pbgc": 50.0, "sc": 60.0, "msc_ct": 60.0},
                     dbench={"pbgc": 10.0, "sc": 12.0, "msc_ct": 15.0}, aging={"sc": [10.0, 2.0], "msc_ct": [9.0, 8.0]})
    rows = {r.item: r for r in rep.rows(rep.collect(pairs))}
    # a time is inverted into a throughput ratio: SC over PBGC = 30 s / 20 s
    r = rows["Table II video self-copy: SC over PBGC (mount)"]
    assert r.vraid == pytest.approx(1.5) and r.verdict == verdict.judge(r.paper, 1.5, baseline=1.0)
    assert rows["Table II src self-copy: MSC-CT over SC (mount)"].vraid == pytest.approx(2.0)
    assert rows["Table II sequential read (fs): SC over PBGC (mount)"].vraid == pytest.approx(1.2)
    ct13 = next(r for k, r in rows.items() if k.startswith("Fig. 13(a) DBench: MSC-CT over SC, best case"))
    assert ct13.vraid == pytest.approx(1.25)
    aged = next(r for k, r in rows.items() if k.startswith("Fig. 14(a) aged ext3, 16 KiB files"))
    assert aged.vraid == pytest.approx(4.0) and "cycle 2" in aged.item
    loss = next(r for k, r in rows.items() if k.startswith("Fig. 14(b)") and "SC's loss" in k)
    assert loss.vraid == pytest.approx(80.0) and loss.verdict == verdict.REPRODUCED  # 80 % vs the paper's 86 %
    assert not [r for r in rows.values() if r.verdict == verdict.NOT_RUN and "Table II" in r.item]


def test_without_mount_runs_every_such_row_is_not_run_with_the_reason():
    from vraid.sim.experiment.msc_ct_trends import mount_rows

    rows = mount_rows(rep.collect([]))
    assert rows and all(r.verdict == verdict.NOT_RUN for r in rows)
    assert all("mount part did not run" in r.cause for r in rows)
    assert len(rows) == 2 * len(rep.TABLE2_FS) + 1 + 5 + 5 + 4  # + the trend rows of Figs. 13 (3) and 14 (1)
    assert len(rep.rows(rep.collect([]))) == len(rows) - 4  # the module's own, without the trends above it


def _status(busy: list[float], reads: int, writes: int, mb: float) -> dict:
    """A ``vraid status --json`` shaped snapshot: every member with the same counters."""
    return {"members": [{"disk": d, "reads": reads, "writes": writes, "read_bytes": int(mb * 1e6),
                         "write_bytes": int(mb * 1e6), "busy_seconds": b} for d, b in enumerate(busy)]}


def test_disk_use_is_the_members_growth_over_the_step():
    from vraid.sim.experiment.msc_ct_mount_bench import disk_use, probed  # disk_use: vc_raid_mount's

    use = disk_use(_status([1.0, 1.0], 10, 5, 1.0), _status([3.0, 2.0], 30, 15, 4.0), seconds=2.0)
    # two members: 2 x (20 + 10) requests, 2 x 3 MB each way, busy (2 + 1) s of 2 x 2 s
    assert use == {"requests": 60, "read_mb": 6.0, "write_mb": 6.0, "busy": 0.75}
    assert disk_use(None, _status([1.0], 1, 1, 1.0), 1.0) is None
    snaps = iter([_status([0.0], 0, 0, 0.0), _status([0.5], 2, 2, 1.0)])
    result, seconds, use = probed(lambda: next(snaps), lambda: "done")
    assert result == "done" and seconds >= 0 and use["requests"] == 4
    assert probed(None, lambda: 1)[2] is None


def test_a_mount_row_s_cause_names_the_members_use_and_what_it_rules_out():
    idle = {"busy": 0.1, "requests": 1000, "read_mb": 1.0, "write_mb": 2.0}
    busy = {**idle, "busy": 0.9}
    note = rep.disk_note({"pbgc": idle, "sc": idle, "msc_ct": idle})
    assert note.startswith("measured (the members, over the step): busy 10 % / 10 % / 10 % of it")
    assert "ruled out as the cause, the disks" in note
    assert "cause not found beyond these counters" in rep.disk_note({"sc": busy, "msc_ct": idle})
    assert "neither is ruled out" in rep.disk_note({"sc": {**idle, "busy": 0.6}})
    assert rep.disk_note({"sc": None}) == ""
    # through collect and the rows: Table II, DBench and aging rows carry it
    pairs = _outputs(times={"pbgc": 30.0, "sc": 20.0, "msc_ct": 10.0}, mbs={"pbgc": 50.0, "sc": 60.0, "msc_ct": 60.0},
                     dbench={"pbgc": 10.0, "sc": 12.0, "msc_ct": 15.0}, aging={"sc": [10.0, 2.0], "msc_ct": [9.0, 8.0]})
    for spec, r in pairs:
        for v in r.values():
            for part in (v if isinstance(v, list) else [v]):
                if isinstance(part, dict):
                    part["disks"] = idle
        r["mkfs_disks"] = idle
    rows = {r.item: r for r in rep.rows(rep.collect(pairs))}
    assert "ruled out as the cause, the disks" in rows["Table II src self-copy: MSC-CT over SC (mount)"].cause
    assert all("measured (the members" in r.cause for k, r in rows.items()
               if k.startswith(("Fig. 13(a)", "Fig. 14(a)", "Table II")))


@requires_mount
@pytest.mark.mount
@pytest.mark.slow
def test_quick_aging_run_through_a_real_mount(tmp_path):
    """One small configuration end to end: MSC-CT, ext3 made and aged for two cycles."""
    spec = next(s for s in _mount_specs(work=str(tmp_path)) if s["id"] == "mount-aging-16k-msc_ct")
    out = msc_ct.run(spec)
    assert out["mkfs_seconds"] > 0
    cycles = out["aging"]
    assert [c["cycle"] for c in cycles] == [1, 2]
    assert all(c["files"] > 0 and c["mb_s"] > 0 and not math.isnan(c["mb_s"]) for c in cycles)
    # each cycle records what the members did during it: the writes reached them, and they were busy
    assert all(c["disks"]["write_mb"] > 0 and c["disks"]["requests"] > 0 and 0 < c["disks"]["busy"] for c in cycles)
    assert not list(tmp_path.iterdir())  # member files removed after teardown
    with open("/proc/self/mounts") as f:
        assert str(tmp_path) not in f.read()


@requires_mount
@pytest.mark.mount
@pytest.mark.slow
def test_floor_ablation_run_through_a_real_mount(tmp_path):
    """The floor ablation's run: SC mounted with no disk time ages ext3 as the others do; its
    members take the writes, busy only for the member files' own I/O (no modelled disk time)."""
    spec = next(s for s in _mount_specs(work=str(tmp_path)) if s["id"] == "mount-aging-16k-sc-floor")
    out = msc_ct.run(spec)
    cycles = out["aging"]
    assert [c["cycle"] for c in cycles] == [1, 2] and all(c["mb_s"] > 0 for c in cycles)
    assert all(c["disks"]["write_mb"] > 0 and c["disks"]["busy"] < 0.5 for c in cycles)
    assert not list(tmp_path.iterdir())


def test_destage_concurrency_ablation_rows_and_cause_come_from_the_runs():
    """SC over PBGC's ablation (16 destages in flight): its rows and the main row's measured cause."""
    from vraid.sim.experiment import msc_ct_figs as figs

    def run(mb_s, missed):
        return {"mb_s": mb_s, "seconds": 1.0, "disk_write_requests": 10, "disk_read_requests": 5,
                "missed_rotations": missed, "rotation_wait_seconds": 2.0, "seek_seconds": 1.0}

    more = {"ablations": {"destages-16": {"pbgc": run(12.0, 20), "sc": run(15.0, 30), "msc_ct": run(18.0, 25)}}}
    main = {"pbgc": run(12.0, 50), "sc": run(9.0, 300), "msc_ct": run(11.0, 200)}
    rows = {r.item: r for r in figs.ablation_rows(more, main)}
    sc_pb = rows["ablation: SC over PBGC, 1 GB, " + figs.CONCURRENCY["destages-16"][1]]
    assert sc_pb.vraid == pytest.approx(15.0 / 12.0, abs=1e-3)
    assert sc_pb.verdict == verdict.judge(3.20 / 2.70, sc_pb.vraid, baseline=1.0)
    assert rows["ablation: MSC-CT over SC, 1 GB, " + figs.CONCURRENCY["destages-16"][1]].vraid == pytest.approx(1.2)
    cause = figs.concurrency_cause(more, 1, main)
    assert "0.75x -> 1.25x" in cause and "missed revolutions 300 -> 30" in cause and "tcq=off" not in cause
    assert figs.concurrency_cause(more, 8, main) == ""  # no 8 GB ablation in these runs
    # at 1 GB the one-command ablation is named too, whichever driver leads
    more["ablations"]["tcq-off"] = {"pbgc": run(4.0, 600), "sc": run(5.0, 800)}
    assert "one command at a time (tcq=off: the drive reorders nothing it holds) SC over PBGC is 1.25x" in \
        figs.concurrency_cause(more, 1, {"pbgc": run(4.0, 900), "sc": run(9.0, 100)})


def test_results_md_section_names_the_sizes_and_every_number():
    pairs = _outputs(times={"pbgc": 3.0, "sc": 2.0, "msc_ct": 1.5}, mbs={"pbgc": 5.0, "sc": 6.0, "msc_ct": 6.5},
                     dbench={"pbgc": 1.0, "sc": 2.0, "msc_ct": 3.0}, aging={"sc": [4.0, 1.0], "msc_ct": [4.0, 3.0]})
    text = "\n".join(rep.markdown(rep.collect(pairs)))
    assert "--time real:" in text and "mkfs.ext3" in text and "| src self-copy | 29.3 / 15.2 / 13.5 s | 3.00 / 2.00 / 1.50 s |" in text
    assert "| 2 | " in text and "3.00x" in text  # aging cycle 2: MSC-CT 3.0 over SC 1.0
    assert "Not in this run" in "\n".join(rep.markdown({}))


def test_repeats_go_round_by_round_and_rows_carry_the_range():
    """``repeats``: every mount run made N times (round by round), each number the median and
    each ratio's range the widest the runs allow; one run gives no range."""
    specs = _mount_specs(repeats=3, floor=False)
    one = _mount_specs(floor=False)
    assert len(specs) == 3 * len(one) and [s["repeat"] for s in specs[: len(one)]] == [1] * len(one)
    assert specs[len(one)]["id"] == one[0]["id"] + "-r2" and len({s["id"] for s in specs}) == len(specs)
    with pytest.raises(VraidError, match="repeats 0"):
        _mount_specs(repeats=0)
    pairs = []
    for spec in specs:  # SC's src self-copy takes 20, 22, 18 s; PBGC's 30 s; MSC-CT's 10 s
        base = _outputs(times={"pbgc": 30.0, "sc": 20.0 + 2 * [0, 1, -1][spec["repeat"] - 1], "msc_ct": 10.0},
                        mbs={"pbgc": 50.0, "sc": 60.0, "msc_ct": 60.0},
                        dbench={"pbgc": 10.0, "sc": 12.0, "msc_ct": 15.0 + spec["repeat"]},
                        aging={"sc": [10.0, 2.0 * spec["repeat"]], "msc_ct": [9.0, 8.0]})
        pairs.append((spec, next(r for s, r in base if s["id"] == spec["id"].rsplit("-r", 1)[0])))
    m = rep.collect(pairs)
    assert m["repeats"] == 3 and m["table2"]["src self-copy"]["sc"] == 20.0
    assert m["table2_runs"]["src self-copy"]["sc"] == [20.0, 22.0, 18.0]
    rows = {r.item: r for r in rep.rows(m)}
    r = rows["Table II src self-copy: SC over PBGC (mount)"]
    assert r.vraid == pytest.approx(1.5) and r.spread == pytest.approx((30 / 22, 30 / 18), abs=1e-3)
    assert "the median of 3 runs each" in r.cause
    ct13 = next(r for k, r in rows.items() if k.startswith("Fig. 13(a) DBench: MSC-CT over SC, best case"))
    assert ct13.vraid == pytest.approx(17 / 12, abs=1e-3) and ct13.spread == pytest.approx((16 / 12, 18 / 12), abs=1e-3)
    loss = next(r for k, r in rows.items() if k.startswith("Fig. 14(b)") and "SC's loss" in k)
    assert loss.vraid == pytest.approx(60.0) and loss.spread == pytest.approx((40.0, 80.0))  # 1 - 2/10, 4/10, 6/10
    assert loss.verdict == verdict.judge(86.0, 60.0, spread=(40.0, 80.0))
    assert "median of its runs" in "\n".join(rep.markdown(m))
    assert all(r.spread is None for r in rep.rows(rep.collect(_outputs(
        times={"pbgc": 3.0, "sc": 2.0, "msc_ct": 1.0}, mbs={"pbgc": 5.0, "sc": 6.0, "msc_ct": 6.5},
        dbench={"pbgc": 1.0, "sc": 2.0, "msc_ct": 3.0}, aging={"sc": [4.0, 1.0], "msc_ct": [4.0, 3.0]}))))


def test_sc_over_pbgc_cause_names_the_ablations_whichever_driver_leads():
    """The SC-over-PBGC row's cause carries the concurrency and one-command ablations both when SC
    trails (with the blocks and seconds measured) and when it leads (2026-11-28: once the merged
    PBGC's destages were bounded, SC led at 1 GB by more than the paper's)."""
    def run(mb_s, policy):
        return {"mb_s": mb_s, "seconds": 1.0, "disk_write_requests": 10, "disk_read_requests": 5,
                "disk_write_blocks": 20, "disk_read_blocks": 10, "missed_rotations": 7, "rotation_wait_seconds": 1.0,
                "seek_seconds": 0.5, "dirty_blocks_per_plan": 2.0, "write_gaps_below_sw_max": 0.3, "policy": policy}

    for sc_mb_s in (5.0, 20.0):
        runs_ = {("page-cache", 1, p): run(v, p) for p, v in (("pbgc", 10.0), ("sc", sc_mb_s), ("msc_ct", 25.0))}
        cause = msc_ct._cause("sc_over_pbgc", runs_, "page-cache", 1, "msc", "; ABLATIONS")
        assert cause.startswith("PBGC = md + elevator") and "; ABLATIONS" in cause


def test_pbgc_at_md_s_own_bound_is_an_ablation_row_and_part_of_the_cause():
    """PBGC destaging every ready group at once (md's raid5d bound, hlwm max_destages=256): one
    PBGC run at 1 GB, its SC-over-PBGC row against the main SC, and a clause of the 1 GB cause."""
    from vraid.sim.experiment import msc_ct_figs as figs

    specs = [s for s in msc_ct.runs(True) if s.get("ablation") == figs.PBGC_EVERY_GROUP]
    assert [s["policy"] for s in specs] == ["pbgc"] and specs[0]["destage"] == "hlwm:max_destages=256"

    def run(mb_s, missed):
        return {"mb_s": mb_s, "seconds": 1.0, "disk_write_requests": 10, "disk_read_requests": 5,
                "missed_rotations": missed, "rotation_wait_seconds": 2.0, "seek_seconds": 1.0}

    more = {"ablations": {figs.PBGC_EVERY_GROUP: {"pbgc": run(10.0, 50)}}}
    main = {"pbgc": run(5.0, 700), "sc": run(9.0, 100)}
    row = next(r for r in figs.ablation_rows(more, main) if "every ready group" in r.item)
    assert row.vraid == pytest.approx(0.9) and row.verdict == verdict.NOT_REPRODUCED
    assert "SC as in the main run" in row.cause
    cause = figs.concurrency_cause(more, 1, main)
    assert "5.00 -> 10.00 MB/s (missed revolutions 700 -> 50), SC over it 0.90x" in cause
    assert figs.concurrency_cause(more, 8, main) == ""


def test_the_floor_ablation_mounts_sc_with_no_disk_time_beside_each_step():
    specs = _mount_specs()
    floor = [s for s in specs if s["config"] == msc_ct_mount.FLOOR]
    assert {s["bench"] for s in floor} == {"table2", "dbench", "aging-16k", "aging-2048k"}
    assert all(s["no_disk_time"] and s["cache"] == "stripe" and s["ct"] == "none" for s in floor)
    assert not [s for s in specs if s["config"] != msc_ct_mount.FLOOR and s.get("no_disk_time")]
    assert not [s for s in _mount_specs(floor=False) if s["config"] == msc_ct_mount.FLOOR]
    # the full run's Fig. 13(b) strips get the floor too, each at its own strip
    full = [s for s in _mount_specs(quick=False) if s["bench"] == "dbench-strip" and s.get("repeat", 1) == 1]
    assert {(s["strip"], s["config"]) for s in full} == {(st, c) for st in ("16K", "256K")
                                                        for c in ("pbgc", "sc", "msc_ct", msc_ct_mount.FLOOR)}


def test_floor_ablation_sets_the_mount_s_own_time_apart_in_the_mount_rows():
    """A step's time less the floor's (SC with no disk time) is the disks' share; its ratio between
    the drivers is judged against the paper's, and decides what the busy share alone left open."""
    from vraid.sim.experiment.floor import disk_shares  # the arithmetic vc-raid's floor rows share

    both = disk_shares(12.0, 2.0, 7.0, 6.0)  # top 10 over its floor; bottom 1, within 25 % of its 6
    assert (both.top, both.bottom, both.at_floor, both.ratio) == (10.0, 1.0, (False, True), None)
    assert disk_shares(12.0, 2.0, 26.0, 6.0).ratio == 2.0
    f = rep.floor_share({"pbgc": 30.0, "sc": 20.0, "sc-floor": 10.0}, "sc", "pbgc", "s")
    assert f["share"] == pytest.approx(2.0) and not f["at_floor"]  # (30 - 10) / (20 - 10)
    note = rep.floor_note({"pbgc": 30.0, "sc": 20.0, "sc-floor": 10.0}, "sc", "pbgc", 1.45, "s")
    assert "10.00 s in the mount alone, SC 20.00 s and PBGC 30.00 s with the disks" in note
    assert note.endswith("SC over PBGC = 2.00x (paper 1.45x); the rest: cause not found (ruled out: the mount's floor)")
    held = rep.floor_note({"pbgc": 25.0, "sc": 20.0, "sc-floor": 10.0}, "sc", "pbgc", 1.45, "s")
    assert "= 1.50x (paper 1.45x): the disks' share alone holds the paper's claim" in held
    at = rep.floor_note({"sc": 60.0, "msc_ct": 61.0, "sc-floor": 62.0}, "msc_ct", "sc", 1.3, "MB/s")
    assert "MSC-CT and SC took within 25 % of the mount's own time" in at and "ruled out as the cause" in at
    assert rep.floor_note({"sc": 1.0, "pbgc": 2.0}, "sc", "pbgc", 1.0, "s") == ""
    # through collect: the floor's runs come in as config sc-floor, every compared row carries the note,
    # and the busy share's middle case no longer says nothing is ruled out
    part = {"busy": 0.6, "requests": 1000, "read_mb": 1.0, "write_mb": 2.0}
    pairs = _outputs(times={"pbgc": 30.0, "sc": 20.0, "msc_ct": 10.0, "sc-floor": 5.0},
                     mbs={"pbgc": 50.0, "sc": 60.0, "msc_ct": 60.0, "sc-floor": 200.0},
                     dbench={"pbgc": 10.0, "sc": 12.0, "msc_ct": 15.0, "sc-floor": 40.0},
                     aging={"sc": [10.0, 2.0], "msc_ct": [9.0, 8.0], "sc-floor": [50.0, 45.0]})
    for spec, r in pairs:
        for v in r.values():
            for p in (v if isinstance(v, list) else [v]):
                if isinstance(p, dict):
                    p["disks"] = part
    m = rep.collect(pairs)
    assert m["table2"]["video self-copy"]["sc-floor"] == 5.0 and m["dbench"]["sc-floor"] == [40.0, 80.0]
    rows = {r.item: r for r in rep.rows(m)}
    video = rows["Table II video self-copy: SC over PBGC (mount)"]
    assert "5.00 s in the mount alone" in video.cause and "SC over PBGC = 1.67x" in video.cause  # 25 / 15
    causes = " ".join(r.cause for r in rows.values())
    assert "neither is ruled out" not in causes and "busy 60 % / 60 % / 60 % of it" in causes
    # with the floor measured, the busy share draws no conclusion of its own (it can contradict it)
    idle = {"busy": 0.1, "requests": 10, "read_mb": 1.0, "write_mb": 1.0}
    assert rep.disk_note({"sc": idle}, floor=True).endswith("(SC)") and "ruled out" not in rep.disk_note(
        {"sc": idle}, floor=True)
    aged = next(r for k, r in rows.items() if k.startswith("Fig. 14(a) aged ext3, 16 KiB files"))
    assert "floor ablation" in aged.cause and "MSC-CT over SC" in aged.cause
    loss = next(r for k, r in rows.items() if k.startswith("Fig. 14(b)") and "SC's loss" in k)
    assert "the mount alone loses 10.0 % from cycle 1 to 2" in loss.cause and "ruled out" in loss.cause
    md = "\n".join(rep.markdown(m))
    assert "vraid SC, no disk time (floor ablation)" in md and "The floor ablation (vraid's)" in md
    # the trend rows above them: DBench's "MSC-CT outperforms SC" and Fig. 14's size claim
    from vraid.sim.experiment.msc_ct_trends import mount_rows

    trends = {r.item: r for r in mount_rows(m) if r.item not in rows}
    causes = " ".join(r.cause for r in trends.values())
    assert "(the claim: above 1)" in causes and "the disks' share alone gives MSC-CT over SC 16 KiB" in causes


def test_fig13b_rows_take_the_floor_at_their_own_strip():
    """With the floor at every strip (runs since it ran there), the best-strip row and the SC-above-PBGC
    row read the floor of the strip they quote, not DBench's 64K one."""
    strips = {"strips": ["16K", "64K", "256K"], "clients": 16, "pbgc": [10.0, 20.0, 30.0], "sc": [9.0, 25.0, 40.0],
              "msc_ct": [10.0, 24.0, 60.0], msc_ct_mount.FLOOR: [50.0, 100.0, 200.0]}
    m = {"dbench": {"clients": [16], "pbgc": [20.0], "sc": [25.0], "msc_ct": [24.0], msc_ct_mount.FLOOR: [100.0]},
         "dbench_strip": strips}
    rows = {r.item.split(" (")[0]: r for r in rep.fig13_rows(m)}
    best = next(r for k, r in rows.items() if k.startswith("Fig. 13(b) DBench"))
    assert "best at strip 256K" in best.cause and "200.00 MB/s in the mount alone" in best.cause
    assert "the floor run's strip is 64K" not in best.cause
    above = rows["Fig. 13(b): SC above PBGC at every strip size"]
    assert above.verdict == verdict.NOT_REPRODUCED  # SC 9 < PBGC 10 at 16K
    assert "50.00 MB/s in the mount alone, SC 9.00 MB/s and PBGC 10.00 MB/s" in above.cause
    # runs from before the floor ran at every strip: DBench's floor, named as 64K's
    del strips[msc_ct_mount.FLOOR]
    best = next(r for r in rep.fig13_rows(m) if r.item.startswith("Fig. 13(b) DBench"))
    assert "100.00 MB/s in the mount alone" in best.cause and "(the floor run's strip is 64K, DBench's)" in best.cause
    strips[msc_ct_mount.FLOOR] = [50.0, 100.0, 200.0]
    md = "\n".join(rep.markdown(m))
    assert "| MSC-CT MB/s | SC, no disk time (floor ablation) MB/s |" in md
    assert "| 256K | 30.00 | 40.00 | 60.00 | 200.00 |" in md

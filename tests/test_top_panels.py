"""The panels of vraid top rendered to text and compared with tests/snapshots/*.txt.

Rewrite the files after a deliberate change: ``VRAID_UPDATE_SNAPSHOTS=1 pytest tests/test_top_panels.py``
(then look at ``git diff tests/snapshots``).
"""

from __future__ import annotations

import copy

import pytest

from snaputil import assert_snapshot, render_text
from vraid.tui import panels
from vraid.engine.host.live import derive_rates
from vraid.core.rxw import Plan


def _plan_dict() -> dict:
    # seed 000's running example shape: 4 data strips, u = 4; a CT filled a read gap
    z = (("D", "E", "D", "E"), ("E", "E", "E", "E"), ("D", "C", "E", "D"), ("D", "D", "D", "D"))
    plan = Plan.build(7, z, (1, 2, 3, 4, 0))
    m = [list(row) for row in plan.basic]
    m[1] = [(), ("r",), (), (), ()]  # a row without dirty blocks read to join column 1's reads
    t = plan.transform(tuple(tuple(r) for r in m), "msc:sr_max=2,sw_max=2")
    return t.to_dict() | {"row0": 0, "destage": True, "time": 12.5, "parity": True}


def _history() -> list:
    out = []
    for i in range(60):
        occ = min(1.0, 0.02 * i) if i < 45 else 0.9 - 0.05 * (i - 45)
        hwm, lwm = (0.8, 0.5) if i < 30 else (0.7, 0.4)  # adaptive marks move
        out.append([occ, occ, hwm, lwm, int(i >= 40)])
    return [None] * 10 + out


def fixed_snapshot() -> dict:
    members = []
    for i, state in enumerate(("active", "active", "failed", "rebuilding", "spare")):
        d = {"disk": i, "store": f"disk{i}.img", "reads": 100 * i, "writes": 50 + i, "read_bytes": 0,
             "write_bytes": 0, "errors": 0, "busy_seconds": 2.0 + i, "max_queue": 3, "contiguous": 10 * i,
             "queue": i % 3, "state": state}
        if state == "rebuilding":
            d["progress"] = 0.42
        members.append(d)
    snap = {
        "time": 112.5, "uptime": 100.0, "source": "/mnt/vraid/disk.img",
        "geometry": {"level": 5, "disks": 5, "layout": "left-symmetric", "strip_size": 16384, "stripes": 100,
                     "capacity": 6553600},
        "cache": {"organisation": "stripe", "order": "lrw",
                  "scheduler": {"name": "adaptive", "spec": "adaptive:high=0.7,low=0.4", "params": {}},
                  "capacity_units": 64, "unit_bytes": 65536, "units": 64, "dirty_units": 40, "destaging": 2,
                  "occupancy": 0.625, "hwm": 0.7, "lwm": 0.4, "paused": True, "nvram": False,
                  "read_blocks": 1000, "read_hit_blocks": 250, "write_blocks": 4000, "write_hits": 3000,
                  "overwrites": 1000, "write_misses": 12, "destages_started": 300, "destages_finished": 298,
                  "destage_errors": 0, "evictions": 5, "nvram_replayed": 0, "read_hit_ratio": 0.25,
                  "overwrite_ratio": 0.25},
        "metrics": {"host_reads": 500, "host_writes": 4000, "host_read_bytes": 4096000, "host_write_bytes": 16384000,
                    "host_flushes": 3, "pbg_rcw": 120, "pbg_rmw": 80, "pbg_full": 400, "plans": 300,
                    "partial_block_writes": 0, "mean_response_ms": 0.8, "p99_response_ms": 9.5,
                    "response_ms": {"p50": 0.1, "p90": 1.25, "p99": 9.5}, "max_response_ms": 30.0},
        "members": members,
        "policies": {"cache": "stripe", "destage": "adaptive:high=0.7,low=0.4", "destage_order": "lrw",
                     "ct": "msc:sr_max=2,sw_max=2"},
        "policy_log": [{"time": 60.0, "key": "destage", "old": "hlwm:high=0.95,low=0.85,max_destages=4",
                        "new": "adaptive:high=0.7,low=0.4"}],
        "plan": _plan_dict(),
        "step": [],
        "paused": True,
        "history": _history(),
        "window": 60.0,
        "rebuild": {"role": 3, "spare": "spare0.img", "state": "running", "progress": 0.42, "speed_mb_s": 12.5,
                    "eta_seconds": 30.0},
        "spares": [{"store": "spare1.img", "state": "spare"}],
        "degraded": True,
    }
    prev = copy.deepcopy(snap)
    prev["time"] = 110.5
    for d in prev["members"]:
        d["reads"] -= 20
        d["busy_seconds"] -= 1.0
    prev["metrics"]["host_writes"] -= 100
    prev["metrics"]["host_write_bytes"] -= 409600
    prev["cache"]["destages_finished"] -= 10
    snap["rates"] = derive_rates(prev, snap)
    return snap


def test_plan_panel_marks_ct_inserted_operations():
    text = render_text(panels.plan_panel(fixed_snapshot()))
    assert "r*" in text and "transformed M" in text and "R0-1" in text  # column 1 reads rows 0-1 as one request
    assert_snapshot("plan_panel", text)


def test_plan_panel_step_and_empty():
    snap = fixed_snapshot()
    snap["step"] = [snap["plan"] | {"unit": 7}]
    text = render_text(panels.plan_panel(snap))
    assert "STEP" in text and "unit 7" in text
    assert_snapshot("plan_panel_step", text)
    snap["plan"], snap["step"] = None, []
    assert "no stripe written yet" in render_text(panels.plan_panel(snap))


def test_plan_panel_names_two_check_columns_and_counts_their_cycles():
    # DEEE is RCW with two check columns (6 I/Os either way) and RMW with one (5 > 4)
    z = (("D", "E", "E", "E"), ("D", "D", "D", "D"))
    snap = fixed_snapshot()
    for checks, cycles in ((2, "FULL 1 RCW 1"), (1, "FULL 1 RMW 1")):
        columns = tuple(range(4 + checks))
        plan = Plan.build(0, z, columns, checks=checks)
        snap["plan"] = plan.to_dict() | {"row0": 0, "destage": True, "time": 1.0, "parity": True, "checks": checks}
        text = render_text(panels.plan_panel(snap), width=140, height=40)
        assert cycles in text
        assert ("P4" in text) and (("Q5" in text) == (checks == 2))


def test_plan_panel_title_names_the_cause():
    snap = fixed_snapshot()
    assert "destage plan" in render_text(panels.plan_panel(snap))  # snapshots from before causes existed
    snap["plan"] = snap["plan"] | {"cause": "destage"}
    assert "destage plan" in render_text(panels.plan_panel(snap))
    snap["plan"] = snap["plan"] | {"cause": "destage-l2"}
    assert "destage-l2 plan" in render_text(panels.plan_panel(snap))
    snap["plan"] = snap["plan"] | {"cause": "host", "destage": False}
    assert "write plan (write-through" in render_text(panels.plan_panel(snap))


def test_watermark_panel():
    text = render_text(panels.watermark_panel(fixed_snapshot(), width=100))
    assert "HWM 70%" in text and "LWM 40%" in text and "PAUSED" in text
    assert "━" in text and "╌" in text and "▀" in text
    assert_snapshot("watermark_panel", text)


def test_members_panel_shows_states_and_rebuild():
    text = render_text(panels.members_panel(fixed_snapshot()))
    for word in ("failed", "rebuilding 42%", "spare", "rebuild of member 3 onto spare0.img", "spares: spare1.img"):
        assert word in text
    assert_snapshot("members_panel", text)


def test_counters_panel():
    text = render_text(panels.counters_panel(fixed_snapshot()))
    assert "overwrite ratio" in text and "25%" in text and "0.10 / 1.25 / 9.50 ms" in text
    assert "write hit ratio" not in text  # 1 - the overwrite ratio, beside the misses it read as a contradiction
    assert_snapshot("counters_panel", text)


#: a read path's status (``status()["reads"]``) with MSP active
READS = {"prefetch": "msp:sc_max=42,sc_thresh=38,sps_max=8", "prefetching": 2,
         "policy_state": {"sc": 40, "sps": 3, "sn_p": 41, "sn_pp": 40, "active": True},
         "host_reads": 800, "host_reads_to_members": 300, "member_requests": 300, "split_reads": 30,
         "member_requests_per_read": 0.375, "split_ratio": 0.1, "parallelism_loss": 0.2,
         "lookups": 800, "hits": 500, "prefetch_hits": 496, "hit_ratio": 0.625, "prefetch_hit_ratio": 0.62,
         "prefetch_unread": 64, "prefetch_wasted": 8}


def test_prefetch_summary_without_a_read_cache_or_state():
    rows = dict(panels.prefetch_summary({"prefetch": "none", "member_requests_per_read": 1.5, "split_ratio": 0.5,
                                         "parallelism_loss": 0.0}))
    assert rows == {"policy": "none", "req/read": "1.50", "split": "50%", "idle-waiting": "0%"}


def test_prefetch_summary_shows_how_often_msp_was_on():
    state = {**READS["policy_state"], "strip_changes": 200, "sequential_changes": 190, "active_changes": 150}
    rows = dict(panels.prefetch_summary({**READS, "policy_state": state}))
    assert rows["SC"] == "40(on)" and rows["on"] == "75%"
    assert "on" not in dict(panels.prefetch_summary(READS))  # a state without the counters: no column


def test_extras_row_appears_only_with_data():
    snap = fixed_snapshot()
    assert not panels.has_extras(snap)
    assert "prefetch" not in render_text(panels.frame(snap, width=100))
    snap["log_disk"] = {"fill": 0.3, "segments": 4}
    snap["prefetch"] = {"windows": 3, "policy": "saseqp"}
    snap["reads"] = READS
    text = render_text(panels.extras_panel(snap))
    assert "SC=40(on)" in text and "prefetch-hit=62%" in text and "idle-waiting=20%" in text
    assert_snapshot("extras_panel", text)
    assert "log disk" in render_text(panels.frame(snap, width=100, height=60), height=60)


def test_whole_frame_fixed_snapshot():
    snap = fixed_snapshot()
    text = render_text(panels.frame(snap, width=100, message="stepped: destaged stripe 7"))
    assert "policy changed" in text and "adaptive" in text
    assert_snapshot("frame_fixed", text)
    live = render_text(panels.frame(snap, width=100, height=50, sim=True, speed="speed x0.05"), height=50)
    assert len(live.splitlines()) == 50 and "faster" in live
    assert_snapshot("frame_fixed_live_50", live)


@pytest.fixture(scope="module")
def sim_frames():
    from vraid.sim.simulator import SimConfig
    from vraid.tui.top import sim_snapshots

    cfg = SimConfig(disks=5, disk_size=8 << 20, strip=16384, workload="random-write", requests=600, seed=3,
                    policies={"cache": "stripe", "cache_size": "1M", "destage": "hlwm:high=0.75,low=0.5"})
    first, snap = sim_snapshots(cfg)
    snap["rates"] = derive_rates(first, snap)
    again_first, again = sim_snapshots(cfg)
    again["rates"] = derive_rates(again_first, again)
    return snap, again


def test_frame_of_a_deterministic_sim_run(sim_frames):
    snap, again = sim_frames
    text = render_text(panels.frame(snap, width=100, sim=True, keys=False))
    assert text == render_text(panels.frame(again, width=100, sim=True, keys=False))  # same run, same frame
    assert "destage plan" in text and "watermarks" in text
    assert_snapshot("frame_sim_random_write", text)


# ------------------------------------------------------------------------- fitting the terminal
KEY_LABELS = [f"{k} {what}" for k, what in panels.KEYS_ENGINE + panels.KEYS_SIM]


def _live_frame(snap, width, height, **kw):
    kw = {"sim": True, "speed": "speed x0.05", "message": "stepped: destaged stripe 7"} | kw
    return render_text(panels.frame(snap, width=width, height=height, **kw), width=width, height=height)


@pytest.mark.parametrize("width,height", [(80, 24), (100, 30), (120, 40)])
def test_whole_live_frame_fits_common_terminal_sizes(width, height):
    text = _live_frame(fixed_snapshot(), width, height)
    lines = text.splitlines()
    assert len(lines) == height
    assert lines[0].startswith("vraid top PAUSED DEGRADED speed x0.05")  # the status line on top
    assert lines[-1] == "stepped: destaged stripe 7"  # the footer at the bottom, whole
    joined = " ".join(lines)
    assert all(label in joined for label in KEY_LABELS)
    for title in ("destage plan", "watermarks", "counters", "members"):
        assert title in text
    # every box that opens closes: no panel is cut off in the middle
    assert sum(line.count("╭") for line in lines) == sum(line.count("╰") for line in lines)
    assert_snapshot(f"frame_live_{width}x{height}", text)


def _variants():
    base = fixed_snapshot()
    tall = copy.deepcopy(base)  # a plan with many active rows (a PBG of 24 rows)
    z = [["D", "C", "E", "D"]] * 24
    tall["plan"] = dict(tall["plan"], z=z, basic=[[["x", "w"]] * 5] * 24, transformed=[[["x", "w"]] * 5] * 24)
    nocache = copy.deepcopy(base)
    nocache["cache"] = {"organisation": "none"}
    nocache["plan"], nocache["policy_log"], nocache["rebuild"], nocache["spares"] = None, [], None, []
    extras = copy.deepcopy(base)
    extras["log_disk"] = {"fill": 0.3, "segments": 4}
    extras["prefetch"] = {"windows": 3, "policy": "saseqp"}
    extras["reads"] = READS
    many = copy.deepcopy(base)  # 12 members
    many["members"] = [dict(base["members"][0], disk=i) for i in range(12)]
    return {"fixed": base, "tall-plan": tall, "no-cache": nocache, "extras": extras, "12-members": many}


@pytest.mark.parametrize("name", list(_variants()))
def test_frame_never_taller_than_the_terminal_and_keys_always_shown(name):
    snap = _variants()[name]
    for width in (80, 99, 120, 160):
        for height in (24, 27, 33, 41, 50):
            text = _live_frame(snap, width, height)
            lines = text.splitlines()
            assert len(lines) <= height, (name, width, height)
            joined = " ".join(lines)
            assert all(label in joined for label in KEY_LABELS), (name, width, height, text)
            assert "vraid top" in lines[0], (name, width, height)
            assert sum(line.count("╭") for line in lines) == sum(line.count("╰") for line in lines), text


def test_short_terminal_shrinks_the_plan_with_a_count_of_rows_left_out():
    snap = _variants()["tall-plan"]
    short = _live_frame(snap, 100, 30)
    assert "more active rows not shown" in short
    tall = _live_frame(snap, 100, 80)
    assert "more active rows" not in tall and " 23 " in tall  # every row of the PBG on a tall one
    wide_short = _live_frame(fixed_snapshot(), 120, 26)
    assert "counters (" in wide_short or "members (disk state queue busy)" in wide_short


def test_below_80x24_the_frame_degrades_but_stays_inside():
    snap = fixed_snapshot()
    for width, height in ((60, 14), (40, 8), (30, 3), (79, 23), (20, 1)):
        lines = _live_frame(snap, width, height).splitlines()
        assert len(lines) <= height, (width, height)
        assert lines[0].startswith("p pause") or lines[0].startswith("vraid top"), (width, height)


def test_wide_short_terminal_puts_two_counters_to_a_row():
    text = _live_frame(fixed_snapshot(), 160, 26)
    assert len(text.splitlines()) == 26
    assert "─ counters ─" in text  # all ten shown
    row = next(line for line in text.splitlines() if "reads / writes" in line)
    assert "throughput" in row
    narrower = _live_frame(fixed_snapshot(), 120, 24)  # one to a row under 140 columns, some left out
    assert "counters (" in narrower
    assert "throughput" not in next(line for line in narrower.splitlines() if "reads / writes" in line)


def test_counters_panel_keeps_the_most_telling_rows():
    text = render_text(panels.counters_panel(fixed_snapshot(), max_rows=3))
    assert "counters (3 of 9)" in text
    assert "reads / writes" in text and "throughput" in text and "resp p50/p90/p99" in text
    assert "writes waited" not in text
    two = render_text(panels.counters_panel(fixed_snapshot(), max_rows=2, columns=2))
    assert "counters (4 of 9)" in two and "overwrite ratio" in two


def test_the_header_names_a_policy_fault_only_when_there_is_one():
    snap = fixed_snapshot()
    assert "POLICY FAULT" not in render_text(panels.header(snap))
    snap["policy_faults"] = [
        {"family": "destage", "policy": "mysched.py:Broken", "call": "decide", "error": "ZeroDivisionError: x",
         "fallback": "hlwm", "time": 1.0},
        {"family": "destage_order", "policy": "myorder.py:Bad", "call": "next", "error": "returned 7, which is not a "
         "dirty unit waiting to be destaged", "fallback": "lrw", "time": 2.0},
    ]
    text = " ".join(render_text(panels.header(snap), width=200).split())
    assert "POLICY FAULT (+1 earlier): destage_order myorder.py:Bad failed in next: returned 7" in text
    assert "now lrw" in text


def test_a_mount_s_counters_show_the_stripes_written_around_the_cache():
    snap = fixed_snapshot()
    assert "around cache" not in render_text(panels.counters_panel(snap))  # a simulation: no such row
    snap["cache"] = dict(snap["cache"], bypass_whole_stripes=True, bypassed_stripes=1234)
    text = render_text(panels.counters_panel(snap))
    assert "stripes past cache" in text and "1,234" in text


def test_the_header_says_a_flush_waits_while_paused():
    snap = fixed_snapshot()
    snap["paused"] = True
    snap["cache"] = dict(snap["cache"], draining=0)
    assert "FLUSH WAITING" not in render_text(panels.header(snap))
    snap["cache"] = dict(snap["cache"], draining=1)
    assert "PAUSED FLUSH WAITING (r resumes)" in render_text(panels.header(snap))
    snap["paused"] = False  # not paused: the flush is simply in progress
    assert "FLUSH WAITING" not in render_text(panels.header(snap))


def test_a_paused_cache_with_a_flush_reports_draining():
    import trio

    from vraid.core.geometry import Geometry
    from vraid.engine.build import EngineConfig
    from vraid.testing.session import Session

    g = Geometry.for_disk_size(level=5, ndisks=3, disk_size=(1 << 20) + 64 * 16 * 1024, strip_size=16 * 1024)
    s = Session(EngineConfig(g, policies={"cache": "stripe"}, cache_size=4 * g.stripe_data_bytes))
    try:
        s.write(0, b"x" * 4096)

        async def pause_and_look():  # pause and status need the engine's loop
            s.array.cache.pause()
            return s.array.cache.status().draining

        assert s.call(pause_and_look) == 0

        async def flush_while_paused():
            async with trio.open_nursery() as nursery:
                nursery.start_soon(s.array.cache.flush)
                await trio.testing.wait_all_tasks_blocked()
                seen = s.array.cache.status().draining
                s.array.cache.resume()
            return seen

        assert s.call(flush_while_paused) == 1
    finally:
        s.close()

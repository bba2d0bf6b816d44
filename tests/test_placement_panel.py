"""The placement (seed 004) in vraid top (panels.placement_panel), vraid status (render.placement_table)
and vraid sim --json, from a real engine's status."""

from __future__ import annotations

from snaputil import assert_snapshot, render_text

from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session
from vraid.tui import panels
from vraid.tui.render import placement_table

PLACEMENT = {
    "policy": "multibuffer", "spec": "multibuffer:buffer=32,order=lrw,hot=0.1,spare=0.05", "buffer_strips": 32,
    "write_hit_ratio": 0.25, "buffered": 12, "buffered_per_disk": {"0": 4, "1": 0, "2": 3, "3": 3, "4": 2},
    "free_stripes": 40, "stripes": 400, "strips": 1520,
    "stats": {"host_strips": 900, "read_hits": 7, "steps": 1200, "LW": 180, "PW": 9, "swaps": 120, "releases": 60,
              "in_place": 0, "partial_in_place": 12, "forgets": 5, "flushes": 3, "lost": 0, "sizes": {"4": 180, "2": 5, "1": 4}},
    "directory": {"records": 1200, "commits": 70, "checkpoints": 1, "forced_commits": 67, "journal_bytes": 20480,
                  "journal_size": 1 << 20, "pending_records": 2, "seq": 1200},
}


def test_placement_panel_snapshot():
    text = render_text(panels.placement_panel({"placement": PLACEMENT}))
    assert "LW 180  PW 9" in text and "40/400" in text and "120 swaps" in text
    assert_snapshot("placement_panel", text)


def test_status_and_top_show_a_running_placement():
    g = Geometry(5, 5, 64, 4096, 4096, data_offset=4096)
    with Session(EngineConfig(g, policies={"placement": "multibuffer:buffer=8"})) as s:
        for i in range(40):
            s.write(i * 4096 * 3, bytes([i]) * 4096)
        st = s.status()
    pl = st["placement"]
    assert pl["policy"] == "multibuffer" and pl["stats"]["LW"] + pl["stats"]["PW"] >= 1
    assert sum(pl["buffered_per_disk"].values()) == pl["buffered"] > 0
    assert "placement: multibuffer" in render_text(panels.frame(st))
    text = render_text(placement_table(pl), width=120)
    assert "stripe writes" in text and "LW" in text


def test_the_live_views_extras_row_shows_the_write_buffers():
    snap = {"placement": PLACEMENT}
    assert panels.has_extras(snap)
    text = render_text(panels.extras_panel(snap))
    assert "write buffers:" in text and "free stripes 40" in text and "LW 180" in text

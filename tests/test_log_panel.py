"""The log disk in vraid top (panels.log_panel, the extras row) and in vraid status (render.log_table)."""

from __future__ import annotations

from snaputil import assert_snapshot, render_text

from vraid.backends.memory import MemoryStore
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session
from vraid.tui import panels
from vraid.tui.render import log_table, status_tables

LOG = {
    "kind": "mcd", "stores": ["log0", "log1"], "ram_bytes": 4 << 20, "ram_used_blocks": 300, "ram_blocks": 1024,
    "log_segments": 510, "log_used_segments": 128, "log_bytes": 510 * 65536, "segment_bytes": 65536, "head": 900,
    "tail": 772, "durable_tail": 700, "failed": None, "level1_destages": 40, "level1_segments": 900,
    "level1_blocks": 13000, "level2_destages": 772, "level2_blocks": 11000, "bytes_written": 900 * 65536,
    "ram_hits": 12, "log_hits": 30, "read_blocks": 500,
    "slots": {"SLOT_FREE": 100, "IN_RAM_BUFFER": 300, "IN_CACHE_DISK": 1800, "IN_DATA_DISK": 0, "ram_slots": 1024, "ram_used": 300},
    "scheduler": {"name": "idle", "spec": "idle:idle=100ms,high=0.9,max_destages=4"},
}


def test_log_panel_snapshot():
    text = render_text(panels.log_panel({"log": LOG}))
    assert "RAM buffer" in text and "128/510 segments" in text and "IN_CACHE_DISK 1800" in text
    assert_snapshot("log_panel", text)


def test_log_panel_says_a_failure():
    text = render_text(panels.log_panel({"log": LOG | {"failed": "log0: EIO", "message": "log disk failed (log0: EIO): 7 blocks lost"}}))
    assert "7 blocks lost" in text


def test_the_extras_row_and_the_frame_show_a_live_log():
    g = Geometry.for_disk_size(level=5, ndisks=4, disk_size=(1 << 20) + 32 * 16 * 1024, strip_size=16 * 1024)
    with Session(EngineConfig(g, log="scd", log_size=1 << 20, log_fresh=True)) as s:
        s.write(0, b"x" * 200_000)
        s.flush()
        st = s.status()
    assert st["log"]["level1_blocks"] >= 49
    assert panels.has_extras(st)
    row = panels.log_disk_row(st["log"])
    assert row["kind"] == "scd" and row["L1"] >= 4
    assert "log disk: scd" in render_text(panels.log_panel(st))


def test_status_shows_the_log_mounted_and_not():
    text = render_text(log_table(LOG), width=120)
    assert "level 2 (log -> array)" in text and "772 segments" in text
    rec = {"spec": "mcd:2", "size": 1 << 20, "files": ["log0.img", "log1.img"], "offset": 0, "problem": ""}
    text = render_text(log_table(rec), width=120)
    assert "mcd:2, 1M per log store" in text and "log0.img, log1.img" in text and "present" in text

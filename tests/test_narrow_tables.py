"""ISSUE-18 item 5: tables with values a user must type or read (`vraid models` preset specs,
`vraid status` counters and file names) are never cut with "…" on an 80-column terminal."""

from __future__ import annotations

import io

from rich.console import Console

from vraid.backends.models import describe_presets
from vraid.core.geometry import Geometry
from vraid.engine.build import EngineConfig
from vraid.testing.session import Session
from vraid.tui.render import models_sources_table, models_table, status_tables


def render(*tables, width: int = 80) -> str:
    out = io.StringIO()
    console = Console(width=width, file=out, color_system=None)
    for t in tables:
        console.print(t)
    return out.getvalue()


def test_models_tables_keep_every_spec_whole_at_80_columns():
    presets = describe_presets()
    text = render(models_table(presets), models_sources_table(presets))
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for d in presets:
        assert d["spec"] in text


def test_status_tables_fold_instead_of_cutting_at_80_columns():
    g = Geometry(5, 5, 8, 4096, 16384)
    with Session(EngineConfig(g, policies={"cache": "stripe", "destage": "hlwm:high=0.95,low=0.85,max_destages=4"})) as s:
        s.write(0, b"x" * 65536)
        st = {**s.status(), "state": "mounted", "directory": "/a"}
    st["members"] = [{**m, "store": f"/a/rather/long/path/to/an/array/directory/{m['store']}.img",
                      "reads": 1234567890123, "read_bytes": 10 ** 15} for m in st["members"]]
    text = render(*status_tables(st))
    assert "…" not in text
    assert "…" not in text and "12345" in text  # the long counter is folded onto lines, not cut

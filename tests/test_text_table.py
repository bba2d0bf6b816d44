"""vraid.sim.table.TextTable (what the simulation layer reports in) and its rich drawing
in the CLI (vraid.tui.render.rich_table)."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.table import Table

from vraid.sim.table import Strong, TextTable
from vraid.tui.render import rich_table


def _text(renderable) -> str:
    console = Console(record=True, width=100)
    console.print(renderable)
    return console.export_text()


def test_columns_rows_and_checks():
    t = TextTable(title="limits", caption="1.2 rule")
    t.add_column("S", justify="right")
    t.add_column("value")
    t.add_row("1", Strong("1.25"))
    assert t.row_count == 1 and [c.name for c in t.columns] == ["S", "value"]
    assert isinstance(t.rows[0][1], str) and isinstance(t.rows[0][1], Strong)
    with pytest.raises(ValueError):
        t.add_row("only one cell")
    with pytest.raises(ValueError):
        t.add_column("late")


def test_rich_table_draws_plain_text_and_strong_cells_bold():
    t = TextTable(title="regions [3, 4]", caption="see [bold]docs[/]", show_header=False)
    t.add_column("k")
    t.add_column("v", justify="right")
    t.add_row("S_w^except", "[3, 4], [9, 10]")
    t.add_row("[bold]x[/]", Strong("1.250"))
    r = rich_table(t)
    assert isinstance(r, Table) and r.row_count == 2 and not r.show_header
    assert [c.justify for c in r.columns] == ["left", "right"]
    text = _text(r)
    # cells are text, not markup: brackets survive
    assert "[3, 4], [9, 10]" in text and "[bold]x[/]" in text and "see [bold]docs[/]" in text
    cells = list(r.columns[1].cells)
    assert cells[1].style == "bold" and cells[0].style == ""

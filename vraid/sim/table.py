"""A plain table that the simulator's reports hand to a frontend.

The experiments' ``summary`` and the stride benchmark's ``table`` describe what to show (a
title, columns, rows of text); the CLI draws it (``vraid.tui.render.rich_table``). So the
simulation layer needs no terminal library: rich is imported only by the frontends
(tests/test_layers.py). A cell that should stand out is a :class:`Strong` string.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Justify = Literal["left", "right", "center"]


class Strong(str):
    """A cell to emphasise (bold in a terminal); otherwise an ordinary string."""

    __slots__ = ()


@dataclass(frozen=True)
class Column:
    name: str
    justify: Justify = "left"


@dataclass
class TextTable:
    """Title, columns and rows of text; ``add_column``/``add_row`` as in rich's Table."""

    title: str = ""
    caption: str = ""
    show_header: bool = True
    columns: list[Column] = field(default_factory=list)
    rows: list[tuple[str, ...]] = field(default_factory=list)

    def add_column(self, name: str, justify: Justify = "left") -> None:
        if self.rows:
            raise ValueError("add every column before the first row")
        self.columns.append(Column(name, justify))

    def add_row(self, *cells: str) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append(tuple(cells))

    @property
    def row_count(self) -> int:
        return len(self.rows)

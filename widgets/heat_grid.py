"""A heat grid drawn line by line (one widget): per-value cells by row, or one cell per row packed.

Zoom "gpus": one line per row, a label then one two-cell block per value. Zoom "hosts": every row is one
one-cell block (its `worst` value, "!" when it has an alert), packed in row order across the width, so a
thousand rows fit in a few lines; the selected row is drawn reversed and `expanded` adds that row's own
line below its cells. "auto" packs only when the rows would not fit one a line. Values are fractions 0-1
(None: no reading). Shade and colour both carry the value, so the grid still reads without colour. A
greyed row (stale data) is drawn dim. Only the lines on screen are built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, Sequence

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

SHADES = " ░▒▓█"
LEVELS = 10
CELL_WIDTH = 2
NO_READING = "··"
ALERT = "!"
Zoom = Literal["auto", "hosts", "gpus"]


@dataclass(frozen=True, slots=True)
class HeatRow:
    label: str
    values: tuple[float | None, ...]
    greyed: bool = False
    note: str = ""  # shown after the cells (e.g. "stale 42s")
    key: str = ""  # what selects and expands the row (its label when empty)
    worst: float | None = None  # the row's one cell when packed
    alert: bool = False  # packed: drawn as ALERT, whatever its value

    @property
    def id(self) -> str:
        return self.key or self.label


def level(value: float) -> int:
    """0..LEVELS-1 for a fraction, clamped."""
    return min(LEVELS - 1, max(0, int(value * LEVELS)))


def level_colour(index: int) -> Color:
    """Green at 0, yellow half way, red at the top."""
    fraction = index / (LEVELS - 1)
    red = int(255 * min(1.0, 2 * fraction))
    green = int(200 * min(1.0, 2 * (1 - fraction)))
    return Color.from_rgb(red, green, 40)


def cell_text(value: float | None, width: int = CELL_WIDTH) -> str:
    if value is None:
        return NO_READING[:width]
    # Four shades, a quarter of the range each: ░ below 25 %, ▒, ▓, █ from 75 %.
    steps = len(SHADES) - 1
    return SHADES[1 + min(steps - 1, max(0, int(value * steps)))] * width


@dataclass(frozen=True, slots=True)
class GridLine:
    """One drawn line: packed row indexes, or one row's own line (`expanded`)."""

    rows: tuple[int, ...]
    expanded: bool = False


class HeatGrid(ScrollView, can_focus=True):
    """Rows of fraction cells; `set_rows` replaces them; `set_zoom`, `select_row`, `expand_row` change the view."""

    DEFAULT_CSS = """
    HeatGrid {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    """
    LABEL_WIDTH: ClassVar[int] = 22
    """The widest a label is drawn; narrower when every label is shorter."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: tuple[HeatRow, ...] = ()
        self.label_width = self.LABEL_WIDTH
        self.zoom: Zoom = "gpus"
        self.selected: str | None = None
        self.expanded: str | None = None
        self.grid_lines: tuple[GridLine, ...] = ()
        self._cell_styles = [Style(color=level_colour(index)) for index in range(LEVELS)]
        self._dim = Style(dim=True)
        self._alert = Style(color="red", bold=True)
        self._cursor = Style(reverse=True)

    @property
    def packed(self) -> bool:
        """Drawn as one cell per row: zoom "hosts", or "auto" with more rows than lines on screen."""
        return self.zoom == "hosts" or (self.zoom == "auto" and len(self.rows) > self.scrollable_content_region.height)

    def set_rows(self, rows: Sequence[HeatRow]) -> None:
        self.rows = tuple(rows)
        self.label_width = min(self.LABEL_WIDTH, max((len(row.label) for row in self.rows), default=0))
        self._layout()

    def set_zoom(self, zoom: Zoom) -> None:
        self.zoom = zoom
        self._layout()

    def select_row(self, key: str | None) -> None:
        """Mark row `key` (drawn reversed when packed) and scroll its line into view."""
        self.selected = key
        self.refresh()
        line = self.line_of(key)
        if line is not None and self.packed:
            self.scroll_to_region(Region(0, line, 1, 2 if self.expanded == key else 1), animate=False)

    def expand_row(self, key: str | None) -> None:
        """Show row `key`'s own line (its per-value cells) below its packed cells; None folds it back."""
        self.expanded = key
        self._layout()
        self.select_row(self.selected)

    def line_of(self, key: str | None) -> int | None:
        """The index of the line drawing row `key`'s cell, or None."""
        for index, line in enumerate(self.grid_lines):
            if not line.expanded and any(self.rows[row].id == key for row in line.rows):
                return index
        return None

    def _layout(self) -> None:
        widest = max((len(row.values) for row in self.rows), default=0)
        row_width = self.label_width + 1 + widest * (CELL_WIDTH + 1) + 16
        if not self.packed:
            self.grid_lines = tuple(GridLine((index,)) for index in range(len(self.rows)))
        else:
            per_line = max(1, self.scrollable_content_region.width)
            lines = []
            for start in range(0, len(self.rows), per_line):
                indexes = tuple(range(start, min(start + per_line, len(self.rows))))
                lines.append(GridLine(indexes))
                lines.extend(GridLine((index,), expanded=True) for index in indexes
                             if self.rows[index].id == self.expanded)
            self.grid_lines = tuple(lines)
            row_width = per_line if not self.expanded else max(per_line, row_width)
        self.virtual_size = Size(row_width, len(self.grid_lines))
        self.refresh()

    def on_resize(self) -> None:
        self._layout()

    def packed_segments(self, line: GridLine) -> list[Segment]:
        """One cell per row: its worst value's shade (ALERT when it has an alert), the selected one reversed."""
        segments = []
        for index in line.rows:
            row = self.rows[index]
            if row.alert:
                text, style = ALERT, self._alert
            else:
                text = cell_text(row.worst, 1)
                style = self._dim if row.greyed or row.worst is None else self._cell_styles[level(row.worst)]
            if row.greyed and row.alert:
                style = self._dim + self._alert
            segments.append(Segment(text, style + self._cursor if row.id == self.selected else style))
        return segments

    def line_segments(self, row: HeatRow) -> list[Segment]:
        """The segments of one grid line (without padding to the widget width)."""
        label = row.label[: self.label_width].ljust(self.label_width)
        segments = [Segment(label + " ", self._dim if row.greyed else None)]
        for value in row.values:
            if row.greyed or value is None:
                style = self._dim
            else:
                style = self._cell_styles[level(value)]
            segments.append(Segment(cell_text(value), style))
            segments.append(Segment(" "))
        if row.note:
            segments.append(Segment(row.note, self._dim))
        return segments

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = y + self.scroll_offset.y
        if not 0 <= index < len(self.grid_lines):
            return Strip.blank(width, self.rich_style)
        line = self.grid_lines[index]
        if self.packed and not line.expanded:
            strip = Strip(self.packed_segments(line))
        else:
            strip = Strip(self.line_segments(self.rows[line.rows[0]]))
        return strip.apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

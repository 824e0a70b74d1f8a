"""A heat grid: one line per row, a label then one two-cell block per value, drawn line by line (one widget).

Values are fractions 0-1 (None: no reading). Shade and colour both carry the value, so the grid still reads
without colour. A greyed row (stale data) is drawn dim. Only the lines on screen are built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

SHADES = " ░▒▓█"
LEVELS = 10
CELL_WIDTH = 2
NO_READING = "··"


@dataclass(frozen=True, slots=True)
class HeatRow:
    label: str
    values: tuple[float | None, ...]
    greyed: bool = False
    note: str = ""  # shown after the cells (e.g. "stale 42s")


def level(value: float) -> int:
    """0..LEVELS-1 for a fraction, clamped."""
    return min(LEVELS - 1, max(0, int(value * LEVELS)))


def level_colour(index: int) -> Color:
    """Green at 0, yellow half way, red at the top."""
    fraction = index / (LEVELS - 1)
    red = int(255 * min(1.0, 2 * fraction))
    green = int(200 * min(1.0, 2 * (1 - fraction)))
    return Color.from_rgb(red, green, 40)


def cell_text(value: float | None) -> str:
    if value is None:
        return NO_READING
    # Four shades, a quarter of the range each: ░ below 25 %, ▒, ▓, █ from 75 %.
    steps = len(SHADES) - 1
    return SHADES[1 + min(steps - 1, max(0, int(value * steps)))] * CELL_WIDTH


class HeatGrid(ScrollView, can_focus=True):
    """Rows of fraction cells; `set_rows` replaces them and repaints."""

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
        self._cell_styles = [Style(color=level_colour(index)) for index in range(LEVELS)]
        self._dim = Style(dim=True)

    def set_rows(self, rows: Sequence[HeatRow]) -> None:
        self.rows = tuple(rows)
        self.label_width = min(self.LABEL_WIDTH, max((len(row.label) for row in self.rows), default=0))
        widest = max((len(row.values) for row in self.rows), default=0)
        self.virtual_size = Size(self.label_width + 1 + widest * (CELL_WIDTH + 1) + 16, len(self.rows))
        self.refresh()

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
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, self.rich_style)
        strip = Strip(self.line_segments(self.rows[index]))
        return strip.apply_style(self.rich_style).crop_extend(0, width, self.rich_style)

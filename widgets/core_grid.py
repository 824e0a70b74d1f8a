"""Per-core meters laid out in columns; many cores fold into a compact heat grid."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from pth_top.widgets.meter import MeterSegment, meter_text

MIN_METER_WIDTH = 22
COMPACT_CELL_WIDTH = 4
BLOCKS = " ▁▂▃▄▅▆▇█"


@dataclass(frozen=True, slots=True)
class CoreReading:
    """One core: its label, coloured segments, and the total fraction busy (0..1)."""

    label: str
    segments: tuple[MeterSegment, ...]
    busy_fraction: float


def heat_style(busy_fraction: float) -> str:
    if busy_fraction >= 0.9:
        return "bold red"
    if busy_fraction >= 0.6:
        return "yellow"
    if busy_fraction >= 0.25:
        return "green"
    return "bright_black"


def is_compact(core_count: int, width: int, compact_from: int, max_meter_rows: int) -> bool:
    """Compact heat cells from `compact_from` cores, or when meters would need too many rows."""
    if core_count >= compact_from:
        return True
    meter_columns = max(1, min(core_count, width // MIN_METER_WIDTH))
    return math.ceil(core_count / meter_columns) > max_meter_rows


def grid_columns(core_count: int, width: int, compact: bool) -> int:
    """How many columns the grid uses at this width."""
    if core_count == 0 or width <= 0:
        return 1
    cell = COMPACT_CELL_WIDTH if compact else MIN_METER_WIDTH
    return max(1, min(core_count, width // cell))


def grid_lines(
    cores: Sequence[CoreReading], width: int, compact_from: int = 64, max_meter_rows: int = 1_000
) -> list[Text]:
    """The grid as one Text per line (a pure function, tested alone)."""
    if not cores:
        return []
    compact = is_compact(len(cores), width, compact_from, max_meter_rows)
    columns = grid_columns(len(cores), width, compact)
    rows = math.ceil(len(cores) / columns)
    cell_width = width // columns
    label_width = max(len(core.label) for core in cores)
    lines = []
    for row in range(rows):
        line = Text(no_wrap=True, overflow="crop")
        # Column-major order, as htop fills its CPU columns.
        for column in range(columns):
            index = column * rows + row
            if index >= len(cores):
                break
            core = cores[index]
            if compact:
                level = min(len(BLOCKS) - 1, max(0, round(core.busy_fraction * (len(BLOCKS) - 1))))
                cell = Text(core.label.rjust(label_width)[-(cell_width - 1):], style="dim")
                cell.append(BLOCKS[level], style=heat_style(core.busy_fraction))
                cell.pad_right(max(0, cell_width - len(cell.plain)))
                line.append_text(cell)
            else:
                percent = f"{100 * core.busy_fraction:.1f}%" if math.isfinite(core.busy_fraction) else "N/A"
                meter = meter_text(
                    core.label, core.segments, cell_width - 1, percent, label_width=label_width
                )
                line.append_text(meter)
                line.append(" ")
        lines.append(line)
    return lines


class CoreGrid(Widget):
    """All cores of a CPU, htop-style meters, or one heat cell per core from `compact_from` cores."""

    DEFAULT_CSS = """
    CoreGrid {
        height: auto;
        width: 1fr;
    }
    """

    cores: reactive[tuple[CoreReading, ...]] = reactive(())
    """The readings to draw, one per logical core (a new core count relayouts, see `watch_cores`)."""
    compact_from: reactive[int] = reactive(64, layout=True)
    """Core count at which meters fold into compact heat cells."""
    max_meter_rows: reactive[int] = reactive(1_000, layout=True)
    """Meters needing more rows than this fold into compact heat cells too."""

    def watch_cores(self, old: tuple[CoreReading, ...], new: tuple[CoreReading, ...]) -> None:
        # The height depends on the core count only; a needless relayout repaints every scrollbar.
        if len(old) != len(new):
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if not self.cores:
            return 1
        compact = is_compact(len(self.cores), width, self.compact_from, self.max_meter_rows)
        return math.ceil(len(self.cores) / grid_columns(len(self.cores), width, compact))

    def render(self) -> Text:
        lines = grid_lines(self.cores, self.size.width, self.compact_from, self.max_meter_rows)
        return Text("\n").join(lines)

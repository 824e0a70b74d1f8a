"""A rolling line chart drawn with plotext 6 (textual-plotext only supports plotext < 6)."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

# plotext's documentation module, which its package __init__ imports for `plotext.doc`.
PLOTEXT_MANUAL_MODULE = "plotext._doc.doc"


@dataclass(frozen=True, slots=True)
class ChartSeries:
    """One line: its legend label, values oldest first (NaN = gap), and a colour (0-255 or a name)."""

    label: str
    values: tuple[float, ...]
    color: int | str


def chart_text(
    series: Sequence[ChartSeries],
    width: int,
    height: int,
    y_max: float = 100.0,
    title: str = "",
    x_step_s: float = 1.0,
) -> Text:
    """Render the chart as Rich Text; x is time before now, labelled with units (plotext's master figure)."""
    if width < 12 or height < 4:
        return Text("")
    legend = Text(no_wrap=True, overflow="crop")
    legend.append(title, style="bold")
    for line in series:
        legend.append(f" ━ {line.label}", style=_rich_color(line.color))
    # One point per column at most: more only cost plotext time (~20 ms a chart at 300 points).
    drawable = [(line, points) for line in series if len(points := _points(line, x_step_s, width)) >= 2]
    if not drawable:
        legend.append("  collecting…", style="dim")
        return legend
    plotext = _plotext()
    figure = plotext.figure
    figure.clear()
    figure.plot_size(width, height - 1)
    figure.theme("dark")
    figure.canvas("default")
    figure.ruler("y").lim(0, y_max)
    oldest_s = min(points[0][0] for _, points in drawable)
    figure.ruler("x").ticks(*time_ticks(oldest_s, width))
    for line, points in drawable:
        xs, ys = zip(*points, strict=True)
        marker = plotext.marker("braille", line.color)
        figure.draw(figure.signal(list(xs), list(ys), marker=marker).lines())
    return Text("\n").join([legend, Text.from_ansi(figure.build().string(), no_wrap=True)])


# Tick spacings to choose from, in seconds: the x axis reads "-2m ... now" with a unit on every label.
TICK_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600)
# Columns one tick label needs, with room between labels.
TICK_LABEL_COLUMNS = 8


def format_seconds_ago(seconds: float, step_s: int = 1) -> str:
    """Tick label for a point `seconds` before now, in the unit of the tick step: "now", "-30s", "-2m", "-1h"."""
    ago = round(-seconds)
    if ago <= 0:
        return "now"
    if step_s % 3600 == 0:
        return f"-{ago // 3600}h"
    if step_s % 60 == 0:
        return f"-{ago // 60}m"
    return f"-{ago}s"


def time_ticks(oldest_s: float, width: int) -> tuple[list[float], list[str]]:
    """x ticks from `oldest_s` (seconds before now, <= 0) to now, as many as fit in `width` columns."""
    span_s = max(-oldest_s, 1.0)
    most = max(2, width // TICK_LABEL_COLUMNS)
    step = next((step for step in TICK_STEPS_S if span_s / step < most), TICK_STEPS_S[-1])
    positions = [-step * count for count in range(int(span_s // step) + 1)][::-1]
    return [float(position) for position in positions], [format_seconds_ago(position, step) for position in positions]


def _plotext() -> ModuleType:
    """plotext, imported on first use, without its interactive documentation.

    plotext 6 builds its whole manual when imported (~150 ms and ~2.5 MiB, most of the import); a chart
    never reads it, so an empty stand-in takes the manual's module slot unless plotext is already loaded.
    """
    if "plotext" not in sys.modules:
        manual = ModuleType(PLOTEXT_MANUAL_MODULE)
        vars(manual)["docs"] = None  # the one name plotext takes from its manual
        sys.modules.setdefault(PLOTEXT_MANUAL_MODULE, manual)
    import plotext

    return plotext


def _points(line: ChartSeries, x_step_s: float, max_points: int) -> list[tuple[float, float]]:
    """(seconds before now, value) for each finite value; beyond `max_points` values, the highest of
    each run of consecutive values, so a spike still shows. Runs end at the newest value."""
    values = line.values
    count = len(values)
    last = count - 1
    if count <= max_points:
        return [((x - last) * x_step_s, v) for x, v in enumerate(values) if math.isfinite(v)]
    points = []
    for bucket in range(max_points):
        start, end = count * bucket // max_points, count * (bucket + 1) // max_points
        finite = [v for v in values[start:end] if math.isfinite(v)]
        if finite:
            points.append(((end - 1 - last) * x_step_s, max(finite)))
    return points


def _rich_color(color: int | str) -> str:
    return f"color({color})" if isinstance(color, int) else color


class HistoryChart(Widget):
    """A line chart of recent values; redraws at its own size whenever `series` changes."""

    DEFAULT_CSS = """
    HistoryChart {
        height: 1fr;
        width: 1fr;
        min-height: 4;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    series: reactive[tuple[ChartSeries, ...]] = reactive(())
    """The lines to draw."""
    y_max: reactive[float] = reactive(100.0)
    """Top of the y axis."""
    title: reactive[str] = reactive("")
    """Chart title."""
    x_step_s: reactive[float] = reactive(1.0)
    """Seconds between two values, for the x axis (seconds before now)."""

    def render(self) -> Text:
        return chart_text(
            self.series, self.size.width, self.size.height, self.y_max, self.title, self.x_step_s
        )

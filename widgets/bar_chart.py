"""A horizontal bar chart drawn with plotext 6, with an optional reference line (e.g. 100 %)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar: its label and value (non-finite values are left out)."""

    label: str
    value: float


def bar_chart_text(
    bars: Sequence[Bar],
    width: int,
    height: int,
    *,
    title: str = "",
    reference: float | None = None,
    empty_text: str = "no data",
    label_width: int = 22,
    value_format: str = "{:.1f}",
) -> Text:
    """Render the bars as Rich Text (uses plotext's master figure); `reference` draws a vertical line."""
    shown = [bar for bar in bars if math.isfinite(bar.value)]
    if not shown or width < 20 or height < 4:
        return Text(empty_text if not shown else "", style="dim")
    import plotext

    shown = shown[: max(1, height - 4)]
    labels = [bar.label[:label_width] for bar in shown]
    values = [bar.value for bar in shown]
    figure = plotext.figure
    figure.clear()
    figure.plot_size(width, height)
    figure.theme("dark")
    figure.canvas("default")
    if title:
        figure.title(title)
    upper = max(values + ([reference * 1.05] if reference else []))
    figure.ruler("x").lim(0, upper * 1.05 if upper > 0 else 1)
    # plotext draws the first bar at the bottom: reverse so the list reads top to bottom.
    value_labels = [value_format.format(value) for value in values]
    figure.draw(figure.bar(labels[::-1], values[::-1], orientation="h", labeled=value_labels[::-1], width=0.6))
    if reference is not None:
        figure.line(reference, orientation="vertical")
    return Text.from_ansi(figure.build().string(), no_wrap=True)


class BarChart(Widget):
    """Horizontal bars, redrawn at the widget's size whenever `bars` changes."""

    DEFAULT_CSS = """
    BarChart {
        height: 1fr;
        width: 1fr;
        min-height: 6;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    bars: reactive[tuple[Bar, ...]] = reactive(())
    """The bars, top to bottom."""
    title: reactive[str] = reactive("")
    """Chart title."""
    reference: reactive[float | None] = reactive(None)
    """x of a vertical reference line (None: no line)."""
    empty_text: reactive[str] = reactive("no data")
    """Shown when there are no bars."""

    def render(self) -> Text:
        return bar_chart_text(
            self.bars, self.size.width, self.size.height,
            title=self.title, reference=self.reference, empty_text=self.empty_text,
        )

"""A one-line sparkline on a fixed scale (0..maximum), so 20 % always looks like 20 %."""

from __future__ import annotations

import math
from typing import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

LEVELS = " ▁▂▃▄▅▆▇█"


def sparkline_text(values: Sequence[float], width: int, maximum: float = 100.0, style: str = "") -> Text:
    """The newest `width` values as block characters, right-aligned; NaN draws as a gap."""
    if width <= 0:
        return Text("")
    chars = []
    for value in values[-width:]:
        if not math.isfinite(value):
            chars.append(" ")
            continue
        level = round(min(max(value / maximum, 0.0), 1.0) * (len(LEVELS) - 1))
        chars.append(LEVELS[max(level, 1)])
    return Text("".join(chars).rjust(width), style=style, no_wrap=True)


class LevelSparkline(Widget):
    """Recent values as a one-line sparkline on a fixed 0..maximum scale."""

    DEFAULT_CSS = """
    LevelSparkline {
        height: 1;
        width: 1fr;
        color: $accent;
    }
    """

    values: reactive[tuple[float, ...]] = reactive(())
    """The series, oldest first."""
    maximum: reactive[float] = reactive(100.0)
    """The value drawn as a full block."""

    def render(self) -> Text:
        return sparkline_text(self.values, self.size.width, self.maximum)

"""An htop-style meter: `label[|||||||||          42.0%]` with coloured segments."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class MeterSegment:
    """A part of the bar: `fraction` of the full width (0..1), drawn in `style` (a Rich style)."""

    fraction: float
    style: str


def meter_text(
    label: str,
    segments: Sequence[MeterSegment],
    width: int,
    value_text: str = "",
    *,
    label_width: int | None = None,
    bar_char: str = "|",
) -> Text:
    """Draw a meter in `width` cells; the value text is right-aligned inside the brackets."""
    label_cells = label.rjust(label_width) if label_width else label
    inner_width = max(0, width - len(label_cells) - 2)
    text = Text(no_wrap=True, overflow="crop")
    text.append(label_cells, style="bold")
    text.append("[", style="bold")
    filled: list[tuple[int, str]] = []
    used = 0
    for segment in segments:
        fraction = segment.fraction if math.isfinite(segment.fraction) else 0.0
        cells = min(inner_width - used, max(0, round(fraction * inner_width)))
        filled.append((cells, segment.style))
        used += cells
    value = value_text[-inner_width:] if inner_width else ""
    body = [" "] * inner_width
    styles: list[str] = [""] * inner_width
    position = 0
    for cells, style in filled:
        for index in range(position, position + cells):
            body[index] = bar_char
            styles[index] = style
        position += cells
    start = inner_width - len(value)
    for offset, char in enumerate(value):
        body[start + offset] = char
        styles[start + offset] = "dim" if start + offset >= used else styles[start + offset]
    for char, style in zip(body, styles, strict=True):
        text.append(char, style=style)
    text.append("]", style="bold")
    return text


class Meter(Widget):
    """One horizontal meter that fills its width."""

    DEFAULT_CSS = """
    Meter {
        height: 1;
        width: 1fr;
    }
    """

    label: reactive[str] = reactive("")
    """Text before the bar, e.g. "Mem"."""
    segments: reactive[tuple[MeterSegment, ...]] = reactive(())
    """Coloured parts of the bar, in order."""
    value_text: reactive[str] = reactive("")
    """Text shown right-aligned inside the bar, e.g. "3.1G/15.5G"."""

    def __init__(self, label: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.label = label

    def update(self, segments: Sequence[MeterSegment], value_text: str) -> None:
        self.segments = tuple(segments)
        self.value_text = value_text

    def render(self) -> Text:
        return meter_text(self.label, self.segments, self.size.width, self.value_text)

"""A Static that ignores updates to the content it already shows.

`Static.update` repaints the widget's whole region even when nothing changed; a dashboard that
updates every panel each second would rewrite unchanged lines to the terminal every second.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


class QuietStatic(Static):
    """Static whose `update` is a no-op when the new content equals the shown content."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        if content == self.content:
            return
        super().update(content, layout=layout)

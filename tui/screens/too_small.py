"""Shown instead of the UI while the terminal is smaller than the layout needs."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static


class TooSmallScreen(Screen[None]):
    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; }
    TooSmallScreen Static { width: auto; height: auto; }
    """

    def __init__(self, min_width: int, min_height: int) -> None:
        super().__init__()
        self.min_width = min_width
        self.min_height = min_height

    def compose(self) -> ComposeResult:
        yield Static(self.message(), id="too-small-message", markup=False)

    def message(self) -> str:
        return f"terminal too small (need {self.min_width}x{self.min_height})"

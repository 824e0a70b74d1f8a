"""Every key of the current screen and the app, generated from their bindings so it stays true."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def _key_names(binding: Binding) -> str:
    keys = [key.strip() for key in binding.key.split(",")]
    names = {"question_mark": "?", "slash": "/", "plus": "+", "minus": "-", "equals_sign": "=",
             "space": "space", "greater_than_sign": ">", "less_than_sign": "<", "full_stop": ".", "comma": ",",
             "tab": "Tab", "shift+tab": "Shift+Tab"}
    return " ".join(names.get(key, key) for key in keys)


def bindings_table(title: str, bindings: list[Binding]) -> Table:
    table = Table(
        title=title, title_justify="left", title_style="bold", show_header=False, box=None, padding=(0, 2, 0, 0)
    )
    table.add_column("keys", style="bold cyan", no_wrap=True)
    table.add_column("action")
    for binding in bindings:
        if binding.description:
            table.add_row(Text(_key_names(binding)), Text(binding.description))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close", id="help.close")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 76; max-width: 100%; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, screen_below: Screen | None = None) -> None:
        super().__init__()
        self.screen_below = screen_below

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            under = self.screen_below
            if under is not None and under.BINDINGS:
                screen_name = type(under).__name__.removesuffix("Screen")
                yield Static(bindings_table(f"{screen_name} keys", list(_as_bindings(under.BINDINGS))))
            yield Static(bindings_table("Everywhere", list(_as_bindings(self.app.BINDINGS))))
            yield Static(Text("Mouse: click a column header to sort, a row to select. "
                              "Ctrl+P opens the command palette with every action. Esc closes this help.", style="dim"))


def _as_bindings(items: list) -> list[Binding]:
    return [item if isinstance(item, Binding) else Binding(*item) for item in items]

"""A modal list of saved benchmark runs; dismisses with the chosen path (or None).

Files that are not readable runs are listed too, greyed out, with the reason.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from pth_top.benches.client.runs import SavedRun


class BenchRunsScreen(ModalScreen[Path | None]):
    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="bench_runs.close")]

    DEFAULT_CSS = """
    BenchRunsScreen { align: center middle; }
    BenchRunsScreen > Vertical {
        width: 76; max-width: 100%; height: 80%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    BenchRunsScreen OptionList { height: 1fr; }
    """

    def __init__(self, title: str, runs: list[SavedRun]) -> None:
        super().__init__()
        self.title_text = title
        self.runs = runs

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(self.title_text, style="bold"))
            if self.runs:
                yield OptionList(*[Option(Text(run.label(), style="" if run.record else "dim"), id=str(index),
                                          disabled=run.record is None) for index, run in enumerate(self.runs)])
            else:
                yield Label(Text("No saved runs on this machine yet.", style="dim"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.runs[int(event.option.id or 0)].path)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

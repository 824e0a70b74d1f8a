"""A yes/no question as a modal; dismisses with True (y/enter) or False (n/escape)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 60; max-width: 95%; height: auto; border: thick $warning; background: $surface; padding: 1 2;
    }
    ConfirmScreen #confirm-keys { color: $text-muted; margin-top: 1; }
    """
    BINDINGS = [
        Binding("y,enter", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.question), id="confirm-question")
            yield Static("y / Enter: yes    n / Esc: no", id="confirm-keys")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

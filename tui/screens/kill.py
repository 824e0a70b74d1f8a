"""Confirm before signalling a process: SIGTERM (ask it to exit) or SIGKILL (force)."""

from __future__ import annotations

import signal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.widgets import Button, Label

from pth_top.sensors.processes import SignalOutcome
from pth_top.text import printable

COMMAND_SHOWN_CHARS = 200


def signal_notice(pid: int, signal_number: int, outcome: SignalOutcome) -> tuple[str, SeverityLevel]:
    """What to tell the user after a signal was asked for: (message, notification severity)."""
    name = signal.Signals(signal_number).name
    if outcome is SignalOutcome.SENT:
        return f"sent {name} to PID {pid}", "information"
    if outcome is SignalOutcome.EXITED:
        return f"PID {pid} already exited: nothing sent", "warning"
    if outcome is SignalOutcome.REPLACED:
        return f"PID {pid} is now another process (the selected one exited): nothing sent", "warning"
    return f"{name} to PID {pid} refused: permission denied", "error"


class KillScreen(ModalScreen[int | None]):
    """Dismisses with the chosen signal number, or None when cancelled."""

    BINDINGS = [
        Binding("escape,n", "cancel", "Cancel", id="kill.cancel"),
        Binding("t", "choose_term", "SIGTERM", id="kill.term"),
        Binding("9", "choose_kill", "SIGKILL", id="kill.kill", key_display="9"),
    ]

    DEFAULT_CSS = """
    KillScreen { align: center middle; }
    KillScreen > Vertical {
        width: 64; max-width: 100%; height: auto;
        border: thick $error; background: $surface; padding: 1 2;
    }
    KillScreen Label { width: 100%; }
    KillScreen Horizontal { height: auto; margin-top: 1; }
    KillScreen Button { margin-right: 1; }
    """

    def __init__(self, pid: int, command: str) -> None:
        super().__init__()
        self.pid = pid
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(Text(f"Send a signal to PID {self.pid}?", style="bold"))
            yield Label(Text(printable(self.command[:COMMAND_SHOWN_CHARS]), style="dim"), markup=False)
            yield Label("t: SIGTERM asks it to exit · 9: SIGKILL forces it · Esc: cancel")
            with Horizontal():
                yield Button("SIGTERM (t)", id="term", variant="warning")
                yield Button("SIGKILL (9)", id="kill", variant="error")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#term", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        choices = {"term": signal.SIGTERM, "kill": signal.SIGKILL}
        self.dismiss(int(choices[event.button.id]) if event.button.id in choices else None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_choose_term(self) -> None:
        self.dismiss(int(signal.SIGTERM))

    def action_choose_kill(self) -> None:
        self.dismiss(int(signal.SIGKILL))

"""`pth-top replay FILE`: the Monitor's panels over a recording (tui/screens/replay.py), with help and quit."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding

from pth_top.recorder.frames import FrameSource


class ReplayApp(App):
    TITLE = "pth-top replay"
    CSS_PATH = "styles/app.tcss"
    BINDINGS = [
        Binding("q,f10", "quit", "Quit", id="quit"),
        Binding("question_mark,f1", "help", "Help", id="help", key_display="?"),
    ]

    def __init__(self, source: FrameSource, at_s: float | None = None) -> None:
        super().__init__()
        self.source = source
        self.at_s = at_s

    def on_mount(self) -> None:
        from pth_top.tui.screens.replay import ReplayScreen

        self.push_screen(ReplayScreen(self.source, self.at_s))

    def action_help(self) -> None:
        from pth_top.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

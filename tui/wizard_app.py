"""`pth-top wizard` on its own: a small app that hosts only the wizard screen."""

from __future__ import annotations

import datetime as dt
from typing import Callable

from textual.app import App
from textual.binding import Binding

from pth_top.configs.answers import Answers
from pth_top.configs.parts import Catalog
from pth_top.tui.screens.wizard import WizardScreen, _utc_now


class WizardApp(App):
    TITLE = "pth-top wizard"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", show=False),
        Binding("f1", "help", "Help", id="help"),
    ]

    def __init__(
        self, *, catalog: Catalog | None = None, answers: Answers | None = None,
        clock: Callable[[], dt.datetime] = _utc_now, preset: str | None = None,
    ) -> None:
        super().__init__()
        self._catalog, self._answers, self._clock = catalog, answers, clock
        self._preset = preset

    def on_mount(self) -> None:
        screen = WizardScreen(catalog=self._catalog, answers=self._answers, clock=self._clock)
        self.push_screen(screen)
        if self._preset is not None:
            self.call_after_refresh(screen.open_preset, self._preset)

    def action_help(self) -> None:
        from pth_top.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

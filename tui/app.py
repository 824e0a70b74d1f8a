"""The pth-top Textual app: modes (Monitor, Bench, Wizard, Doctor), sampling worker, global keys."""

from __future__ import annotations

import threading
from typing import Callable, Protocol

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from sensors.model import Snapshot
from tui.messages import SamplerFailed, SnapshotReady

MIN_INTERVAL_S = 0.25
MAX_INTERVAL_S = 10.0


class SnapshotSource(Protocol):
    def sample(self) -> Snapshot: ...


def _monitor_screen() -> Screen:
    from tui.screens.monitor import MonitorScreen

    return MonitorScreen()


def _doctor_screen() -> Screen:
    from tui.screens.doctor import DoctorScreen

    return DoctorScreen()


class PthTopApp(App):
    """Monitor, Bench, Wizard and Doctor as modes; one background sampler feeds the monitor."""

    TITLE = "pth-top"
    CSS_PATH = "styles/app.tcss"
    # Each mode is built on first use so start-up only pays for the monitor.
    MODES = {
        "monitor": _monitor_screen,
        "doctor": _doctor_screen,
    }
    DEFAULT_MODE = "monitor"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark,f1", "help", "Help", id="help", key_display="?"),
        Binding("m", "switch_mode('monitor')", "Monitor", id="mode.monitor", show=False),
        Binding("d", "switch_mode('doctor')", "Doctor", id="mode.doctor"),
    ]

    def __init__(
        self,
        interval_s: float = 1.0,
        source_factory: Callable[[], SnapshotSource] | None = None,
    ) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.paused = False
        self._source_factory = source_factory
        self._wake_sampler = threading.Event()

    def on_mount(self) -> None:
        self.sample_forever()

    @work(thread=True, exclusive=True, exit_on_error=False, group="sampler", name="sampler")
    def sample_forever(self) -> None:
        """Sample the machine every interval and post the result; never touches widgets."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        source = self._source_factory() if self._source_factory else _default_source()
        while not worker.is_cancelled:
            if not self.paused:
                try:
                    self.post_message(SnapshotReady(source.sample()))
                except Exception as error:  # a sensor bug must not kill the dashboard
                    self.post_message(SamplerFailed(f"{type(error).__name__}: {error}"))
            self._wake_sampler.wait(self.interval_s)
            self._wake_sampler.clear()

    def set_interval_s(self, interval_s: float) -> float:
        self.interval_s = min(MAX_INTERVAL_S, max(MIN_INTERVAL_S, round(interval_s, 2)))
        self._wake_sampler.set()
        return self.interval_s

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self._wake_sampler.set()

    def action_help(self) -> None:
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())


def _default_source() -> SnapshotSource:
    from sensors.sampler import Sampler

    return Sampler()

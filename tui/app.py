"""The pth-top Textual app: modes (Monitor, Bench, Wizard, Doctor), sampling worker, global keys."""

from __future__ import annotations

import os
import threading
import time
from functools import partial
from typing import Callable, Iterable, Sequence

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.filter import LineFilter, NoColor
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from pth_top.recorder.alert_rules import AlertSettings
from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.tui import MIN_INTERVAL_S, startup_gc
from pth_top.tui.alerting import DashboardAlerts
from pth_top.tui.first_sample import FirstSample, SnapshotSource, default_source
from pth_top.tui.messages import SamplerFailed, SnapshotReady
from pth_top.tui.screens.monitor import MonitorScreen
from pth_top.tui.screens.too_small import TooSmallScreen

MAX_INTERVAL_S = 10.0
MIN_WIDTH, MIN_HEIGHT = 60, 15
# Longest the sampler sleeps before it notices a cancelled worker.
WAKE_CHECK_S = 0.25
# How long the first frame waits for the first sample; a slower one (NVML waking GPUs) fills in later.
FIRST_SAMPLE_WAIT_S = 0.25
# After this long without a first sample the screen says so (a wedged GPU can hang NVML for minutes).
FIRST_SAMPLE_SLOW_S = 5.0
# Terminals that take no colour at all: the screen is drawn with attributes (bold, reverse) only.
COLOURLESS_TERMS = frozenset({"dumb"})


def _bench_screen() -> Screen:
    from pth_top.tui.screens.bench import BenchScreen

    return BenchScreen()


def _doctor_screen() -> Screen:
    from pth_top.tui.screens.doctor import DoctorScreen

    return DoctorScreen()


def _wizard_screen() -> Screen:
    from pth_top.tui.screens.wizard import WizardScreen

    return WizardScreen()


class PthTopApp(App):
    """Monitor, Bench, Wizard and Doctor as modes; one background sampler feeds the monitor."""

    TITLE = "pth-top"
    CSS_PATH = "styles/app.tcss"
    # Alerts go to the configured destinations from here; a browser tab (pth-top serve) only shows them.
    DELIVERS_ALERTS = True
    SCREENS = {"monitor": MonitorScreen}
    # Other modes are built on first use so start-up only pays for the monitor.
    MODES = {
        "monitor": "monitor",
        "bench": _bench_screen,
        "doctor": _doctor_screen,
        "wizard": _wizard_screen,
    }
    DEFAULT_MODE = "monitor"
    BINDINGS = [
        Binding("q,f10", "quit", "Quit", id="quit"),
        Binding("question_mark,f1", "help", "Help", id="help", key_display="?"),
        Binding("m", "switch_mode('monitor')", "Monitor", id="mode.monitor", show=False),
        Binding("b", "switch_mode('bench')", "Bench", id="mode.bench"),
        Binding("d", "switch_mode('doctor')", "Doctor", id="mode.doctor"),
        Binding("w", "switch_mode('wizard')", "Wizard", id="mode.wizard"),
    ]

    def __init__(
        self,
        interval_s: float = 1.0,
        source_factory: Callable[[], SnapshotSource] | None = None,
        first_sample: FirstSample | None = None,
    ) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.paused = False
        self._source_factory = source_factory or default_source
        # Started before Textual is even imported when the CLI passes it in.
        self._first_sample = first_sample or FirstSample.on_thread(self._source_factory)
        self._first_sample_in = False
        self.first_sample_slow_s = FIRST_SAMPLE_SLOW_S
        self._wake_sampler = threading.Event()
        self._colour_filter = [NoColor()] if os.environ.get("TERM", "") in COLOURLESS_TERMS else []

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, plus one that drops every colour on a terminal that has none."""
        return [*super().get_line_filters(), *self._colour_filter]

    def on_load(self) -> None:
        """Hand the first sample to the monitor before it mounts, so its first paint has data."""
        self._first_sample_in = self._first_sample.wait(FIRST_SAMPLE_WAIT_S)
        if self._first_sample_in and self._first_sample.snapshot is not None:
            self.monitor_screen.take_snapshot(self._first_sample.snapshot)

    def on_mount(self) -> None:
        self._check_size(self.size.width, self.size.height)
        monitor = self.monitor_screen
        if self._first_sample_in and self._first_sample.error is not None:
            monitor.show_sampler_error(self._first_sample.error)
        settings = monitor.settings
        self.sample_forever(monitor.post_message, self._first_sample_in, settings.alerts, settings.flags)
        self.call_after_refresh(startup_gc.resume)

    @work(thread=True, exclusive=True, exit_on_error=False, group="sampler", name="sampler")
    def sample_forever(self, post: Callable[[Message], bool], first_shown: bool,
                       alert_settings: AlertSettings | None = None, flags: FlagThresholds | None = None) -> None:
        """Sample every interval and `post` the result (and the alerts it raises) to the monitor screen.

        The screen consumes the messages itself: once it closes (app exit), `post` returns False and
        the sampler stops, so no handler ever looks for a screen that is gone.
        """
        worker = get_current_worker()
        source: SnapshotSource | None = None
        from pth_top.tui.recording import recording_path

        alerts = DashboardAlerts(alert_settings or AlertSettings(), post, deliver=self.DELIVERS_ALERTS,
                                 recording=recording_path, flags=flags)
        try:
            if not self._wait_for_first_sample(worker, post):
                return
            source = self._take_over_first_sample(first_shown, post)
            if self._first_sample.snapshot is not None:
                self._sleep_until_next_sample(worker)
            while not worker.is_cancelled:
                if source is None:
                    source = self._retry_source(post)
                elif not self.paused:
                    try:
                        snapshot = source.sample()
                        message: Message = SnapshotReady(snapshot)
                    except Exception as error:  # a sensor bug must not kill the dashboard
                        snapshot, message = None, SamplerFailed.from_error(error)
                    if not post(message):
                        return
                    alerts.feed(snapshot, getattr(source, "xid_counts", None))
                self._sleep_until_next_sample(worker)
        finally:
            alerts.close()
            close = getattr(source, "close", None)
            if close is not None:
                close()

    def _wait_for_first_sample(self, worker, post: Callable[[Message], bool]) -> bool:
        """Wait for the first sample, saying so on screen when it is slow; False if cancelled first."""
        first = self._first_sample
        slow_at: float | None = time.monotonic() + self.first_sample_slow_s
        while not first.wait(WAKE_CHECK_S):
            if worker.is_cancelled:
                return False
            if slow_at is not None and time.monotonic() >= slow_at:
                slow_at = None
                if not post(SamplerFailed(
                    f"no first sample after {self.first_sample_slow_s:g} s; the sensors (NVML?) are not answering"
                )):
                    return False
        return True

    def _take_over_first_sample(self, first_shown: bool, post: Callable[[Message], bool]) -> SnapshotSource | None:
        """Post the first sample if on_load could not show it; returns the source to go on with."""
        first = self._first_sample
        if not first_shown:
            if first.snapshot is not None:
                post(SnapshotReady(first.snapshot))
            elif first.error is not None:
                post(SamplerFailed(first.error))
        if first.snapshot is None or first.source is not None:
            return first.source
        # Sampled by another process: open our own source now, so its rates have a start.
        source = self._retry_source(post)
        if source is not None:
            try:
                source.sample()
            except Exception as error:
                post(SamplerFailed.from_error(error))
        return source

    def _retry_source(self, post: Callable[[Message], bool]) -> SnapshotSource | None:
        try:
            return self._source_factory()
        except Exception as error:
            post(SamplerFailed.from_error(error))
            return None

    def _sleep_until_next_sample(self, worker) -> None:
        """Wait one interval; wake early on cancel, pause or an interval change."""
        deadline = time.monotonic() + self.interval_s
        while not self._wake_sampler.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or worker.cancelled_event.wait(min(remaining, WAKE_CHECK_S)):
                break
        self._wake_sampler.clear()

    @property
    def monitor_screen(self) -> MonitorScreen:
        """The installed Monitor screen; only for the UI thread while the app runs."""
        screen = self.get_screen("monitor")
        assert isinstance(screen, MonitorScreen)
        return screen

    def set_interval_s(self, interval_s: float) -> float:
        self.interval_s = min(MAX_INTERVAL_S, max(MIN_INTERVAL_S, round(interval_s, 2)))
        self._wake_sampler.set()
        return self.interval_s

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self._wake_sampler.set()

    def on_resize(self, event: events.Resize) -> None:
        self._check_size(event.size.width, event.size.height)

    def _check_size(self, width: int, height: int) -> None:
        too_small = width < MIN_WIDTH or height < MIN_HEIGHT
        showing = isinstance(self.screen, TooSmallScreen)
        if too_small and not showing:
            self.push_screen(TooSmallScreen(MIN_WIDTH, MIN_HEIGHT))
        elif showing and not too_small:
            self.pop_screen()

    def action_help(self) -> None:
        from pth_top.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The palette offers every described key binding of this screen and the app."""
        yield from super().get_system_commands(screen)
        seen = set()
        for node, bindings in ((screen, screen.BINDINGS), (self, self.BINDINGS)):
            for binding in bindings:
                if not isinstance(binding, Binding) or not binding.description or binding.action in seen:
                    continue
                seen.add(binding.action)
                keys = binding.key_display or binding.key.split(",")[0]
                yield SystemCommand(binding.description, f"key: {keys}", partial(node.run_action, binding.action))


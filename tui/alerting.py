"""The dashboard's alerts: the recorder's event detector and alert rules over each sample, on the sampler thread.

Each alert goes, as an AlertRaised message, to the monitor screen, which shows it once as a banner and rings
the bell, and to the configured destinations (their own threads) unless a recorder writing this host's recording
delivers them (one delivery per alert, however many dashboards are open) or the app is a browser tab.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Mapping

from textual.message import Message
from textual.notifications import SeverityLevel

from pth_top.recorder.alert_rules import AlertSettings
from pth_top.recorder.delivery import AlertPipeline
from pth_top.recorder.events import EventDetector
from pth_top.recorder.writer_lock import writer_pid
from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.sensors.model import Snapshot
from pth_top.text import printable
from pth_top.tui.messages import AlertRaised

# Event severities as Textual notify severities.
BANNER_SEVERITY: dict[str, SeverityLevel] = {"info": "information", "warning": "warning", "critical": "error"}
# How long the answer to "does a recorder deliver?" is kept: one lock-file check per 5 s, not per sample.
RECORDER_CHECK_S = 5.0


class DashboardAlerts:
    """Built and fed on the sampler thread (Apprise is imported here, never on the UI loop)."""

    def __init__(self, settings: AlertSettings, post: Callable[[Message], bool], deliver: bool = True,
                 recording: Callable[[], Path] | None = None, clock: Callable[[], float] = time.monotonic,
                 flags: FlagThresholds | None = None) -> None:
        self._post = post
        self._bell = settings.bell
        self._deliver = deliver
        self._recording = recording
        self._clock = clock
        self._recorder_checked: tuple[float, bool] | None = None
        self._pipeline: AlertPipeline | None = None
        self._detector = EventDetector(include_cmdline=False, flags=flags)
        if not settings.enabled:
            return
        try:
            self._pipeline = AlertPipeline(settings)
        except Exception as error:  # alerting that cannot start leaves sampling alone
            post(AlertRaised(printable(f"alerts off: {type(error).__name__}: {error}", 300), "error", False))
            return
        for problem in self._pipeline.problems:
            post(AlertRaised(problem, "warning", bell=False))

    def feed(self, snapshot: Snapshot | None, xid_counts: Callable[[], Mapping[tuple[int, str], int]] | None = None,
             ) -> None:
        """Run the rules over one sample and post what they raise; an alerting bug stops alerts, not sampling.

        `xid_counts`: the sampler's Xid counts by code, so an Xid alert names its code (as the recorder's do).
        """
        if snapshot is None or self._pipeline is None:
            return
        try:
            events = self._detector.feed(snapshot, xid_counts() if xid_counts is not None else None)
            alerts = self._pipeline.evaluator.step(snapshot, events)
            if alerts and self._delivers():
                for alert in alerts:
                    self._pipeline.delivery.submit(alert)
        except Exception as error:
            self.close()
            self._post(AlertRaised(printable(f"alerts stopped: {type(error).__name__}: {error}", 300), "error", False))
            return
        for alert in alerts:
            self._post(AlertRaised(alert.message, BANNER_SEVERITY.get(alert.severity, "warning"), self._bell))

    def _delivers(self) -> bool:
        """False in a browser tab, and while a recorder writes this host's recording (it delivers the same alerts)."""
        if not self._deliver:
            return False
        if self._recording is None:
            return True
        now = self._clock()
        if self._recorder_checked is None or now - self._recorder_checked[0] >= RECORDER_CHECK_S:
            try:
                recorder_running = writer_pid(self._recording()) is not None
            except Exception:  # a bad data dir: nobody else delivers
                recorder_running = False
            self._recorder_checked = (now, recorder_running)
        return not self._recorder_checked[1]

    def close(self) -> None:
        """Stop the destinations' threads without waiting for a send in flight (they are daemons)."""
        if self._pipeline is not None:
            self._pipeline.close(timeout_s=0.0)
            self._pipeline = None

"""Messages the sampling worker posts to the Monitor screen, which consumes them (they do not bubble)."""

from __future__ import annotations

from textual.message import Message
from textual.notifications import SeverityLevel

from pth_top.sensors.model import Snapshot


class SnapshotReady(Message):
    """A new machine sample. Coalesces: an unhandled older one is dropped for the newer."""

    bubble = False

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotReady)


class SamplerFailed(Message):
    """The sampler raised; the dashboard shows the reason and keeps trying."""

    bubble = False

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason

    @classmethod
    def from_error(cls, error: Exception) -> SamplerFailed:
        return cls(f"{type(error).__name__}: {error}")


class AlertRaised(Message):
    """An alert rule fired (or alerting could not start): shown once as a banner, with the bell when `bell`."""

    bubble = False

    def __init__(self, text: str, severity: SeverityLevel = "warning", bell: bool = True) -> None:
        super().__init__()
        self.text = text
        self.severity: SeverityLevel = severity
        self.bell = bell

"""Alert delivery beyond the terminal, through Apprise URLs (webhooks, email, Slack, DingTalk, WeCom, Feishu).

Each destination has its own worker thread and bounded queue, so a failing or hanging destination delays
only itself: `submit` never blocks (the oldest waiting alert is dropped when the queue is full, and counted).
Each send has a timeout and a bounded number of retries with back-off; at most `per_minute` go out a minute,
the excess becomes one summary. A destination URL can hold tokens: only `mask_url`'s form is ever shown.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Protocol
from urllib.parse import urlsplit

from pth_top.recorder.alert_rules import AlertSettings, Delivery
from pth_top.recorder.alerts import AlertEvaluator
from pth_top.recorder.event import Event
from pth_top.sensors.model import Snapshot
from pth_top.text import printable

# Schemes whose host is a server name, not a token: it is shown; everything else of a URL is masked.
HOST_SHOWN_SCHEMES = frozenset({"json", "jsons", "form", "forms", "xml", "xmls", "mailto", "mailtos"})
SUMMARY_LINES = 5
BACKOFF_CAP_S = 60.0
WINDOW_S = 60.0
APPRISE_MISSING = "Apprise is not installed (pip install 'pth-top[alerts]')"
_NOTIFY_TYPES = {"info": "info", "warning": "warning", "critical": "failure"}


class DeliveryError(Exception):
    """One send that failed, with a reason that holds no secret from the URL."""


class Sender(Protocol):
    def __call__(self, title: str, body: str, severity: str) -> None: ...


def mask_url(url: str) -> str:
    """The URL as it may be shown: scheme, and the host where it is a server's name; the rest is ***."""
    scheme = printable(url.partition("://")[0], 20)
    if scheme.lower() not in HOST_SHOWN_SCHEMES:
        return f"{scheme}://***"
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"{scheme}://***"
    _user, at, host = parts.netloc.rpartition("@")
    shown = f"{scheme}://{'***@' if at else ''}{printable(host, 100)}"
    if parts.path.strip("/"):
        shown += "/***"
    return shown + ("?***" if parts.query else "")


def scrubbed(text: str, url: str) -> str:
    """`text` with every piece of `url` that mask_url hides replaced by ***."""
    scheme, _, rest = url.partition("://")
    host = _netloc(url).rpartition("@")[2] if scheme.lower() in HOST_SHOWN_SCHEMES else ""
    # A piece the shown host contains is shown with it anyway; masking it would garble the host.
    pieces = {url, rest} | {piece for piece in _split(rest) if len(piece) >= 4 and piece not in host}
    for piece in sorted(pieces, key=len, reverse=True):
        text = text.replace(piece, "***")
    return printable(text, 300)


def _netloc(url: str) -> str:
    try:
        return urlsplit(url).netloc
    except ValueError:  # a bracket left open: nothing of it is shown
        return ""


def _split(rest: str) -> list[str]:
    for separator in "@:/?&=#":
        rest = rest.replace(separator, " ")
    return rest.split()


class _ReasonLog(logging.Handler):
    """Apprise's warnings, kept per thread as the reason a send failed; nothing reaches the terminal."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        reasons = getattr(self.local, "reasons", None)
        if reasons is not None:
            reasons.append(record.getMessage())


_reason_log = _ReasonLog()


def apprise_sender(url: str, timeout_s: float) -> Sender:
    """A Sender for one Apprise URL; DeliveryError when Apprise is missing or does not know the URL."""
    try:
        import apprise
    except ImportError:
        raise DeliveryError(APPRISE_MISSING) from None
    logger = logging.getLogger("apprise")
    if _reason_log not in logger.handlers:
        logger.addHandler(_reason_log)
        logger.propagate = False  # its default handler would print to the terminal, URL and all
    plugin: Any = apprise.Apprise.instantiate(url, suppress_exceptions=True)
    if plugin is None:
        raise DeliveryError("not a URL Apprise knows (see the Apprise wiki for its URL forms)")
    plugin.socket_connect_timeout = plugin.socket_read_timeout = timeout_s

    def send(title: str, body: str, severity: str) -> None:
        _reason_log.local.reasons = []
        try:
            sent = plugin.notify(body=body, title=title, notify_type=_NOTIFY_TYPES.get(severity, "info"))
        except Exception as error:  # a plugin bug is one failed send, not a dead worker
            raise DeliveryError(scrubbed(f"{type(error).__name__}: {error}", url)) from None
        finally:
            reasons, _reason_log.local.reasons = _reason_log.local.reasons, None
        if not sent:
            raise DeliveryError(scrubbed(reasons[-1] if reasons else "refused", url))

    return send


def alert_text(alert: Event) -> tuple[str, str]:
    """(title, body) for an alert: the host and rule in the title, the message and time in the body."""
    host = alert.evidence.get("host", "")
    rule = alert.evidence.get("rule", alert.kind)
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(alert.time_s))
    return printable(f"pth-top {alert.severity} on {host}: {rule}", 200), printable(f"{alert.message} ({when})", 1000)


@dataclass
class DeliveryStats:
    sent: int = 0
    failed: int = 0  # alerts given up after every retry
    retried: int = 0
    dropped: int = 0  # pushed out of a full queue
    suppressed: int = 0  # over the rate limit, sent in a summary
    last_error: str = ""


class Destination:
    """One Apprise URL with its own queue and worker thread."""

    def __init__(self, url: str, delivery: Delivery, sender: Sender | None = None,
                 clock: Callable[[], float] = time.monotonic, window_s: float = WINDOW_S) -> None:
        self.shown = mask_url(url)
        self.window_s = window_s  # per_minute counts the sends of the last window_s
        self.delivery = delivery
        self.stats = DeliveryStats()
        self._send = sender or apprise_sender(url, delivery.timeout_s)
        self._clock = clock
        self._queue: deque[tuple[str, str, str]] = deque()
        self._sent_at: deque[float] = deque()
        self._summary: list[str] = []
        self._wake = threading.Condition()
        self._closed = False
        self._busy = False
        self._thread = threading.Thread(target=self._run, name=f"alert delivery {self.shown}", daemon=True)
        self._thread.start()

    def submit(self, title: str, body: str, severity: str) -> None:
        """Queue one alert; never blocks on the destination."""
        with self._wake:
            if len(self._queue) >= self.delivery.queue:
                self._queue.popleft()
                self.stats.dropped += 1
            self._queue.append((title, body, severity))
            self._wake.notify()

    def idle(self) -> bool:
        """Nothing queued and nothing being sent (a summary may still wait for the rate limit)."""
        with self._wake:
            return not self._queue and not self._busy

    def close(self, timeout_s: float = 1.0) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout_s)

    def _run(self) -> None:
        while True:
            with self._wake:
                item = self._next()
                if item is None:
                    return
                self._busy = True
            try:
                self._deliver(*item)
            finally:
                with self._wake:
                    self._busy = False

    def _next(self) -> tuple[str, str, str] | None:
        """The next thing to send (an alert, or the summary of those held back), waiting for it; None on close."""
        while not self._closed:
            free_in_s = self._free_in_s()
            if self._summary and free_in_s <= 0:
                count, lines = len(self._summary), self._summary[:SUMMARY_LINES]
                self._summary = []
                more = f"\n... and {count - len(lines)} more" if count > len(lines) else ""
                plural = "s" if count != 1 else ""
                title = f"pth-top: {count} more alert{plural} (over {self.delivery.per_minute} a minute)"
                return title, "\n".join(lines) + more, "warning"
            if self._queue:
                item = self._queue.popleft()
                if free_in_s <= 0:
                    return item
                self._summary.append(item[0] + ": " + item[1])
                self.stats.suppressed += 1
                continue
            self._wake.wait(free_in_s if self._summary else None)
        return None

    def _free_in_s(self) -> float:
        """Seconds until one more send fits in the last minute's `per_minute`; <= 0 when it fits now."""
        now = self._clock()
        while self._sent_at and now - self._sent_at[0] >= self.window_s:
            self._sent_at.popleft()
        if len(self._sent_at) < self.delivery.per_minute:
            return 0.0
        return self._sent_at[0] + self.window_s - now

    def _deliver(self, title: str, body: str, severity: str) -> None:
        with self._wake:
            self._sent_at.append(self._clock())  # a try counts against the rate limit, answered or not
        for attempt in range(self.delivery.retries + 1):
            try:
                self._send(title, body, severity)
            except DeliveryError as error:
                self.stats.last_error = str(error)
                if attempt == self.delivery.retries:
                    self.stats.failed += 1
                    return
                self.stats.retried += 1
                with self._wake:
                    if self._wake.wait_for(lambda: self._closed, self._backoff_s(attempt)):
                        return
            else:
                self.stats.sent += 1
                return

    def _backoff_s(self, attempt: int) -> float:
        return min(BACKOFF_CAP_S, self.delivery.backoff_s * 2**attempt)


class AlertDelivery:
    """Every configured destination; `submit` hands an alert to each of them without waiting."""

    def __init__(self, settings: AlertSettings, sender_for: Callable[[str], Sender] | None = None) -> None:
        self.destinations: list[Destination] = []
        self.problems: list[str] = []  # one line per destination that could not be set up
        for url in settings.destinations:
            try:
                sender = sender_for(url) if sender_for else None
                self.destinations.append(Destination(url, settings.delivery, sender))
            except DeliveryError as error:
                self.problems.append(f"alert destination {mask_url(url)}: {error}")

    def submit(self, alert: Event) -> None:
        title, body = alert_text(alert)
        for destination in self.destinations:
            destination.submit(title, body, alert.severity)

    def close(self, timeout_s: float = 1.0) -> None:
        for destination in self.destinations:
            destination.close(timeout_s)


class AlertPipeline:
    """The evaluator and the delivery together: what the recorder and the dashboard call once per sample."""

    def __init__(self, settings: AlertSettings, clock: Callable[[], float] = time.monotonic,
                 sender_for: Callable[[str], Sender] | None = None) -> None:
        self.evaluator = AlertEvaluator(settings, clock)
        self.delivery = AlertDelivery(settings if settings.enabled else AlertSettings(), sender_for)

    @property
    def problems(self) -> list[str]:
        return self.delivery.problems

    def step(self, snapshot: Snapshot, events: Iterable[Event] = ()) -> list[Event]:
        """The alerts this sample raises, each already handed to every destination (never waits for one)."""
        alerts = self.evaluator.step(snapshot, events)
        for alert in alerts:
            self.delivery.submit(alert)
        return alerts

    def close(self, timeout_s: float = 1.0) -> None:
        self.delivery.close(timeout_s)


def send_once(url: str, alert: Event, timeout_s: float) -> str | None:
    """Send `alert` to `url` now, one try: None when it went, else why not (no secret from the URL in it)."""
    try:
        title, body = alert_text(alert)
        apprise_sender(url, timeout_s)(title, body, alert.severity)
    except DeliveryError as error:
        return str(error)
    return None

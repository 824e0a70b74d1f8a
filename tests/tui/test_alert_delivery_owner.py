"""One delivery per alert: a dashboard delivers unless a recorder writes this host's recording; a browser tab never."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pth_top.recorder.alert_rules import alert_settings
from pth_top.recorder.writer_lock import WriterLock
from pth_top.tui.alerting import DashboardAlerts
from pth_top.tui.served_app import ReadOnlyApp, ServedApp
from tests.fakes.snapshots import make_snapshot
from tests.recorder.webhook import Receiver
from tests.waiting import wait_for

pytest.importorskip("apprise", reason="Apprise is the delivery (pip install 'pth-top[alerts]')")


def hot_snapshot():
    snapshot = make_snapshot(gpu_count=1, process_count=2)
    return replace(snapshot, gpus=(replace(snapshot.gpus[0], temperature_c=96.0),))


@pytest.fixture
def webhook():
    receiver = Receiver()
    yield receiver
    receiver.close()


def alerts_for(webhook, **options) -> tuple[DashboardAlerts, list]:
    settings = alert_settings({"destinations": [webhook.url()], "rules": {"gpu_temperature": {"for_s": 0}}})
    posted: list = []
    return DashboardAlerts(settings, lambda message: posted.append(message) or True, **options), posted


def test_a_dashboard_delivers_when_no_recorder_writes_this_hosts_recording(webhook, tmp_path):
    alerts, posted = alerts_for(webhook, recording=lambda: tmp_path / "host.sqlite")
    try:
        alerts.feed(hot_snapshot())
        wait_for(lambda: webhook.bodies, "the dashboard's alert at the webhook")
    finally:
        alerts.close()
    assert len(posted) == 1


def test_while_a_recorder_writes_the_recording_the_dashboard_only_shows_the_banner(webhook, tmp_path):
    recording = tmp_path / "host.sqlite"
    lock = WriterLock(recording)
    lock.acquire()
    sent = []
    try:
        alerts, posted = alerts_for(webhook, recording=lambda: recording)
        alerts._pipeline.delivery.submit = sent.append  # type: ignore[union-attr]  # counts what would be sent
        alerts.feed(hot_snapshot())
        alerts.close()
    finally:
        lock.release()
    assert len(posted) == 1, "the banner still shows"
    assert sent == [] and webhook.bodies == []


def test_browser_tabs_never_deliver(webhook):
    assert ServedApp.DELIVERS_ALERTS is False and ReadOnlyApp.DELIVERS_ALERTS is False
    alerts, posted = alerts_for(webhook, deliver=False)
    sent = []
    alerts._pipeline.delivery.submit = sent.append  # type: ignore[union-attr]
    alerts.feed(hot_snapshot())
    alerts.close()
    assert len(posted) == 1 and sent == []

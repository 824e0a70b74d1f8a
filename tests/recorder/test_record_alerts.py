"""`pth-top record` runs the alert rules: an alert is stored as an event and reaches a real local webhook."""

from __future__ import annotations

import json

import pytest

from pth_top.recorder.alert_rules import alert_settings
from pth_top.recorder.delivery import AlertPipeline
from tests.fakes.gpu_fixtures import by_argument
from tests.fleet.fixtures import make_exporter_gpus
from tests.recorder.helpers import make_recorder, step, stored_events
from tests.recorder.webhook import Receiver
from tests.waiting import wait_for

pytest.importorskip("apprise", reason="Apprise is the delivery (pip install 'pth-top[alerts]')")


def test_a_recorded_hot_gpu_is_an_alert_event_in_the_file_and_at_the_webhook(tmp_path):
    webhook = Receiver()
    settings = alert_settings({"destinations": [webhook.url()], "rules": {"gpu_temperature": {"for_s": 0}}})
    fake = make_exporter_gpus(2)
    path = tmp_path / "r.sqlite"
    recorder, nvml_clock = make_recorder(fake, path)
    recorder.alerts = AlertPipeline(settings)
    try:
        step(recorder, nvml_clock)
        fake.devices[1].values["nvmlDeviceGetTemperature"] = by_argument({0: 96})
        alerts = [event for event in step(recorder, nvml_clock) if event.kind == "alert"]
        assert [alert.gpu_index for alert in alerts] == [1]
        wait_for(lambda: webhook.bodies, "the webhook to get the recorder's alert")
        assert "96 C" in webhook.bodies[0]["message"]
    finally:
        recorder.close()
        webhook.close()
    stored = [row for row in stored_events(path) if row[0] == "alert"]
    assert len(stored) == 1 and stored[0][2] == 1
    assert json.loads(stored[0][5])["rule"] == "gpu_temperature"

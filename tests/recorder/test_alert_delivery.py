"""Alert delivery through Apprise's json:// to a real webhook receiver on 127.0.0.1, and its failure modes."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from pth_top.recorder.alert_rules import Delivery, alert_settings
from pth_top.recorder.delivery import AlertPipeline, Destination, alert_text, apprise_sender, mask_url, scrubbed
from pth_top.recorder.event import Event
from tests.fakes.snapshots import make_snapshot
from tests.recorder.webhook import Receiver, dead_port
from tests.waiting import wait_for

pytest.importorskip("apprise", reason="Apprise is the delivery (pip install 'pth-top[alerts]')")

SECRET = "T0KEN-s3cret"


@pytest.fixture
def receiver():
    made: list[Receiver] = []

    def make(**options) -> Receiver:
        made.append(Receiver(**options))
        return made[-1]

    yield make
    for each in made:
        each.close()


def alert(message: str = "GPU 0 at 95 C") -> Event:
    return Event(1000.0, "alert", "warning", message, 0, "GPU-0", evidence={"rule": "gpu_temperature", "host": "box"})


def destination(url: str, **delivery) -> Destination:
    settings = Delivery(**{"timeout_s": 5.0, "retries": 0, "backoff_s": 0.0, **delivery})
    return Destination(url, settings, apprise_sender(url, settings.timeout_s))


def test_an_alert_from_the_pipeline_arrives_with_its_text(receiver, capfd):
    webhook = receiver()
    settings = alert_settings({"destinations": [webhook.url()], "rules": {"gpu_temperature": {"for_s": 0}}})
    pipeline = AlertPipeline(settings)
    try:
        snapshot = make_snapshot(gpu_count=1, process_count=2)
        hot = replace(snapshot, gpus=(replace(snapshot.gpus[0], temperature_c=96.0),))
        (raised,) = pipeline.step(hot)
        wait_for(lambda: webhook.bodies, "the webhook to get the alert")
        body = webhook.bodies[0]
        assert raised.message in body["message"] and "96 C" in body["message"]
        assert body["title"] == "pth-top warning on trainbox: gpu_temperature" and body["type"] == "warning"
        assert webhook.paths == [f"/hook/{SECRET}"]
        wait_for(lambda: pipeline.delivery.destinations[0].stats.sent == 1, "the send to be counted")
    finally:
        pipeline.close()
    assert SECRET not in capfd.readouterr().err


def test_a_500_is_retried_with_back_off_then_given_up_and_counted(receiver, capfd):
    webhook = receiver(status=500)
    target = destination(webhook.url(), retries=2, backoff_s=0.2)
    try:
        target.submit(*alert_text(alert()), "warning")
        wait_for(lambda: target.stats.failed == 1, "the alert to be given up")
        assert len(webhook.bodies) == 3 and target.stats.retried == 2 and target.stats.sent == 0
        gaps = [later - earlier for earlier, later in zip(webhook.arrivals_s, webhook.arrivals_s[1:], strict=False)]
        assert gaps[0] >= 0.2 and gaps[1] >= 0.4  # back-off doubles
        assert "500" in target.stats.last_error and SECRET not in target.stats.last_error
    finally:
        target.close()
    assert SECRET not in capfd.readouterr().err


def test_connection_refused_is_a_counted_failure_with_a_masked_reason(capfd):
    url = f"json://user:pa55word@127.0.0.1:{dead_port()}/hook/{SECRET}"
    target = destination(url, retries=1)
    try:
        target.submit(*alert_text(alert()), "warning")
        wait_for(lambda: target.stats.failed == 1, "the refused send to be given up")
        assert target.stats.retried == 1
        assert SECRET not in target.stats.last_error and "pa55word" not in target.stats.last_error
        assert target.shown == "json://***@127.0.0.1:{}/***".format(url.rsplit(":", 1)[1].split("/")[0])
    finally:
        target.close()
    err = capfd.readouterr().err
    assert SECRET not in err and "pa55word" not in err


def test_a_hanging_destination_times_out_and_never_blocks_the_step(receiver):
    webhook = receiver(hanging=True)
    settings = alert_settings({
        "destinations": [webhook.url()], "delivery": {"timeout_s": 1, "retries": 0, "queue": 3, "per_minute": 600},
        "rules": {"gpu_temperature": {"for_s": 0, "clear_below_c": 0}},
    })
    pipeline = AlertPipeline(settings, clock=time.monotonic)
    target = pipeline.delivery.destinations[0]
    try:
        snapshot = make_snapshot(gpu_count=1, process_count=2)
        hot = replace(snapshot, gpus=(replace(snapshot.gpus[0], temperature_c=96.0),))
        cool = replace(hot, gpus=())  # the GPU gone: its episode ends, so the next hot sample alerts again
        pipeline.step(hot)
        wait_for(lambda: webhook.bodies, "the first post to reach the hanging receiver")
        slowest_s = 0.0
        for _ in range(10):
            for sample in (cool, hot):
                started = time.monotonic()
                pipeline.step(sample)
                slowest_s = max(slowest_s, time.monotonic() - started)
        assert slowest_s < 0.5, f"a step took {slowest_s:.3f} s while the destination hung"
        assert target.stats.dropped >= 10 - 3 - 1  # ten more alerts, three fit the queue, one may be in flight
        wait_for(lambda: target.stats.failed >= 1, "the hanging send to time out")
        assert target.stats.last_error
    finally:
        webhook.release.set()
        pipeline.close()


def test_the_rate_limit_holds_and_the_excess_comes_as_one_summary(receiver):
    webhook = receiver()
    settings = Delivery(timeout_s=5, retries=0, per_minute=2)
    url = webhook.url()
    target = Destination(url, settings, apprise_sender(url, settings.timeout_s), window_s=2.0)
    try:
        for number in range(5):
            target.submit(f"alert {number}", f"body {number}", "warning")
        wait_for(lambda: len(webhook.bodies) >= 3, "two alerts and the summary")
        titles = [body["title"] for body in webhook.bodies]
        assert titles[:2] == ["alert 0", "alert 1"]
        assert titles[2] == "pth-top: 3 more alerts (over 2 a minute)"
        assert "alert 4: body 4" in webhook.bodies[2]["message"]
        assert webhook.arrivals_s[2] - webhook.arrivals_s[0] >= 2.0 - 0.05  # not before the window let it
        # The receiver holds the summary before the sender has read its answer and counted it.
        wait_for(lambda: target.stats.sent == 3, "the summary's send to be counted")
        assert target.stats.suppressed == 3
        time.sleep(0.3)
        assert len(webhook.bodies) == 3
    finally:
        target.close()


def test_an_unknown_scheme_is_one_problem_line_not_a_destination():
    settings = alert_settings({"destinations": [f"nosuchscheme://{SECRET}@x"]})
    pipeline = AlertPipeline(settings)
    assert pipeline.delivery.destinations == []
    (problem,) = pipeline.problems
    assert problem.startswith("alert destination nosuchscheme://***: not a URL Apprise knows") and SECRET not in problem


@pytest.mark.parametrize("url, shown", [
    ("json://127.0.0.1:8080/hook/abc", "json://127.0.0.1:8080/***"),
    ("jsons://user:pw@hooks.example.org/x?token=1", "jsons://***@hooks.example.org/***?***"),
    ("mailtos://me:app-password@gmail.com?to=ops@example.org", "mailtos://***@gmail.com?***"),
    ("slack://TokenA/TokenB/TokenC/#ops", "slack://***"),
    ("dingtalk://secret@token/", "dingtalk://***"),
    ("wecombot://key", "wecombot://***"),
    ("feishu://token", "feishu://***"),
    ("json://[::1", "json://***"),
    ("json://\x1bevil\x07/x", "json://\\x1bevil\\x07/***"),
])
def test_mask_url_shows_no_token(url, shown):
    assert mask_url(url) == shown


def test_scrubbed_takes_every_piece_of_the_url_out_of_a_reason():
    url = "jsons://user:pw-secret@hooks.example.org/hook/abcdef?token=zzz1234"
    text = f"failed posting to {url}: hooks.example.org said no for abcdef and zzz1234"
    assert scrubbed(text, url) == "failed posting to ***: hooks.example.org said no for *** and ***"


def test_without_apprise_a_destination_is_one_line_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "apprise", None)
    pipeline = AlertPipeline(alert_settings({"destinations": [f"json://127.0.0.1:9/{SECRET}"]}))
    assert pipeline.problems == [
        "alert destination json://127.0.0.1:9/***: Apprise is not installed (pip install 'pth-top[alerts]')"]

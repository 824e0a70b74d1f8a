"""Stuck and straggler flags as recorder events and alerts, over scripted histories: an event when a GPU's flag
rises (with its evidence) and one when it ends; one alert per group and episode (stuck on, straggler off)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pth_top.recorder.alert_rules import alert_settings
from pth_top.recorder.alerts import AlertEvaluator
from pth_top.recorder.events import EventDetector
from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.sensors.model import Snapshot
from tests.fakes.gpm_profiles import TRAINING, enable_gpm, hang
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fakes.snapshots import make_snapshot
from tests.tui.test_gpu_activity_panel import gpus_of, rank

STEP_S = 5.0


def hung_snapshot(count: int = 3) -> Snapshot:
    """`count` GPUs as the hung allgather's were (NVIDIA/nccl#1550), one torchrun rank on each (the fixture's
    first three: its GPU 3 idles in P8, a straggler by its clocks)."""
    fake = make_fake_gpus(count)
    for index in range(count):
        hang(fake, index)
    return replace(make_snapshot(gpu_count=0), gpus=gpus_of(fake),
                   processes=tuple(rank(101 + index, index) for index in range(count)))


def training_snapshot(count: int = 3) -> Snapshot:
    fake = make_fake_gpus(count)
    for index in range(count):
        enable_gpm(fake, index, TRAINING)
    return replace(make_snapshot(gpu_count=0), gpus=gpus_of(fake),
                   processes=tuple(rank(101 + index, index) for index in range(count)))


def feed(detector: EventDetector, snapshots, start_s: float = 1000.0):
    """Each snapshot STEP_S apart; the events of each step."""
    return [detector.feed(replace(snapshot, timestamp_s=start_s + STEP_S * number))
            for number, snapshot in enumerate(snapshots)]


def flag_events(steps, kind: str):
    return [(number, event) for number, events in enumerate(steps) for event in events if event.kind == kind]


def test_a_hung_group_is_one_stuck_event_per_gpu_at_onset_and_one_at_its_end():
    steps = feed(EventDetector(), [hung_snapshot()] * 20 + [training_snapshot()] * 3)
    stuck = flag_events(steps, "gpu_stuck")
    onsets = [(number, event) for number, event in stuck if not event.evidence.get("ended")]
    ends = [(number, event) for number, event in stuck if event.evidence.get("ended")]
    # Held from step 0; 60 s (12 steps) later it is stuck, once; it ends with the first training sample.
    assert [number for number, _ in onsets] == [12] * 3 and [number for number, _ in ends] == [20] * 3
    event = onsets[0][1]
    assert (event.gpu_index, event.severity) == (0, "warning") and event.gpu_uuid
    assert event.evidence["utilization_percent"] == 100
    assert event.evidence["power_ratio"] == pytest.approx(152 / 700, abs=1e-3)
    assert event.evidence["sm_active_ratio"] == pytest.approx(0.15)
    assert str(event.evidence["reason"]).startswith("likely stuck in a collective")
    assert event.evidence["group"] == [0, 1, 2] and event.evidence["held_s"] == 60.0
    assert event.message.startswith("GPU 0: likely stuck in a collective")
    end = ends[0][1]
    assert end.evidence["duration_s"] == 100.0 and end.message == "GPU 0 no longer stuck (after 100 s)"
    assert not flag_events(steps, "gpu_straggler")


def test_a_lagging_gpu_is_a_straggler_event_with_its_reason_then_its_end():
    busy = training_snapshot(2)
    lagging = replace(busy, gpus=(busy.gpus[0], replace(busy.gpus[1], sm_active_ratio=0.3)))
    detector = EventDetector(flags=FlagThresholds(straggler_after_s=20.0))
    steps = feed(detector, [lagging] * 8 + [busy])
    events = flag_events(steps, "gpu_straggler")
    assert [(number, event.gpu_index, bool(event.evidence.get("ended"))) for number, event in events] == [
        (4, 1, False), (8, 1, True)]
    raised = events[0][1]
    assert raised.severity == "info" and "SM active 32% of its group's median" in str(raised.evidence["reason"])
    assert raised.evidence["sm_active_ratio"] == 0.3


def alerts_over(steps, table=None):
    evaluator = AlertEvaluator(alert_settings(table or {}))
    snapshot = make_snapshot(gpu_count=0)
    return [evaluator.step(snapshot, events) for events in steps]


def test_a_stuck_group_alerts_once_per_episode_and_again_after_it_ended():
    history = [hung_snapshot()] * 14 + [training_snapshot()] * 2 + [hung_snapshot()] * 14
    alerts = alerts_over(feed(EventDetector(), history))
    fired = [(number, alert) for number, step in enumerate(alerts) for alert in step]
    assert [number for number, _ in fired] == [12, 28], "one alert for the group's three GPUs, per episode"
    alert = fired[0][1]
    assert alert.evidence["rule"] == "gpu_stuck" and alert.evidence["gpus"] == [0, 1, 2]
    assert alert.message.startswith("GPUs 0, 1, 2: likely stuck in a collective") and alert.severity == "warning"
    assert alert.evidence["sm_active_ratio"] == pytest.approx(0.15)
    assert not any(alerts_over(feed(EventDetector(), history), {"rules": {"gpu_stuck": {"enabled": False}}}))


def test_the_straggler_alert_is_off_by_default_and_fires_once_when_on():
    busy = training_snapshot(2)
    lagging = replace(busy, gpus=(busy.gpus[0], replace(busy.gpus[1], sm_active_ratio=0.3)))
    history = [lagging] * 12
    assert not any(alerts_over(feed(EventDetector(), history)))
    alerts = alerts_over(feed(EventDetector(), history), {"rules": {"gpu_straggler": {"enabled": True}}})
    fired = [(number, alert) for number, step in enumerate(alerts) for alert in step]
    assert [(number, alert.evidence["rule"], alert.gpu_index) for number, alert in fired] == [(6, "gpu_straggler", 1)]
    assert fired[0][1].message.startswith("GPU 1: straggler: SM active 32% of its group's median")


def test_the_dashboards_alerts_judge_flags_by_its_flags_settings():
    from pth_top.tui.alerting import DashboardAlerts

    posted: list = []
    alerts = DashboardAlerts(alert_settings({}), lambda message: posted.append(message) or True, deliver=False,
                             flags=FlagThresholds(stuck_after_s=10.0))
    try:
        for number in range(3):
            alerts.feed(replace(hung_snapshot(), timestamp_s=1000.0 + STEP_S * number))
    finally:
        alerts.close()
    assert len(posted) == 1 and posted[0].text.startswith("GPUs 0, 1, 2: likely stuck in a collective")

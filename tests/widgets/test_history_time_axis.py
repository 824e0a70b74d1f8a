"""The history chart's time axis says its unit on every label ("-30s", "-2m", "now")."""

from __future__ import annotations

import re

from pth_top.widgets.history_chart import ChartSeries, chart_text, format_seconds_ago, time_ticks


def axis_labels(values: tuple[float, ...], step_s: float, width: int = 60) -> list[str]:
    lines = chart_text([ChartSeries("CPU", values, "green")], width, 10, x_step_s=step_s).plain.splitlines()
    return lines[-1].split()


def test_every_axis_label_has_a_unit_and_the_last_is_now():
    labels = axis_labels(tuple(float(i % 50) for i in range(120)), 1.0)
    assert labels[-1] == "now"
    assert len(labels) >= 3
    assert all(re.fullmatch(r"-\d+[smh]", label) for label in labels[:-1]), labels


def test_the_axis_follows_the_refresh_interval():
    assert axis_labels(tuple(float(i) for i in range(100)), 5.0)[-2:] == ["-2m", "now"]
    assert "-10s" in axis_labels(tuple(float(i) for i in range(100)), 0.25, width=40)


def test_labels_use_the_unit_of_their_step():
    assert format_seconds_ago(0) == "now"
    assert format_seconds_ago(-90, 30) == "-90s"
    assert format_seconds_ago(-120, 60) == "-2m"
    assert format_seconds_ago(-7200, 3600) == "-2h"


def test_ticks_fit_the_width_and_end_now():
    positions, labels = time_ticks(-299.0, 40)
    assert positions[-1] == 0.0 and labels[-1] == "now"
    assert len(positions) <= 40 // 8
    assert positions == sorted(positions) and positions[0] >= -299.0

"""History: plotext charts of CPU/RAM and two per-GPU metrics (utilisation, memory, power, temperature),
or sparklines when short."""

from __future__ import annotations

import math
from typing import Sequence

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from pth_top.sensors.history import History
from pth_top.widgets.history_chart import ChartSeries, HistoryChart
from pth_top.widgets.level_sparkline import LevelSparkline

GPU_COLORS = ("magenta", "cyan", "yellow", "green", "red", "blue", "bright_magenta", "bright_cyan")


def _mean_per_sample(series: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """Average across GPUs per sample, ignoring gaps."""
    averaged = []
    # A series cut short (a GPU gone mid-window) ends the average there, not the render.
    for values in zip(*series, strict=False):
        finite = [value for value in values if math.isfinite(value)]
        averaged.append(sum(finite) / len(finite) if finite else math.nan)
    return tuple(averaged)


def host_series(history: History) -> tuple[ChartSeries, ...]:
    return (
        ChartSeries("CPU", history.cpu_percent, "green"),
        ChartSeries("RAM", history.memory_percent, "blue"),
    )


# How each GPU metric is charted: chart title, sparkline label, and the top of its axis (None: the power limit).
GPU_METRIC_CHARTS: dict[str, tuple[str, str, float | None]] = {
    "util": ("GPU util %", "GPU util", 100.0),
    "mem": ("GPU mem %", "GPU mem", 100.0),
    "power": ("GPU power W", "GPU W", None),
    "temp": ("GPU temp °C", "GPU °C", 100.0),
}
# Top of a power axis before any power limit is known.
DEFAULT_POWER_AXIS_W = 1000.0


def gpu_series(history: History, metric: str) -> tuple[ChartSeries, ...]:
    return tuple(
        ChartSeries(f"GPU{index}", history.gpu_series(metric, index), GPU_COLORS[position % len(GPU_COLORS)])
        for position, index in enumerate(history.gpu_indices)
    )


def gpu_axis_top(history: History, metric: str) -> float:
    """Top of the y axis for `metric`: 100 for percentages and °C, the highest power limit for watts."""
    top = GPU_METRIC_CHARTS[metric][2]
    if top is not None:
        return top
    limit = history.gpu_power_limit_w
    return limit if math.isfinite(limit) and limit > 0 else DEFAULT_POWER_AXIS_W


class HistoryPanel(Vertical):
    """Charts when `-charts` is set on the panel (tall terminals), one row of sparklines otherwise."""

    DEFAULT_CSS = """
    HistoryPanel { height: auto; padding: 0 1; }
    HistoryPanel #history-charts { height: 12; display: none; }
    HistoryPanel.-charts #history-charts { display: block; }
    HistoryPanel.-charts #history-sparklines { display: none; }
    HistoryPanel #history-sparklines { height: 1; }
    HistoryPanel #history-sparklines .spark-label { width: auto; margin: 0 1 0 0; }
    HistoryPanel #history-sparklines LevelSparkline { width: 1fr; margin: 0 2 0 0; }
    """

    _spark_gpu_label = "GPU"

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-charts"):
            yield HistoryChart(id="chart-host")
            yield HistoryChart(id="chart-gpu-left")
            yield HistoryChart(id="chart-gpu-right")
        with Horizontal(id="history-sparklines"):
            yield Static("CPU", id="spark-cpu-label", classes="spark-label")
            yield LevelSparkline(id="spark-cpu")
            yield Static("RAM", id="spark-ram-label", classes="spark-label")
            yield LevelSparkline(id="spark-ram")
            yield Static("GPU", id="spark-gpu-label", classes="spark-label")
            yield LevelSparkline(id="spark-gpu")

    def show(
        self, history: History, interval_s: float, has_gpus: bool, gpu_metrics: tuple[str, str] = ("util", "mem"),
    ) -> None:
        """Draw `history`; the two GPU charts show `gpu_metrics` (the sparkline the first of them)."""
        if self.has_class("-charts"):
            host = self.query_one("#chart-host", HistoryChart)
            host.title, host.x_step_s, host.series = "CPU/RAM %", interval_s, host_series(history)
            for chart_id, metric in zip(("#chart-gpu-left", "#chart-gpu-right"), gpu_metrics, strict=True):
                chart = self.query_one(chart_id, HistoryChart)
                chart.display = has_gpus
                if has_gpus:
                    chart.title, chart.x_step_s = GPU_METRIC_CHARTS[metric][0], interval_s
                    chart.y_max = gpu_axis_top(history, metric)
                    chart.series = gpu_series(history, metric)
            return
        self.query_one("#spark-cpu", LevelSparkline).values = history.cpu_percent
        self.query_one("#spark-ram", LevelSparkline).values = history.memory_percent
        for widget_id in ("#spark-gpu-label", "#spark-gpu"):
            self.query_one(widget_id).display = has_gpus
        if has_gpus:
            metric = gpu_metrics[0]
            label = GPU_METRIC_CHARTS[metric][1]
            if label != self._spark_gpu_label:
                self.query_one("#spark-gpu-label", Static).update(label)
                self._spark_gpu_label = label
            sparkline = self.query_one("#spark-gpu", LevelSparkline)
            sparkline.maximum = gpu_axis_top(history, metric)
            sparkline.values = _mean_per_sample([history.gpu_series(metric, index) for index in history.gpu_indices])

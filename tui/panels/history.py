"""History: plotext charts of CPU/RAM and per-GPU utilisation and memory, or sparklines when short."""

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
    for values in zip(*series):
        finite = [value for value in values if math.isfinite(value)]
        averaged.append(sum(finite) / len(finite) if finite else math.nan)
    return tuple(averaged)


def host_series(history: History) -> tuple[ChartSeries, ...]:
    return (
        ChartSeries("CPU", history.cpu_percent, "green"),
        ChartSeries("RAM", history.memory_percent, "blue"),
    )


def gpu_series(history: History, memory: bool) -> tuple[ChartSeries, ...]:
    read = history.gpu_memory_percent if memory else history.gpu_utilization_percent
    return tuple(
        ChartSeries(f"GPU{index}", read(index), GPU_COLORS[position % len(GPU_COLORS)])
        for position, index in enumerate(history.gpu_indices)
    )


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

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-charts"):
            yield HistoryChart(id="chart-host")
            yield HistoryChart(id="chart-gpu-util")
            yield HistoryChart(id="chart-gpu-memory")
        with Horizontal(id="history-sparklines"):
            yield Static("CPU", id="spark-cpu-label", classes="spark-label")
            yield LevelSparkline(id="spark-cpu")
            yield Static("RAM", id="spark-ram-label", classes="spark-label")
            yield LevelSparkline(id="spark-ram")
            yield Static("GPU", id="spark-gpu-label", classes="spark-label")
            yield LevelSparkline(id="spark-gpu")

    def show(self, history: History, interval_s: float, has_gpus: bool) -> None:
        if self.has_class("-charts"):
            host = self.query_one("#chart-host", HistoryChart)
            host.title, host.x_step_s, host.series = "CPU/RAM %", interval_s, host_series(history)
            for chart_id, memory, title in (("#chart-gpu-util", False, "GPU util %"), ("#chart-gpu-memory", True, "GPU mem %")):
                chart = self.query_one(chart_id, HistoryChart)
                chart.display = has_gpus
                if has_gpus:
                    chart.title, chart.x_step_s, chart.series = title, interval_s, gpu_series(history, memory)
            return
        self.query_one("#spark-cpu", LevelSparkline).values = history.cpu_percent
        self.query_one("#spark-ram", LevelSparkline).values = history.memory_percent
        for widget_id in ("#spark-gpu-label", "#spark-gpu"):
            self.query_one(widget_id).display = has_gpus
        if has_gpus:
            averaged = _mean_per_sample([history.gpu_utilization_percent(index) for index in history.gpu_indices])
            self.query_one("#spark-gpu", LevelSparkline).values = averaged

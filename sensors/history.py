"""Bounded ring buffers of recent readings, for the dashboard's history charts."""

from __future__ import annotations

import math
from collections import deque
from typing import Callable

from pth_top.sensors.model import GpuSample, Snapshot
from pth_top.sensors.na import is_na

DEFAULT_CAPACITY = 300

# The per-GPU series kept, by name: utilisation %, memory used %, power draw W, temperature °C.
GPU_METRICS: dict[str, Callable[[GpuSample], float]] = {
    "util": lambda gpu: gpu.utilization_percent,
    "mem": lambda gpu: gpu.memory_percent,
    "power": lambda gpu: gpu.power_draw_w,
    "temp": lambda gpu: gpu.temperature_c,
}


def _finite_or_nan(value: float) -> float:
    return math.nan if is_na(value) or math.isinf(value) else float(value)


class History:
    """The last `capacity` samples of CPU %, RAM %, and per GPU each of GPU_METRICS.

    Memory stays bounded however long the dashboard runs; GPUs are keyed by index.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.timestamps_s: deque[float] = deque(maxlen=capacity)
        self._cpu_percent: deque[float] = deque(maxlen=capacity)
        self._memory_percent: deque[float] = deque(maxlen=capacity)
        # metric -> GPU index -> values
        self._gpu: dict[str, dict[int, deque[float]]] = {metric: {} for metric in GPU_METRICS}
        # The highest power limit seen on any GPU: the top of a power chart's axis.
        self.gpu_power_limit_w = math.nan

    def __len__(self) -> int:
        return len(self.timestamps_s)

    def append(self, snapshot: Snapshot) -> None:
        self.timestamps_s.append(snapshot.timestamp_s)
        self._cpu_percent.append(_finite_or_nan(snapshot.cpu.total_percent))
        memory = snapshot.memory
        used_percent = 100.0 * memory.used_bytes / memory.total_bytes if memory.total_bytes else math.nan
        self._memory_percent.append(used_percent)
        seen = set()
        for gpu in snapshot.gpus:
            seen.add(gpu.index)
            for metric, read in GPU_METRICS.items():
                self._gpu_series(self._gpu[metric], gpu.index).append(_finite_or_nan(read(gpu)))
            if not is_na(gpu.power_limit_w) and not gpu.power_limit_w <= self.gpu_power_limit_w:
                self.gpu_power_limit_w = float(gpu.power_limit_w)
        for metric_series in self._gpu.values():
            for index in set(metric_series) - seen:
                metric_series[index].append(math.nan)

    def _gpu_series(self, table: dict[int, deque[float]], index: int) -> deque[float]:
        if index not in table:
            # A GPU seen late gets gaps for the samples before it appeared.
            table[index] = deque([math.nan] * (len(self.timestamps_s) - 1), maxlen=self.capacity)
        return table[index]

    @property
    def cpu_percent(self) -> tuple[float, ...]:
        return tuple(self._cpu_percent)

    @property
    def memory_percent(self) -> tuple[float, ...]:
        return tuple(self._memory_percent)

    @property
    def gpu_indices(self) -> tuple[int, ...]:
        return tuple(sorted(self._gpu["util"]))

    def gpu_series(self, metric: str, index: int) -> tuple[float, ...]:
        """One GPU's values of `metric` (a GPU_METRICS name), oldest first; NaN where there was no reading."""
        return tuple(self._gpu[metric].get(index, ()))

    def gpu_utilization_percent(self, index: int) -> tuple[float, ...]:
        return self.gpu_series("util", index)

    def gpu_memory_percent(self, index: int) -> tuple[float, ...]:
        return self.gpu_series("mem", index)

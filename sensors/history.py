"""Bounded ring buffers of recent readings, for the dashboard's history charts."""

from __future__ import annotations

import math
from collections import deque

from pth_top.sensors.model import Snapshot
from pth_top.sensors.na import is_na

DEFAULT_CAPACITY = 300


def _finite_or_nan(value: float) -> float:
    return math.nan if is_na(value) or math.isinf(value) else float(value)


class History:
    """The last `capacity` samples of CPU %, RAM %, and per-GPU utilisation and memory %.

    Memory stays bounded however long the dashboard runs; GPUs are keyed by index.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self.timestamps_s: deque[float] = deque(maxlen=capacity)
        self._cpu_percent: deque[float] = deque(maxlen=capacity)
        self._memory_percent: deque[float] = deque(maxlen=capacity)
        self._gpu_utilization_percent: dict[int, deque[float]] = {}
        self._gpu_memory_percent: dict[int, deque[float]] = {}

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
            self._gpu_series(self._gpu_utilization_percent, gpu.index).append(
                _finite_or_nan(gpu.utilization_percent)
            )
            self._gpu_series(self._gpu_memory_percent, gpu.index).append(_finite_or_nan(gpu.memory_percent))
        for index in set(self._gpu_utilization_percent) - seen:
            self._gpu_utilization_percent[index].append(math.nan)
            self._gpu_memory_percent[index].append(math.nan)

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
        return tuple(sorted(self._gpu_utilization_percent))

    def gpu_utilization_percent(self, index: int) -> tuple[float, ...]:
        return tuple(self._gpu_utilization_percent.get(index, ()))

    def gpu_memory_percent(self, index: int) -> tuple[float, ...]:
        return tuple(self._gpu_memory_percent.get(index, ()))

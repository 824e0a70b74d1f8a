"""Per-core CPU use (user / system / iowait apart), total, frequency and package temperature."""

from __future__ import annotations

import time
from typing import Any, Callable

import psutil

from sensors.model import CoreUsage, CpuSample, MaybeFloat
from sensors.na import NA

TEMPERATURE_TTL_S = 2.0
# (hwmon driver, sensor label) that mean "the CPU package", most specific first; "" takes any label.
PACKAGE_SENSORS = (
    ("coretemp", "Package id 0"),
    ("k10temp", "Tctl"),
    ("k10temp", "Tdie"),
    ("zenpower", "Tdie"),
    ("cpu_thermal", ""),
)


def core_usage(index: int, times: Any) -> CoreUsage:
    """One core from psutil's per-core percentages; total counts everything but idle and iowait."""
    user = getattr(times, "user", 0.0) + getattr(times, "nice", 0.0)
    system = (
        getattr(times, "system", 0.0) + getattr(times, "irq", 0.0)
        + getattr(times, "softirq", 0.0) + getattr(times, "steal", 0.0)
    )
    iowait = getattr(times, "iowait", 0.0)
    idle = getattr(times, "idle", 0.0)
    total = min(100.0, max(0.0, 100.0 - idle - iowait))
    return CoreUsage(index=index, user_percent=user, system_percent=system, iowait_percent=iowait,
                     total_percent=total)


def package_temperature_c(sensors: dict[str, list[Any]]) -> MaybeFloat:
    """The CPU package temperature from psutil.sensors_temperatures(), NA when none is known."""
    for driver, label in PACKAGE_SENSORS:
        for entry in sensors.get(driver, ()):
            if not label or entry.label == label:
                current = entry.current
                if isinstance(current, (int, float)):
                    return float(current)
    return NA


class CpuReader:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._temperature: MaybeFloat = NA
        self._temperature_read_at: float | None = None
        psutil.cpu_times_percent(percpu=True)

    def sample(self) -> CpuSample:
        cores = tuple(core_usage(index, times) for index, times in enumerate(psutil.cpu_times_percent(percpu=True)))
        total = sum(core.total_percent for core in cores) / len(cores) if cores else 0.0
        return CpuSample(
            cores=cores,
            total_percent=total,
            frequency_mhz=self._frequency_mhz(),
            package_temperature_c=self._package_temperature_c(),
        )

    @staticmethod
    def _frequency_mhz() -> MaybeFloat:
        try:
            frequency = psutil.cpu_freq()
        except (OSError, NotImplementedError, AttributeError, RuntimeError):
            return NA
        if frequency is None or not frequency.current:
            return NA
        return float(frequency.current)

    def _package_temperature_c(self) -> MaybeFloat:
        now = self._clock()
        if self._temperature_read_at is not None and now - self._temperature_read_at < TEMPERATURE_TTL_S:
            return self._temperature
        self._temperature_read_at = now
        read = getattr(psutil, "sensors_temperatures", None)
        try:
            self._temperature = package_temperature_c(read() if read else {})
        except (OSError, RuntimeError):
            self._temperature = NA
        return self._temperature

"""Per-core CPU use (user / system / iowait apart), total, frequency and package temperature."""

from __future__ import annotations

import time
from typing import Any, Callable

import psutil

from pth_top.sensors.model import CoreUsage, CpuSample, MaybeFloat
from pth_top.sensors.na import NA

TEMPERATURE_TTL_S = 2.0
# (hwmon driver, sensor label) that mean "the CPU package", most specific first; "" takes any label.
PACKAGE_SENSORS = (
    ("coretemp", "Package id 0"),
    ("k10temp", "Tctl"),
    ("k10temp", "Tdie"),
    ("zenpower", "Tdie"),
    ("cpu_thermal", ""),
)


# Fields of psutil.cpu_times() that count towards elapsed time (guest time is already inside user).
_COUNTED_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def core_usage(index: int, before: Any, after: Any) -> CoreUsage:
    """One core's use between two psutil.cpu_times() readings; total is everything but idle and iowait.

    Computed here because psutil.cpu_times_percent() is wrong for intervals under one second.
    """
    delta = {name: max(0.0, getattr(after, name, 0.0) - getattr(before, name, 0.0)) for name in _COUNTED_FIELDS}
    elapsed = sum(delta.values())
    if elapsed <= 0:
        return CoreUsage(index=index, user_percent=0.0, system_percent=0.0, iowait_percent=0.0, total_percent=0.0)
    scale = 100.0 / elapsed
    user = (delta["user"] + delta["nice"]) * scale
    system = (delta["system"] + delta["irq"] + delta["softirq"] + delta["steal"]) * scale
    return CoreUsage(
        index=index,
        user_percent=user,
        system_percent=system,
        iowait_percent=delta["iowait"] * scale,
        total_percent=min(100.0, user + system),
    )


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
        self._previous_times = psutil.cpu_times(percpu=True)

    def sample(self) -> CpuSample:
        times = psutil.cpu_times(percpu=True)
        previous = self._previous_times
        self._previous_times = times
        cores = tuple(
            core_usage(index, previous[index] if index < len(previous) else now, now)
            for index, now in enumerate(times)
        )
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

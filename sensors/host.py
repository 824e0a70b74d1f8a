"""Host identity and load: hostname, uptime, load average, CPU counts and model, kernel."""

from __future__ import annotations

import os
import platform
import socket
import time

import psutil

from pth_top.sensors.model import HostInfo, MaybeStr
from pth_top.sensors.na import NA


def read_cpu_model_name(cpuinfo_path: str = "/proc/cpuinfo") -> str:
    """The CPU model from /proc/cpuinfo ("model name", or "Hardware"/"Processor" on ARM)."""
    fallback = ""
    try:
        with open(cpuinfo_path, encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                if key == "model name" and value.strip():
                    return value.strip()
                if key in ("hardware", "processor", "cpu model") and value.strip() and not value.strip().isdigit():
                    fallback = fallback or value.strip()
    except OSError:
        pass
    return fallback or platform.processor() or platform.machine() or "unknown CPU"


class HostReader:
    """Static facts read once; uptime and load average on every sample."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.hostname = socket.gethostname()
        self.kernel = f"{platform.system()} {platform.release()}".strip()
        self.cpu_model_name = read_cpu_model_name(f"{proc_root}/cpuinfo")
        self.logical_cpu_count = psutil.cpu_count(logical=True) or os.cpu_count() or 1
        physical = psutil.cpu_count(logical=False)
        self.physical_cpu_count = physical if physical else NA
        self.boot_time_s = psutil.boot_time()

    def sample(
        self,
        nvidia_driver_version: MaybeStr = NA,
        cuda_driver_version: MaybeStr = NA,
        nvml_unavailable_reason: str | None = None,
    ) -> HostInfo:
        try:
            load_1m, load_5m, load_15m = os.getloadavg()
        except (OSError, AttributeError):
            load_1m = load_5m = load_15m = NA
        return HostInfo(
            hostname=self.hostname,
            uptime_s=max(0.0, time.time() - self.boot_time_s),
            load_average_1m=load_1m,
            load_average_5m=load_5m,
            load_average_15m=load_15m,
            logical_cpu_count=self.logical_cpu_count,
            physical_cpu_count=self.physical_cpu_count,
            cpu_model_name=self.cpu_model_name,
            kernel=self.kernel,
            nvidia_driver_version=nvidia_driver_version,
            cuda_driver_version=cuda_driver_version,
            nvml_unavailable_reason=nvml_unavailable_reason,
        )

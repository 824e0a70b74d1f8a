"""What every kernel needs: devices, timers, metadata, GPU telemetry, random data, result rows."""

from __future__ import annotations

import os
import statistics
import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from pth_top.benches.child.cpuinfo import read_cpu_info
from pth_top.benches.child.harness import HostTimer, Measurement, measure


class Skipped(Exception):
    """The variant does not apply here (e.g. no CUDA device); reported as a skipped row, not an error."""


@dataclass
class KernelContext:
    device: str  # "cpu", "cuda:N", or "host" for kernels that run once
    scale: float
    time_cap_s: float
    options: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[float, str], None] = lambda fraction, message: None


@dataclass(frozen=True)
class Variant:
    name: str
    run: Callable[[], dict]


def is_cuda(device: str) -> bool:
    return device.startswith("cuda")


def device_scope(device: str):
    """Make `device` the current CUDA device while a variant runs (events record on its stream)."""
    return torch.cuda.device(device) if is_cuda(device) else nullcontext()


def list_devices() -> list[dict]:
    devices = [{"id": "cpu", "name": read_cpu_info().model}]
    if torch.cuda.is_available():
        for index in range(torch.cuda.device_count()):
            devices.append({"id": f"cuda:{index}", "name": torch.cuda.get_device_name(index)})
    return devices


class CudaEventTimer:
    """CUDA events recorded on the current stream around the block; waits for the end event."""

    def __init__(self, device: str) -> None:
        self._device = torch.device(device)
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)

    def start(self) -> None:
        torch.cuda.synchronize(self._device)
        self._start.record()

    def stop(self) -> float:
        self._end.record()
        self._end.synchronize()
        return self._start.elapsed_time(self._end) / 1000.0


def make_timer(device: str):
    if is_cuda(device):
        return CudaEventTimer(device)
    return HostTimer()


class L2Flusher:
    """Writes a buffer larger than L2 before each sample (as triton's do_bench does)."""

    def __init__(self, device: str) -> None:
        l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
        self._buffer = torch.empty(max(2 * l2_bytes, 256 * 2**20) // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self._buffer.zero_()


class GpuTelemetry:
    """Samples SM clock, power and temperature on a thread while a kernel runs (where NVML allows)."""

    def __init__(self, device: str, interval_s: float = 0.1) -> None:
        self._device = torch.device(device)
        self._interval_s = interval_s
        self._samples: dict[str, list[float]] = {"sm_clock_mhz": [], "power_w": [], "temperature_c": []}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._readers = {
            "sm_clock_mhz": lambda: torch.cuda.clock_rate(self._device),
            "power_w": lambda: torch.cuda.power_draw(self._device) / 1000.0,
            "temperature_c": lambda: torch.cuda.temperature(self._device),
        }

    def _sample_once(self) -> None:
        for name, reader in list(self._readers.items()):
            try:
                self._samples[name].append(float(reader()))
            except Exception:  # no pynvml, or the query is unsupported: stop asking
                self._readers.pop(name, None)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval_s) and self._readers:
            self._sample_once()

    def __enter__(self) -> "GpuTelemetry":
        self._sample_once()
        self._thread = threading.Thread(target=self._loop, name="gpu-telemetry", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        self._sample_once()

    def summary(self) -> dict:
        return {
            name: {"min": min(values), "median": statistics.median(values), "max": max(values)}
            for name, values in self._samples.items()
            if values
        }


def timed(ctx: KernelContext, fn: Callable[[], object], *, flush: bool = False,
          device: str | None = None) -> Measurement:
    """Measure `fn` on the context's device with the right timer; L2 flushed before each call if asked."""
    device = device or ctx.device
    flusher = L2Flusher(device) if flush and is_cuda(device) else None
    return measure(
        fn,
        timer=make_timer(device),
        before_sample=flusher,
        single_call=flusher is not None,
        max_time_s=ctx.time_cap_s,
    )


def random_tensor(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    """Normal random data (never zeros: zeros make some hardware look faster)."""
    return torch.randn(shape, dtype=torch.float32, device=device).to(dtype)


def row(
    *,
    variant: str,
    value: float | None,
    measurement: Measurement | None = None,
    peak_kind: str | None = None,
    unit: str | None = None,
    details: dict | None = None,
    note: str = "",
) -> dict:
    """A result row's kernel-side fields; the runner adds kernel, device, telemetry."""
    fields: dict[str, Any] = {"variant": variant, "value": value, "note": note, "details": details or {}}
    if peak_kind is not None:
        fields["peak_kind"] = peak_kind
    if unit is not None:
        fields["unit"] = unit
    if measurement is not None:
        fields.update(
            median_s=measurement.median_s,
            iqr_s=measurement.iqr_s,
            rel_iqr=measurement.rel_iqr,
            noisy=measurement.noisy,
            samples=len(measurement.samples_s),
            calls_per_sample=measurement.calls_per_sample,
        )
    return fields


def collect_metadata(devices: list[str]) -> dict:
    """Everything that changes a result: versions, TF32 flags and overrides, threads, CPU, GPUs."""
    cuda_devices = {}
    driver = _nvidia_driver_version()
    for device in devices:
        if is_cuda(device):
            properties = torch.cuda.get_device_properties(device)
            cuda_devices[device] = {
                "name": properties.name,
                "total_memory_bytes": properties.total_memory,
                "compute_capability": f"{properties.major}.{properties.minor}",
                "multiprocessor_count": properties.multi_processor_count,
                "l2_cache_bytes": getattr(properties, "L2_cache_size", None),
                "driver_version": driver,
            }
    cudnn_version = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "cudnn_version": cudnn_version,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "env": {
            name: os.environ.get(name)
            for name in ("NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "OMP_NUM_THREADS",
                         "MKL_NUM_THREADS")
        },
        "torch_num_threads": torch.get_num_threads(),
        "cpu": read_cpu_info().as_dict(),
        "cuda_devices": cuda_devices,
    }


def _nvidia_driver_version() -> str | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            version = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return version.decode() if isinstance(version, bytes) else str(version)
    except Exception:
        return None

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
from pth_top.benches.child.harness import HostTimer, Measurement, measure, measure_repetitions
from pth_top.benches.child.pcie_link import pci_bus_id, read_pcie_link
from pth_top.benches.protocol import MIN_TRUSTED_SAMPLES


class Skipped(Exception):
    """The variant does not apply here (e.g. no CUDA device); reported as a skipped row, not an error."""


@dataclass
class KernelContext:
    device: str  # "cpu", "cuda:N", or "host" for kernels that run once
    scale: float
    time_cap_s: float
    options: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[float, str], None] = lambda fraction, message: None
    # Work finished (a batch, a shape, a second of GEMMs): heartbeats carry the time since, a hung GPU lets it grow.
    mark_progress: Callable[[], None] = lambda: None


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


class CudaRepetitionTimer:
    """One CUDA event pair per repetition on the current stream; `collect` waits once for the device."""

    def __init__(self, device: str) -> None:
        self._device = torch.device(device)
        self._pairs: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
        self._count = 0

    def prepare(self, count: int) -> None:
        while len(self._pairs) < count:
            self._pairs.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
        self._count = count

    def start(self, index: int) -> None:
        self._pairs[index][0].record()

    def stop(self, index: int) -> None:
        self._pairs[index][1].record()

    def collect(self) -> list[float]:
        torch.cuda.synchronize(self._device)
        return [start.elapsed_time(end) / 1000.0 for start, end in self._pairs[:self._count]]


def gpu_warmup_s(scale: float) -> float:
    """Sustained warm-up before each GPU measurement: 1.5 s at standard scale (clocks reach the power limit)."""
    return min(2.0, max(0.25, 1.5 * scale))


class L2Flusher:
    """Writes a buffer larger than L2 before each sample (as triton's do_bench does)."""

    def __init__(self, device: str) -> None:
        l2_bytes = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0
        self._buffer = torch.empty(max(2 * l2_bytes, 256 * 2**20) // 4, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self._buffer.zero_()


class GpuTelemetry:
    """SM clock, power and temperature sampled on a thread while inside (the timed window only, so no idle
    samples); readers NVML does not support are dropped. Summary: median clock, mean power, max temperature."""

    def __init__(self, device: str, interval_s: float = 0.05, first_sample_s: float = 0.005) -> None:
        self._device = torch.device(device)
        self._interval_s = interval_s
        self._first_sample_s = first_sample_s
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
        wait_s = self._first_sample_s  # the work is queued within microseconds of entering the window
        while not self._stop.wait(wait_s) and self._readers:
            self._sample_once()
            wait_s = self._interval_s

    def __enter__(self) -> "GpuTelemetry":
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="gpu-telemetry", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)

    def summary(self) -> dict:
        return summarize_telemetry(self._samples)


def summarize_telemetry(samples: dict[str, list[float]]) -> dict:
    """Median SM clock (and its minimum), mean power, max temperature, and how many samples back them."""
    summary: dict[str, Any] = {"window": "timed", "samples": max((len(v) for v in samples.values()), default=0)}
    if samples.get("sm_clock_mhz"):
        summary["sm_clock_mhz_median"] = statistics.median(samples["sm_clock_mhz"])
        summary["sm_clock_mhz_min"] = min(samples["sm_clock_mhz"])
    if samples.get("power_w"):
        summary["power_w_mean"] = statistics.fmean(samples["power_w"])
    if samples.get("temperature_c"):
        summary["temperature_c_max"] = max(samples["temperature_c"])
    return summary


def timed(ctx: KernelContext, fn: Callable[[], object], *, flush: bool = False,
          device: str | None = None, warmup_s: float | None = None) -> Measurement:
    """Measure `fn` on `device` (the context's by default). CUDA: events per repetition after a sustained
    warm-up (`warmup_s`, default gpu_warmup_s: a sweep whose GPU is already warm may pass less), telemetry
    in the timed window, L2 flushed before each repetition if asked. CPU: host clock."""
    device = device or ctx.device
    if not is_cuda(device):
        return measure(fn, timer=HostTimer(), max_time_s=ctx.time_cap_s, mark_progress=ctx.mark_progress)
    with device_scope(device):
        flusher = L2Flusher(device) if flush else None
        return measure_repetitions(
            fn,
            timer=CudaRepetitionTimer(device),
            warmup_s=gpu_warmup_s(ctx.scale) if warmup_s is None else warmup_s,
            max_time_s=ctx.time_cap_s,
            before_rep=flusher,
            single_call=flusher is not None,
            window=GpuTelemetry(device),
            mark_progress=ctx.mark_progress,
        )


def untrusted(measurement: Measurement) -> bool:
    """Noisy (IQR over target) or from too few samples to tell: a figure derived from it is noisy too."""
    return measurement.noisy or len(measurement.samples_s) < MIN_TRUSTED_SAMPLES


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
    size: dict | None = None,
    telemetry: dict | None = None,
) -> dict:
    """A result row's kernel-side fields (`size`: the work each call does); the runner adds kernel, device."""
    fields: dict[str, Any] = {"variant": variant, "value": value, "note": note, "details": details or {}}
    if size is not None:
        fields["size"] = size
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
        for name in ("timing", "warmup_s", "l2_flush", "telemetry"):
            if name in measurement.extra:
                fields[name] = measurement.extra[name]
    if telemetry is not None:
        fields["telemetry"] = telemetry
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
                "pcie_link": read_pcie_link(pci_bus_id(properties)),
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
        "cpu": read_cpu_info(measure_clock_threads=torch.get_num_threads()).as_dict(),
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

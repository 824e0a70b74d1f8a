"""Burn-in: every chosen GPU runs large BF16 GEMMs at once (one thread and one stream per GPU) for a set time.

Each second, one "sample" event per device: the GEMM rate over that second and the NVML readings (SM clock,
power, temperature, clock-event reasons). On GPU each GEMM is counted when the event recorded after it completes,
so a second's rate is not quantised by batches. The size ignores --scale: the burn is meant to reach the power
cap. On CPU one thread runs FP32 GEMMs on all cores and NVML readings are null. Cancel (SIGTERM) stops the
workers within GEMMS_IN_FLIGHT GEMMs; nothing is written to disk.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from typing import Any, Callable

import torch

from pth_top.benches.catalog import PEAK_NONE
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row
from pth_top.benches.child.kernels.nvml_readings import NvmlReadings, no_readings

DEFAULT_BURN_S = 60.0  # when the burn kernel is named without --burn
SAMPLE_INTERVAL_S = 1.0
GPU_MATRIX_SIZE = 8192  # three 128 MiB BF16 matrices, a GEMM of 1.1 TFLOP
CPU_MATRIX_SIZE = 1024
GEMMS_IN_FLIGHT = 16  # GPU: GEMMs queued on the stream ahead of the one the worker waits for
WORKER_JOIN_S = 30.0


def burn_devices(devices: list[str]) -> list[str]:
    """Every chosen GPU; the CPU only when no GPU is chosen."""
    gpus = [device for device in devices if is_cuda(device)]
    return gpus or ["cpu"]


def matrix_size(device: str) -> int:
    """Full size whatever the suite's scale: smaller GEMMs draw less power and may never reach the cap."""
    return GPU_MATRIX_SIZE if is_cuda(device) else CPU_MATRIX_SIZE


class CompletionCounter:
    """Events recorded after each queued GEMM; `done` counts those completed, oldest first (at most `limit` queued)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.pending: deque[Any] = deque()

    def add(self, event: Any) -> int:
        """Queue one GEMM's event; the GEMMs seen done since the last call (waits for the oldest when full)."""
        self.pending.append(event)
        done = self.done()
        if len(self.pending) > self.limit:
            self.pending.popleft().synchronize()
            done += 1 + self.done()
        return done

    def done(self) -> int:
        count = 0
        while self.pending and self.pending[0].query():
            self.pending.popleft()
            count += 1
        return count

    def drain(self) -> int:
        count = len(self.pending)
        if self.pending:
            self.pending[-1].synchronize()
        self.pending.clear()
        return count


class GemmWorker(threading.Thread):
    """Runs `out = a @ b` on one device until `stop`; `flop_done` counts the GEMMs known to have finished."""

    def __init__(self, device: str, size: int, stop: threading.Event) -> None:
        super().__init__(name=f"burn-{device}", daemon=True)
        self.device = device
        self.size = size
        self.dtype = torch.bfloat16 if is_cuda(device) else torch.float32
        self.stop = stop
        self.flop_done = 0.0
        self.error: str | None = None

    def run(self) -> None:
        try:
            if is_cuda(self.device):
                with torch.cuda.device(self.device):
                    self._loop(torch.cuda.Stream(self.device))
                    torch.cuda.empty_cache()  # the VRAM test after a burn sees this memory as free
            else:
                self._loop(None)
        except Exception as error:  # OOM, a lost GPU: this device's error; the others go on
            self.error = f"{type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}"

    def _loop(self, stream: Any) -> None:
        shape = (self.size, self.size)
        a = torch.randn(shape, device=self.device).to(self.dtype)  # random, never zeros
        b = torch.randn(shape, device=self.device).to(self.dtype)
        out = torch.empty(shape, device=self.device, dtype=self.dtype)
        flop_per_gemm = 2.0 * self.size**3
        if stream is not None:
            stream.wait_stream(torch.cuda.current_stream(self.device))  # the inputs are written on the default stream
        if stream is None:
            while not self.stop.is_set():
                torch.matmul(a, b, out=out)
                self.flop_done += flop_per_gemm
            return
        counter = CompletionCounter(GEMMS_IN_FLIGHT)
        try:
            while not self.stop.is_set():
                with torch.cuda.stream(stream):
                    torch.matmul(a, b, out=out)
                    event = torch.cuda.Event()
                    event.record(stream)
                self.flop_done += counter.add(event) * flop_per_gemm
        finally:
            self.flop_done += counter.drain() * flop_per_gemm


def device_identity(device: str, nvml: NvmlReadings | None) -> tuple[Any, dict[str, Any]]:
    """(NVML handle or None, {"name", "uuid"}) of a torch device; uuid is NVML's ("GPU-...") or None."""
    if not is_cuda(device):
        return None, {"name": "cpu", "uuid": None}
    index = torch.device(device).index or 0
    properties = torch.cuda.get_device_properties(index)
    torch_uuid = getattr(properties, "uuid", None)
    nvml_index = getattr(torch.cuda, "_get_nvml_device_index", lambda i: i)  # honours CUDA_VISIBLE_DEVICES
    try:
        index_for_nvml = nvml_index(index)
    except Exception:
        index_for_nvml = index
    uuid_text = str(torch_uuid) if torch_uuid else ""  # torch prints it bare; NVML wants "GPU-..."
    nvml_uuid = uuid_text if uuid_text.startswith(("GPU-", "MIG-")) or not uuid_text else f"GPU-{uuid_text}"
    handle = nvml.handle(nvml_uuid or None, index_for_nvml) if nvml else None
    return handle, {"name": properties.name, "uuid": nvml.uuid(handle) if nvml and handle is not None else None}


def run_burn(ctx: KernelContext, devices: list[str], duration_s: float, emit: Callable[..., None],
             nvml_module: Any = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """Burn `devices` for `duration_s`, one sample event per device each second; the summary row's fields."""
    nvml = NvmlReadings(nvml_module) if any(is_cuda(device) for device in devices) else None
    identities = {device: device_identity(device, nvml) for device in devices}
    stop = threading.Event()
    workers = {device: GemmWorker(device, matrix_size(device), stop) for device in devices}
    started = clock()
    previous = {device: (started, 0.0) for device in devices}
    rates: dict[str, list[float]] = {device: [] for device in devices}
    for worker in workers.values():
        worker.start()
    try:
        tick = started
        while any(worker.is_alive() for worker in workers.values()):
            tick = min(tick + SAMPLE_INTERVAL_S, started + duration_s)
            time.sleep(max(0.0, tick - clock()))
            now = clock()
            advanced = False
            for device, worker in workers.items():
                if not worker.is_alive() and worker.error:
                    continue
                then, flop_then = previous[device]
                flop_now = worker.flop_done
                advanced = advanced or flop_now > flop_then
                previous[device] = (now, flop_now)
                readings = nvml.read(identities[device][0]) if nvml else no_readings()
                rates[device].append((flop_now - flop_then) / max(now - then, 1e-9) / 1e12)
                emit("sample", kernel="burn", device=device, t_s=now - started, tflops=rates[device][-1], **readings)
            if advanced:  # GEMMs finished this second; hung GPUs freeze the bar and, past the stall limit, stop the run
                ctx.mark_progress()
                ctx.progress(min(1.0, (now - started) / duration_s), f"{now - started:.0f} of {duration_s:.0f} s")
            if now - started >= duration_s:
                break
    finally:
        stop.set()
        for worker in workers.values():
            worker.join(WORKER_JOIN_S)
        if nvml:
            nvml.close()
    elapsed_s = clock() - started
    medians = {device: statistics.median(rates[device]) if rates[device] else 0.0 for device in devices}
    per_device = {device: {**identities[device][1], "tflop": worker.flop_done / 1e12,
                           "median_tflops": medians[device],
                           "mean_tflops": worker.flop_done / max(elapsed_s, 1e-9) / 1e12,
                           "matrix_size": worker.size, "dtype": str(worker.dtype).replace("torch.", ""),
                           "error": worker.error}
                  for device, worker in workers.items()}
    for device, worker in workers.items():
        if worker.error:
            emit("error", kernel="burn", device=device, variant="burn", error_type="BurnFailed", message=worker.error)
    failed = [device for device, worker in workers.items() if worker.error]
    mean_tflops = sum(worker.flop_done for worker in workers.values()) / max(elapsed_s, 1e-9) / 1e12
    what = "median of the per-second rates" + (f", summed over {len(devices)} devices" if len(devices) > 1 else "")
    return row(variant=burn_variant(devices), value=sum(medians.values()), peak_kind=PEAK_NONE, unit="TFLOP/s",
               note="; ".join([what, *([f"failed: {', '.join(failed)}"] if failed else [])]),
               details={"duration_s": elapsed_s, "planned_s": duration_s, "mean_tflops": mean_tflops,
                        "devices": per_device})


def burn_variant(devices: list[str]) -> str:
    """The devices the burn ran on, e.g. "cuda:0+cuda:1" or "8 GPUs cuda:0..cuda:7"."""
    if len(devices) <= 4:
        return "+".join(devices)
    return f"{len(devices)} GPUs {devices[0]}..{devices[-1]}"


def variants(ctx: KernelContext) -> list[Variant]:
    devices = burn_devices(list(ctx.options.get("devices") or ["cpu"]))
    duration_s = float(ctx.options.get("burn_s") or DEFAULT_BURN_S)
    emit = ctx.options.get("emit") or (lambda kind, **fields: None)
    return [Variant("burn", lambda: run_burn(ctx, devices, duration_s, emit))]

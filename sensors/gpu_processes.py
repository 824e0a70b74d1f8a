"""Processes holding a GPU context, as NVML reports them (PIDs in the root PID namespace)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, TypeGuard

from pth_top.sensors.model import MaybeFloat, MaybeInt
from pth_top.sensors.na import NA
from pth_top.sensors.nvml import GpuLostError, NvmlSession

# Newest variant first; driver 535.98 answers the v3 call with garbage PIDs, so we fall back.
PROCESS_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "compute": (
        "nvmlDeviceGetComputeRunningProcesses_v3",
        "nvmlDeviceGetComputeRunningProcesses_v2",
        "nvmlDeviceGetComputeRunningProcesses",
    ),
    "graphics": (
        "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetGraphicsRunningProcesses_v2",
        "nvmlDeviceGetGraphicsRunningProcesses",
    ),
}
# Linux never hands out PIDs above this (PID_MAX_LIMIT on 64-bit).
PID_MAX_LIMIT = 4_194_304
PROCESS_UTILIZATION_FUNCTION = "nvmlDeviceGetProcessUtilization"
# Per-process SM % is the newest of the driver's samples from this long ago on (it samples several times a second).
PROCESS_UTILIZATION_WINDOW_S = 2.0


@dataclass(frozen=True, slots=True)
class NvmlProcess:
    pid: int
    gpu_index: int
    gpu_memory_used_bytes: MaybeInt
    kind: str
    # NA where the GPU does not report per-process utilisation (MIG, older boards).
    sm_util_percent: MaybeFloat = NA


def is_real_pid(pid: Any) -> TypeGuard[int]:
    return isinstance(pid, int) and 0 < pid <= PID_MAX_LIMIT


def read_gpu_processes(
    session: NvmlSession, gpus: Iterable[tuple[int, Any]], wall_clock: Callable[[], float] = time.time,
) -> list[NvmlProcess]:
    """Compute and graphics processes of each (gpu index, handle), with SM %; a lost GPU contributes none."""
    found: list[NvmlProcess] = []
    for gpu_index, handle in gpus:
        on_gpu: list[NvmlProcess] = []
        lost = False
        for kind, function_names in PROCESS_FUNCTIONS.items():
            try:
                entries = _read_variant(session, function_names, handle)
            except GpuLostError:
                lost = True
                break
            for entry in entries:
                pid = getattr(entry, "pid", None)
                if not is_real_pid(pid):
                    continue
                used = getattr(entry, "usedGpuMemory", None)
                on_gpu.append(NvmlProcess(
                    pid=pid,
                    gpu_index=gpu_index,
                    gpu_memory_used_bytes=used if isinstance(used, int) else NA,
                    kind=kind,
                ))
        if on_gpu and not lost:
            sm_percent_of = _sm_percent_by_pid(session, handle, wall_clock)
            if sm_percent_of is not None:
                on_gpu = [
                    replace(process, sm_util_percent=sm_percent_of.get(process.pid, 0.0)) for process in on_gpu
                ]
        found.extend(on_gpu)
    return found


def _sm_percent_by_pid(session: NvmlSession, handle: Any, wall_clock: Callable[[], float]) -> dict[int, float] | None:
    """Each process's newest SM % on this GPU; {} when none ran in the window; None where unsupported."""
    module = session.module
    if PROCESS_UTILIZATION_FUNCTION in session.missing_functions or module is None:
        return None
    function = getattr(module, PROCESS_UTILIZATION_FUNCTION, None)
    if function is None:
        session.mark_missing(PROCESS_UTILIZATION_FUNCTION)
        return None
    since_us = max(0, int((wall_clock() - PROCESS_UTILIZATION_WINDOW_S) * 1_000_000))
    try:
        samples = function(handle, since_us)
    except module.NVMLError as error:
        # NOT_FOUND: no process ran on the GPU since `since_us`, so every one of them is at 0 %.
        if _is_error(module, error, "NVMLError_NotFound") or getattr(error, "value", None) == 0:
            return {}
        if _is_error(module, error, "NVMLError_FunctionNotFound"):
            session.mark_missing(PROCESS_UTILIZATION_FUNCTION)
        # NotSupported (MIG, older boards), NoPermission, a lost GPU (the GPU reader reports that): unknown.
        return None
    except (TypeError, ValueError, AttributeError):
        session.mark_missing(PROCESS_UTILIZATION_FUNCTION)
        return None
    newest: dict[int, tuple[int, float]] = {}
    for sample in samples or ():
        pid, stamp, sm = (getattr(sample, name, None) for name in ("pid", "timeStamp", "smUtil"))
        if not is_real_pid(pid) or not isinstance(stamp, int) or not isinstance(sm, int) or not 0 <= sm <= 100:
            continue
        if pid not in newest or stamp > newest[pid][0]:
            newest[pid] = (stamp, float(sm))
    return {pid: sm for pid, (_stamp, sm) in newest.items()}


def _is_error(module: Any, error: Exception, class_name: str) -> bool:
    error_class = getattr(module, class_name, None)
    return isinstance(error_class, type) and isinstance(error, error_class)


def _read_variant(session: NvmlSession, function_names: tuple[str, ...], handle: Any) -> list[Any]:
    """Entries from the newest working variant; one answering with impossible PIDs is dropped for good."""
    entries = session.call_first(function_names, handle, default=None, accept=_plausible_pids)
    return [] if entries is None else list(entries)


def _plausible_pids(entries: Any) -> bool:
    return all(is_real_pid(getattr(entry, "pid", None)) for entry in entries)

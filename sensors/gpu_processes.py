"""Processes holding a GPU context, as NVML reports them (PIDs in the root PID namespace)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from pth_top.sensors.model import MaybeInt
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


@dataclass(frozen=True, slots=True)
class NvmlProcess:
    pid: int
    gpu_index: int
    gpu_memory_used_bytes: MaybeInt
    kind: str


def is_bogus_pid(pid: Any) -> bool:
    return not isinstance(pid, int) or pid <= 0 or pid > PID_MAX_LIMIT


def read_gpu_processes(session: NvmlSession, gpus: Iterable[tuple[int, Any]]) -> list[NvmlProcess]:
    """Compute and graphics processes of each (gpu index, handle); a lost GPU contributes none."""
    found: list[NvmlProcess] = []
    for gpu_index, handle in gpus:
        for kind, function_names in PROCESS_FUNCTIONS.items():
            try:
                entries = _read_variant(session, function_names, handle)
            except GpuLostError:
                break
            for entry in entries:
                pid = getattr(entry, "pid", None)
                if is_bogus_pid(pid):
                    continue
                used = getattr(entry, "usedGpuMemory", None)
                found.append(NvmlProcess(
                    pid=pid,
                    gpu_index=gpu_index,
                    gpu_memory_used_bytes=used if isinstance(used, int) else NA,
                    kind=kind,
                ))
    return found


def _read_variant(session: NvmlSession, function_names: tuple[str, ...], handle: Any) -> list[Any]:
    """Entries from the newest working variant; one answering with impossible PIDs is dropped for good."""
    entries = session.call_first(function_names, handle, default=None, accept=_plausible_pids)
    return [] if entries is None else list(entries)


def _plausible_pids(entries: Any) -> bool:
    return not any(is_bogus_pid(getattr(entry, "pid", None)) for entry in entries)

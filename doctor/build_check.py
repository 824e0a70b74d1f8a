"""Compare a build with this machine (a sensors Snapshot): which parts it meets or misses."""

from __future__ import annotations

from dataclasses import dataclass

from pth_top.configs.build import Build
from pth_top.sensors.model import Snapshot
from pth_top.sensors.na import is_na
from pth_top.units import GIB

# Firmware and the kernel keep a little memory back; a 32 GiB machine reports ~31 GiB.
REPORTED_MEMORY_FRACTION = 0.9


@dataclass(frozen=True, slots=True)
class CheckLine:
    part: str
    status: str  # "meets", "misses" or "unknown"
    detail: str


def check_build(build: Build, snapshot: Snapshot) -> list[CheckLine]:
    lines: list[CheckLine] = []
    cpu = build.component("cpu")
    if cpu is not None:
        want = cpu.spec["threads_count"]
        have = snapshot.host.logical_cpu_count
        status = "meets" if have >= want else "misses"
        here = f"{have} logical CPUs here ({snapshot.host.cpu_model_name})"
        lines.append(CheckLine("CPU", status, f"{here}; build has {want} ({cpu.name})"))
    ram = build.component("memory_kit")
    if ram is not None:
        want_gib = ram.spec["capacity_gib"] * ram.quantity
        have_gib = snapshot.memory.total_bytes / GIB
        status = "meets" if have_gib >= want_gib * REPORTED_MEMORY_FRACTION else "misses"
        lines.append(CheckLine("RAM", status, f"{have_gib:.1f} GiB here; build has {want_gib:g} GiB"))
    gpu = build.component("gpu")
    if gpu is not None:
        lines.extend(_check_gpus(build, snapshot, gpu.quantity, gpu.spec["memory_gib"], gpu.name))
    storage = build.component("storage")
    if storage is not None:
        want_gb = storage.spec["capacity_gb"] * storage.quantity
        if snapshot.filesystems:
            largest = max(snapshot.filesystems, key=lambda fs: fs.total_bytes)
            have_gb = largest.total_bytes / 1e9
            status = "meets" if have_gb >= want_gb * REPORTED_MEMORY_FRACTION else "misses"
            here = f"largest filesystem {largest.mountpoint} is {have_gb:,.0f} GB"
            lines.append(CheckLine("Storage", status, f"{here}; build has {want_gb:,.0f} GB"))
        else:
            lines.append(CheckLine("Storage", "unknown", "no filesystems reported"))
    return lines


def _check_gpus(build: Build, snapshot: Snapshot, want_count: int, want_gib: float, want_name: str) -> list[CheckLine]:
    if not snapshot.gpus:
        reason = snapshot.host.nvml_unavailable_reason or "no NVIDIA GPU found"
        return [CheckLine("GPU", "misses" if snapshot.host.nvml_unavailable_reason is None else "unknown",
                          f"{reason}; build has {want_count} x {want_name}")]
    lines = []
    count_status = "meets" if len(snapshot.gpus) >= want_count else "misses"
    names = ", ".join(sorted({gpu.name for gpu in snapshot.gpus}))
    detail = f"{len(snapshot.gpus)} here ({names}); build has {want_count} x {want_name}"
    lines.append(CheckLine("GPU count", count_status, detail))
    totals = [gpu.memory_total_bytes for gpu in snapshot.gpus if not is_na(gpu.memory_total_bytes)]
    if not totals:
        lines.append(CheckLine("GPU memory", "unknown", "GPU memory size not reported"))
        return lines
    smallest = min(totals)
    status = "meets" if smallest >= want_gib * GIB * REPORTED_MEMORY_FRACTION else "misses"
    lines.append(
        CheckLine("GPU memory", status, f"smallest GPU here has {smallest / GIB:.1f} GiB; build's has {want_gib:g} GiB")
    )
    need = build.memory.total_bytes
    status = "meets" if need <= smallest * 0.95 else "misses"
    detail = f"needs {need / GIB:.1f} GiB per GPU; this machine's smallest GPU has {smallest / GIB:.1f} GiB"
    lines.append(CheckLine("Workload", status, detail))
    return lines

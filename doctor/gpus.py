"""The GPUs NVML sees, listed once per doctor run and shared by the GPU and host checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pth_top.doctor.context import DoctorContext
from pth_top.sensors.gpu import list_gpu_slots


@dataclass(frozen=True)
class Gpu:
    index: int
    # None when the GPU did not answer while it was listed (lost, or not accessible).
    handle: Any
    name: str
    pci_bus_id: str | None

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name})"


def list_gpus(context: DoctorContext) -> list[Gpu] | None:
    """Every GPU NVML reports, or None when NVML is unavailable (see `nvml_unavailable_reason`)."""
    if "gpus" in context.memo:
        return context.memo["gpus"]
    gpus: list[Gpu] | None = None
    if context.nvml.start():
        slots = list_gpu_slots(context.nvml)
        gpus = [Gpu(slot.index, slot.handle, slot.name, slot.bus_id or None) for slot in slots]
    context.memo["gpus"] = gpus
    return gpus


def nvml_unavailable_reason(context: DoctorContext) -> str:
    return context.nvml.unavailable_reason or "NVML unavailable"


def sysfs_pci_address(bus_id: str) -> str:
    """NVML's "00000000:17:00.0" as sysfs names it: "0000:17:00.0"."""
    domain, _, rest = bus_id.partition(":")
    return f"{domain[-4:]}:{rest}".lower()

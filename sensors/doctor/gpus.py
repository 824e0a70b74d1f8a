"""The GPUs NVML sees, listed once per doctor run and shared by the GPU and host checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pth_top.sensors.doctor.context import DoctorContext
from pth_top.sensors.na import is_na


@dataclass(frozen=True)
class Gpu:
    index: int
    handle: Any
    name: str
    pci_bus_id: str | None

    @property
    def label(self) -> str:
        return f"GPU {self.index} ({self.name})"


def _text(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def list_gpus(context: DoctorContext) -> list[Gpu] | None:
    """Every GPU NVML reports, or None when NVML is unavailable (see `nvml_unavailable_reason`)."""
    if "gpus" in context.memo:
        return context.memo["gpus"]
    gpus: list[Gpu] | None = None
    if context.nvml.start():
        count = context.nvml.call("nvmlDeviceGetCount", default=0)
        gpus = []
        for index in range(count):
            handle = context.nvml.call("nvmlDeviceGetHandleByIndex", index, default=None)
            if handle is None:
                continue
            name = context.nvml.call("nvmlDeviceGetName", handle)
            pci = context.nvml.call("nvmlDeviceGetPciInfo", handle)
            bus_id = None if is_na(pci) else _text(getattr(pci, "busId", "")) or None
            gpus.append(Gpu(index, handle, "unknown GPU" if is_na(name) else _text(name), bus_id))
    context.memo["gpus"] = gpus
    return gpus


def nvml_unavailable_reason(context: DoctorContext) -> str:
    return context.nvml.unavailable_reason or "NVML unavailable"


def sysfs_pci_address(bus_id: str) -> str:
    """NVML's "00000000:17:00.0" as sysfs names it: "0000:17:00.0"."""
    domain, _, rest = bus_id.partition(":")
    return f"{domain[-4:]}:{rest}".lower()

"""The PCIe link a GPU negotiated: now, and the most it trains to in its slot. NVML, else Linux sysfs.

Stdlib only (pynvml looked up, guarded). GPUs drop the link speed when idle, so the bench's PCIe peak
uses the most the link can train to with this device and slot (NVML's "max ... possible with this
device and system"; sysfs: the lower of the GPU's and its upstream port's maximum).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SYSFS_PCI_DEVICES = Path("/sys/bus/pci/devices")
GIGATRANSFERS_TO_GENERATION = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def pci_bus_id(properties: Any) -> str | None:
    """NVML-style bus id ("00000000:17:00.0") from torch's device properties, when torch has them."""
    try:
        return f"{properties.pci_domain_id:08X}:{properties.pci_bus_id:02X}:{properties.pci_device_id:02X}.0"
    except (AttributeError, TypeError, ValueError):
        return None


def read_pcie_link(bus_id: str | None, *, sysfs_devices: Path = SYSFS_PCI_DEVICES,
                   use_nvml: bool = True) -> dict | None:
    """{"generation", "width", "max_generation", "max_width", "source"} or None when neither source answers."""
    if not bus_id:
        return None
    return (_from_nvml(bus_id) if use_nvml else None) or _from_sysfs(bus_id, sysfs_devices)


def _from_nvml(bus_id: str) -> dict | None:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # no pynvml, no driver: sysfs may still know
        return None
    try:
        handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        return {
            "generation": int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(handle)),
            "width": int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(handle)),
            "max_generation": int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(handle)),
            "max_width": int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(handle)),
            "source": "NVML",
        }
    except Exception:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def sysfs_address(bus_id: str) -> str:
    """"00000000:17:00.0" (NVML) as sysfs names it: "0000:17:00.0"."""
    domain, _, rest = bus_id.strip().lower().partition(":")
    return f"{domain[-4:].rjust(4, '0')}:{rest}"


def _from_sysfs(bus_id: str, sysfs_devices: Path) -> dict | None:
    device = sysfs_devices / sysfs_address(bus_id)
    generation, width = _generation(device / "current_link_speed"), _width(device / "current_link_width")
    if generation is None or width is None:
        return None
    max_generation, max_width = _generation(device / "max_link_speed"), _width(device / "max_link_width")
    try:
        port = device.resolve().parent  # the upstream bridge port (root port or switch port)
    except OSError:
        port = None
    if port is not None:
        port_generation, port_width = _generation(port / "max_link_speed"), _width(port / "max_link_width")
        max_generation = min(filter(None, (max_generation, port_generation)), default=None)
        max_width = min(filter(None, (max_width, port_width)), default=None)
    return {"generation": generation, "width": width, "max_generation": max_generation or generation,
            "max_width": max_width or width, "source": "sysfs"}


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _generation(path: Path) -> int | None:
    """"16.0 GT/s PCIe" -> 4."""
    text = _read(path)
    try:
        return GIGATRANSFERS_TO_GENERATION.get(float(text.split()[0])) if text else None
    except (ValueError, IndexError):
        return None


def _width(path: Path) -> int | None:
    text = (_read(path) or "").removeprefix("x")
    return int(text) if text.isdigit() and int(text) > 0 else None

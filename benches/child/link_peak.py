"""The one-way link peak the all-reduce bench compares its bus bandwidth with: NVLink, else the PCIe link.

Stdlib only (pynvml looked up, guarded), so it is tested without torch.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from pth_top.benches.child.pcie_link import read_pcie_link

# One-way GB/s per NVLink link by NVLink version, and per PCIe lane by generation.
NVLINK_LINK_GBPS = {1: 20.0, 2: 25.0, 3: 25.0, 4: 25.0, 5: 50.0}
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def link_peak(bus_ids: list[str | None], nvml: object = None,
              read_link: Callable[[str | None], dict | None] | None = None) -> tuple[float | None, str]:
    """The slowest GPU's one-way link peak in GB/s and its source: active NVLinks, else its negotiated PCIe link.

    GPUs are found in NVML by their PCI bus id (torch's numbering, CUDA_VISIBLE_DEVICES honoured); PCIe is the
    most the link trains to in its slot at the width it negotiated (idle GPUs drop the speed, not the width).
    """
    reader = read_link or read_pcie_link
    try:
        if nvml is None:
            nvml = importlib.import_module("pynvml")
        nvml.nvmlInit()  # type: ignore[attr-defined]
    except Exception:
        nvml = None
    found: list[tuple[float, str]] = []
    try:
        for index, bus_id in enumerate(bus_ids):
            peak = _gpu_link_peak(nvml, bus_id, reader)
            if peak is None:
                return None, f"link peak unknown for cuda:{index}"
            found.append((peak[0], f"cuda:{index} {peak[1]}"))
    finally:
        if nvml is not None:
            try:
                nvml.nvmlShutdown()  # type: ignore[attr-defined]
            except Exception:
                pass
    if not found:
        return None, "link peak unknown (no GPU)"
    return min(found)


def _gpu_link_peak(nvml: Any, bus_id: str | None, read_link: Callable[[str | None], dict | None]
                   ) -> tuple[float, str] | None:
    if nvml is not None and bus_id:
        try:
            handle = nvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        except Exception:
            handle = None
        links, version = 0, 0
        for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18) if handle is not None else 0):
            try:
                if nvml.nvmlDeviceGetNvLinkState(handle, link) == nvml.NVML_FEATURE_ENABLED:
                    links += 1
                    version = max(version, int(nvml.nvmlDeviceGetNvLinkVersion(handle, link)))
            except Exception:
                continue
        if links and version in NVLINK_LINK_GBPS:
            per_link = NVLINK_LINK_GBPS[version]
            return links * per_link, f"NVLink {version}: {links} links x {per_link:g} GB/s one-way"
    pcie = read_link(bus_id) or {}
    generation = pcie.get("max_generation") or pcie.get("generation")
    width = pcie.get("width")
    if generation not in PCIE_LANE_GBPS or not isinstance(width, int) or width <= 0:
        return None
    degraded = f", below its x{pcie['max_width']}" if isinstance(pcie.get("max_width"), int) and \
        pcie["max_width"] > width else ""
    return PCIE_LANE_GBPS[generation] * width, f"PCIe gen {generation} x{width}{degraded} one-way (no NVLink)"

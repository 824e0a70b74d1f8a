"""Host<->device copies, pinned vs pageable, >= 256 MiB; host buffers allocated outside the timed region."""

from __future__ import annotations

from typing import Callable

import torch

from pth_top.benches.catalog import PEAK_PCIE
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, row, timed
from pth_top.benches.child.pcie_link import pci_bus_id, read_pcie_link

MIN_BYTES = 256 * 2**20
LOAD_COPIES = 4  # copies queued while the link is read: an idle GPU drops its link speed


def link_under_load(device: str, copy: Callable[[], object]) -> dict | None:
    """The PCIe link read while copies run (a degraded link shows here; an idle one would read slow anyway)."""
    for _ in range(LOAD_COPIES):
        copy()
    link = read_pcie_link(pci_bus_id(torch.cuda.get_device_properties(device)))
    torch.cuda.synchronize(device)
    return link


def variants(ctx: KernelContext) -> list[Variant]:
    def make(direction: str, pinned: bool) -> Variant:
        name = f"{direction} {'pinned' if pinned else 'pageable'}"

        def run() -> dict:
            if not is_cuda(ctx.device):
                raise Skipped("host<->device copies need a CUDA device")
            nbytes = max(MIN_BYTES, int(MIN_BYTES * ctx.scale))
            host = torch.randint(0, 255, (nbytes,), dtype=torch.uint8)
            if pinned:
                host = host.pin_memory()
            device_buffer = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=ctx.device)
            if direction == "h2d":
                op = lambda: device_buffer.copy_(host, non_blocking=pinned)  # noqa: E731
            else:
                op = lambda: host.copy_(device_buffer, non_blocking=pinned)  # noqa: E731
            measurement = timed(ctx, op)
            details = {"bytes": nbytes, "pinned": pinned, "direction": direction,
                       "best_gbps": nbytes / measurement.best_s / 1e9,
                       "pcie_link_under_load": link_under_load(ctx.device, op)}
            return row(variant=name, value=nbytes / measurement.median_s / 1e9, measurement=measurement,
                       peak_kind=PEAK_PCIE, details=details, size={"bytes": nbytes})
        return Variant(name, run)

    return [make(direction, pinned) for direction in ("h2d", "d2h") for pinned in (True, False)]

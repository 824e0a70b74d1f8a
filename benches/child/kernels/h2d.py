"""Host<->device copies, pinned vs pageable, >= 256 MiB; host buffers allocated outside the timed region."""

from __future__ import annotations

import torch

from pth_top.benches.catalog import PEAK_PCIE
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, row, timed

MIN_BYTES = 256 * 2**20


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
                       "best_gbps": nbytes / measurement.best_s / 1e9}
            return row(variant=name, value=nbytes / measurement.median_s / 1e9, measurement=measurement,
                       peak_kind=PEAK_PCIE, details=details, size={"bytes": nbytes})
        return Variant(name, run)

    return [make(direction, pinned) for direction in ("h2d", "d2h") for pinned in (True, False)]

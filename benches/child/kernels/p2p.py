"""Copy bandwidth for every ordered GPU pair; pairs without peer access (through the host) are flagged."""

from __future__ import annotations

import torch

from pth_top.benches.catalog import PEAK_NONE
from pth_top.benches.child.harness import HostTimer, measure
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, row

COPY_BYTES = 256 * 2**20  # at scale 1, as nvbandwidth's large buffers
MIN_COPY_BYTES = 32 * 2**20
HOST_PATH_NOTE = "through the host: no peer access (no NVLink/PCIe P2P)"


def copy_bytes(scale: float) -> int:
    return max(MIN_COPY_BYTES, int(COPY_BYTES * scale))


def pair_variants(ctx: KernelContext, device_count: int) -> list[Variant]:
    def make(source: int, target: int) -> Variant:
        name = f"cuda:{source}->cuda:{target}"

        def run() -> dict:
            nbytes = copy_bytes(ctx.scale)
            src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device=f"cuda:{source}")
            dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{target}")
            peer = torch.cuda.can_device_access_peer(source, target)

            def sync_both() -> None:  # the copy's work sits on both devices' streams
                torch.cuda.synchronize(source)
                torch.cuda.synchronize(target)

            measurement = measure(lambda: dst.copy_(src), timer=HostTimer(sync=sync_both),
                                  max_time_s=ctx.time_cap_s, mark_progress=ctx.mark_progress)
            gbps = nbytes / measurement.median_s / 1e9
            details = {"bytes": nbytes, "source": f"cuda:{source}", "target": f"cuda:{target}",
                       "peer_access": peer, "path": "p2p" if peer else "host",
                       "best_gbps": nbytes / measurement.best_s / 1e9}
            return row(variant=name, value=gbps, measurement=measurement, peak_kind=PEAK_NONE, unit="GB/s",
                       details=details, note="" if peer else HOST_PATH_NOTE)
        return Variant(name, run)

    return [make(source, target) for source in range(device_count) for target in range(device_count)
            if source != target]


def variants(ctx: KernelContext) -> list[Variant]:
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count < 2:
        def skipped() -> dict:
            raise Skipped(f"needs 2+ GPUs (this machine has {count})")
        return [Variant("matrix", skipped)]
    return pair_variants(ctx, count)

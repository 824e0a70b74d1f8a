"""Kernel modules for runner tests: one that runs out of memory, one that works."""

from __future__ import annotations

import torch

from pth_top.benches.child.kernels._common import KernelContext, Variant, row


def oom_variants(ctx: KernelContext) -> list[Variant]:
    def explode() -> dict:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 80.00 GiB (simulated)")

    def fine() -> dict:
        return row(variant="after oom", value=1.0)

    return [Variant("oom", explode), Variant("after oom", fine)]


variants = oom_variants

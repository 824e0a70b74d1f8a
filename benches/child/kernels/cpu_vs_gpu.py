"""The same training step on CPU and GPU, as a speed ratio ("the guide says 1/50; here it is N")."""

from __future__ import annotations

import torch

from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, row, timed
from pth_top.benches.child.kernels._models import training_step, workload

GUIDE_RATIO = 50


def variants(ctx: KernelContext) -> list[Variant]:
    def make(precision: str) -> Variant:
        def run() -> dict:
            if not torch.cuda.is_available():
                raise Skipped(f"no CUDA device: the guide's 'CPU is 1/{GUIDE_RATIO} of a GPU' cannot be checked here")
            batch = max(4, int(round(64 * ctx.scale)))
            rates = {}
            for device in ("cpu", "cuda:0"):
                torch.manual_seed(0)
                load = workload("cnn", device)
                measurement = timed(ctx, training_step(load, device, precision, batch), device=device)
                rates[device] = batch / measurement.median_s
            ratio = rates["cuda:0"] / rates["cpu"]
            details = {"model": "cnn", "batch": batch, "precision": precision, "cpu_samples_per_s": rates["cpu"],
                       "gpu_samples_per_s": rates["cuda:0"], "gpu_name": torch.cuda.get_device_name(0),
                       "cpu_threads": torch.get_num_threads()}
            note = f"the guide says 1/{GUIDE_RATIO}; here it is 1/{ratio:.0f}"
            return row(variant=f"cnn {precision}", value=ratio, details=details, note=note)
        return Variant(f"cnn {precision}", run)

    if not torch.cuda.is_available():
        return [make("fp32")]
    return [make("fp32"), make("bf16")]

"""AMP training step of a transformer block stack and a CNN: samples/s per precision, speedup vs FP32.

CPU: a 1-layer 256-wide block and a 32 px CNN. CUDA: GPU-sized from the device (see _models.step_size), so
the step is kernels, not launch overhead, and the AMP speedup is the GPU's.
"""

from __future__ import annotations

import torch

from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed
from pth_top.benches.child.kernels._models import StepSize, step_size, training_step, workload


def precisions(device: str) -> list[str]:
    return ["fp32", "fp16", "bf16"] if is_cuda(device) else ["fp32", "bf16"]


def variants(ctx: KernelContext) -> list[Variant]:
    fp32_rates: dict[str, float] = {}
    sizes: dict[str, StepSize] = {}

    def make(name: str, precision: str) -> Variant:
        def run() -> dict:
            torch.manual_seed(0)
            if name not in sizes:
                sizes[name] = step_size(name, ctx.device, ctx.scale)
            size = sizes[name]
            load = workload(size, ctx.device)
            measurement = timed(ctx, training_step(load, ctx.device, precision, size.batch))
            samples_per_s = size.batch / measurement.median_s
            details = {"model": name, "batch": size.batch, "precision": precision,
                       "grad_scaler": precision == "fp16" and is_cuda(ctx.device),
                       "threads": torch.get_num_threads()}
            if name == "transformer":
                details.update(seq_len=size.seq_len, tokens_per_s=samples_per_s * size.seq_len)
            if precision == "fp32":
                fp32_rates[name] = samples_per_s
                if is_cuda(ctx.device):
                    details["cuda_matmul_allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
                    details["cudnn_allow_tf32"] = torch.backends.cudnn.allow_tf32
            elif name in fp32_rates:
                details["speedup_vs_fp32"] = samples_per_s / fp32_rates[name]
            note = f"{details['speedup_vs_fp32']:.2f}x vs fp32" if "speedup_vs_fp32" in details else ""
            return row(variant=f"{name} {precision}", value=samples_per_s, measurement=measurement,
                       details=details, note=note, size=size.as_dict())
        return Variant(f"{name} {precision}", run)

    return [make(name, precision) for name in ("transformer", "cnn") for precision in precisions(ctx.device)]

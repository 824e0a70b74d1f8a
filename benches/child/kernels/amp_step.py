"""AMP training step of a small transformer block and a small CNN: samples/s per precision, speedup vs FP32."""

from __future__ import annotations

import torch

from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed
from pth_top.benches.child.kernels._models import training_step, workload


def precisions(device: str) -> list[str]:
    return ["fp32", "fp16", "bf16"] if is_cuda(device) else ["fp32", "bf16"]


def batch_size(name: str, ctx: KernelContext) -> int:
    base = {"cnn": 256, "transformer": 64} if is_cuda(ctx.device) else {"cnn": 32, "transformer": 8}
    return max(2, int(round(base[name] * ctx.scale)))


def variants(ctx: KernelContext) -> list[Variant]:
    fp32_rates: dict[str, float] = {}

    def make(name: str, precision: str) -> Variant:
        def run() -> dict:
            torch.manual_seed(0)
            seq_len = 128 if is_cuda(ctx.device) else 64
            load = workload(name, ctx.device, seq_len=seq_len)
            batch = batch_size(name, ctx)
            measurement = timed(ctx, training_step(load, ctx.device, precision, batch))
            samples_per_s = batch / measurement.median_s
            details = {"model": name, "batch": batch, "precision": precision,
                       "grad_scaler": precision == "fp16" and is_cuda(ctx.device),
                       "threads": torch.get_num_threads()}
            if name == "transformer":
                details["seq_len"] = seq_len
            if precision == "fp32":
                fp32_rates[name] = samples_per_s
            elif name in fp32_rates:
                details["speedup_vs_fp32"] = samples_per_s / fp32_rates[name]
            note = f"{details['speedup_vs_fp32']:.2f}x vs fp32" if "speedup_vs_fp32" in details else ""
            return row(variant=f"{name} {precision}", value=samples_per_s, measurement=measurement,
                       details=details, note=note)
        return Variant(f"{name} {precision}", run)

    return [make(name, precision) for name in ("transformer", "cnn") for precision in precisions(ctx.device)]

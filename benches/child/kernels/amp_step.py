"""AMP training step of a transformer block stack and a CNN: samples/s per precision, speedup vs FP32.

CPU: a 1-layer 256-wide block and a 32 px CNN. CUDA: GPU-sized from the device (see _models.step_size), so
the step is kernels, not launch overhead, and the AMP speedup is the GPU's. The fp32 baseline runs with TF32
off (cuBLAS and cuDNN), so "x vs fp32" is against true FP32. fp16 steps use a GradScaler, which reads its
found-inf flag on the host once a step (real fp16 training does too); the fp16 rows say so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import torch

from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed, untrusted
from pth_top.benches.child.kernels._models import StepSize, step_size, training_step, workload


def precisions(device: str) -> list[str]:
    return ["fp32", "fp16", "bf16"] if is_cuda(device) else ["fp32", "bf16"]


GRAD_SCALER_NOTE = "GradScaler: 1 host sync/step"


@contextmanager
def tf32_off() -> Iterator[None]:
    """True FP32 matmuls and convolutions for the baseline row; the previous settings restored after."""
    previous = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous[:2]
        torch.set_float32_matmul_precision(previous[2])


def variants(ctx: KernelContext) -> list[Variant]:
    fp32_rates: dict[str, float] = {}
    fp32_untrusted: dict[str, bool] = {}
    sizes: dict[str, StepSize] = {}

    def make(name: str, precision: str) -> Variant:
        def run() -> dict:
            torch.manual_seed(0)
            if name not in sizes:
                sizes[name] = step_size(name, ctx.device, ctx.scale)
            size = sizes[name]
            load = workload(size, ctx.device)
            grad_scaler = precision == "fp16" and is_cuda(ctx.device)
            with tf32_off() if precision == "fp32" else nullcontext():
                tf32 = {"cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32}
                measurement = timed(ctx, training_step(load, ctx.device, precision, size.batch))
            samples_per_s = size.batch / measurement.median_s
            details = {"model": name, "batch": size.batch, "precision": precision, "grad_scaler": grad_scaler,
                       "host_syncs_per_step": 1 if grad_scaler else 0, "threads": torch.get_num_threads()}
            if name == "transformer":
                details.update(seq_len=size.seq_len, tokens_per_s=samples_per_s * size.seq_len)
            if precision == "fp32":
                fp32_rates[name], fp32_untrusted[name] = samples_per_s, untrusted(measurement)
                details.update(tf32)
            elif name in fp32_rates:
                details["speedup_vs_fp32"] = samples_per_s / fp32_rates[name]
                details["speedup_noisy"] = untrusted(measurement) or fp32_untrusted[name]  # no better than either
            noisy = ["noisy"] if details.get("speedup_noisy") else []
            qualifiers = (["TF32 off"] if is_cuda(ctx.device) else []) + noisy
            said = f" ({', '.join(qualifiers)})" if qualifiers else ""  # TF32 is a CUDA setting: not said on CPU
            notes = [f"{details['speedup_vs_fp32']:.2f}x vs fp32{said}"] if "speedup_vs_fp32" in details else []
            note = "; ".join(notes + ([GRAD_SCALER_NOTE] if grad_scaler else []))
            return row(variant=f"{name} {precision}", value=samples_per_s, measurement=measurement,
                       details=details, note=note, size=size.as_dict())
        return Variant(f"{name} {precision}", run)

    return [make(name, precision) for name in ("transformer", "cnn") for precision in precisions(ctx.device)]

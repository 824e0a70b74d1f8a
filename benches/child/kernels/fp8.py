"""FP8 matmul through torch._scaled_mm: e4m3 inputs with per-tensor scales, BF16 output, on GPUs that have it."""

from __future__ import annotations

import functools
import statistics

import torch

from pth_top.benches.catalog import PEAK_FP8
from pth_top.benches.child.kernels._common import (
    KernelContext,
    Skipped,
    Variant,
    is_cuda,
    random_tensor,
    row,
    timed,
    untrusted,
)

CUDA_BASE_SIZES = (4096, 8192, 16384)
# FP8 tensor cores arrive with Ada (sm_89) and Hopper (sm_90): cuBLASLt FP8 needs compute capability 8.9+.
MIN_COMPUTE_CAPABILITY = (8, 9)
# _scaled_mm wants every dimension divisible by 16.
DIM_MULTIPLE = 16


def unsupported_reason(device: str) -> str:
    """Why this device cannot run the FP8 matmul, or "" when it can."""
    if not is_cuda(device):
        return ("FP8 matmul needs an NVIDIA GPU of compute capability >= 8.9 (Ada, Hopper or newer); "
                "this row is the CPU")
    if torch.version.hip:
        return "ROCm build: this kernel uses CUDA's float8_e4m3fn (MI300 uses e4m3fnuz), not measured"
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < MIN_COMPUTE_CAPABILITY:
        return (f"{torch.cuda.get_device_name(device)} is compute capability {major}.{minor}; "
                "FP8 tensor cores need >= 8.9")
    return ""


def quantize_e4m3(tensor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(e4m3 tensor, float32 scale) with tensor ~= e4m3 * scale: the amax maps to e4m3's largest value."""
    largest = torch.finfo(torch.float8_e4m3fn).max
    scale = (tensor.abs().max().float() / largest).clamp(min=1e-12)
    return (tensor.float() / scale).to(torch.float8_e4m3fn), scale


def fp8_operands(m: int, n: int, k: int, device: str) -> dict:
    """Random A (m x k, row-major) and B (k x n, column-major, as _scaled_mm requires), quantized."""
    a, scale_a = quantize_e4m3(random_tensor((m, k), torch.float32, device))
    b_rows, scale_b = quantize_e4m3(random_tensor((n, k), torch.float32, device))
    return {"a": a, "b": b_rows.t(), "scale_a": scale_a, "scale_b": scale_b}


def scaled_matmul(operands: dict, *, fast_accum: bool) -> torch.Tensor:
    return torch._scaled_mm(operands["a"], operands["b"], scale_a=operands["scale_a"], scale_b=operands["scale_b"],
                            out_dtype=torch.bfloat16, use_fast_accum=fast_accum)


def sweep_sizes(scale: float) -> list[int]:
    factor = min(1.0, scale) ** 0.5
    return [max(256, int(size * factor) // 256 * 256) for size in CUDA_BASE_SIZES]


def sweep(ctx: KernelContext, *, fast_accum: bool) -> dict:
    shapes = []
    best = None
    sizes = sweep_sizes(ctx.scale)
    for index, size in enumerate(sizes):
        operands = fp8_operands(size, size, size, ctx.device)
        measurement = timed(ctx, functools.partial(scaled_matmul, operands, fast_accum=fast_accum))
        tflops = 2.0 * size**3 / measurement.median_s / 1e12
        shapes.append({"m": size, "n": size, "k": size, "tflops": tflops, "median_s": measurement.median_s})
        if best is None or tflops > best[0]:
            best = (tflops, measurement, size)
        ctx.progress((index + 1) / len(sizes), f"{size}^3")
        del operands
    assert best is not None, "sweep_sizes gives at least one size"
    tflops, measurement, size = best
    bf16_tflops, bf16_untrusted = bf16_matmul_tflops(ctx, size)
    details = {"shapes": shapes, "best_shape": [size, size, size], "input_dtype": "float8_e4m3fn",
               "output_dtype": "bfloat16", "scaling": "per-tensor (amax / 448)", "use_fast_accum": fast_accum,
               "median_shape_tflops": statistics.median(shape["tflops"] for shape in shapes),
               "bf16_tflops_at_best_shape": bf16_tflops, "speedup_vs_bf16": tflops / bf16_tflops,
               "speedup_noisy": bf16_untrusted or untrusted(measurement)}  # a ratio is no better than either side
    return {"tflops": tflops, "measurement": measurement, "details": details}


def bf16_matmul_tflops(ctx: KernelContext, size: int) -> tuple[float, bool]:
    """The plain BF16 matmul at the same shape (what FP8 gains over it): TFLOP/s and whether it is noisy."""
    a = random_tensor((size, size), torch.bfloat16, ctx.device)
    b = random_tensor((size, size), torch.bfloat16, ctx.device)
    out = torch.empty((size, size), dtype=torch.bfloat16, device=ctx.device)
    measurement = timed(ctx, functools.partial(torch.matmul, a, b, out=out))
    return 2.0 * size**3 / measurement.median_s / 1e12, untrusted(measurement)


def variants(ctx: KernelContext) -> list[Variant]:
    def make(fast_accum: bool) -> Variant:
        name = "e4m3 -> bf16" + (" fast accum" if fast_accum else "")

        def run() -> dict:
            reason = unsupported_reason(ctx.device)
            if reason:
                raise Skipped(reason)
            result = sweep(ctx, fast_accum=fast_accum)
            details = result["details"]
            size = details["best_shape"][0]
            noisy = " (noisy)" if details["speedup_noisy"] else ""
            note = f"{details['speedup_vs_bf16']:.2f}x vs bf16 at {size}^3{noisy}"
            return row(variant=name, value=result["tflops"], measurement=result["measurement"],
                       peak_kind=PEAK_FP8, details=details, note=note,
                       size={"m": size, "n": size, "k": size, "dtype": "float8_e4m3fn"})
        return Variant(name, run)

    if not is_cuda(ctx.device):
        return [make(False)]  # one skipped row says why
    return [make(False), make(True)]

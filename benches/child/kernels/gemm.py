"""GEMM throughput: TFLOP/s = 2MNK/t over a small square-shape sweep; best and median shape reported."""

from __future__ import annotations

import functools
import statistics
from contextlib import contextmanager

import torch

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP16, PEAK_FP32, PEAK_TF32
from pth_top.benches.child.cpuinfo import read_cpu_info
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, random_tensor, row, timed

CPU_BASE_SIZES = (1024, 1536, 2048)
CUDA_BASE_SIZES = (4096, 6144, 8192)


def cpu_has_native_bf16() -> bool:
    flags = read_cpu_info().flags
    return "amx_bf16" in flags or "avx512_bf16" in flags


def sweep_sizes(ctx: KernelContext, dtype: torch.dtype = torch.float32) -> list[int]:
    base = CUDA_BASE_SIZES if is_cuda(ctx.device) else CPU_BASE_SIZES
    factor = ctx.scale**0.5
    if not is_cuda(ctx.device) and dtype == torch.bfloat16 and not cpu_has_native_bf16():
        factor /= 4  # emulated BF16 runs ~50x slower than FP32: keep the sweep within the time cap
    return [max(64, int(round(size * factor / 64)) * 64) for size in base]


@contextmanager
def _matmul_tf32(enabled: bool):
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous


@contextmanager
def _threads(count: int):
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def sweep(ctx: KernelContext, dtype: torch.dtype) -> dict:
    """Time every shape; the value is the best shape's TFLOP/s (as mamf-finder reports)."""
    sizes = sweep_sizes(ctx, dtype)
    shapes = []
    best = None
    for index, size in enumerate(sizes):
        a = random_tensor((size, size), dtype, ctx.device)
        b = random_tensor((size, size), dtype, ctx.device)
        out = torch.empty((size, size), dtype=dtype, device=ctx.device)
        # L2 flushed before each CUDA repetition, as do_bench and mamf-finder do.
        measurement = timed(ctx, functools.partial(torch.matmul, a, b, out=out), flush=True)
        tflops = 2 * size**3 / measurement.median_s / 1e12
        shapes.append({"m": size, "n": size, "k": size, "tflops": tflops,
                       "median_s": measurement.median_s, "rel_iqr": measurement.rel_iqr})
        if best is None or tflops > best[0]:
            best = (tflops, measurement, size)
        ctx.progress((index + 1) / len(sizes), f"{size}^3")
        del a, b, out
    assert best is not None, "sweep_sizes gives at least one size"
    tflops, measurement, size = best
    details = {
        "shapes": shapes,
        "best_shape": [size, size, size],
        "median_shape_tflops": statistics.median(shape["tflops"] for shape in shapes),
        "dtype": str(dtype).replace("torch.", ""),
    }
    if not is_cuda(ctx.device) and dtype == torch.bfloat16:
        details["cpu_native_bf16"] = cpu_has_native_bf16()
    return {"tflops": tflops, "measurement": measurement, "details": details,
            "size": {"m": size, "n": size, "k": size, "dtype": details["dtype"]}}


def variants(ctx: KernelContext) -> list[Variant]:
    if is_cuda(ctx.device):
        def cuda_variant(name: str, dtype: torch.dtype, tf32: bool, peak_kind: str) -> Variant:
            def run() -> dict:
                with torch.cuda.device(ctx.device), _matmul_tf32(tf32):
                    result = sweep(ctx, dtype)
                result["details"]["cuda_matmul_allow_tf32"] = tf32
                return row(variant=name, value=result["tflops"], measurement=result["measurement"],
                           peak_kind=peak_kind, details=result["details"], size=result["size"])
            return Variant(name, run)

        return [
            cuda_variant("fp32 (tf32 off)", torch.float32, False, PEAK_FP32),
            cuda_variant("tf32", torch.float32, True, PEAK_TF32),
            cuda_variant("fp16", torch.float16, False, PEAK_FP16),
            cuda_variant("bf16", torch.bfloat16, False, PEAK_BF16),
        ]

    cores = read_cpu_info().physical_cores

    def cpu_variant(dtype: torch.dtype, threads: int, peak_kind: str) -> Variant:
        label = "fp32" if dtype == torch.float32 else "bf16"
        name = f"{label} {threads} thread{'s' if threads > 1 else ''}"

        def run() -> dict:
            with _threads(threads):
                result = sweep(ctx, dtype)
            result["details"]["threads"] = threads
            return row(variant=name, value=result["tflops"], measurement=result["measurement"],
                       peak_kind=peak_kind, details=result["details"], size=result["size"])
        return Variant(name, run)

    thread_counts = [cores, 1] if cores > 1 else [1]
    return [cpu_variant(dtype, threads, kind)
            for dtype, kind in ((torch.float32, PEAK_FP32), (torch.bfloat16, PEAK_BF16))
            for threads in thread_counts]

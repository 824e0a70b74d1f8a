"""MAMF: the best matmul TFLOP/s over a time-bounded (M, N, K) sweep, as mamf-finder finds the realistic ceiling.

Method of stas00/ml-engineering compute/accelerator/benchmarks/mamf-finder.py: warm the accelerator up
first (a cold one scores higher), time each shape with an L2 flush before each call, report the best
shape (the maximum achievable matmul FLOPS) and the median over shapes, next to the datasheet peak.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import statistics
import time

import torch

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP32
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, random_tensor, row, timed
from pth_top.benches.child.kernels.gemm import cpu_has_native_bf16

# Grid of each dimension at scale 1: multiples of `step` up to `max`.
CUDA_DIM_STEP, CUDA_MAX_DIM = 1024, 16384
CPU_DIM_STEP, CPU_MAX_DIM = 256, 2048
# Shape-timing time at scale 1, after the warm-up (150 s in all on a GPU).
CUDA_BUDGET_S, CPU_BUDGET_S = 120.0, 20.0
# mamf-finder warms a GPU up for 30 s ("a cold accelerator scores higher"), whatever the scale; a CPU is not warmed.
CUDA_WARMUP_S = 30.0
# Each shape's measurement stops repeating after this long (mamf-finder: 50 warm-up + 100 timed calls).
SHAPE_TIME_CAP_S = 0.5
# The sweep's warm-up heated the GPU: each shape only needs its first calls (cuBLAS heuristics) out of the way.
SHAPE_WARMUP_S = 0.1
# Operands (A, B, out) of the largest shape may use this share of free GPU memory.
MEMORY_SHARE = 0.5
SHUFFLE_SEED = 0
SHAPES_KEPT = 20  # the fastest shapes a row lists in its details


def sweep_dims(max_dim: int, step: int) -> list[int]:
    return list(range(step, max_dim + 1, step))


def sweep_shapes(dims: list[int], seed: int = SHUFFLE_SEED) -> list[tuple[int, int, int]]:
    """Squares from the largest down, then every other (M, N, K) of the grid in a fixed shuffled order.

    A sweep cut short by its time budget has tried the usual best shapes and a spread of the rest.
    """
    squares = [(dim, dim, dim) for dim in sorted(dims, reverse=True)]
    others = [(m, n, k) for m in dims for n in dims for k in dims if not m == n == k]
    random.Random(seed).shuffle(others)
    return squares + others


def matmul_tflops(m: int, n: int, k: int, seconds: float) -> float:
    return 2.0 * m * n * k / seconds / 1e12


def grid(ctx: KernelContext, dtype: torch.dtype) -> tuple[int, int]:
    """(step, largest dimension) for this device and scale; on GPUs the operands fit in free memory."""
    step, max_dim = (CUDA_DIM_STEP, CUDA_MAX_DIM) if is_cuda(ctx.device) else (CPU_DIM_STEP, CPU_MAX_DIM)
    step = max(64, int(step * min(1.0, ctx.scale) ** 0.5) // 64 * 64)
    max_dim = max(step, int(max_dim * min(1.0, ctx.scale) ** 0.5) // step * step)
    if is_cuda(ctx.device):
        free_bytes, _ = torch.cuda.mem_get_info(ctx.device)
        element_bytes = torch.tensor([], dtype=dtype).element_size()
        while max_dim > step and 3 * max_dim**2 * element_bytes > MEMORY_SHARE * free_bytes:
            max_dim -= step
    return step, max_dim


def sweep_dtype(device: str) -> torch.dtype:
    """BF16 as mamf-finder's default; FP32 on CPUs that would emulate BF16 (~50x slower)."""
    return torch.bfloat16 if is_cuda(device) or cpu_has_native_bf16() else torch.float32


def warm_up(ctx: KernelContext, seconds: float, dim: int, dtype: torch.dtype) -> float:
    """Run the largest square back to back for `seconds` so clocks settle under the power limit."""
    a = random_tensor((dim, dim), dtype, ctx.device)
    b = random_tensor((dim, dim), dtype, ctx.device)
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        for _ in range(10):
            torch.matmul(a, b)
        if is_cuda(ctx.device):
            torch.cuda.synchronize(ctx.device)
        ctx.mark_progress()
        ctx.progress(min(1.0, (time.monotonic() - started) / max(seconds, 1e-9)) * 0.1, "warming up")
    return time.monotonic() - started


def sweep_warmup_s(device: str) -> float:
    """The sweep's warm-up: mamf-finder's 30 s on a GPU at any scale, none on a CPU."""
    return CUDA_WARMUP_S if is_cuda(device) else 0.0


def sweep(ctx: KernelContext, budget_s: float | None = None, warmup_s: float | None = None) -> dict:
    """Warm up, then time shapes until `budget_s` ends (at least one shape); the best and the median TFLOP/s."""
    dtype = sweep_dtype(ctx.device)
    budget_s = budget_s or (CUDA_BUDGET_S if is_cuda(ctx.device) else CPU_BUDGET_S) * ctx.scale
    step, max_dim = grid(ctx, dtype)
    warmup_s = sweep_warmup_s(ctx.device) if warmup_s is None else warmup_s
    warmup_s = warm_up(ctx, warmup_s, max_dim, dtype) if warmup_s > 0 else 0.0
    shape_ctx = dataclasses.replace(ctx, time_cap_s=min(ctx.time_cap_s, SHAPE_TIME_CAP_S))
    planned = sweep_shapes(sweep_dims(max_dim, step))
    started = time.monotonic()
    measured: list[dict] = []
    best = None
    for m, n, k in planned:
        if measured and time.monotonic() - started >= budget_s:
            break
        a = random_tensor((m, k), dtype, ctx.device)
        b = random_tensor((k, n), dtype, ctx.device)
        out = torch.empty((m, n), dtype=dtype, device=ctx.device)
        measurement = timed(shape_ctx, functools.partial(torch.matmul, a, b, out=out), flush=True,
                            warmup_s=SHAPE_WARMUP_S)
        tflops = matmul_tflops(m, n, k, measurement.median_s)
        measured.append({"m": m, "n": n, "k": k, "tflops": tflops, "median_s": measurement.median_s})
        if best is None or tflops > best[0]:
            best = (tflops, measurement, (m, n, k))
        del a, b, out
        ctx.mark_progress()
        ctx.progress(0.1 + 0.9 * min(1.0, (time.monotonic() - started) / budget_s), f"{m}x{n}x{k}")
    assert best is not None, "the loop measures at least one shape"
    tflops, measurement, shape = best
    details = {
        "dtype": str(dtype).replace("torch.", ""), "best_shape": list(shape),
        # The value is the best shape's median over its repetitions; mamf-finder also shows the fastest one.
        "best_shape_fastest_rep_tflops": matmul_tflops(*shape, measurement.best_s),
        "median_shape_tflops": statistics.median(entry["tflops"] for entry in measured),
        "shapes_measured": len(measured), "shapes_planned": len(planned), "dim_step": step, "max_dim": max_dim,
        "budget_s": budget_s, "warmup_s": warmup_s,
        "shapes": sorted(measured, key=lambda entry: -entry["tflops"])[:SHAPES_KEPT],
    }
    return {"tflops": tflops, "measurement": measurement, "details": details}


def variants(ctx: KernelContext) -> list[Variant]:
    dtype = sweep_dtype(ctx.device)
    label = str(dtype).replace("torch.", "").replace("bfloat16", "bf16").replace("float32", "fp32")
    peak_kind = PEAK_BF16 if dtype == torch.bfloat16 else PEAK_FP32
    result: dict = {}

    def best() -> dict:
        result.update(sweep(ctx))
        details = result["details"]
        m, n, k = details["best_shape"]
        note = f"best of {details['shapes_measured']}/{details['shapes_planned']} shapes, at {m}x{n}x{k}"
        return row(variant=f"{label} best shape", value=result["tflops"], measurement=result["measurement"],
                   peak_kind=peak_kind, details=details, note=note,
                   size={"m": m, "n": n, "k": k, "dtype": details["dtype"]})

    def median() -> dict:
        if not result:
            raise Skipped("the sweep did not finish (see the best shape's row)")
        details = result["details"]  # the same sweep: the best variant ran it
        sweep_size = {key: details[key] for key in ("dtype", "shapes_measured", "dim_step", "max_dim")}
        return row(variant=f"{label} median shape", value=details["median_shape_tflops"], peak_kind=peak_kind,
                   details=sweep_size, note=f"median over {details['shapes_measured']} shapes", size=sweep_size)

    return [Variant(f"{label} best shape", best), Variant(f"{label} median shape", median)]

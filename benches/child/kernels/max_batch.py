"""Largest batch whose full training step (forward, backward, optimizer.step) fits in memory.

CUDA: ResNet-18-like at 224 px; real OOMs are caught (torch.OutOfMemoryError, and the plain RuntimeErrors
cuBLAS/cuDNN raise when their allocations fail), memory freed, search goes on; the search cap follows memory.
CPU: the 32 px CNN; a memory budget stands in for device memory; saved activations are counted during the forward.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from dataclasses import dataclass

import torch

from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row
from pth_top.benches.child.kernels._models import StepSize, saved_bytes_per_sample, step_size, training_step, workload
from pth_top.benches.child.kernels._sizing import DeviceSize

SAFETY_MARGIN = 0.10
MAX_BISECTIONS = 6
# How cuBLAS/cuDNN report failed allocations: a plain RuntimeError, not torch.OutOfMemoryError.
OOM_MESSAGES = ("out of memory", "CUBLAS_STATUS_ALLOC_FAILED", "CUDNN_STATUS_ALLOC_FAILED")
# cuDNN finds no algorithm once its workspaces cannot be allocated, but says so for a config it cannot run too:
# read as out of memory only when a smaller batch of the same step ran.
OOM_AFTER_A_FIT_MESSAGES = ("CUDNN_STATUS_NOT_SUPPORTED",)
TIMED_STEPS = 5  # steps timed one by one per batch: their median, and their spread to tell the fastest batch


@dataclass(frozen=True)
class BatchTiming:
    samples_per_s: float  # from the median step
    rel_spread: float  # (slowest - fastest step) / median step


def is_out_of_memory(error: BaseException, smaller_batch_fit: bool = False) -> bool:
    if isinstance(error, torch.OutOfMemoryError):
        return True
    messages = OOM_MESSAGES + (OOM_AFTER_A_FIT_MESSAGES if smaller_batch_fit else ())
    return isinstance(error, RuntimeError) and any(text in str(error) for text in messages)


def search_limit(device_size: DeviceSize, bytes_per_sample: int, scale: float) -> int:
    """Power of two above twice what memory could hold at the counted activation bytes (at scale 1): the cap
    is reached only when the count is far off, and then the row says so."""
    could_hold = device_size.total_memory_bytes / max(1, bytes_per_sample)
    return max(64, 2 ** math.ceil(math.log2(max(1.0, 2 * could_hold * scale))))


class BudgetExceeded(Exception):
    """The step needs more than the CPU memory budget."""


class _ActivationCounter:
    """Counts bytes of tensors autograd saves for backward; raises once past the budget."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self.saved_bytes = 0
        self._seen: set[int] = set()

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key not in self._seen:
            self._seen.add(key)
            self.saved_bytes += storage.nbytes()
            if self.saved_bytes > self.budget_bytes:
                raise BudgetExceeded(f"saved activations exceed the budget ({self.budget_bytes} bytes)")
        return tensor


def _state_bytes(model: torch.nn.Module) -> int:
    """Parameters + gradients + SGD momentum buffers."""
    return 3 * sum(parameter.numel() * parameter.element_size() for parameter in model.parameters())


def try_batch(ctx: KernelContext, precision: str, batch: int, budget_bytes: int | None,
              size: StepSize | None = None, smaller_batch_fit: bool = False) -> BatchTiming | None:
    """The speed of a full step at `batch`, or None when it does not fit."""
    load = workload(size or step_size("cnn", ctx.device, ctx.scale), ctx.device)
    step = None
    try:
        step = training_step(load, ctx.device, precision, batch)
        if budget_bytes is not None:
            counter = _ActivationCounter(budget_bytes - _state_bytes(load.model))
            with torch.autograd.graph.saved_tensors_hooks(counter.pack, lambda tensor: tensor):
                step()
        else:
            step()
        step_s = []
        for _ in range(TIMED_STEPS):
            if is_cuda(ctx.device):
                torch.cuda.synchronize(ctx.device)
            started = time.perf_counter()
            step()
            if is_cuda(ctx.device):
                torch.cuda.synchronize(ctx.device)
            step_s.append(time.perf_counter() - started)
        median_s = max(statistics.median(step_s), 1e-9)
        return BatchTiming(batch / median_s, (max(step_s) - min(step_s)) / median_s)
    except (RuntimeError, BudgetExceeded) as error:  # torch.OutOfMemoryError is a RuntimeError
        if isinstance(error, BudgetExceeded) or is_out_of_memory(error, smaller_batch_fit):
            return None
        raise
    finally:
        del load, step  # the step closure holds the batch, gradients and optimizer state
        gc.collect()
        if is_cuda(ctx.device):
            torch.cuda.empty_cache()


def search(ctx: KernelContext, precision: str, limit: int, budget_bytes: int | None,
           size: StepSize | None = None) -> dict:
    """Doubling until a batch fails (or `limit`), then bisection between the last fit and the first failure."""
    tried: dict[int, BatchTiming | None] = {}

    def attempt(batch: int) -> bool:
        smaller_fit = any(timing is not None and tried_batch < batch for tried_batch, timing in tried.items())
        tried[batch] = try_batch(ctx, precision, batch, budget_bytes, size, smaller_fit)
        ctx.progress(min(0.95, len(tried) / 14), f"batch {batch}")
        return tried[batch] is not None

    fits, fails = 0, None
    batch = 1
    while True:
        if not attempt(batch):
            fails = batch
            break
        fits = batch
        if batch >= limit:
            break
        batch = min(batch * 2, limit)
    if fits == 0:
        return {"max_batch": 0, "tried": tried, "limit_reached": False}
    for _ in range(MAX_BISECTIONS):
        if fails is None or fails - fits <= 1:
            break
        middle = (fits + fails) // 2
        if attempt(middle):
            fits = middle
        else:
            fails = middle
    return {"max_batch": fits, "tried": tried, "limit_reached": fails is None}


def _clearly_faster(fastest: dict, largest: dict) -> bool:
    """Faster than the largest batch by more than both batches' step-to-step spread (else it is noise)."""
    gain = fastest["samples_per_s"] / largest["samples_per_s"] - 1
    return gain > fastest["rel_spread"] + largest["rel_spread"]


def variants(ctx: KernelContext) -> list[Variant]:
    precisions = ["fp32", "bf16"] if is_cuda(ctx.device) else ["fp32"]

    def make(precision: str) -> Variant:
        def run() -> dict:
            size = step_size("cnn", ctx.device, ctx.scale)
            if is_cuda(ctx.device):
                budget = None
                limit = search_limit(DeviceSize.of(ctx.device), saved_bytes_per_sample(size), ctx.scale)
            else:
                budget = int(ctx.options.get("cpu_memory_budget_mib", 512)) * 2**20
                limit = max(8, int(1024 * ctx.scale))
            result = search(ctx, precision, limit, budget, size)
            throughput = [{"batch": batch, "samples_per_s": timing.samples_per_s if timing else None,
                           "rel_spread": timing.rel_spread if timing else None, "fits": timing is not None}
                          for batch, timing in sorted(result["tried"].items())]
            fitting = [entry for entry in throughput if entry["fits"]]
            fastest = max(fitting, key=lambda entry: entry["samples_per_s"]) if fitting else None
            max_batch = result["max_batch"]
            largest = next((entry for entry in fitting if entry["batch"] == max_batch), None)
            details = {
                "model": "cnn", "precision": precision, "per_batch": throughput,
                "recommended_batch": int(max_batch * (1 - SAFETY_MARGIN)) if max_batch else 0,
                "safety_margin": SAFETY_MARGIN,
                "fastest_batch": fastest["batch"] if fastest else None,
                "search_limit": limit, "limit_reached": result["limit_reached"],
                "cpu_memory_budget_bytes": budget,
            }
            notes = []
            if result["limit_reached"]:
                notes.append(f"search stopped at its cap {limit}: the real maximum is higher")
            if fastest and largest and fastest["batch"] != max_batch and _clearly_faster(fastest, largest):
                notes.append(f"fastest at batch {fastest['batch']}")
            return row(variant=f"cnn {precision}", value=float(max_batch), details=details, note="; ".join(notes),
                       size=size.with_batch(max_batch).as_dict())
        return Variant(f"cnn {precision}", run)

    return [make(precision) for precision in precisions]

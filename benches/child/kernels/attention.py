"""scaled_dot_product_attention forward+backward at a training shape, per back end: TFLOP/s and which one ran."""

from __future__ import annotations

import gc
import warnings
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP32
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, random_tensor, row, timed

# (batch, heads, seq_len, head_dim): a GPT-style training shape on GPUs, a tiny one on CPUs.
CUDA_SHAPE = (4, 32, 4096, 128)
CPU_SHAPE = (1, 4, 512, 64)
# Forced back ends, by the name a row shows; "default" lets PyTorch choose and reports its choice.
BACKENDS = {
    name: getattr(SDPBackend, member)
    for name, member in (("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"),
                         ("cudnn", "CUDNN_ATTENTION"), ("math", "MATH"))
    if hasattr(SDPBackend, member)  # an older torch may lack cuDNN's
}
CAUSAL = True  # decoder training, as GPT-style models use it


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int, *, causal: bool, backward: bool) -> float:
    """FLOPs of one attention call as FlashAttention-2 counts them (arXiv 2307.08691, section 4.1).

    Forward 4*b*h*s^2*d (two matmuls: QK^T and PV), halved when causal; backward 2.5x the forward,
    so forward+backward is 3.5x (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, flops()).
    """
    forward = 4.0 * batch * heads * seq_len**2 * head_dim / (2 if causal else 1)
    return forward * 3.5 if backward else forward


def attention_shape(ctx: KernelContext) -> tuple[int, int, int, int]:
    """The training shape; scale shortens the sequence (FLOPs grow with its square) to a multiple of 64."""
    batch, heads, seq_len, head_dim = CUDA_SHAPE if is_cuda(ctx.device) else CPU_SHAPE
    scaled = max(64, int(round(seq_len * min(1.0, ctx.scale) ** 0.5 / 64)) * 64)
    return batch, heads, scaled, head_dim


def backend_that_ran(output: torch.Tensor, depth: int = 3) -> str:
    """Which kernel computed `output`, read from its autograd nodes (a fused kernel's node sits within
    `depth` nodes, under any view or slice; the math path leaves only plain matmul and softmax nodes)."""
    nodes = [output.grad_fn]
    for _ in range(depth):
        for node in nodes:
            for marker, name in (("Flash", "flash"), ("Efficient", "efficient"), ("Cudnn", "cudnn")):
                if node is not None and marker in type(node).__name__:
                    return name
        nodes = [parent for node in nodes if node is not None for parent, _ in node.next_functions]
    return "math"


def _forward_backward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, grad_out: torch.Tensor):
    def step() -> None:
        out = F.scaled_dot_product_attention(q, k, v, is_causal=CAUSAL)
        torch.autograd.grad(out, (q, k, v), grad_out)  # no .grad accumulation inside the timed step
    return step


def _unavailable_reason(backend: str, device: str, caught: list[warnings.WarningMessage], error: Exception) -> str:
    # SDPA warns "<kernel> not used because:" and then one warning per failed check; keep the checks.
    texts = [(str(item.message).split("(Triggered internally")[0].strip().splitlines() or [""])[0]
             for item in caught]
    reasons = [text[:160] for text in texts if text and not text.endswith("because:")][:2]
    if not is_cuda(device) and not reasons:  # CPU SDPA has only flash and math (ATen sdp_utils_cpp.cpp)
        return f"{backend} back end unavailable on the CPU: torch {torch.__version__} has no CPU kernel for it"
    detail = "; ".join(reasons) or str(error).splitlines()[0][:160]
    where = "this GPU, dtype and shape" if is_cuda(device) else "the CPU"
    return f"{backend} back end unavailable on {where}: {detail}"


def measure_backend(ctx: KernelContext, backend: str) -> dict:
    batch, heads, seq_len, head_dim = attention_shape(ctx)
    dtype = torch.bfloat16 if is_cuda(ctx.device) else torch.float32
    q, k, v = (random_tensor((batch, heads, seq_len, head_dim), dtype, ctx.device).requires_grad_()
               for _ in range(3))
    grad_out = random_tensor((batch, heads, seq_len, head_dim), dtype, ctx.device)
    forced = sdpa_kernel([BACKENDS[backend]]) if backend in BACKENDS else nullcontext()
    skip_reason, out = "", None
    with forced:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = F.scaled_dot_product_attention(q, k, v, is_causal=CAUSAL)
                ran = backend_that_ran(out)
                torch.autograd.grad(out, (q, k, v), grad_out)  # the backward must fit too
                out = None
            except torch.OutOfMemoryError:
                skip_reason = f"{backend}: out of memory at {batch}x{heads}x{seq_len}x{head_dim}"
            except RuntimeError as error:
                skip_reason = _unavailable_reason(backend, ctx.device, caught, error)
        if not skip_reason:
            measurement = timed(ctx, _forward_backward(q, k, v, grad_out))
    if skip_reason:
        del q, k, v, grad_out, out
        gc.collect()
        if is_cuda(ctx.device):
            torch.cuda.empty_cache()
        raise Skipped(skip_reason)
    flops = attention_flops(batch, heads, seq_len, head_dim, causal=CAUSAL, backward=True)
    details = {"batch": batch, "heads": heads, "seq_len": seq_len, "head_dim": head_dim, "causal": CAUSAL,
               "dtype": str(dtype).replace("torch.", ""), "backend_ran": ran, "flops_per_call": flops,
               "flop_count": "FlashAttention-2: 4*b*h*s^2*d forward, /2 causal, x3.5 forward+backward"}
    size = {key: details[key] for key in ("batch", "heads", "seq_len", "head_dim", "causal", "dtype")}
    return {"tflops": flops / measurement.median_s / 1e12, "measurement": measurement, "details": details,
            "size": size}


def variants(ctx: KernelContext) -> list[Variant]:
    names = ["default", *(name for name in BACKENDS if is_cuda(ctx.device) or name != "cudnn")]
    peak_kind = PEAK_BF16 if is_cuda(ctx.device) else PEAK_FP32

    def make(backend: str) -> Variant:
        def run() -> dict:
            torch.manual_seed(0)
            result = measure_backend(ctx, backend)
            ran = result["details"]["backend_ran"]
            note = f"PyTorch chose {ran}" if backend == "default" else ""
            return row(variant=f"{backend} fwd+bwd", value=result["tflops"], measurement=result["measurement"],
                       peak_kind=peak_kind, details=result["details"], note=note, size=result["size"])
        return Variant(f"{backend} fwd+bwd", run)

    return [make(name) for name in names]

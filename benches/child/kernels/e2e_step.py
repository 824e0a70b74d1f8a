"""Training step of a GPT-style block stack sized to the GPU: tokens/s eager vs torch.compile, compile time apart."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import torch
import torch._dynamo
import torch.nn.functional as F
from torch import nn

from pth_top.benches.catalog import PEAK_NONE
from pth_top.benches.child.kernels._common import KernelContext, Skipped, Variant, is_cuda, row, timed, untrusted

GIB = 2**30
# Activation bytes per token per layer, d_model = h: 34*h (Korthikanti et al., arXiv 2205.05198, section 4.1,
# "sbh(34 + 5as/h)" for 16-bit activations; fused attention keeps no s x s scores, so the 5as/h term goes).
ACTIVATION_BYTES_PER_TOKEN_PER_WIDTH = 34
# FP32 weights + gradients + two AdamW moments.
TRAINING_STATE_BYTES_PER_PARAMETER = 16
# Shares of GPU memory for training state and for activations; the rest is cuBLAS/compile workspace.
STATE_MEMORY_SHARE, ACTIVATION_MEMORY_SHARE = 0.3, 0.3
MAX_LAYERS, MAX_BATCH = 8, 16
HEAD_DIM = 128


@dataclass(frozen=True)
class StackSize:
    d_model: int
    heads: int
    layers: int
    seq_len: int
    batch: int

    @property
    def parameters(self) -> int:
        return self.layers * 12 * self.d_model**2  # qkv 3h^2 + proj h^2 + MLP 8h^2 (LayerNorms left out)

    @property
    def tokens(self) -> int:
        return self.batch * self.seq_len


def gpu_stack_size(total_memory_bytes: int, scale: float) -> StackSize:
    """Width by memory (4096 on 60+ GiB, 2048 on 20+, else 1024), then layers and batch to fill it."""
    d_model = 4096 if total_memory_bytes >= 60 * GIB else 2048 if total_memory_bytes >= 20 * GIB else 1024
    per_layer_state = TRAINING_STATE_BYTES_PER_PARAMETER * 12 * d_model**2
    layers = max(1, min(MAX_LAYERS, int(STATE_MEMORY_SHARE * total_memory_bytes // per_layer_state)))
    seq_len = 2048
    per_sequence = ACTIVATION_BYTES_PER_TOKEN_PER_WIDTH * d_model * layers * seq_len
    batch = max(1, min(MAX_BATCH, int(ACTIVATION_MEMORY_SHARE * total_memory_bytes // per_sequence)))
    batch = max(1, int(batch * min(1.0, scale)))
    return StackSize(d_model, d_model // HEAD_DIM, layers, seq_len, batch)


def cpu_stack_size(scale: float) -> StackSize:
    return StackSize(d_model=128, heads=4, layers=2, seq_len=max(16, int(128 * min(1.0, scale) ** 0.5)),
                     batch=max(1, int(4 * min(1.0, scale) ** 0.5)))


def model_flops_per_token(size: StackSize) -> float:
    """Training FLOPs per token: 6N + 12*L*h*s (PaLM, arXiv 2204.02311, appendix B; causal not halved)."""
    return 6.0 * size.parameters + 12.0 * size.layers * size.d_model * size.seq_len


class Block(nn.Module):
    """Pre-LayerNorm decoder block: causal self-attention (SDPA) and a 4x GELU MLP, no biases."""

    def __init__(self, d_model: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.attention_norm = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.projection = nn.Linear(d_model, d_model, bias=False)
        self.mlp_norm = nn.LayerNorm(d_model)
        self.up = nn.Linear(d_model, 4 * d_model, bias=False)
        self.down = nn.Linear(4 * d_model, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq_len, width = x.shape
        qkv = self.qkv(self.attention_norm(x)).view(batch, seq_len, 3, self.heads, width // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.projection(attended.transpose(1, 2).reshape(batch, seq_len, width))
        return x + self.down(F.gelu(self.up(self.mlp_norm(x)), approximate="tanh"))


class BlockStack(nn.Module):
    def __init__(self, size: StackSize) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(size.d_model, size.heads) for _ in range(size.layers))
        self.final_norm = nn.LayerNorm(size.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.final_norm(x)


def training_step(model: nn.Module, size: StackSize, device: str):
    """zero_grad, forward under BF16 autocast on GPUs, a mean-square loss, backward, AdamW step."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=is_cuda(device) or None)
    # Stands for the embeddings' output, which needs a gradient in a real model (and then every block,
    # the first too, compiles to one graph).
    inputs = torch.randn(size.batch, size.seq_len, size.d_model, device=device, requires_grad=True)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if is_cuda(device) else nullcontext()

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        inputs.grad = None
        with autocast:
            loss = model(inputs).float().square().mean()
        loss.backward()
        optimizer.step()
    return step


def synchronized_seconds(fn, device: str) -> float:
    started = time.perf_counter()
    fn()
    if is_cuda(device):
        torch.cuda.synchronize(device)
    return time.perf_counter() - started


def compile_blocks(model: BlockStack, backend: str) -> None:
    """Regional compilation: every block shares one compiled graph, so compile time does not grow with depth
    (docs.pytorch.org/tutorials/recipes/regional_compilation.html; its flag is the default from torch 2.5 on,
    and without it torch 2.4 would recompile per block and fall back to eager past the recompile limit)."""
    torch._dynamo.config.inline_inbuilt_nn_modules = True
    for block in model.blocks:
        block.compile(backend=backend)


def measure_step(ctx: KernelContext, size: StackSize, *, compiled: bool) -> dict:
    torch.manual_seed(0)
    with torch.device(ctx.device):
        model = BlockStack(size)
    step = training_step(model, size, ctx.device)
    details: dict = {**asdict(size), "parameters": size.parameters, "compiled": compiled,
                     "precision": "bf16 autocast" if is_cuda(ctx.device) else "fp32", "optimizer": "AdamW"}
    if compiled:
        backend = str(ctx.options.get("compile_backend", "inductor"))
        details["compile_backend"] = backend
        try:  # the first two steps compile the forward and the backward graphs
            compile_blocks(model, backend)
            first_steps_s = synchronized_seconds(step, ctx.device)
            ctx.mark_progress()  # forward and backward compile one after the other, each maybe for minutes
            first_steps_s += synchronized_seconds(step, ctx.device)
        except torch.OutOfMemoryError:
            raise
        except Exception as error:
            first_line = (str(error).strip().splitlines() or [""])[0][:200]
            reason = f"torch.compile unusable here ({backend}): {type(error).__name__}: {first_line}"
        else:
            reason = ""
        if reason:
            raise Skipped(reason)
    measurement = timed(ctx, step)
    if compiled:
        details["compile_s"] = max(0.0, first_steps_s - 2 * measurement.median_s)
    tokens_per_s = size.tokens / measurement.median_s
    details["model_tflops"] = model_flops_per_token(size) * tokens_per_s / 1e12
    details["model_flops"] = "6N + 12*L*h*s per token (PaLM appendix B)"
    return {"tokens_per_s": tokens_per_s, "measurement": measurement, "details": details,
            "size": {**asdict(size), "parameters": size.parameters}}


def stack_size(ctx: KernelContext) -> StackSize:
    if is_cuda(ctx.device):
        return gpu_stack_size(torch.cuda.get_device_properties(ctx.device).total_memory, ctx.scale)
    return cpu_stack_size(ctx.scale)


def variants(ctx: KernelContext) -> list[Variant]:
    eager_result: dict = {}

    def eager() -> dict:
        result = measure_step(ctx, stack_size(ctx), compiled=False)
        eager_result.update(result)
        return row(variant="eager", value=result["tokens_per_s"], measurement=result["measurement"],
                   peak_kind=PEAK_NONE, details=result["details"], size=result["size"])

    def compiled() -> dict:
        result = measure_step(ctx, stack_size(ctx), compiled=True)
        details = result["details"]
        note = f"compile {details['compile_s']:.1f} s"
        if "tokens_per_s" in eager_result:
            details["speedup_vs_eager"] = result["tokens_per_s"] / eager_result["tokens_per_s"]
            # A ratio is no better than either side: few samples or a wide spread on one makes it noisy.
            details["speedup_noisy"] = untrusted(result["measurement"]) or untrusted(eager_result["measurement"])
            noisy = " (noisy)" if details["speedup_noisy"] else ""
            note = f"{details['speedup_vs_eager']:.2f}x vs eager{noisy}; {note}"
        return row(variant="torch.compile", value=result["tokens_per_s"], measurement=result["measurement"],
                   peak_kind=PEAK_NONE, details=details, note=note, size=result["size"])

    return [Variant("eager", eager), Variant("torch.compile", compiled)]

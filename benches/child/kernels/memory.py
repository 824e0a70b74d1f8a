"""Peak memory of two real training steps (a CNN, a transformer block stack, a LoRA-wrapped stack).

Each row carries the model's description (shape numbers) so pth-top's side can put the wizard's estimate
beside the measured peak. CUDA: torch.cuda.max_memory_allocated; CPU: the profiler's memory events
(profile_memory=True), summed in time order from before the model exists. The second step is the steady
state: optimizer states exist while activations are held.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from torch import nn

from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row

DROPOUT = 0.1  # Korthikanti's activation count assumes dropout after attention and MLP
STEPS = 2


class Block(nn.Module):
    """GPT-2 style pre-LN block, attention written out (softmax matrix kept: the 5as/h term)."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.q, self.k, self.v, self.o = (nn.Linear(hidden, hidden) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.drop = nn.Dropout(DROPOUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        y = self.ln1(x)
        q, k, v = (proj(y).view(b, s, self.heads, h // self.heads).transpose(1, 2) for proj in (self.q, self.k, self.v))
        scores = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(h // self.heads), dim=-1)
        attended = (self.drop(scores) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.drop(self.o(attended))
        return x + self.drop(self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)))))


class LoraLinear(nn.Module):
    """A frozen linear layer plus B(A(x)), A: in -> r, B: r -> out (Hu et al. 2021)."""

    def __init__(self, base: nn.Linear, rank: int) -> None:
        super().__init__()
        self.base = base.requires_grad_(False)
        self.a = nn.Linear(base.in_features, rank, bias=False)
        self.b = nn.Linear(rank, base.out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + self.b(self.a(x))


def transformer(layers: int, hidden: int, heads: int, lora_rank: int = 0) -> nn.Module:
    stack = nn.Sequential(*(Block(hidden, heads) for _ in range(layers)))
    if lora_rank:
        stack.requires_grad_(False)
        for block in stack:
            for name in ("q", "k", "v", "o"):
                setattr(block, name, LoraLinear(getattr(block, name), lora_rank))
    return stack


def cnn(channels: tuple[int, ...]) -> nn.Module:
    layers: list[nn.Module] = []
    previous = 3
    for width in channels:
        layers += [nn.Conv2d(previous, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True)]
        previous = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(previous, 10))


def saved_elements(model: nn.Module, inputs: torch.Tensor) -> int:
    """Elements autograd saves for backward in one forward pass (parameters excluded), each storage once."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(inputs)
    return sum(size for pointer, size in seen.items() if pointer not in params) // inputs.element_size()


def peak_bytes(device: str, build: Callable[[], tuple[nn.Module, torch.Tensor]]) -> int:
    """Peak bytes allocated while building the model and running STEPS AdamW training steps."""

    def train() -> None:
        model, inputs = build()
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
        for _ in range(STEPS):
            optimizer.zero_grad(set_to_none=True)
            model(inputs).float().square().mean().backward()
            optimizer.step()

    if is_cuda(device):
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        train()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        train()
    events = sorted(
        (event.start_ns(), event.nbytes()) for event in prof.profiler.kineto_results.events()
        if event.name() == "[memory]" and event.device_type() == torch.autograd.DeviceType.CPU
    )
    current = peak = 0
    for _, nbytes in events:
        current += nbytes
        peak = max(peak, current)
    return peak


def variants(ctx: KernelContext) -> list[Variant]:
    device = ctx.device
    big = is_cuda(device)
    hidden, heads, layers = (1024, 16, 4) if big else (256, 4, 2)
    # Batches large enough that backward, not the optimizer step, holds the peak (the regime the wizard sizes).
    seq, batch = (512, 8) if big else (128, max(8, int(round(32 * ctx.scale))))
    image, cnn_batch = (64, 64) if big else (32, max(16, int(round(64 * ctx.scale))))
    channels = (64, 128, 128, 256) if big else (32, 64, 64)
    lora_rank = 8

    def tokens() -> torch.Tensor:
        return torch.randn(batch, seq, hidden, device=device)

    def make(name: str) -> Variant:
        def run() -> dict:
            torch.manual_seed(0)
            if name == "cnn":
                def build() -> tuple[nn.Module, torch.Tensor]:
                    return cnn(channels).to(device), torch.randn(cnn_batch, 3, image, image, device=device)
                model, images = build()
                description = {"kind": "cnn", "batch": cnn_batch, "input_px": image, "channels": list(channels),
                               "activation_elements_per_sample": saved_elements(model, images) // cnn_batch,
                               "largest_activation_elements": max(channels) * image * image}
                del model, images
            else:
                rank = lora_rank if name == "lora" else 0

                def build() -> tuple[nn.Module, torch.Tensor]:
                    return transformer(layers, hidden, heads, rank).to(device), tokens()
                description = {"kind": "transformer", "batch": batch, "layers": layers, "hidden_size": hidden,
                               "attention_heads": heads, "sequence_length": seq, "intermediate_size": 4 * hidden,
                               "method": "lora" if rank else "full", "lora_rank": rank, "lora_targets": "attention",
                               "flash_attention": False, "dropout": DROPOUT}
            model, _ = build()
            description["parameters"] = sum(p.numel() for p in model.parameters())
            description.update(precision="fp32", optimizer="adamw", steps=STEPS)
            del model
            measured = peak_bytes(device, build)
            return row(variant=name, value=measured / 2**20, unit="MiB", details={"model": description},
                       note="measured peak")
        return Variant(name, run)

    return [make(name) for name in ("cnn", "transformer", "lora")]

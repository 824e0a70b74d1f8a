"""Small built-in models and one full training step, shared by amp_step, max_batch and cpu_vs_gpu."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn


def small_cnn(num_classes: int = 10) -> nn.Module:
    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    return nn.Sequential(
        block(3, 32), block(32, 64), nn.MaxPool2d(2), block(64, 128), nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes),
    )


class TransformerClassifier(nn.Module):
    def __init__(self, d_model: int = 256, heads: int = 4, ff: int = 1024, num_classes: int = 10) -> None:
        super().__init__()
        self.block = nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.block(x).mean(dim=1))


@dataclass
class Workload:
    name: str
    model: nn.Module
    make_batch: Callable[[int], tuple[torch.Tensor, torch.Tensor]]


def workload(name: str, device: str, *, seq_len: int = 128) -> Workload:
    generator_device = device
    if name == "cnn":
        # channels_last suits cuDNN; on CPU it was several times slower here at small batches.
        memory_format = torch.channels_last if device.startswith("cuda") else torch.contiguous_format
        model = small_cnn().to(device).to(memory_format=memory_format)  # type: ignore[call-overload]

        def make_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
            images = torch.randn(batch, 3, 32, 32, device=generator_device).to(memory_format=memory_format)
            return images, torch.randint(0, 10, (batch,), device=generator_device)
    elif name == "transformer":
        model = TransformerClassifier().to(device)

        def make_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
            tokens = torch.randn(batch, seq_len, 256, device=generator_device)
            return tokens, torch.randint(0, 10, (batch,), device=generator_device)
    else:
        raise ValueError(f"unknown workload {name!r}")
    return Workload(name, model, make_batch)


def autocast_dtype(precision: str) -> torch.dtype | None:
    return {"fp32": None, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]


def training_step(workload: Workload, device: str, precision: str, batch: int) -> Callable[[], None]:
    """A closure doing zero_grad, forward, loss, backward, optimizer.step on a fixed random batch."""
    model = workload.model
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    inputs, targets = workload.make_batch(batch)
    loss_fn = nn.CrossEntropyLoss()
    dtype = autocast_dtype(precision)
    device_type = "cuda" if device.startswith("cuda") else "cpu"
    scaler = torch.amp.GradScaler(device_type) if precision == "fp16" and device_type == "cuda" else None

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        context = torch.autocast(device_type, dtype=dtype) if dtype is not None else nullcontext()
        with context:
            loss = loss_fn(model(inputs), targets)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()

    return step

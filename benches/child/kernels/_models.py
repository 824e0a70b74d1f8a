"""Built-in models (CPU-sized and GPU-sized) and one full training step, for amp_step, max_batch, cpu_vs_gpu."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Callable

import torch
from torch import nn

from pth_top.benches.child.kernels._sizing import DeviceSize, gpu_batch, transformer_width


def small_cnn(num_classes: int = 10) -> nn.Module:
    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    return nn.Sequential(
        block(3, 32), block(32, 64), nn.MaxPool2d(2), block(64, 128), nn.MaxPool2d(2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, num_classes),
    )


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


def resnet18_like(num_classes: int = 1000) -> nn.Module:
    """ResNet-18's layout for 224 px images (He et al., arXiv:1512.03385, Table 1): stem, 4 stages of 2 blocks."""
    layers: list[nn.Module] = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                               nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
        cin = cout
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes))


class TransformerClassifier(nn.Module):
    def __init__(self, d_model: int = 256, heads: int = 4, ff: int = 1024, layers: int = 1,
                 num_classes: int = 10) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(nn.TransformerEncoderLayer(d_model, heads, ff, dropout=0.0, batch_first=True)
                                      for _ in range(layers)))
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x).mean(dim=1))


@dataclass(frozen=True)
class StepSize:
    """What one training step processes; recorded in every row as `size`."""

    model: str  # "cnn" (32 px small CNN on CPU, ResNet-18-like at 224 px on GPU) or "transformer"
    batch: int
    image_side: int = 0
    seq_len: int = 0
    width: int = 0
    layers: int = 0

    def with_batch(self, batch: int) -> "StepSize":
        return replace(self, batch=batch)

    def as_dict(self) -> dict:
        fields = {"model": self.model, "batch": self.batch}
        if self.model == "cnn":
            fields["image_side"] = self.image_side
        else:
            fields.update(seq_len=self.seq_len, width=self.width, layers=self.layers)
        return fields


CPU_SIZES = {"cnn": StepSize("cnn", 32, image_side=32),
             "transformer": StepSize("transformer", 8, seq_len=64, width=256, layers=1)}
GPU_IMAGE_SIDE = 224
GPU_SEQ_LEN = 2048
HEAD_DIM = 128  # as Llama 2 (d 4096, 32 heads; arXiv:2307.09288)


def build_model(size: StepSize) -> nn.Module:
    if size.model == "cnn":
        return resnet18_like() if size.image_side >= 64 else small_cnn()
    heads = max(4, size.width // HEAD_DIM) if size.width > 256 else 4
    return TransformerClassifier(size.width, heads, 4 * size.width, size.layers)


def make_inputs(size: StepSize, batch: int, device: str) -> torch.Tensor:
    if size.model == "cnn":
        return torch.randn(batch, 3, size.image_side, size.image_side, device=device)
    return torch.randn(batch, size.seq_len, size.width, device=device)


def saved_bytes_per_sample(size: StepSize) -> int:
    """FP32 activation bytes autograd saves per sample, counted on the meta device (no memory, no compute)."""
    with torch.device("meta"):
        model = build_model(size)
    counts = []
    for batch in (1, 2):
        saved = [0]

        def pack(tensor: torch.Tensor, _saved=saved) -> torch.Tensor:
            _saved[0] += tensor.numel() * tensor.element_size()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            model(make_inputs(size, batch, "meta").requires_grad_(True))
        counts.append(saved[0])
    return max(1, counts[1] - counts[0])  # the difference drops what every batch saves (weights)


def parameter_bytes(size: StepSize) -> int:
    with torch.device("meta"):
        return sum(parameter.numel() * 4 for parameter in build_model(size).parameters())


GPU_CNN_BASE_BATCH = 256  # ResNet-18-like at 224 px on an H100: tens of ms a step in bf16
GPU_TRANSFORMER_BASE_BATCH = 2  # x 2048 tokens x 4 layers at d 4096 on an H100: tens of ms a step in bf16
GPU_TRANSFORMER_LAYERS = 4


def step_size(name: str, device: str, scale: float, device_size: DeviceSize | None = None) -> StepSize:
    """CPU: the CPU sizes, batch scaled. CUDA: GPU-sized from the device (SMs, memory), so a step runs >= 1-2 ms:
    ResNet-18-like at 224 px, or a block stack at d 2048-4096 and seq 2048 (layers scaled)."""
    if not device.startswith("cuda"):
        base = CPU_SIZES[name]
        return base.with_batch(max(2, int(round(base.batch * scale))))
    device_size = device_size or DeviceSize.of(device)
    if name == "cnn":
        size, base_batch, batch_scale = StepSize("cnn", 1, image_side=GPU_IMAGE_SIDE), GPU_CNN_BASE_BATCH, scale
    else:
        layers = max(1, int(round(GPU_TRANSFORMER_LAYERS * scale)))  # the scale shrinks depth, not the batch
        size = StepSize("transformer", 1, seq_len=GPU_SEQ_LEN, width=transformer_width(device_size), layers=layers)
        base_batch, batch_scale = GPU_TRANSFORMER_BASE_BATCH, 1.0
    # Weights, gradients, momentum in fp32 and autocast's half copies: 4 x the fp32 weights, kept aside.
    batch = gpu_batch(base_batch, device_size, batch_scale, bytes_per_sample=saved_bytes_per_sample(size),
                      fixed_bytes=4 * parameter_bytes(size), multiple=8 if name == "cnn" else 1)
    return size.with_batch(batch)


@dataclass
class Workload:
    name: str
    model: nn.Module
    make_batch: Callable[[int], tuple[torch.Tensor, torch.Tensor]]


def workload(size: StepSize, device: str) -> Workload:
    """`size`'s model on `device`; CNNs channels_last on CUDA (suits cuDNN; on CPU it was several times slower)."""
    channels_last = size.model == "cnn" and device.startswith("cuda")
    model = build_model(size).to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
    head = model[-1] if isinstance(model, nn.Sequential) else model.head
    assert isinstance(head, nn.Linear), "every built-in model ends in a linear classifier"
    num_classes = head.out_features

    def make_batch(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        inputs = make_inputs(size, batch, device)
        if channels_last:
            inputs = inputs.to(memory_format=torch.channels_last)
        return inputs, torch.randint(0, num_classes, (batch,), device=device)

    return Workload(size.model, model, make_batch)


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

"""ResNet-style 3x3 conv layer, forward + both backward passes, channels_last, per dtype. FLOPs = 3 x forward.

The timed step is the convolution's three kernels only: backward takes a fixed random output gradient (no
loss/cast kernels) and gradients are set to None each step (none accumulate). "fp32" runs with cuDNN TF32
off; "tf32" is its own row. CUDA shapes are GPU-sized: 256 channels at 56x56 (ResNet-50's conv2_x size,
He et al. arXiv:1512.03385 Table 1), batch from the device; CPU keeps 128 channels at 28x28.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP16, PEAK_FP32, PEAK_TF32
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed
from pth_top.benches.child.kernels._sizing import DeviceSize, gpu_batch

CPU_CHANNELS, CPU_SIDE, CPU_BASE_BATCH = 128, 28, 16
GPU_CHANNELS, GPU_SIDE, GPU_BASE_BATCH = 256, 56, 256
TENSORS_PER_SAMPLE = 4  # input, output, output gradient, input gradient


def conv_shape(device: str, scale: float, device_size: DeviceSize | None = None) -> dict:
    """batch, channels, side of the timed convolution on `device`."""
    if not is_cuda(device):
        return {"batch": max(1, int(round(CPU_BASE_BATCH * scale))), "channels": CPU_CHANNELS, "side": CPU_SIDE}
    device_size = device_size or DeviceSize.of(device)
    bytes_per_sample = TENSORS_PER_SAMPLE * GPU_CHANNELS * GPU_SIDE**2 * 4
    batch = gpu_batch(GPU_BASE_BATCH, device_size, scale, bytes_per_sample=bytes_per_sample)
    return {"batch": batch, "channels": GPU_CHANNELS, "side": GPU_SIDE}


@contextmanager
def _cudnn(tf32: bool):
    previous = torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True  # let cuDNN pick its fastest algorithm, as training loops do
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = previous


def conv_step(conv: nn.Conv2d, x: torch.Tensor, grad_out: torch.Tensor):
    """Forward, input and weight gradients; gradients dropped first, so every step does the same work."""
    def step() -> None:
        x.grad = None
        conv.weight.grad = None
        conv(x).backward(grad_out)
    return step


def variants(ctx: KernelContext) -> list[Variant]:
    def make(name: str, dtype: torch.dtype, tf32: bool, peak_kind: str) -> Variant:
        def run() -> dict:
            shape = conv_shape(ctx.device, ctx.scale)
            batch, channels, side = shape["batch"], shape["channels"], shape["side"]
            conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False).to(ctx.device, dtype)
            conv = conv.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
            x = torch.randn(batch, channels, side, side, device=ctx.device).to(dtype)
            x = x.to(memory_format=torch.channels_last).requires_grad_(True)
            grad_out = torch.randn_like(x)  # same shape: stride 1, padding 1
            with _cudnn(tf32):
                measurement = timed(ctx, conv_step(conv, x, grad_out))
            forward_flops = 2 * batch * channels * side * side * channels * 9
            tflops = 3 * forward_flops / measurement.median_s / 1e12
            details = {"batch": batch, "channels": channels, "side": side, "kernel": 3,
                       "memory_format": "channels_last", "dtype": str(dtype).replace("torch.", ""),
                       "threads": torch.get_num_threads()}
            if is_cuda(ctx.device):
                details.update(cudnn_allow_tf32=tf32, cudnn_benchmark=True)
            size = {"shape": [batch, channels, side, side], "kernel": 3, "dtype": details["dtype"]}
            return row(variant=name, value=tflops, measurement=measurement, peak_kind=peak_kind, details=details,
                       size=size)
        return Variant(name, run)

    if is_cuda(ctx.device):
        return [make("fp32 (tf32 off)", torch.float32, False, PEAK_FP32), make("tf32", torch.float32, True, PEAK_TF32),
                make("fp16", torch.float16, False, PEAK_FP16), make("bf16", torch.bfloat16, False, PEAK_BF16)]
    return [make("fp32", torch.float32, False, PEAK_FP32), make("bf16", torch.bfloat16, False, PEAK_BF16)]

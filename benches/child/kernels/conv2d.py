"""ResNet-style 3x3 conv layer, forward+backward, channels_last: FP32 vs autocast. FLOPs = 3 x forward."""

from __future__ import annotations

import torch
from torch import nn

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP16, PEAK_FP32, PEAK_TF32
from pth_top.benches.child.kernels._common import KernelContext, Variant, is_cuda, row, timed

CHANNELS = 128
SIDE = 28  # ResNet-50 stage 2 spatial size


def variants(ctx: KernelContext) -> list[Variant]:
    batch = max(1, int(round((64 if is_cuda(ctx.device) else 16) * ctx.scale)))
    device_type = "cuda" if is_cuda(ctx.device) else "cpu"

    def make(name: str, autocast: torch.dtype | None, peak_kind: str) -> Variant:
        def run() -> dict:
            conv = nn.Conv2d(CHANNELS, CHANNELS, 3, padding=1, bias=False).to(ctx.device)
            conv = conv.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
            x = torch.randn(batch, CHANNELS, SIDE, SIDE, device=ctx.device).to(memory_format=torch.channels_last)
            x.requires_grad_(True)

            def step() -> None:
                with torch.autocast(device_type, dtype=autocast, enabled=autocast is not None):
                    out = conv(x)
                out.float().sum().backward()

            previous_benchmark = torch.backends.cudnn.benchmark
            torch.backends.cudnn.benchmark = True  # let cuDNN pick its fastest algorithm, as training loops do
            try:
                measurement = timed(ctx, step)
            finally:
                torch.backends.cudnn.benchmark = previous_benchmark
            forward_flops = 2 * batch * CHANNELS * SIDE * SIDE * CHANNELS * 9
            tflops = 3 * forward_flops / measurement.median_s / 1e12
            details = {"batch": batch, "channels": CHANNELS, "side": SIDE, "kernel": 3,
                       "memory_format": "channels_last",
                       "autocast_dtype": str(autocast).replace("torch.", "") if autocast else None,
                       "threads": torch.get_num_threads()}
            if is_cuda(ctx.device):
                details["cudnn_allow_tf32"] = torch.backends.cudnn.allow_tf32
                details["cudnn_benchmark"] = True
            return row(variant=name, value=tflops, measurement=measurement, peak_kind=peak_kind, details=details)
        return Variant(name, run)

    if is_cuda(ctx.device):
        fp32_kind = PEAK_TF32 if torch.backends.cudnn.allow_tf32 else PEAK_FP32
        return [make("fp32", None, fp32_kind), make("autocast fp16", torch.float16, PEAK_FP16),
                make("autocast bf16", torch.bfloat16, PEAK_BF16)]
    return [make("fp32", None, PEAK_FP32), make("autocast bf16", torch.bfloat16, PEAK_BF16)]

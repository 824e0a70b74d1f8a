"""QLoRA's dequantization: bitsandbytes turns each NF4 weight back into bf16 before its matmul, on every pass of every
micro-batch, a fixed cost per micro-batch whatever its tokens."""

from __future__ import annotations

from pth_top.configs import speed as sp
from pth_top.configs.memory_terms import ModelShape

# Bytes through memory a weight a pass: its 4-bit code and scale read (0.5), the bf16 copy written (2) and read back by
# the matmul (2).
DEQUANT_BYTES_PER_WEIGHT = 4.5
# The share of the card's bandwidth those passes reach, an overhead the kernels' launches and LoRA's own reads fold in:
# fitted on LitGPT's A10G table, QLoRA against LoRA at micro-batches 1-8 (tests/configs/test_speed.py). torchtune's
# 4090 rows (its NF4 in torchao under torch.compile, rows the speed table flags) would give 0.25.
DEQUANT_BANDWIDTH_FRACTION = 0.4


def dequant_seconds(shape: ModelShape, device: sp.Device, recompute: str, micro_batches: int,
                    int8_base: bool = False) -> tuple[float, str]:
    """Seconds a step spends dequantizing a QLoRA base on each GPU, and the formula's text: forward, backward (the
    input's gradient reads the weights) and a full recompute's forward again, each over the quantized linears (the
    embeddings and LM head stay 16-bit). An 8-bit base's step is timed from QLoRA's, and its text says so."""
    weights = max(0, shape.parameters - shape.vocabulary_parameters)
    passes = 3 if recompute == "full" else 2
    bandwidth = device.bandwidth_gb_per_s * 1e9 * DEQUANT_BANDWIDTH_FRACTION
    if not weights or bandwidth <= 0:
        return 0.0, ""
    seconds = micro_batches * passes * weights * DEQUANT_BYTES_PER_WEIGHT / bandwidth
    what = "QLoRA's step, which an 8-bit base is timed from, dequantizes an NF4 base" if int8_base else \
        "dequantizing the NF4 base"
    return seconds, (f"{what}: {micro_batches} micro-batch(es) x {passes} passes x "
                     f"{weights / 1e9:.3g}B weights x {DEQUANT_BYTES_PER_WEIGHT:g} B at {DEQUANT_BANDWIDTH_FRACTION:g} "
                     f"x {device.bandwidth_gb_per_s:,.0f} GB/s = {sp.duration(seconds)} per step (fixed a micro-batch, "
                     "so small micro-batches pay it most: LitGPT's QLoRA runs 2x LoRA's time at 1, 1.1x at 8)")

"""The kernels the runner knows: name, module, unit, what the value is compared to. Imports no torch."""

from __future__ import annotations

from dataclasses import dataclass

# Peak kinds, resolved by benches/client/peaks.py on pth-top's side.
PEAK_FP32 = "fp32"
PEAK_TF32 = "tf32"
PEAK_FP16 = "fp16_tensor"
PEAK_BF16 = "bf16_tensor"
PEAK_FP8 = "fp8_tensor"
PEAK_MEMORY = "memory_bandwidth"
PEAK_PCIE = "pcie"
PEAK_NONE = "none"


@dataclass(frozen=True)
class KernelSpec:
    name: str
    module: str
    unit: str
    peak_kind: str  # default for the kernel; a row may name a more precise one (e.g. per dtype)
    devices: tuple[str, ...]  # "cpu", "cuda", or "host" (runs once, not per device)
    summary: str
    opt_in: bool = False  # runs only when named with --kernel, never in a suite


KERNELS: tuple[KernelSpec, ...] = (
    KernelSpec("gemm", "pth_top.benches.child.kernels.gemm", "TFLOP/s", PEAK_FP32, ("cpu", "cuda"),
               "matmul 2MNK/t over a shape sweep: FP32 (TF32 off), TF32, FP16, BF16; CPU all cores and 1 thread"),
    KernelSpec("conv2d", "pth_top.benches.child.kernels.conv2d", "TFLOP/s", PEAK_FP32, ("cpu", "cuda"),
               "ResNet 3x3 conv layer forward+backward, channels_last: FP32 (TF32 off), TF32, FP16, BF16; GPU-sized"),
    KernelSpec("membw", "pth_top.benches.child.kernels.membw", "GB/s", PEAK_MEMORY, ("cpu", "cuda"),
               "STREAM copy (2 words) and triad (3 words) over arrays >= 4x last-level cache"),
    KernelSpec("h2d", "pth_top.benches.child.kernels.h2d", "GB/s", PEAK_PCIE, ("cuda",),
               "host<->device copies, pinned vs pageable, >= 256 MiB"),
    KernelSpec("amp_step", "pth_top.benches.child.kernels.amp_step", "samples/s", PEAK_NONE, ("cpu", "cuda"),
               "training step of a transformer block stack and a CNN (GPU-sized on GPUs): FP32 vs autocast FP16/BF16"),
    KernelSpec("max_batch", "pth_top.benches.child.kernels.max_batch", "samples", PEAK_NONE, ("cpu", "cuda"),
               "largest batch whose full step fits in memory (CPU: within a memory budget)"),
    KernelSpec("memory", "pth_top.benches.child.kernels.memory", "MiB", PEAK_NONE, ("cpu", "cuda"),
               "peak memory of two training steps (CNN, transformer block stack, LoRA-wrapped stack) beside "
               "the wizard's estimate (CPU: profiler memory events, ~10 s)", opt_in=True),
    KernelSpec("disk", "pth_top.benches.child.kernels.disk", "MB/s", PEAK_NONE, ("host",),
               "sequential write (fsync) and read (O_DIRECT or dropped cache) of a temp file"),
    KernelSpec("cpu_vs_gpu", "pth_top.benches.child.kernels.cpu_vs_gpu", "x", PEAK_NONE, ("host",),
               "the same training step on CPU and GPU, as a speed ratio"),
    KernelSpec("attention", "pth_top.benches.child.kernels.attention", "TFLOP/s", PEAK_BF16, ("cpu", "cuda"),
               "scaled_dot_product_attention forward+backward at a training shape per back end (flash, "
               "efficient, cudnn, math, PyTorch's choice), FlashAttention-2 FLOP count"),
    KernelSpec("fp8", "pth_top.benches.child.kernels.fp8", "TFLOP/s", PEAK_FP8, ("cpu", "cuda"),
               "FP8 matmul (torch._scaled_mm, e4m3 inputs with scales, BF16 out) on compute capability 8.9+"),
    KernelSpec("mamf", "pth_top.benches.child.kernels.mamf", "TFLOP/s", PEAK_BF16, ("cpu", "cuda"),
               "maximum achievable matmul: time-bounded BF16 (M, N, K) sweep as mamf-finder, best and median "
               "shape (GPU: ~2.5 min)", opt_in=True),
    KernelSpec("e2e_step", "pth_top.benches.child.kernels.e2e_step", "tokens/s", PEAK_NONE, ("cpu", "cuda"),
               "training step of a GPT-style block stack sized to the GPU, eager vs torch.compile; compile time "
               "apart", opt_in=True),
    KernelSpec("allreduce", "pth_top.benches.child.kernels.allreduce", "GB/s", PEAK_NONE, ("host",),
               "torch.distributed all-reduce bus bandwidth, 32 KiB up: NCCL over every GPU, else gloo with 2-4 "
               "CPU ranks", opt_in=True),
    KernelSpec("p2p", "pth_top.benches.child.kernels.p2p", "GB/s", PEAK_NONE, ("host",),
               "copy bandwidth for every GPU pair; flags pairs that go through the host", opt_in=True),
    KernelSpec("burn", "pth_top.benches.child.kernels.burn", "TFLOP/s", PEAK_NONE, ("host",),
               "burn-in: BF16 GEMMs on every GPU at once (CPU: FP32) for --burn DURATION; clocks, power, "
               "temperature and clock-event reasons each second", opt_in=True),
    KernelSpec("vram_test", "pth_top.benches.child.kernels.vram_test", "errors", PEAK_NONE, ("host",),
               "fills ~90 % of each GPU's free memory with walking ones, seeded random and address-in-address "
               "words; counts mismatches (CPU: a --cpu-memory-budget-mib host buffer)", opt_in=True),
)

KERNELS_BY_NAME = {spec.name: spec for spec in KERNELS}

SUITES: dict[str, tuple[str, ...]] = {
    "quick": ("gemm", "membw", "amp_step", "disk", "cpu_vs_gpu"),
    "standard": tuple(spec.name for spec in KERNELS if not spec.opt_in),
}
# Size multiplier per suite: quick stays ~30 s on a 2-core machine.
SUITE_SCALE = {"quick": 0.25, "standard": 1.0}
# Seconds a single measurement may take before it stops repeating.
SUITE_TIME_CAP_S = {"quick": 0.6, "standard": 3.0}

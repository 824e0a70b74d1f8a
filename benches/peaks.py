"""Hardware peaks and % of peak, computed on the parent side from a run's metadata. Imports no torch.

GPU figures are vendor datasheet dense peaks (NVIDIA product pages / architecture whitepapers, as
collected in shared/reference/builds.md and benchmarks.md); GeForce FP16/BF16 are with FP32 accumulate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from benches.catalog import PEAK_BF16, PEAK_FP16, PEAK_FP32, PEAK_MEMORY, PEAK_PCIE, PEAK_TF32

# PCIe x16 bandwidth per direction, GB/s, by generation.
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0}


@dataclass(frozen=True)
class GpuPeaks:
    label: str
    fp32_tflops: float
    tf32_tflops: float
    fp16_tflops: float
    bf16_tflops: float
    memory_gbps: float
    pcie_gen: int


# (pattern on the lower-cased torch/NVML device name, peaks); first match wins, so specific names go first.
GPU_PEAKS: tuple[tuple[str, GpuPeaks], ...] = (
    (r"h200.*nvl", GpuPeaks("H200 NVL", 60, 418, 836, 836, 4800, 5)),
    (r"h200", GpuPeaks("H200 SXM", 67, 495, 989, 989, 4800, 5)),
    (r"h100.*(pcie|nvl)", GpuPeaks("H100 PCIe", 51, 378, 756, 756, 2000, 5)),
    (r"h100", GpuPeaks("H100 SXM", 67, 495, 989, 989, 3350, 5)),
    (r"a100.*pcie.*40|a100.*40.*pcie", GpuPeaks("A100 PCIe 40GB", 19.5, 156, 312, 312, 1555, 4)),
    (r"a100.*pcie", GpuPeaks("A100 PCIe 80GB", 19.5, 156, 312, 312, 1935, 4)),
    (r"a100.*40", GpuPeaks("A100 SXM 40GB", 19.5, 156, 312, 312, 1555, 4)),
    (r"a100", GpuPeaks("A100 SXM 80GB", 19.5, 156, 312, 312, 2039, 4)),
    (r"l40s", GpuPeaks("L40S", 91.6, 183, 362, 362, 864, 4)),
    (r"rtx 5090", GpuPeaks("RTX 5090", 104.8, 104.8, 209.5, 209.5, 1792, 5)),
    (r"rtx 4090", GpuPeaks("RTX 4090", 82.6, 82.6, 165.2, 165.2, 1008, 4)),
    (r"rtx 4070$", GpuPeaks("RTX 4070", 29.1, 29.1, 58.3, 58.3, 504, 4)),
    (r"rtx 3060 ti", GpuPeaks("RTX 3060 Ti", 16.2, 16.2, 32.4, 32.4, 448, 4)),
    (r"rtx 3060$", GpuPeaks("RTX 3060 12GB", 12.7, 12.7, 25.4, 25.4, 360, 4)),
)

# FP32 FLOP per cycle per core: AVX-512 assumes two 512-bit FMA units (one-unit parts reach half).
CPU_FP32_FLOP_PER_CYCLE = (("avx512f", 64), ("avx2", 32))
CPU_BF16_FLOP_PER_CYCLE = (("amx_bf16", 1024), ("avx512_bf16", 128))


@dataclass(frozen=True)
class Peak:
    value: float  # in the row's unit (TFLOP/s or GB/s)
    source: str


def gpu_peaks(device_name: str) -> GpuPeaks | None:
    name = device_name.lower().replace("nvidia", "").replace("geforce", "").strip()
    name = re.sub(r"\s+", " ", name)
    for pattern, peaks in GPU_PEAKS:
        if re.search(pattern, name):
            return peaks
    return None


def cpu_flop_per_cycle(flags: list[str] | tuple[str, ...], kind: str) -> tuple[int, str]:
    if kind == PEAK_BF16:
        for flag, flop in CPU_BF16_FLOP_PER_CYCLE:
            if flag in flags:
                return flop, flag
    for flag, flop in CPU_FP32_FLOP_PER_CYCLE:
        if flag in flags and (flag != "avx2" or "fma" in flags):
            return flop, flag if flag != "avx2" else "avx2+fma"
    return 8, "sse"


def cpu_peak(cpu: dict, kind: str, threads: int | None) -> Peak | None:
    if kind not in (PEAK_FP32, PEAK_BF16, PEAK_FP16):
        return None
    ghz = cpu.get("max_ghz")
    cores = int(cpu.get("physical_cores") or 1)
    if not ghz:
        return None
    used_cores = min(cores, threads) if threads else cores
    flop, isa = cpu_flop_per_cycle(cpu.get("isa_flags") or [], PEAK_BF16 if kind == PEAK_BF16 else PEAK_FP32)
    return Peak(used_cores * ghz * flop / 1000, f"{used_cores} cores x {ghz:.2f} GHz x {flop} FLOP/cycle ({isa})")


def gpu_peak(device_name: str, kind: str) -> Peak | None:
    peaks = gpu_peaks(device_name)
    if peaks is None:
        return None
    value = {
        PEAK_FP32: peaks.fp32_tflops, PEAK_TF32: peaks.tf32_tflops, PEAK_FP16: peaks.fp16_tflops,
        PEAK_BF16: peaks.bf16_tflops, PEAK_MEMORY: peaks.memory_gbps,
        PEAK_PCIE: PCIE_X16_GBPS.get(peaks.pcie_gen),
    }.get(kind)
    if value is None:
        return None
    return Peak(float(value), f"{peaks.label} datasheet")


def peak_for_row(row: dict, metadata: dict) -> Peak | None:
    """The peak a result row is compared to, or None (no peak for this kind or unknown hardware)."""
    kind = row.get("peak_kind")
    device = str(row.get("device") or "")
    if not kind or kind == "none":
        return None
    if device.startswith("cuda"):
        name = (metadata.get("cuda_devices") or {}).get(device, {}).get("name", "")
        return gpu_peak(name, kind)
    if device == "cpu":
        threads = (row.get("details") or {}).get("threads")
        return cpu_peak(metadata.get("cpu") or {}, kind, threads)
    return None


def percent_of_peak(row: dict, metadata: dict) -> tuple[float | None, str]:
    """(% of peak or None, note). Above 100 % is kept, with a note (boost clocks, wrong table entry)."""
    value = row.get("value")
    peak = peak_for_row(row, metadata)
    if peak is None or value is None or peak.value <= 0:
        return None, ""
    percent = 100.0 * float(value) / peak.value
    note = f"peak {peak.value:.4g} ({peak.source})"
    if percent > 100:
        note += "; above 100 %: boost clock above the rated one, or the peak table is off"
    return percent, note

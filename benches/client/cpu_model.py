"""CPU FP32/BF16/FP16 FLOP per cycle per core and the clock a CPU peak uses. Imports no torch.

FLOP/cycle = FMA units x vector lanes x 2; the ISA flags alone are not enough: how wide the FMA datapath
is depends on the core (Zen 4 runs AVX-512 on 256-bit pipes) and, on Skylake/Cascade Lake Xeons, the SKU.
"""

from __future__ import annotations

import re

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP16

AVX512_TWO_UNITS = 64  # two 512-bit FMA units: 2 x 16 lanes x 2
HALF_RATE_512 = 32  # one 512-bit FMA unit, or two 256-bit ones (AVX2+FMA on Haswell+ and Zen 2+)
ZEN1_128_BIT = 16  # two 128-bit FMA pipes
SSE_ONLY = 8
AMX_FLOP_PER_CYCLE = 1024  # AMX TMUL: 16x16x32 BF16 (or FP16) multiply-adds per 16 cycles per core
AMD_ZEN4_FAMILY = 0x19
AMD_ZEN5_FAMILY = 0x1A
AMD_ZEN1_2_FAMILY = 0x17
AMD_ZEN2_FIRST_MODEL = 0x30
# Intel family 6 models: Skylake-SP/Cascade Lake/Cooper Lake (FMA units per SKU), and client cores whose
# AVX-512 has the single fused port 0+1 FMA (Ice Lake 0x7D/0x7E, Tiger Lake 0x8C/0x8D, Rocket Lake 0xA7).
INTEL_SKYLAKE_SP_MODEL = 0x55
INTEL_ONE_FMA_CLIENT_MODELS = frozenset({0x7D, 0x7E, 0x8C, 0x8D, 0xA7})
# Skylake-SP/Cascade Lake Bronze, Silver and Gold 5xxx have one AVX-512 FMA unit, except Gold 5122 and 5222.
ONE_FMA_XEON_NAME = re.compile(r"\b(Bronze|Silver)\b|\bGold\s+5(?!122|222)\d{3}")
ZEN5_MOBILE_NAME = re.compile(r"Ryzen\s+AI\b", re.IGNORECASE)


def fp32_flop_per_cycle(cpu: dict) -> tuple[int, str]:
    """FP32 FLOP per cycle per core, and why."""
    flags = set(cpu.get("isa_flags") or ())
    vendor, family, model = str(cpu.get("vendor") or ""), cpu.get("cpu_family"), cpu.get("cpu_model")
    name = str(cpu.get("model") or "")
    amd, intel = vendor == "AuthenticAMD", vendor == "GenuineIntel"
    if "avx512f" in flags:
        # Zen 4 splits each 512-bit op over its two 256-bit FMA pipes ("double-pumped"); Zen 5 desktop and
        # server run 512 bits natively, mobile Zen 5 (Ryzen AI, Strix Point) keeps 256-bit pipes. Sources:
        # numberworld.org/blogs/2024_8_7_zen5_avx512_teardown (Mysticial, with Chips and Cheese);
        # chipsandcheese.com/2024/08/10/amds-strix-point-zen-5-hits-mobile
        if amd and family == AMD_ZEN4_FAMILY:
            return HALF_RATE_512, "Zen 4: AVX-512 double-pumped on 256-bit FMA pipes"
        if amd and family == AMD_ZEN5_FAMILY and ZEN5_MOBILE_NAME.search(name):
            return HALF_RATE_512, "Zen 5 mobile: 256-bit FMA pipes"
        if amd and family == AMD_ZEN5_FAMILY:
            return AVX512_TWO_UNITS, "Zen 5: full 512-bit FMA pipes"
        # One FMA unit per SKU: tomshardware.com/reviews/intel-xeon-platinum-8176-scalable-cpu,5120-2.html
        # (Gold 51xx, Silver, Bronze), microway.com "Detailed Specifications of the Cascade Lake SP" (per SKU);
        # Gold 5122/5222: en.wikichip.org/wiki/intel/xeon_gold/5122; client cores: wikichip "Sunny Cove".
        if intel and family == 6 and model == INTEL_SKYLAKE_SP_MODEL and ONE_FMA_XEON_NAME.search(name):
            return HALF_RATE_512, "AVX-512, one FMA unit on this Xeon SKU"
        if intel and family == 6 and model in INTEL_ONE_FMA_CLIENT_MODELS:
            return HALF_RATE_512, "AVX-512, one FMA unit (client core)"
        return AVX512_TWO_UNITS, "AVX-512, two FMA units"
    if "avx2" in flags and "fma" in flags:
        # Zen 1/Zen+ execute 256-bit ops as two 128-bit halves (Agner Fog, "The microarchitecture of Intel,
        # AMD and VIA CPUs", chapter on AMD Zen: agner.org/optimize/microarchitecture.pdf).
        if amd and family == AMD_ZEN1_2_FAMILY and isinstance(model, int) and model < AMD_ZEN2_FIRST_MODEL:
            return ZEN1_128_BIT, "Zen 1: AVX2 on 128-bit FMA pipes"
        return HALF_RATE_512, "AVX2+FMA, two 256-bit FMA units"
    return SSE_ONLY, "SSE"


def cpu_flop_per_cycle(cpu: dict, kind: str) -> tuple[int, str]:
    """FLOP per cycle per core for a peak kind: AMX tiles, else 2x FP32 for the AVX-512 BF16/FP16 dot products."""
    flags = set(cpu.get("isa_flags") or ())
    fp32, why = fp32_flop_per_cycle(cpu)
    if kind == PEAK_BF16 and "amx_bf16" in flags:
        return AMX_FLOP_PER_CYCLE, "AMX BF16"
    if kind == PEAK_FP16 and "amx_fp16" in flags:
        return AMX_FLOP_PER_CYCLE, "AMX FP16"
    # VDPBF16PS multiplies 2 BF16 pairs per FP32 lane; AVX512-FP16 has 2x the FP32 lanes (Intel SDM vol. 2).
    if (kind == PEAK_BF16 and "avx512_bf16" in flags) or (kind == PEAK_FP16 and "avx512_fp16" in flags):
        return 2 * fp32, f"{'AVX512-BF16' if kind == PEAK_BF16 else 'AVX512-FP16'}, 2x FP32; {why}"
    return fp32, why


def cpu_clock_ghz(cpu: dict, used_cores: int) -> tuple[float, str] | None:
    """(GHz, where it came from) for a row on `used_cores` cores: measured in the run when the child could.

    One core: the clock one thread reached. More: the clock with all the run's threads busy (a scalar add
    chain, so an upper bound for AVX code whose clock can be lower; % of peak never reads high from it).
    """
    one, together = _ghz(cpu.get("measured_ghz_1_thread")), _ghz(cpu.get("measured_ghz_all_threads"))
    measured_threads = cpu.get("measured_threads")
    if used_cores == 1 and one:
        return one, "(measured, 1 thread)"
    if together and isinstance(measured_threads, int) and used_cores >= min(measured_threads, _cores(cpu)):
        return together, "(measured, all threads busy)"
    if one:
        return one, "(measured, 1 thread: the all-core clock can be lower)"
    fallback = _ghz(cpu.get("max_ghz"))
    if fallback is None:
        return None
    source = str(cpu.get("max_ghz_source") or "max clock")
    return fallback, f"({source}{'; the all-core clock is lower' if used_cores > 1 else ''})"


def _cores(cpu: dict) -> int:
    cores = cpu.get("physical_cores")
    return cores if isinstance(cores, int) and cores > 0 else 1


def _ghz(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 100:
        return float(value)
    return None

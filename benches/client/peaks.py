"""Hardware peaks and % of peak, computed on the parent side from a run's metadata. Imports no torch.

GPU peaks come from the hardware catalog (configs/catalog/gpus.toml plus the user's catalog), matched
on the device name torch reports; CPU peaks are computed from cores, clock and ISA. Only the parent
side imports this module: the `python -m pth_top.benches` runner in a foreign interpreter never loads configs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP16, PEAK_FP32, PEAK_MEMORY, PEAK_PCIE, PEAK_TF32
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import BUILTIN_CATALOG_DIR, Catalog, Part, load_catalog
from pth_top.configs.paths import user_config_dir

# PCIe x16 bandwidth per direction, GB/s, by generation.
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0}
# Words device names carry or drop depending on driver age ("GeForce RTX 3090" vs "NVIDIA GeForce RTX 3090").
IGNORED_NAME_WORDS = frozenset({"nvidia", "geforce"})


@dataclass(frozen=True)
class GpuPeaks:
    part_id: str
    label: str  # the catalog part's name
    fp32_tflops: float
    tf32_tflops: float
    fp16_tflops: float
    bf16_tflops: float
    memory_gb_per_s: float
    pcie_generation: int
    from_user_catalog: bool


@dataclass(frozen=True)
class GpuPeakTable:
    by_device_name: dict[str, GpuPeaks]  # keyed by normalized_device_name
    problem: str  # why the user catalog was left out, or ""


# FP32 FLOP per cycle per core: AVX-512 assumes two 512-bit FMA units (one-unit parts reach half).
CPU_FP32_FLOP_PER_CYCLE = (("avx512f", 64), ("avx2", 32))
CPU_BF16_FLOP_PER_CYCLE = (("amx_bf16", 1024), ("avx512_bf16", 128))


@dataclass(frozen=True)
class Peak:
    value: float  # in the row's unit (TFLOP/s or GB/s)
    source: str


def normalized_device_name(name: str) -> str:
    words = re.sub(r"[^0-9a-z]+", " ", name.lower()).split()
    return " ".join(word for word in words if word not in IGNORED_NAME_WORDS)


def gpu_peak_table() -> GpuPeakTable:
    """The catalog's GPUs by device name; loaded once per process and again when a user catalog file changes."""
    user_dir = user_config_dir() / "catalog"
    return _gpu_peak_table(user_dir, _catalog_files_signature(user_dir))


def gpu_peaks(device_name: str) -> GpuPeaks | None:
    return gpu_peak_table().by_device_name.get(normalized_device_name(device_name))


def _catalog_files_signature(user_dir: Path) -> tuple[tuple[str, int, int], ...]:
    try:
        paths = sorted(user_dir.glob("*.toml")) if user_dir.is_dir() else []
        return tuple((path.name, path.stat().st_mtime_ns, path.stat().st_size) for path in paths)
    except OSError:
        return ()


@functools.lru_cache(maxsize=4)
def _gpu_peak_table(user_dir: Path, signature: tuple[tuple[str, int, int], ...]) -> GpuPeakTable:
    problem = ""
    try:
        catalog = load_catalog(user_dir)
    except ConfigFileError as error:
        problem = f"user catalog left out ({error})"
        try:
            catalog = load_catalog(user_dir, include_user=False)
        except ConfigFileError as builtin_error:
            return GpuPeakTable({}, f"hardware catalog unreadable ({builtin_error})")
    return GpuPeakTable(_by_device_name(catalog), problem)


def _by_device_name(catalog: Catalog) -> dict[str, GpuPeaks]:
    # User entries go last, so one claiming a device name a shipped entry also lists wins.
    table: dict[str, GpuPeaks] = {}
    for peaks, device_names in sorted(
        ((_peaks_of(part), part["device_names"]) for part in catalog.of_kind("gpu")),
        key=lambda pair: pair[0].from_user_catalog,
    ):
        for device_name in device_names:
            table[normalized_device_name(device_name)] = peaks
    return table


def _peaks_of(part: Part) -> GpuPeaks:
    origin_dir = Path(part.origin.rsplit(":", 1)[0]).parent
    return GpuPeaks(
        part_id=part.id, label=part.name, fp32_tflops=float(part["fp32_tflops"]),
        tf32_tflops=float(part["tf32_dense_tflops"]), fp16_tflops=float(part["fp16_dense_tflops"]),
        bf16_tflops=float(part["bf16_dense_tflops"]), memory_gb_per_s=float(part["bandwidth_gb_per_s"]),
        pcie_generation=int(part["pcie_generation"]), from_user_catalog=origin_dir != BUILTIN_CATALOG_DIR,
    )


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
        PEAK_BF16: peaks.bf16_tflops, PEAK_MEMORY: peaks.memory_gb_per_s,
        PEAK_PCIE: PCIE_X16_GBPS.get(peaks.pcie_generation),
    }.get(kind)
    if not value:
        return None
    catalog = "your catalog" if peaks.from_user_catalog else "catalog"
    return Peak(float(value), f"{peaks.label} datasheet, {catalog} id {peaks.part_id}")


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
    """(% of peak or None, note). Above 100 % is kept, with a note (boost clocks, wrong catalog entry)."""
    value = row.get("value")
    peak = peak_for_row(row, metadata)
    catalog_problem = gpu_peak_table().problem if str(row.get("device") or "").startswith("cuda") else ""
    if peak is None or value is None or peak.value <= 0:
        return None, "; ".join(filter(None, (_missing_peak_note(row, metadata, peak), catalog_problem)))
    percent = 100.0 * float(value) / peak.value
    note = f"peak {peak.value:.4g} ({peak.source})"
    if percent > 100:
        note += "; above 100 %: boost clock above the rated one, or the catalog entry is off"
    return percent, "; ".join(filter(None, (note, catalog_problem)))


def _missing_peak_note(row: dict, metadata: dict, peak: Peak | None) -> str:
    device = str(row.get("device") or "")
    if peak is not None or not device.startswith("cuda") or row.get("peak_kind") in (None, "", "none"):
        return ""
    name = str((metadata.get("cuda_devices") or {}).get(device, {}).get("name", ""))
    if gpu_peaks(name) is None:
        return f"no peak: {name!r} is in no catalog entry's device_names"
    return f"no {row['peak_kind']} peak in the catalog entry for {name!r}"

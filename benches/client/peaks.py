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

from pth_top.benches.catalog import PEAK_BF16, PEAK_FP8, PEAK_FP16, PEAK_FP32, PEAK_MEMORY, PEAK_PCIE, PEAK_TF32
from pth_top.benches.client.cpu_model import cpu_clock_ghz, cpu_flop_per_cycle
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import BUILTIN_CATALOG_DIR, Catalog, Part, load_catalog
from pth_top.configs.paths import user_config_dir
from pth_top.configs.speed import PCIE_X16_GB_PER_S

PCIE_X16_GBPS = PCIE_X16_GB_PER_S  # one table, declared with the speed prediction's constants
PCIE_LANE_GBPS = {generation: x16 / 16 for generation, x16 in PCIE_X16_GBPS.items()}
PCIE_CATALOG_WIDTH = 16
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
    devices_per_package: int = 1  # torch devices one catalog part shows as (MI250X: 2 GCDs); peaks are per device
    fp8_tflops: float = 0.0  # dense FP8 tensor peak; 0: no FP8 unit, or the catalog entry does not say


@dataclass(frozen=True)
class GpuPeakTable:
    by_device_name: dict[str, GpuPeaks]  # keyed by normalized_device_name
    problem: str  # why the user catalog was left out, or ""


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
    per_package = max(1, int(part.get("devices_per_package", 1) or 1))
    return GpuPeaks(
        part_id=part.id, label=part.name, fp32_tflops=float(part["fp32_tflops"]) / per_package,
        tf32_tflops=float(part["tf32_dense_tflops"]) / per_package,
        fp16_tflops=float(part["fp16_dense_tflops"]) / per_package,
        bf16_tflops=float(part["bf16_dense_tflops"]) / per_package,
        memory_gb_per_s=float(part["bandwidth_gb_per_s"]) / per_package,
        pcie_generation=int(part["pcie_generation"]), from_user_catalog=origin_dir != BUILTIN_CATALOG_DIR,
        devices_per_package=per_package,
        fp8_tflops=float(part.get("fp8_dense_tflops", 0) or 0) / per_package,
    )


def cpu_peak(cpu: dict, kind: str, threads: int | None) -> Peak | None:
    """cores x clock x FLOP/cycle (cpu_model.py); the clock is the one measured for this many threads if known."""
    if kind not in (PEAK_FP32, PEAK_BF16, PEAK_FP16):
        return None
    cores = _positive(cpu.get("physical_cores")) or 1
    used_cores = int(min(cores, threads) if threads else cores)
    clock = cpu_clock_ghz(cpu, used_cores)
    if clock is None:
        return None
    ghz, clock_source = clock
    flop, why = cpu_flop_per_cycle(cpu, kind)
    return Peak(used_cores * ghz * flop / 1000,
                f"{used_cores} cores x {ghz:.2f} GHz {clock_source} x {flop} FLOP/cycle ({why})")


def gpu_peak(device_name: str, kind: str, pcie_link: dict | None = None,
             link_under_load: dict | None = None) -> Peak | None:
    """The datasheet peak (per torch device); PCIe from the link the GPU negotiated when the child read it."""
    peaks = gpu_peaks(device_name)
    if peaks is None:
        return None
    if kind == PEAK_PCIE:
        return pcie_peak(pcie_link, peaks, link_under_load)
    value = {
        PEAK_FP32: peaks.fp32_tflops, PEAK_TF32: peaks.tf32_tflops, PEAK_FP16: peaks.fp16_tflops,
        PEAK_BF16: peaks.bf16_tflops, PEAK_FP8: peaks.fp8_tflops, PEAK_MEMORY: peaks.memory_gb_per_s,
    }.get(kind)
    if not value:
        return None
    catalog = "your catalog" if peaks.from_user_catalog else "catalog"
    per_device = f", 1/{peaks.devices_per_package} of the package" if peaks.devices_per_package > 1 else ""
    return Peak(float(value), f"{peaks.label} datasheet{per_device}, {catalog} id {peaks.part_id}")


def pcie_peak(link: dict | None, peaks: GpuPeaks | None, under_load: dict | None = None) -> Peak | None:
    """Per-direction peak of the negotiated link (the most it trains to in this slot), else the catalog's x16.

    The note tells an idle link (GPUs drop the speed, not the width, when idle) from a degraded one: a width
    below the slot's maximum, or a speed below it while copies run (`under_load`, read during h2d copies).
    """
    link = link or {}
    generation = _positive(link.get("max_generation")) or _positive(link.get("generation"))
    width = _positive(link.get("max_width")) or _positive(link.get("width"))
    if generation in PCIE_LANE_GBPS and width:
        source = str(link.get("source") or "the child")[:20]
        return Peak(PCIE_LANE_GBPS[int(generation)] * width,
                    f"negotiated PCIe Gen{int(generation)} x{int(width)} (read from {source})"
                    + _link_state_note(link, under_load or {}, generation, width))
    if peaks is None or peaks.pcie_generation not in PCIE_LANE_GBPS:
        return None
    return Peak(PCIE_LANE_GBPS[peaks.pcie_generation] * PCIE_CATALOG_WIDTH,
                f"catalog PCIe Gen{peaks.pcie_generation} x16 (the negotiated link was not readable)")


def _link_state_note(idle: dict, under_load: dict, max_generation: float, max_width: float) -> str:
    """'; link DEGRADED ...' when the width (or the speed under load) is below the maximum; the idle drop else."""
    is_loaded = bool(_positive(under_load.get("generation")) and _positive(under_load.get("width")))
    read = under_load if is_loaded else idle
    generation, width = _positive(read.get("generation")), _positive(read.get("width"))
    if generation is None or width is None or (generation, width) == (max_generation, max_width):
        return ""
    if width < max_width or (is_loaded and generation < max_generation):
        when = "under load" if is_loaded else "now"
        return (f"; link DEGRADED: Gen{generation:g} x{width:g} {when} of Gen{max_generation:g} x{max_width:g} "
                "(reseat the card, check the riser or slot)")
    return f"; link now Gen{generation:g} x{width:g} (GPUs drop the link speed when idle)"


def _positive(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf"):
        return value
    return None


def peak_for_row(row: dict, metadata: dict) -> Peak | None:
    """The peak a result row is compared to, or None (no peak for this kind or unknown hardware)."""
    kind = row.get("peak_kind")
    device = str(row.get("device") or "")
    if not kind or kind == "none":
        return None
    if device.startswith("cuda"):
        described = (metadata.get("cuda_devices") or {}).get(device, {})
        link = described.get("pcie_link")
        under_load = (row.get("details") or {}).get("pcie_link_under_load")
        return gpu_peak(described.get("name", ""), kind, link if isinstance(link, dict) else None,
                        under_load if isinstance(under_load, dict) else None)
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

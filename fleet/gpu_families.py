"""GPU samples -> exporter series: units converted to base units (ratio, hertz), unsupported left out."""

from __future__ import annotations

from typing import Mapping

from pth_top.fleet.metrics import FamilyBook
from pth_top.sensors.gpu_health import GpuHealth
from pth_top.sensors.model import GpuSample
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.xid_events import MAX_XID_CODE, xid_label

MHZ_TO_HZ = 1e6
# Clocks-event (throttle) reason bits of NVML -> the `reason` label; a fixed, bounded set.
CLOCKS_EVENT_REASONS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"), (0x2, "applications_clocks"), (0x4, "sw_power_cap"), (0x8, "hw_slowdown"),
    (0x10, "sync_boost"), (0x20, "sw_thermal"), (0x40, "hw_thermal"), (0x80, "hw_power_brake"),
    (0x100, "display_clocks"),
)
MIG_PROFILE_MARK = " MIG "
# Xid codes served from 0 on each watched GPU, so increase() sees their first event (a series born at 1 shows
# none). NVIDIA's catalogue's faults of the engine, memory, ECC, row remapping, NVLink, bus and GSP.
WATCHED_XID_CODES = (13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120)
WATCHED_XIDS = (*(xid_label(code) for code in WATCHED_XID_CODES), xid_label(MAX_XID_CODE))  # and "other"

# Exporter series <- GpuSample GPM field (already in base units: ratio, bytes per second).
GPM_SERIES: tuple[tuple[str, str], ...] = (
    ("pth_top_gpu_sm_active_ratio", "sm_active_ratio"),
    ("pth_top_gpu_sm_occupancy_ratio", "sm_occupancy_ratio"),
    ("pth_top_gpu_pipe_tensor_active_ratio", "tensor_active_ratio"),
    ("pth_top_gpu_pipe_tensor_hmma_active_ratio", "tensor_hmma_active_ratio"),
    ("pth_top_gpu_pipe_fp64_active_ratio", "fp64_active_ratio"),
    ("pth_top_gpu_pipe_fp32_active_ratio", "fp32_active_ratio"),
    ("pth_top_gpu_pipe_fp16_active_ratio", "fp16_active_ratio"),
    ("pth_top_gpu_dram_active_ratio", "dram_bandwidth_active_ratio"),
    ("pth_top_gpu_prof_pcie_transmit_bytes_per_second", "gpm_pcie_tx_bytes_per_s"),
    ("pth_top_gpu_prof_pcie_receive_bytes_per_second", "gpm_pcie_rx_bytes_per_s"),
    ("pth_top_gpu_prof_nvlink_transmit_bytes_per_second", "nvlink_tx_bytes_per_s"),
    ("pth_top_gpu_prof_nvlink_receive_bytes_per_second", "nvlink_rx_bytes_per_s"),
)


def _ratio(percent: object) -> object:
    return NA if is_na(percent) else float(percent) / 100.0  # type: ignore[arg-type]


def _hertz(mhz: object) -> object:
    return NA if is_na(mhz) else float(mhz) * MHZ_TO_HZ  # type: ignore[arg-type]


def _pstate_number(pstate: object) -> object:
    """"P8" -> 8; NA when unknown."""
    if isinstance(pstate, str) and pstate[:1] == "P" and pstate[1:].isdigit():
        return int(pstate[1:])
    return NA


def mig_profile(instance_name: str) -> str:
    """"NVIDIA H100 80GB HBM3 MIG 3g.40gb" -> "3g.40gb"; the whole name when it has no MIG part."""
    _, mark, profile = instance_name.rpartition(MIG_PROFILE_MARK)
    return profile if mark else instance_name


def gpu_labels(gpu: GpuSample) -> tuple[str, str]:
    """The `gpu` and `uuid` labels every GPU series carries (FamilyBook makes every label printable)."""
    return str(gpu.index), str(gpu.uuid)


def add_gpu(book: FamilyBook, gpu: GpuSample, health: GpuHealth | None, compute_processes: int | None) -> None:
    """Every series of one GPU. A lost GPU gets its identity and `lost`=1 only."""
    labels = gpu_labels(gpu)
    vbios = health.vbios_version if health is not None and not is_na(health.vbios_version) else ""
    book.add("pth_top_gpu_info", (*labels, str(gpu.name), str(gpu.bus_id), str(vbios)), 1)
    book.add("pth_top_gpu_lost", labels, gpu.lost)
    if gpu.lost:
        return
    add = book.add
    add("pth_top_gpu_utilization_ratio", labels, _ratio(gpu.utilization_percent))
    add("pth_top_gpu_memory_utilization_ratio", labels, _ratio(gpu.memory_utilization_percent))
    add("pth_top_gpu_memory_used_bytes", labels, gpu.memory_used_bytes)
    add("pth_top_gpu_memory_total_bytes", labels, gpu.memory_total_bytes)
    add("pth_top_gpu_temperature_celsius", labels, gpu.temperature_c)
    add("pth_top_gpu_fan_speed_ratio", labels, _ratio(gpu.fan_speed_percent))
    add("pth_top_gpu_power_watts", labels, gpu.power_draw_w)
    add("pth_top_gpu_power_limit_watts", labels, gpu.power_limit_w)
    add("pth_top_gpu_sm_clock_hertz", labels, _hertz(gpu.sm_clock_mhz))
    add("pth_top_gpu_memory_clock_hertz", labels, _hertz(gpu.memory_clock_mhz))
    add("pth_top_gpu_performance_state", labels, _pstate_number(gpu.pstate))
    add("pth_top_gpu_compute_processes", labels, compute_processes)
    add("pth_top_gpu_pcie_link_generation", labels, gpu.pcie_generation_current)
    add("pth_top_gpu_pcie_link_generation_max", labels, gpu.pcie_generation_max)
    add("pth_top_gpu_pcie_link_width", labels, gpu.pcie_width_current)
    add("pth_top_gpu_pcie_link_width_max", labels, gpu.pcie_width_max)
    add("pth_top_gpu_pcie_receive_bytes_per_second", labels, gpu.pcie_rx_bytes_per_s)
    add("pth_top_gpu_pcie_transmit_bytes_per_second", labels, gpu.pcie_tx_bytes_per_s)
    add("pth_top_gpu_ecc_enabled", labels, gpu.ecc_enabled)
    add("pth_top_gpu_nvlink_links_active", labels, gpu.nvlink_active_links)
    add("pth_top_gpu_mig_enabled", labels, gpu.mig_enabled)
    add("pth_top_gpu_gpm_supported", labels, gpu.gpm_supported)
    for name, field in GPM_SERIES:
        add(name, labels, getattr(gpu, field))
    for instance in gpu.mig_instances:
        instance_labels = (*labels, "" if is_na(instance.gpu_instance_id) else str(instance.gpu_instance_id),
                           mig_profile(instance.name))
        add("pth_top_mig_memory_used_bytes", instance_labels, instance.memory_used_bytes)
        add("pth_top_mig_memory_total_bytes", instance_labels, instance.memory_total_bytes)
    if health is not None:
        add_health(book, labels, health)


def add_health(book: FamilyBook, labels: tuple[str, str], health: GpuHealth) -> None:
    add = book.add
    add("pth_top_gpu_energy_joules_total", labels, health.energy_joules)
    add("pth_top_gpu_sm_clock_max_hertz", labels, _hertz(health.sm_clock_max_mhz))
    add("pth_top_gpu_memory_temperature_celsius", labels, health.memory_temperature_c)
    mask = health.clocks_event_mask
    if isinstance(mask, int):
        for bit, reason in CLOCKS_EVENT_REASONS:
            add("pth_top_gpu_clocks_event_active", (*labels, reason), bool(mask & bit))
    for reason, seconds in health.violation_seconds:
        add("pth_top_gpu_throttle_seconds_total", (*labels, reason), seconds)
    add("pth_top_gpu_pcie_replays_total", labels, health.pcie_replays)
    add("pth_top_gpu_ecc_errors_total", (*labels, "corrected"), health.ecc_corrected_errors)
    add("pth_top_gpu_ecc_errors_total", (*labels, "uncorrected"), health.ecc_uncorrected_errors)
    add("pth_top_gpu_remapped_rows", (*labels, "correctable"), health.remapped_rows_correctable)
    add("pth_top_gpu_remapped_rows", (*labels, "uncorrectable"), health.remapped_rows_uncorrectable)
    add("pth_top_gpu_row_remap_pending", labels, health.row_remap_pending)
    add("pth_top_gpu_row_remap_failed", labels, health.row_remap_failed)
    add("pth_top_gpu_retired_pages", (*labels, "single_bit"), health.retired_pages_single_bit)
    add("pth_top_gpu_retired_pages", (*labels, "double_bit"), health.retired_pages_double_bit)
    add("pth_top_gpu_nvlink_transmit_bytes_total", labels, health.nvlink_transmit_bytes)
    add("pth_top_gpu_nvlink_receive_bytes_total", labels, health.nvlink_receive_bytes)
    for error, count in health.nvlink_errors:
        add("pth_top_gpu_nvlink_errors_total", (*labels, error), count)


def add_xid(
    book: FamilyBook, gpus: tuple[GpuSample, ...], watched: frozenset[int], counts: Mapping[tuple[int, str], int]
) -> None:
    """Which GPUs report Xid events, and the count of each Xid code since the exporter started.

    A watched GPU serves the WATCHED_XIDS codes from 0; any other code appears at its first event.
    """
    for gpu in gpus:
        labels = gpu_labels(gpu)
        book.add("pth_top_gpu_xid_events_watched", labels, gpu.index in watched)
        seen = {xid: count for (index, xid), count in counts.items() if index == gpu.index}
        known = dict.fromkeys(WATCHED_XIDS, 0) if gpu.index in watched else {}
        for xid, count in sorted((known | seen).items()):
            book.add("pth_top_gpu_xid_errors_total", (*labels, xid), count)

"""Host series: identity always (`pth_top_host_info`), counters and sizes with --host-metrics."""

from __future__ import annotations

from pth_top.fleet.metrics import FamilyBook
from pth_top.sensors.host_counters import HostCounters
from pth_top.sensors.model import HostInfo
from pth_top.sensors.na import is_na


def _text(value: object) -> str:
    return "" if is_na(value) else str(value)


def add_host_info(book: FamilyBook, host: HostInfo) -> None:
    book.add("pth_top_host_info", (
        str(host.hostname), str(host.kernel), str(host.cpu_model_name),
        _text(host.nvidia_driver_version), _text(host.cuda_driver_version),
    ), 1)


def add_host_metrics(book: FamilyBook, host: HostInfo, counters: HostCounters, boot_time_s: float) -> None:
    add = book.add
    for mode, seconds in counters.cpu_seconds_by_mode:
        add("pth_top_host_cpu_seconds_total", (mode,), seconds)
    add("pth_top_host_logical_cpus", (), host.logical_cpu_count)
    add("pth_top_host_load1", (), host.load_average_1m)
    add("pth_top_host_load5", (), host.load_average_5m)
    add("pth_top_host_load15", (), host.load_average_15m)
    add("pth_top_host_memory_total_bytes", (), counters.memory_total_bytes)
    add("pth_top_host_memory_available_bytes", (), counters.memory_available_bytes)
    add("pth_top_host_swap_total_bytes", (), counters.swap_total_bytes)
    add("pth_top_host_swap_used_bytes", (), counters.swap_used_bytes)
    for device, received, transmitted in counters.networks:
        add("pth_top_host_network_receive_bytes_total", (device,), received)
        add("pth_top_host_network_transmit_bytes_total", (device,), transmitted)
    for device, read, written in counters.disks:
        add("pth_top_host_disk_read_bytes_total", (device,), read)
        add("pth_top_host_disk_written_bytes_total", (device,), written)
    for filesystem in counters.filesystems:
        labels = (filesystem.mountpoint, filesystem.device, filesystem.fstype)
        add("pth_top_host_filesystem_size_bytes", labels, filesystem.total_bytes)
        add("pth_top_host_filesystem_avail_bytes", labels, filesystem.free_bytes)
    add("pth_top_host_shm_size_bytes", (), counters.shm_size_bytes)
    add("pth_top_host_shm_avail_bytes", (), counters.shm_avail_bytes)
    add("pth_top_host_boot_time_seconds", (), boot_time_s)

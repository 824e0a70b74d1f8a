"""The host's raw counters and sizes (CPU time, network and disk bytes, filesystems, /dev/shm).

The dashboard shows rates; a Prometheus exporter must hand out the kernel's counters instead and let
Prometheus compute the rates, so these are read as they are, not differenced.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import psutil

from pth_top.sensors.disks import DiskReader, is_physical_disk, whole_disk_names
from pth_top.sensors.model import FilesystemUsage, MaybeInt
from pth_top.sensors.na import NA
from pth_top.sensors.network import LOOPBACK_INTERFACES

FILESYSTEM_TTL_S = 5.0
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
SHM_PATH = "/dev/shm"


@dataclass(frozen=True, slots=True)
class HostCounters:
    cpu_seconds_by_mode: tuple[tuple[str, float], ...]
    memory_total_bytes: int
    memory_available_bytes: int
    swap_total_bytes: int
    swap_used_bytes: int
    # (interface, received bytes, transmitted bytes), loopback left out.
    networks: tuple[tuple[str, int, int], ...]
    # (physical disk, bytes read, bytes written).
    disks: tuple[tuple[str, int, int], ...]
    filesystems: tuple[FilesystemUsage, ...]
    shm_size_bytes: MaybeInt
    shm_avail_bytes: MaybeInt


class HostCounterReader:
    def __init__(self, clock: Callable[[], float] = time.monotonic, sys_block: str = "/sys/block") -> None:
        self._clock = clock
        self._sys_block = sys_block
        self._filesystems: tuple[FilesystemUsage, ...] = ()
        self._filesystems_read_at: float | None = None

    def sample(self) -> HostCounters:
        cpu_times = psutil.cpu_times()
        memory = psutil.virtual_memory()
        swap = psutil.swap_memory()
        shm_size, shm_avail = _shm_sizes()
        return HostCounters(
            cpu_seconds_by_mode=tuple(
                (mode, float(getattr(cpu_times, mode))) for mode in CPU_MODES if hasattr(cpu_times, mode)
            ),
            memory_total_bytes=memory.total,
            memory_available_bytes=memory.available,
            swap_total_bytes=swap.total,
            swap_used_bytes=swap.used,
            networks=_networks(),
            disks=self._disks(),
            filesystems=self._current_filesystems(),
            shm_size_bytes=shm_size,
            shm_avail_bytes=shm_avail,
        )

    def _disks(self) -> tuple[tuple[str, int, int], ...]:
        try:
            counters = psutil.disk_io_counters(perdisk=True) or {}
        except (OSError, RuntimeError):
            return ()
        whole_disks = whole_disk_names(self._sys_block)
        return tuple(
            (name, c.read_bytes, c.write_bytes) for name, c in sorted(counters.items())
            if is_physical_disk(name, whole_disks)
        )

    def _current_filesystems(self) -> tuple[FilesystemUsage, ...]:
        now = self._clock()
        if self._filesystems_read_at is None or now - self._filesystems_read_at >= FILESYSTEM_TTL_S:
            self._filesystems = DiskReader.filesystems()
            self._filesystems_read_at = now
        return self._filesystems


def _networks() -> tuple[tuple[str, int, int], ...]:
    try:
        counters = psutil.net_io_counters(pernic=True) or {}
    except (OSError, RuntimeError):
        return ()
    return tuple(
        (name, c.bytes_recv, c.bytes_sent) for name, c in sorted(counters.items()) if name not in LOOPBACK_INTERFACES
    )


def _shm_sizes() -> tuple[MaybeInt, MaybeInt]:
    """Size and space available to users of /dev/shm (where DataLoader workers pass tensors)."""
    try:
        stats = os.statvfs(SHM_PATH)
    except OSError:
        return NA, NA
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize

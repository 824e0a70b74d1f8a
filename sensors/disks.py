"""Disk I/O rates per physical device and usage of real mounted filesystems."""

from __future__ import annotations

import os
import re
import time
from typing import Any, Callable, Iterable

import psutil

from pth_top.sensors.model import DiskIoRate, FilesystemUsage
from pth_top.sensors.rates import CounterRates

# Block devices that are not physical disks: loop (snaps), RAM disks, zram, device-mapper, md, optical.
VIRTUAL_DEVICE_PATTERN = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|nbd)\d*")
# Partition names when /sys/block is not there to tell: sda1, nvme0n1p1, mmcblk0p1.
PARTITION_PATTERN = re.compile(r"^(sd[a-z]+\d+|vd[a-z]+\d+|xvd[a-z]+\d+|hd[a-z]+\d+|nvme\d+n\d+p\d+|mmcblk\d+p\d+)$")
# Filesystem types that hold no user data on a disk.
PSEUDO_FILESYSTEMS = frozenset({
    "tmpfs", "devtmpfs", "ramfs", "overlay", "overlayfs", "aufs", "squashfs", "proc", "sysfs", "cgroup",
    "cgroup2", "devpts", "mqueue", "debugfs", "tracefs", "securityfs", "pstore", "bpf", "autofs",
    "hugetlbfs", "fusectl", "configfs", "binfmt_misc", "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs",
    "iso9660", "udf", "fuse.snapfuse", "fuse.lxcfs", "fuse.gvfsd-fuse", "fuse.portal", "nullfs", "devfs",
})


def whole_disk_names(sys_block: str = "/sys/block") -> set[str] | None:
    """Names of whole block devices from sysfs; None where sysfs is missing."""
    try:
        return set(os.listdir(sys_block))
    except OSError:
        return None


def is_physical_disk(name: str, whole_disks: set[str] | None) -> bool:
    """True for a whole physical disk (sda, nvme0n1), False for partitions and virtual devices."""
    if VIRTUAL_DEVICE_PATTERN.match(name):
        return False
    if whole_disks is not None:
        return name in whole_disks
    return not PARTITION_PATTERN.match(name)


def real_filesystems(partitions: Iterable[Any]) -> list[Any]:
    """Mounted filesystems worth showing: no pseudo/overlay/snap filesystems, one mount per device."""
    chosen: dict[str, Any] = {}
    for partition in partitions:
        if partition.fstype in PSEUDO_FILESYSTEMS or not partition.fstype:
            continue
        if partition.device.startswith("/dev/loop"):
            continue
        key = partition.device or partition.mountpoint
        known = chosen.get(key)
        if known is None or len(partition.mountpoint) < len(known.mountpoint):
            chosen[key] = partition
    return sorted(chosen.values(), key=lambda partition: partition.mountpoint)


class DiskReader:
    def __init__(self, clock: Callable[[], float] = time.monotonic, sys_block: str = "/sys/block") -> None:
        self._rates: CounterRates[str] = CounterRates(clock)
        self._sys_block = sys_block

    def io_rates(self) -> tuple[DiskIoRate, ...]:
        try:
            counters = psutil.disk_io_counters(perdisk=True) or {}
        except (OSError, RuntimeError):
            counters = {}
        whole_disks = whole_disk_names(self._sys_block)
        physical = {
            name: (float(c.read_bytes), float(c.write_bytes), float(c.read_count), float(c.write_count))
            for name, c in counters.items()
            if is_physical_disk(name, whole_disks)
        }
        return tuple(
            DiskIoRate(device=name, read_bytes_per_s=rates[0], write_bytes_per_s=rates[1],
                       read_iops=rates[2], write_iops=rates[3])
            for name, rates in sorted(self._rates.rates(physical).items())
        )

    @staticmethod
    def filesystems() -> tuple[FilesystemUsage, ...]:
        try:
            partitions = psutil.disk_partitions(all=False)
        except OSError:
            return ()
        usages = []
        for partition in real_filesystems(partitions):
            try:
                usage = psutil.disk_usage(partition.mountpoint)
            except OSError:
                continue
            usages.append(FilesystemUsage(
                mountpoint=partition.mountpoint, device=partition.device, fstype=partition.fstype,
                total_bytes=usage.total, used_bytes=usage.used, free_bytes=usage.free,
            ))
        return tuple(usages)

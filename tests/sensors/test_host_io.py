"""Disk and network rate math from fake counters, device and filesystem filtering, CPU and host readers."""

from __future__ import annotations

from collections import namedtuple
from types import SimpleNamespace

import psutil
import pytest

from pth_top.sensors.cpu import CpuReader, core_usage, package_temperature_c
from pth_top.sensors.disks import DiskReader, is_physical_disk, real_filesystems
from pth_top.sensors.host import read_cpu_model_name
from pth_top.sensors.memory import read_memory
from pth_top.sensors.na import NA
from pth_top.sensors.network import NetworkReader
from pth_top.sensors.rates import CounterRates
from tests.sensors.helpers import FakeClock

DiskCounters = namedtuple("DiskCounters", "read_count write_count read_bytes write_bytes")
NetCounters = namedtuple("NetCounters", "bytes_sent bytes_recv")
Partition = namedtuple("Partition", "device mountpoint fstype opts")
Temp = namedtuple("Temp", "label current high critical")


def test_counter_rates_first_call_zero_then_deltas_and_resets():
    clock = FakeClock()
    rates = CounterRates(clock)
    assert rates.rates({"a": (100.0, 10.0)}) == {"a": (0.0, 0.0)}
    clock.advance(2.0)
    assert rates.rates({"a": (300.0, 30.0), "b": (5.0, 5.0)}) == {"a": (100.0, 10.0), "b": (0.0, 0.0)}
    clock.advance(1.0)
    assert rates.rates({"a": (50.0, 40.0), "b": (15.0, 5.0)}) == {"a": (0.0, 10.0), "b": (10.0, 0.0)}


def test_disk_rates_per_physical_device(monkeypatch, tmp_path):
    sys_block = tmp_path / "block"
    for name in ("sda", "nvme0n1", "loop0", "dm-0"):
        (sys_block / name).mkdir(parents=True)
    counters = {
        "sda": DiskCounters(10, 20, 1_000_000, 2_000_000), "sda1": DiskCounters(10, 20, 1_000_000, 2_000_000),
        "nvme0n1": DiskCounters(0, 0, 0, 0), "loop0": DiskCounters(1, 1, 1, 1), "dm-0": DiskCounters(5, 5, 5, 5),
    }
    monkeypatch.setattr(psutil, "disk_io_counters", lambda perdisk=False, nowrap=True: dict(counters))
    clock = FakeClock()
    reader = DiskReader(clock, sys_block=str(sys_block))
    first = reader.io_rates()
    assert [disk.device for disk in first] == ["nvme0n1", "sda"]
    assert all(disk.read_bytes_per_s == 0.0 for disk in first)
    counters["sda"] = DiskCounters(110, 70, 5_000_000, 2_500_000)
    clock.advance(0.5)
    sda = {disk.device: disk for disk in reader.io_rates()}["sda"]
    assert (sda.read_bytes_per_s, sda.write_bytes_per_s) == (8_000_000.0, 1_000_000.0)
    assert (sda.read_iops, sda.write_iops) == (200.0, 100.0)


@pytest.mark.parametrize("name, whole_disks, physical", [
    ("sda", {"sda"}, True), ("sda1", {"sda"}, False), ("nvme0n1p2", None, False), ("nvme0n1", None, True),
    ("loop3", {"loop3"}, False), ("ram0", None, False), ("zram0", {"zram0"}, False), ("dm-1", {"dm-1"}, False),
    ("md0", {"md0"}, False), ("vdb", None, True), ("mmcblk0p1", None, False),
])
def test_physical_disk_selection(name, whole_disks, physical):
    assert is_physical_disk(name, whole_disks) is physical


def test_real_filesystems_drop_pseudo_and_dedupe_by_device():
    partitions = [
        Partition("/dev/nvme0n1p2", "/", "ext4", "rw"),
        Partition("/dev/nvme0n1p2", "/var/lib/docker/btrfs", "ext4", "rw"),
        Partition("/dev/nvme0n1p1", "/boot/efi", "vfat", "rw"),
        Partition("overlay", "/var/lib/docker/overlay2/x/merged", "overlay", "rw"),
        Partition("tmpfs", "/run", "tmpfs", "rw"),
        Partition("/dev/loop4", "/snap/core/1", "squashfs", "ro"),
        Partition("/dev/loop5", "/mnt/image", "ext4", "ro"),
        Partition("proc", "/proc", "proc", "rw"),
        Partition("nas:/data", "/data", "nfs4", "rw"),
    ]
    assert [(p.mountpoint, p.fstype) for p in real_filesystems(partitions)] == [
        ("/", "ext4"), ("/boot/efi", "vfat"), ("/data", "nfs4"),
    ]


def test_network_rates_hide_loopback_by_default(monkeypatch):
    counters = {"lo": NetCounters(0, 0), "eth0": NetCounters(1000, 5000)}
    monkeypatch.setattr(psutil, "net_io_counters", lambda pernic=False, nowrap=True: dict(counters))
    clock = FakeClock()
    reader = NetworkReader(clock)
    assert [(n.interface, n.rx_bytes_per_s) for n in reader.sample()] == [("eth0", 0.0)]
    counters["eth0"] = NetCounters(3000, 9000)
    clock.advance(2.0)
    (eth0,) = reader.sample()
    assert (eth0.rx_bytes_per_s, eth0.tx_bytes_per_s) == (2000.0, 1000.0)
    assert [n.interface for n in NetworkReader(clock, include_loopback=True).sample()] == ["eth0", "lo"]


def test_core_usage_splits_user_system_iowait():
    before = SimpleNamespace(user=100, nice=0, system=50, idle=800, iowait=0, irq=0, softirq=0, steal=0)
    after = SimpleNamespace(user=130, nice=10, system=60, idle=840, iowait=10, irq=0, softirq=0, steal=0)
    core = core_usage(3, before, after)
    assert core.index == 3
    assert (core.user_percent, core.system_percent, core.iowait_percent) == (40.0, 10.0, 10.0)
    assert core.total_percent == 50.0
    assert core_usage(0, after, after).total_percent == 0.0


def test_package_temperature_from_known_sensors():
    coretemp = [Temp("Core 0", 50, None, None), Temp("Package id 0", 61, None, None)]
    assert package_temperature_c({"coretemp": coretemp}) == 61.0
    assert package_temperature_c({"k10temp": [Temp("Tccd1", 55, None, None), Temp("Tctl", 70.5, None, None)]}) == 70.5
    assert package_temperature_c({"nvme": [Temp("Composite", 40, None, None)]}) is NA
    assert package_temperature_c({}) is NA


def test_cpu_reader_without_sensors_support(monkeypatch):
    monkeypatch.delattr(psutil, "sensors_temperatures", raising=False)
    monkeypatch.setattr(psutil, "cpu_freq", lambda: None)
    sample = CpuReader(FakeClock()).sample()
    assert sample.package_temperature_c is NA and sample.frequency_mhz is NA
    assert len(sample.cores) == psutil.cpu_count() and 0.0 <= sample.total_percent <= 100.0


def test_cpu_model_name_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\n")
    assert read_cpu_model_name(str(cpuinfo)) == "AMD EPYC 9654 96-Core Processor"
    cpuinfo.write_text("processor\t: 0\nBogoMIPS\t: 50.00\nHardware\t: NVIDIA Grace\n")
    assert read_cpu_model_name(str(cpuinfo)) == "NVIDIA Grace"
    assert read_cpu_model_name(str(tmp_path / "missing"))


def test_memory_parts_are_consistent():
    memory = read_memory()
    assert 0 < memory.used_bytes <= memory.total_bytes
    assert 0 < memory.available_bytes <= memory.total_bytes
    assert memory.swap_used_bytes <= memory.swap_total_bytes

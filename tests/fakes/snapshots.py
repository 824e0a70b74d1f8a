"""Deterministic Snapshot objects for dashboard tests (no psutil, no NVML)."""

from __future__ import annotations

from dataclasses import replace

from pth_top.sensors.model import (
    CoreUsage,
    CpuSample,
    DiskIoRate,
    FilesystemUsage,
    GpuProcessUse,
    GpuSample,
    HostInfo,
    MemorySample,
    MigInstance,
    NetworkRate,
    ProcessSample,
    Snapshot,
)
from pth_top.sensors.na import NA
from pth_top.units import GIB, MIB


def make_host(gpu_count: int) -> HostInfo:
    return HostInfo(
        hostname="trainbox", uptime_s=3 * 86400 + 4 * 3600 + 5 * 60, load_average_1m=1.25,
        load_average_5m=0.75, load_average_15m=0.5, logical_cpu_count=16, physical_cpu_count=8,
        cpu_model_name="AMD Ryzen 7 5800X 8-Core Processor", kernel="6.8.0",
        nvidia_driver_version="550.54.15" if gpu_count else NA,
        cuda_driver_version="12.4" if gpu_count else NA,
        nvml_unavailable_reason=None if gpu_count else "no NVIDIA driver (NVML library not found)",
    )


def make_cpu(core_count: int = 16) -> CpuSample:
    cores = tuple(
        CoreUsage(index, user_percent=(index * 7) % 60, system_percent=(index * 3) % 15,
                  iowait_percent=index % 3, total_percent=(index * 7) % 60 + (index * 3) % 15)
        for index in range(core_count)
    )
    return CpuSample(cores=cores, total_percent=sum(c.total_percent for c in cores) / core_count,
                     frequency_mhz=3800.0, package_temperature_c=61.0)


def make_gpu(index: int, name: str = "NVIDIA H100 80GB HBM3") -> GpuSample:
    return GpuSample(
        index=index, name=name, bus_id=f"00000000:{0x17 + index:02X}:00.0", uuid=f"GPU-{index:08d}",
        utilization_percent=float((index * 13 + 40) % 100), memory_utilization_percent=30.0,
        memory_used_bytes=(10 + index * 5) * GIB, memory_total_bytes=80 * GIB, temperature_c=55.0 + index,
        fan_speed_percent=NA, power_draw_w=300.0 + index * 10, power_limit_w=700.0, sm_clock_mhz=1980.0,
        memory_clock_mhz=2619.0, pstate="P0", pcie_generation_current=5 if index != 1 else 4,
        pcie_generation_max=5, pcie_width_current=16, pcie_width_max=16,
        pcie_rx_bytes_per_s=1.5e9, pcie_tx_bytes_per_s=3.0e8, ecc_enabled=True,
        ecc_volatile_uncorrected_errors=0, throttle_reasons=("power cap",) if index == 2 else (),
        nvlink_active_links=18, mig_enabled=False,
    )


def make_processes(count: int, gpu_count: int) -> tuple[ProcessSample, ...]:
    processes = [
        ProcessSample(pid=1, ppid=0, user="root", cpu_percent=0.0, memory_percent=0.1, rss_bytes=12 * MIB,
                      state="sleeping", start_time_s=1000.0 - 3 * 86400.0, command="/sbin/init"),
    ]
    for offset in range(count - 1):
        pid = 1000 + offset
        uses = ()
        if gpu_count and offset < min(gpu_count, 4):
            uses = (GpuProcessUse(gpu_index=offset, gpu_memory_used_bytes=(offset + 2) * GIB, kind="compute"),)
        processes.append(ProcessSample(
            pid=pid, ppid=1 if offset % 3 == 0 else 1000 + (offset // 3) * 3,
            user="alice" if offset % 2 else "bob", cpu_percent=float((offset * 37) % 100),
            memory_percent=float((offset * 11) % 20) / 2, rss_bytes=(offset + 1) * 50 * MIB,
            state="running" if offset % 5 == 0 else "sleeping", start_time_s=1000.0 - offset * 61.5,
            cpu_time_s=offset * 7.25,
            command=f"python train.py --rank {offset} [/] --lr 3e-4" if uses else f"worker-{offset} --flag",
            gpu_uses=uses,
        ))
    return tuple(processes)


def make_snapshot(gpu_count: int = 0, process_count: int = 30, core_count: int = 16,
                  mig: bool = False, lost_gpu: int | None = None, timestamp_s: float = 1000.0) -> Snapshot:
    gpus = [make_gpu(index) for index in range(gpu_count)]
    if mig and gpus:
        gpus[0] = replace(gpus[0], mig_enabled=True, mig_instances=(
            MigInstance(1, "3g.40gb", 5 * GIB, 40 * GIB), MigInstance(2, "3g.40gb", 1 * GIB, 40 * GIB)))
    if lost_gpu is not None and lost_gpu < len(gpus):
        lost = gpus[lost_gpu]
        gpus[lost_gpu] = GpuSample(index=lost.index, name=lost.name, bus_id=lost.bus_id, uuid=lost.uuid, lost=True)
    return Snapshot(
        timestamp_s=timestamp_s, host=make_host(gpu_count), cpu=make_cpu(core_count),
        memory=MemorySample(total_bytes=64 * GIB, used_bytes=20 * GIB, buffers_cache_bytes=12 * GIB,
                            available_bytes=40 * GIB, swap_total_bytes=8 * GIB, swap_used_bytes=1 * GIB),
        disks=(DiskIoRate("nvme0n1", 250e6, 40e6, 1200, 300), DiskIoRate("sda", 0.0, 1e6, 0, 12)),
        filesystems=(FilesystemUsage("/", "/dev/nvme0n1p2", "ext4", 1000 * GIB, 620 * GIB, 380 * GIB),
                     FilesystemUsage("/data", "/dev/sda1", "xfs", 4000 * GIB, 3800 * GIB, 200 * GIB)),
        networks=(NetworkRate("eth0", 12.5e6, 1.2e6), NetworkRate("ib0", 0.0, 0.0)),
        gpus=tuple(gpus),
        processes=make_processes(process_count, gpu_count),
    )


class FixedSource:
    """A snapshot source that returns the given snapshots in turn, then repeats the last one."""

    def __init__(self, *snapshots: Snapshot) -> None:
        self.snapshots = list(snapshots)
        self.calls = 0

    def sample(self) -> Snapshot:
        snapshot = self.snapshots[min(self.calls, len(self.snapshots) - 1)]
        self.calls += 1
        return replace(snapshot, timestamp_s=snapshot.timestamp_s + self.calls)


class FailingSource:
    """A snapshot source whose every sample raises `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def sample(self) -> Snapshot:
        raise self.error


def snapshot_with_process(pid: int) -> Snapshot:
    """A small snapshot plus one live process of this user (the kill and signal flows' target)."""
    import getpass
    import os

    from pth_top.sensors.processes import process_start_time_s

    base = make_snapshot(process_count=5)
    # The real start time: the kill dialog signals only the process that started then.
    process = ProcessSample(pid=pid, ppid=os.getpid(), user=getpass.getuser(), cpu_percent=100.0,
                            memory_percent=0.1, rss_bytes=10_000_000, state="sleeping",
                            start_time_s=process_start_time_s(pid), command="python -c sleep")
    return replace(base, processes=base.processes + (process,))

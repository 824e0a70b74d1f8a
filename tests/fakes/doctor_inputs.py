"""Scripted inputs for doctor checks: /proc and /sys style trees, a healthy fake GPU, a torch probe report."""

from __future__ import annotations

import os
import time
from collections import namedtuple
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml

from pth_top.doctor.context import DoctorContext
from pth_top.sensors.nvml import NvmlSession
from pth_top.units import GIB, KIB
from tests.fakes.fake_pynvml import FakeDevice, FakePynvml

DiskUsage = namedtuple("DiskUsage", "total used free")


def healthy_gpu_values(index: int = 0, **overrides: Any) -> dict[str, Any]:
    """NVML readings of an idle, well set-up H100 PCIe in a Gen5 x16 slot."""
    values: dict[str, Any] = {
        "nvmlDeviceGetName": "NVIDIA H100 PCIe",
        "nvmlDeviceGetPciInfo": SimpleNamespace(busId=f"00000000:{0x17 + index:02X}:00.0"),
        "nvmlDeviceGetMemoryInfo": SimpleNamespace(total=80 * GIB, used=0, free=80 * GIB),
        "nvmlDeviceGetMaxPcieLinkGeneration": 5,
        "nvmlDeviceGetGpuMaxPcieLinkGeneration": 5,
        "nvmlDeviceGetMaxPcieLinkWidth": 16,
        "nvmlDeviceGetCurrPcieLinkGeneration": 5,
        "nvmlDeviceGetCurrPcieLinkWidth": 16,
        "nvmlDeviceGetUtilizationRates": SimpleNamespace(gpu=0, memory=0),
        "nvmlDeviceGetBAR1MemoryInfo": SimpleNamespace(bar1Total=128 * GIB, bar1Used=0, bar1Free=128 * GIB),
        "nvmlDeviceGetPersistenceMode": 1,
        "nvmlDeviceGetComputeMode": 0,
        "nvmlDeviceGetEccMode": [1, 1],
        "nvmlDeviceGetTotalEccErrors": lambda error_type, counter: 0,
        "nvmlDeviceGetRemappedRows": (0, 0, 0, 0),
        "nvmlDeviceGetPowerManagementLimit": 350_000,
        "nvmlDeviceGetPowerManagementDefaultLimit": 350_000,
        "nvmlDeviceGetPowerManagementLimitConstraints": [200_000, 350_000],
        "nvmlDeviceGetCurrentClocksEventReasons": 0x1,
        "nvmlDeviceGetTemperature": lambda sensor: 35,
        "nvmlDeviceGetTemperatureThreshold": lambda kind: 87 if kind == 1 else 92,
    }
    values.update(overrides)
    return values


def fake_nvml(*device_values: dict[str, Any], **system_values: Any) -> FakePynvml:
    return FakePynvml(devices=[FakeDevice(values=values) for values in device_values], system_values=system_values)


def no_driver_nvml() -> FakePynvml:
    return FakePynvml(init_error=pynvml.NVMLError_LibraryNotFound)


def cuda_probe_report(**overrides: Any) -> dict[str, Any]:
    """What `benches probe` prints for a CUDA 12.4 torch seeing one GPU."""
    report: dict[str, Any] = {
        "schema": "pth-top.torch-probe", "schema_version": 1, "python": "/opt/env/bin/python",
        "python_version": "3.11.7", "env": {}, "error": None, "torch_version": "2.5.1+cu124",
        "torch_cuda_version": "12.4", "torch_hip_version": None, "cuda_available": True, "device_count": 1,
        "devices": [{"index": 0, "name": "NVIDIA H100 PCIe", "total_memory_bytes": 80 * GIB,
                     "capability": [9, 0], "pci_bus_id": "00000000:17:00.0"}],
        "cudnn_available": True, "cudnn_version": 90100, "nccl_available": True, "nccl_version": "2.21.5",
        "numpy_present": True, "num_threads": 8, "num_interop_threads": 8, "load": None,
    }
    report.update(overrides)
    return report


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def add_block_disk(sys_root: Path, disk: str, device_number: str, rotational: bool, partition: str | None = None,
                   partition_number: str | None = None) -> None:
    """A disk (and optionally one partition) under devices/, linked from dev/block and class/block."""
    disk_dir = sys_root / "devices" / "pci0000:00" / disk
    write(disk_dir / "queue" / "rotational", "1\n" if rotational else "0\n")
    links = {device_number: disk_dir}
    names = {disk: disk_dir}
    if partition:
        partition_dir = disk_dir / partition
        write(partition_dir / "partition", "1\n")
        links[partition_number or device_number] = partition_dir
        names[partition] = partition_dir
    for number, target in links.items():
        link = sys_root / "dev" / "block" / number
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)
    for name, target in names.items():
        link = sys_root / "class" / "block" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)


def make_context(
    tmp_path: Path,
    nvml_module: Any = None,
    probe: dict[str, Any] | None = None,
    mem_total_gib: float = 128,
    shm_total_bytes: int = 16 * GIB,
    data_free_bytes: int = 500 * GIB,
    physical_cores: int = 16,
    usable_cpus: int = 32,
) -> DoctorContext:
    """A context over fresh /proc and /sys trees in tmp_path; data dir on an NVMe partition."""
    proc_root, sys_root = tmp_path / "proc", tmp_path / "sys"
    data_dir, dev_shm = tmp_path / "data", tmp_path / "shm"
    data_dir.mkdir(parents=True)
    dev_shm.mkdir()
    write(proc_root / "meminfo", f"MemTotal:       {int(mem_total_gib * GIB / KIB)} kB\nMemFree: 1000 kB\n")
    write(proc_root / "swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n")
    write(proc_root / "self" / "mountinfo", (
        "27 1 259:2 / / rw,relatime - ext4 /dev/nvme0n1p2 rw\n"
        f"30 27 259:3 / {data_dir} rw,relatime - ext4 /dev/nvme0n1p3 rw\n"
        f"31 27 0:27 / {dev_shm} rw,relatime - tmpfs tmpfs rw,size=16777216k\n"
    ))
    add_block_disk(sys_root, "nvme0n1", "259:0", rotational=False, partition="nvme0n1p3", partition_number="259:3")
    usage = {str(data_dir): DiskUsage(1000 * GIB, 1000 * GIB - data_free_bytes, data_free_bytes),
             str(dev_shm): DiskUsage(shm_total_bytes, 0, shm_total_bytes)}
    module = nvml_module if nvml_module is not None else fake_nvml(healthy_gpu_values())
    return DoctorContext(
        nvml=NvmlSession(module=module),
        proc_root=proc_root,
        sys_root=sys_root,
        dev_shm=dev_shm,
        data_dir=data_dir,
        data_dir_chosen=True,
        disk_usage=lambda path: usage[path],
        usable_cpu_count=lambda: usable_cpus,
        physical_core_count=lambda: physical_cores,
        probe_source=(lambda: probe) if probe is not None else None,
        python="/opt/env/bin/python",
        python_chosen=True,
    )


def slow_interpreter(tmp_path: Path) -> tuple[str, Path]:
    """An executable that records its pid and hangs, standing in for a probe that never answers."""
    pid_file = tmp_path / "probe.pid"
    script = tmp_path / "slow-python"
    script.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 60\n")
    script.chmod(0o755)
    return str(script), pid_file


def wait_for_pid(pid_file: Path, timeout_s: float = 20.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        time.sleep(0.01)
    raise AssertionError(f"the fake interpreter did not start within {timeout_s:g} s")


def alive(pid: int) -> bool:
    """True while the process runs (a killed but not yet reaped zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        # ESRCH when the process vanishes between open and read.
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone_soon(pid: int, timeout_s: float = 20.0) -> bool:
    """True once the process has died (SIGKILL is delivered asynchronously), waiting up to `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.01)
    return not alive(pid)

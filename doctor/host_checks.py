"""Host checks: memory, swap, disks, CPU and /dev/shm, read from /proc and /sys under injectable roots."""

from __future__ import annotations

import re
from pathlib import Path

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.gpus import Gpu, list_gpus
from pth_top.doctor.model import Group, Verdict, failed, not_applicable, passed, warned
from pth_top.doctor.registry import doctor_check
from pth_top.doctor.storage import disk_for_device_name, disk_of_path, mount_of, read_text
from pth_top.sensors.na import is_na
from pth_top.sensors.nvml import GpuLostError
from pth_top.sensors.units import format_bytes
from pth_top.units import GIB, KIB, MIB

# The guide's floor is "16 GB, keep at least 4 GB for the OS"; MemTotal of a 16 GB machine reads ~15.5 GiB.
RAM_FLOOR_BYTES = 15 * GIB
RAM_KEPT_FOR_OS_BYTES = 4 * GIB
MIN_CPUS_PER_GPU = 2
DATA_DIR_FAIL_BELOW_BYTES = 2 * GIB
DATA_DIR_WARN_BELOW_BYTES = 20 * GIB
SHM_FAIL_BELOW_BYTES = 256 * MIB
SHM_WARN_BELOW_BYTES = 1 * GIB
PCIE_GENERATION_BY_GT_S = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def read_meminfo_bytes(proc_root: Path, field: str) -> int | None:
    text = read_text(proc_root / "meminfo")
    if text is None:
        return None
    match = re.search(rf"^{field}:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(match.group(1)) * KIB if match else None


def total_gpu_memory_bytes(context: DoctorContext) -> int | None:
    gpus = list_gpus(context)
    if not gpus:
        return None
    total = 0
    for gpu in gpus:
        if gpu.handle is None:
            raise GpuLostError(f"{gpu.label} stopped answering while it was listed")
        memory = context.nvml.call("nvmlDeviceGetMemoryInfo", gpu.handle)
        if is_na(memory):
            return None
        total += int(memory.total)
    return total


@doctor_check(
    "host.ram", "System memory", Group.HOST,
    "The guide's floor for PyTorch work is 16 GB of RAM, of which at least 4 GB stays with the OS; "
    "with less, data loading and checkpoint loading swap or get killed by the OOM killer.",
)
def check_ram(context: DoctorContext) -> Verdict:
    total = read_meminfo_bytes(context.proc_root, "MemTotal")
    if total is None:
        return not_applicable(f"cannot read {context.proc_root / 'meminfo'}")
    value = f"{format_bytes(total)} total"
    if total < RAM_FLOOR_BYTES:
        return warned(value, "Add RAM: 16 GB is the floor, 32 GB or more for large datasets.")
    return passed(value)


@doctor_check(
    "host.ram_vs_gpu", "RAM vs GPU memory", Group.HOST,
    "Loading a checkpoint, pinned-memory batches and DataLoader workers all live in host RAM; with less "
    "usable RAM (total minus 4 GB for the OS) than GPU memory, a model that fits the GPUs may not load.",
    needs=("gpus",),
)
def check_ram_vs_gpu_memory(context: DoctorContext, gpus: list[Gpu]) -> Verdict:
    gpu_total = total_gpu_memory_bytes(context)
    if gpu_total is None:
        return not_applicable("no GPU memory reading")
    ram_total = read_meminfo_bytes(context.proc_root, "MemTotal")
    if ram_total is None:
        return not_applicable(f"cannot read {context.proc_root / 'meminfo'}")
    usable = ram_total - RAM_KEPT_FOR_OS_BYTES
    value = (
        f"RAM {format_bytes(ram_total)} (usable {format_bytes(max(0, usable))}) "
        f"vs GPU memory {format_bytes(gpu_total)}"
    )
    if usable < gpu_total:
        return warned(value, "Fit at least as much RAM as total GPU memory, plus 4 GB for the OS.")
    return passed(value)


def _swap_areas(proc_root: Path) -> list[tuple[str, str]] | None:
    text = read_text(proc_root / "swaps")
    if text is None:
        return None
    areas = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 2:
            areas.append((fields[0].replace("\\040", " "), fields[1]))
    return areas


@doctor_check(
    "host.swap", "Swap device", Group.HOST,
    "When RAM runs out the kernel swaps; on a rotating disk that stalls training for minutes instead of "
    "seconds (the guide: put swap on an NVMe SSD, never on a hard disk).",
)
def check_swap(context: DoctorContext) -> Verdict:
    areas = _swap_areas(context.proc_root)
    if areas is None:
        return not_applicable(f"cannot read {context.proc_root / 'swaps'}")
    if not areas:
        return passed("no swap configured")
    described = []
    rotating = []
    for name, kind in areas:
        if kind == "partition":
            disk = disk_for_device_name(name, context.sys_root)
        else:
            _, disk = disk_of_path(Path(name), context.proc_root, context.sys_root)
        label = disk.kind if disk else "unknown disk"
        described.append(f"{name} on {label}")
        if disk is not None and disk.rotating and disk.kind.startswith("rotating"):
            rotating.append(name)
    value = "; ".join(described)
    if rotating:
        return warned(
            value, f"Move swap ({', '.join(rotating)}) to an SSD, or add RAM and turn this swap off (swapoff).",
        )
    return passed(value)


@doctor_check(
    "host.data_dir_space", "Free space in data dir", Group.HOST,
    "Checkpoints of large models take tens of GB each; a full disk ends a run when it tries to save.",
)
def check_data_dir_space(context: DoctorContext) -> Verdict:
    if not context.data_dir.is_dir():
        return failed(f"{context.data_dir} is not a directory", "Create it or pass an existing --data-dir.")
    usage = context.disk_usage(str(context.data_dir))
    value = f"{format_bytes(usage.free)} free of {format_bytes(usage.total)} at {context.data_dir}"
    if not context.data_dir_chosen:
        value += " (the working directory: --data-dir names your data set's folder)"
    if usage.free < DATA_DIR_FAIL_BELOW_BYTES:
        return failed(value, "Free space or point --data-dir (and your checkpoint directory) at a larger disk.")
    if usage.free < DATA_DIR_WARN_BELOW_BYTES:
        return warned(value, "Keep at least 20 GiB free where checkpoints are written.")
    return passed(value)


@doctor_check(
    "host.data_dir_disk", "Disk under the data directory", Group.HOST,
    "DataLoader throughput is bounded by the disk: NVMe reads 3-7 GB/s, a SATA SSD ~550 MB/s, a hard disk "
    "~150 MB/s with slow random reads, which starves the GPU on datasets of many small files.",
)
def check_data_dir_disk(context: DoctorContext) -> Verdict:
    mount, disk = disk_of_path(context.data_dir, context.proc_root, context.sys_root)
    if mount is None:
        return not_applicable(f"cannot read {context.proc_root / 'self' / 'mountinfo'}")
    if disk is None:
        return not_applicable(
            f"{context.data_dir} is on {mount.filesystem} ({mount.source}), not a local block device"
        )
    value = f"{context.data_dir} on {disk.name}: {disk.kind}"
    if disk.kind == "virtual disk":
        return not_applicable(f"{value}; its speed depends on the host's storage")
    if disk.rotating:
        return warned(value, "Put datasets on an NVMe or SATA SSD, or cache them in RAM / on local NVMe first.")
    return passed(value)


def _link_generation(speed_text: str | None) -> int | None:
    match = re.match(r"([\d.]+)\s*GT/s", speed_text or "")
    return PCIE_GENERATION_BY_GT_S.get(float(match.group(1))) if match else None


@doctor_check(
    "host.nvme_link", "NVMe PCIe link", Group.HOST,
    "An NVMe drive in a slot with fewer lanes or an older PCIe generation than it supports reads "
    "proportionally slower (a Gen4 x4 drive in a Gen3 x2 slot loses three quarters of its speed).",
)
def check_nvme_links(context: DoctorContext) -> Verdict | list[Verdict]:
    nvme_class = context.sys_root / "class" / "nvme"
    controllers = sorted(nvme_class.iterdir()) if nvme_class.is_dir() else []
    if not controllers:
        return not_applicable("no NVMe drives")
    verdicts = []
    for controller in controllers:
        device = controller / "device"
        current_speed = read_text(device / "current_link_speed")
        max_speed = read_text(device / "max_link_speed")
        current_width = read_text(device / "current_link_width")
        max_width = read_text(device / "max_link_width")
        if None in (current_speed, max_speed, current_width, max_width):
            verdicts.append(not_applicable("no PCIe link information (not a PCIe device?)", controller.name))
            continue
        current_generation = _link_generation(current_speed)
        max_generation = _link_generation(max_speed)
        value = f"{current_speed} x{current_width} (max {max_speed} x{max_width})"
        slower_generation = (
            current_generation is not None and max_generation is not None and current_generation < max_generation
        )
        if slower_generation or current_width != max_width:
            verdicts.append(warned(
                value, "Move the drive to an M.2 slot wired to the CPU with full lanes (check the board manual "
                "for lane sharing), or check BIOS PCIe settings.", controller.name,
            ))
        else:
            verdicts.append(passed(value, controller.name))
    return verdicts


@doctor_check(
    "host.cpus_per_gpu", "CPU cores per GPU", Group.HOST,
    "Each GPU needs DataLoader workers to decode and augment its batches; with fewer than 2 CPU cores per "
    "GPU the GPUs wait for data.",
    needs=("gpus",),
)
def check_cpus_per_gpu(context: DoctorContext, gpus: list[Gpu]) -> Verdict:
    if not gpus:
        return not_applicable("no GPUs")
    cpus = context.usable_cpu_count()
    value = f"{cpus} usable CPUs for {len(gpus)} GPU(s): {cpus / len(gpus):.1f} per GPU"
    if cpus < MIN_CPUS_PER_GPU * len(gpus):
        return warned(
            value, "Use a CPU with more cores (or give this container more CPUs), or preprocess data offline.",
        )
    return passed(value)


@doctor_check(
    "host.cpu_governor", "CPU frequency governor", Group.HOST,
    "The powersave governor keeps cores at low clocks (with acpi-cpufreq, the lowest), which slows "
    "data loading and the Python side of training; with intel_pstate/amd-pstate the cost is smaller.",
)
def check_cpu_governor(context: DoctorContext) -> Verdict:
    cpu_root = context.sys_root / "devices" / "system" / "cpu"
    governors: dict[str, int] = {}
    for cpu_dir in sorted(cpu_root.glob("cpu[0-9]*")):
        governor = read_text(cpu_dir / "cpufreq" / "scaling_governor")
        if governor:
            governors[governor] = governors.get(governor, 0) + 1
    if not governors:
        return not_applicable("no cpufreq governors exposed (virtual machine or frequency set by firmware)")
    driver = read_text(cpu_root / "cpu0" / "cpufreq" / "scaling_driver") or "unknown driver"
    value = ", ".join(f"{name} ({count} CPUs)" for name, count in sorted(governors.items())) + f"; {driver}"
    if "powersave" in governors:
        return warned(
            value, "sudo cpupower frequency-set -g performance (or schedutil); make it persistent with your "
            "distro's tuned or cpupower service.",
        )
    return passed(value)


@doctor_check(
    "host.dev_shm", "Shared memory (/dev/shm)", Group.HOST,
    "DataLoader workers hand batches to the training process through /dev/shm; Docker's default 64 MiB "
    "makes workers die with 'bus error' or 'DataLoader worker killed'.",
)
def check_dev_shm(context: DoctorContext) -> Verdict:
    if not context.dev_shm.is_dir():
        return warned(
            f"{context.dev_shm} does not exist", "Mount a tmpfs at /dev/shm (containers: --shm-size=8g or --ipc=host).",
        )
    mount = mount_of(context.dev_shm, context.proc_root)
    usage = context.disk_usage(str(context.dev_shm))
    where = f" ({mount.filesystem})" if mount is not None and mount.filesystem != "tmpfs" else ""
    value = f"{format_bytes(usage.total)}{where}, {format_bytes(usage.free)} free"
    fix = "Containers: docker run --shm-size=8g (or --ipc=host); Kubernetes: mount an emptyDir with medium: Memory."
    if usage.total < SHM_FAIL_BELOW_BYTES:
        return failed(value, fix)
    if usage.total < SHM_WARN_BELOW_BYTES:
        return warned(value, fix)
    return passed(value)

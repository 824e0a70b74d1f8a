"""Host checks against temporary /proc and /sys style trees."""

from __future__ import annotations

import pynvml
import pytest

from pth_top.doctor import host_checks
from pth_top.doctor.model import Status
from pth_top.doctor.registry import checks_in
from pth_top.doctor.storage import parse_mountinfo
from pth_top.units import GIB, MIB
from tests.fakes.doctor_inputs import (
    add_block_disk,
    fake_nvml,
    healthy_gpu_values,
    make_context,
    no_driver_nvml,
    write,
)


def only(check, context):
    findings = check.run(context)
    assert len(findings) == 1, findings
    return findings[0]


@pytest.mark.parametrize(("gib", "status"), [(8, Status.WARN), (15.5, Status.PASS), (64, Status.PASS)])
def test_ram_against_the_guides_16_gb_floor(tmp_path, gib, status):
    finding = only(host_checks.check_ram, make_context(tmp_path, mem_total_gib=gib))
    assert finding.status is status


@pytest.mark.parametrize(("ram_gib", "status"), [(64, Status.WARN), (96, Status.PASS)])
def test_ram_against_total_gpu_memory_keeps_4_gb_for_the_os(tmp_path, ram_gib, status):
    nvml = fake_nvml(healthy_gpu_values(0))  # 80 GiB of GPU memory
    finding = only(host_checks.check_ram_vs_gpu_memory, make_context(tmp_path, nvml_module=nvml, mem_total_gib=ram_gib))
    assert finding.status is status
    assert "GPU memory 80.0 GiB" in finding.value


def test_ram_vs_gpu_could_not_run_when_a_gpu_was_lost_while_listing(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(0), healthy_gpu_values(1))
    nvml.fail("nvmlDeviceGetName", pynvml.NVMLError_GpuIsLost, device_index=1)
    finding = only(host_checks.check_ram_vs_gpu_memory, make_context(tmp_path, nvml_module=nvml, mem_total_gib=512))
    assert finding.status is Status.COULD_NOT_RUN and "GPU 1" in finding.value


def test_ram_vs_gpu_is_not_applicable_without_a_driver(tmp_path):
    finding = only(host_checks.check_ram_vs_gpu_memory, make_context(tmp_path, nvml_module=no_driver_nvml()))
    assert finding.status is Status.NOT_APPLICABLE and "no NVIDIA driver" in finding.value


def test_swap_partition_on_a_rotating_disk_warns(tmp_path):
    context = make_context(tmp_path)
    add_block_disk(context.sys_root, "sda", "8:0", rotational=True, partition="sda2", partition_number="8:2")
    write(context.proc_root / "swaps", "Filename Type Size Used Priority\n/dev/sda2 partition 8388604 0 -2\n")
    finding = only(host_checks.check_swap, context)
    assert finding.status is Status.WARN
    assert finding.value == "/dev/sda2 on rotating disk (HDD)"


def test_swap_file_on_nvme_passes(tmp_path):
    context = make_context(tmp_path)
    swaps = f"Filename Type Size Used Priority\n{context.data_dir}/swapfile file 1024 0 -2\n"
    write(context.proc_root / "swaps", swaps)
    finding = only(host_checks.check_swap, context)
    assert finding.status is Status.PASS and "NVMe SSD" in finding.value


def test_no_swap_passes(tmp_path):
    assert only(host_checks.check_swap, make_context(tmp_path)).value == "no swap configured"


@pytest.mark.parametrize(("free_gib", "status"), [(1, Status.FAIL), (10, Status.WARN), (100, Status.PASS)])
def test_free_space_in_the_data_dir(tmp_path, free_gib, status):
    finding = only(host_checks.check_data_dir_space, make_context(tmp_path, data_free_bytes=free_gib * GIB))
    assert finding.status is status


def test_free_space_says_when_it_measured_only_the_working_directory(tmp_path):
    context = make_context(tmp_path)
    assert "working directory" not in only(host_checks.check_data_dir_space, context).value
    context.data_dir_chosen = False
    assert "(the working directory: --data-dir names your data set's folder)" in only(
        host_checks.check_data_dir_space, context).value


def test_data_dir_on_an_nvme_partition_is_found_through_sys(tmp_path):
    finding = only(host_checks.check_data_dir_disk, make_context(tmp_path))
    assert finding.status is Status.PASS
    assert finding.value.endswith("on nvme0n1: NVMe SSD")


def test_data_dir_on_a_rotating_disk_warns(tmp_path):
    context = make_context(tmp_path)
    add_block_disk(context.sys_root, "sdb", "8:16", rotational=True, partition="sdb1", partition_number="8:17")
    write(context.proc_root / "self" / "mountinfo", f"30 1 8:17 / {context.data_dir} rw - xfs /dev/sdb1 rw\n")
    finding = only(host_checks.check_data_dir_disk, context)
    assert finding.status is Status.WARN and "rotating disk" in finding.value


def test_data_dir_on_a_sata_ssd_through_device_mapper(tmp_path):
    context = make_context(tmp_path)
    add_block_disk(context.sys_root, "sdc", "8:32", rotational=False)
    dm = context.sys_root / "devices" / "virtual" / "block" / "dm-0"
    (dm / "slaves").mkdir(parents=True)
    (dm / "slaves" / "sdc").symlink_to(context.sys_root / "devices" / "pci0000:00" / "sdc")
    (context.sys_root / "dev" / "block" / "253:0").symlink_to(dm)
    mountinfo = f"30 1 253:0 / {context.data_dir} rw - ext4 /dev/mapper/vg-data rw\n"
    write(context.proc_root / "self" / "mountinfo", mountinfo)
    finding = only(host_checks.check_data_dir_disk, context)
    assert finding.status is Status.PASS and finding.value.endswith("on sdc: SATA/SAS SSD")


def test_data_dir_on_a_network_filesystem_is_not_applicable(tmp_path):
    context = make_context(tmp_path)
    write(context.proc_root / "self" / "mountinfo", f"30 1 0:51 / {context.data_dir} rw - nfs4 server:/export rw\n")
    finding = only(host_checks.check_data_dir_disk, context)
    assert finding.status is Status.NOT_APPLICABLE and "nfs4" in finding.value


def test_mountinfo_unescapes_spaces():
    (mount,) = parse_mountinfo("30 1 8:1 / /mnt/my\\040data rw - ext4 /dev/sda1 rw\n")
    assert mount.mount_point == "/mnt/my data" and mount.device_number == "8:1"


def _nvme(sys_root, name, current, maximum, width, max_width):
    device = sys_root / "class" / "nvme" / name / "device"
    write(device / "current_link_speed", current)
    write(device / "max_link_speed", maximum)
    write(device / "current_link_width", width)
    write(device / "max_link_width", max_width)


def test_nvme_links_below_their_maximum_warn(tmp_path):
    context = make_context(tmp_path)
    _nvme(context.sys_root, "nvme0", "16.0 GT/s PCIe", "16.0 GT/s PCIe", "4", "4")
    _nvme(context.sys_root, "nvme1", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "2", "4")
    findings = host_checks.check_nvme_links.run(context)
    assert [(f.subject, f.status) for f in findings] == [("nvme0", Status.PASS), ("nvme1", Status.WARN)]
    assert findings[1].value == "8.0 GT/s PCIe x2 (max 16.0 GT/s PCIe x4)"


def test_no_nvme_is_not_applicable(tmp_path):
    assert only(host_checks.check_nvme_links, make_context(tmp_path)).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(("cpus", "gpus", "status"), [(8, 4, Status.PASS), (6, 4, Status.WARN)])
def test_cpu_cores_per_gpu(tmp_path, cpus, gpus, status):
    nvml = fake_nvml(*(healthy_gpu_values(i) for i in range(gpus)))
    finding = only(host_checks.check_cpus_per_gpu, make_context(tmp_path, nvml_module=nvml, usable_cpus=cpus))
    assert finding.status is status


def test_powersave_governor_warns(tmp_path):
    context = make_context(tmp_path)
    cpu_root = context.sys_root / "devices" / "system" / "cpu"
    for index, governor in enumerate(["performance", "powersave", "powersave"]):
        write(cpu_root / f"cpu{index}" / "cpufreq" / "scaling_governor", governor + "\n")
    write(cpu_root / "cpu0" / "cpufreq" / "scaling_driver", "acpi-cpufreq\n")
    finding = only(host_checks.check_cpu_governor, context)
    assert finding.status is Status.WARN
    assert finding.value == "performance (1 CPUs), powersave (2 CPUs); acpi-cpufreq"


def test_no_cpufreq_is_not_applicable(tmp_path):
    assert only(host_checks.check_cpu_governor, make_context(tmp_path)).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(("size", "status"), [
    (64 * MIB, Status.FAIL), (512 * MIB, Status.WARN), (8 * GIB, Status.PASS),
])
def test_dev_shm_size(tmp_path, size, status):
    finding = only(host_checks.check_dev_shm, make_context(tmp_path, shm_total_bytes=size))
    assert finding.status is status
    if status is not Status.PASS:
        assert "--shm-size" in finding.fix


def test_host_checks_read_this_machine_without_crashing(tmp_path):
    from pth_top.doctor.context import DoctorContext
    from pth_top.sensors.nvml import NvmlSession

    context = DoctorContext(nvml=NvmlSession(module=no_driver_nvml()), data_dir=tmp_path)
    for check in checks_in(host_checks):
        for finding in check.run(context):
            assert finding.status is not Status.COULD_NOT_RUN, finding

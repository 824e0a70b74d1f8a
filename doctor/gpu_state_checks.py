"""Per-GPU checks of the card's state through NVML: memory errors, power, clocks, heat, its NVLinks and NUMA node.

Run after gpu_checks.py's driver, CUDA and PCIe checks (registry.all_checks keeps that order).
"""

from __future__ import annotations

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.gpu_checks import per_gpu, per_gpu_check
from pth_top.doctor.gpus import Gpu, sysfs_pci_address
from pth_top.doctor.model import Group, Verdict, failed, not_applicable, passed, warned
from pth_top.doctor.registry import doctor_check
from pth_top.doctor.storage import read_text
from pth_top.sensors.gpu import THROTTLE_REASON_FUNCTIONS
from pth_top.sensors.na import is_na
from pth_top.sensors.throttle import decode_throttle_reasons

TEMPERATURE_MARGIN_C = 10
POWER_LIMIT_TOLERANCE = 0.95
NVML_TEMPERATURE_GPU = 0
NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT = 0
NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT = 1
NVML_NVLINK_MAX_LINKS = 18
# Clock event ("throttle") reason bits, from nvml.h.
# HW slowdown, SW/HW thermal and HW power brake: the reasons that mean trouble, not policy.
HARMFUL_THROTTLE_BITS = 0x8 | 0x20 | 0x40 | 0x80


@per_gpu_check(
    "gpu.ecc", "ECC memory", Group.GPU,
    "Uncorrected ECC errors silently corrupt a training run or crash it with Xid 48/63/64.",
)
def check_ecc(context: DoctorContext, gpu: Gpu) -> Verdict:
    call = context.nvml.call
    modes = call("nvmlDeviceGetEccMode", gpu.handle)
    if is_na(modes):
        return not_applicable("no ECC on this GPU")
    current, pending = modes[0], modes[1]
    if current != 1:
        value = "ECC off" + (" (on after reboot)" if pending == 1 else "")
        return passed(value)
    volatile = call("nvmlDeviceGetTotalEccErrors", gpu.handle, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)
    lifetime = call("nvmlDeviceGetTotalEccErrors", gpu.handle, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC)
    volatile_count = 0 if is_na(volatile) else int(volatile)
    lifetime_count = 0 if is_na(lifetime) else int(lifetime)
    value = f"ECC on; uncorrected errors: {volatile_count} since boot, {lifetime_count} lifetime"
    if pending != current:
        value += " (off after reboot)"
    if volatile_count:
        return failed(
            value,
            f"Uncorrected memory errors corrupt results: drain the GPU, reset it (nvidia-smi -i {gpu.index} -r), "
            "and ask the vendor if they recur.",
        )
    if lifetime_count:
        return warned(value, "Watch for new errors (pth-top doctor); repeated ones mean an RMA.")
    return passed(value)


@per_gpu_check(
    "gpu.retired_memory", "Retired pages / remapped rows", Group.GPU,
    "The GPU takes bad memory out of service; a pending retirement needs a reset, and running out of "
    "spare rows means the card is failing.",
)
def check_retired_memory(context: DoctorContext, gpu: Gpu) -> Verdict:
    call = context.nvml.call
    rows = call("nvmlDeviceGetRemappedRows", gpu.handle)
    if not is_na(rows):
        corrected, uncorrected, pending, failure = (int(value) for value in rows[:4])
        value = f"remapped rows: {corrected} corrected, {uncorrected} uncorrected"
        if failure:
            return failed(value + ", remapping failed", "The GPU ran out of spare rows: contact the vendor (RMA).")
        if pending:
            return warned(
                value + ", remap pending",
                f"Reset the GPU (nvidia-smi -i {gpu.index} -r) or reboot to apply the remap.",
            )
        return passed(value)
    pending_status = call("nvmlDeviceGetRetiredPagesPendingStatus", gpu.handle)
    double_bit = call("nvmlDeviceGetRetiredPages", gpu.handle, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT)
    single_bit = call("nvmlDeviceGetRetiredPages", gpu.handle, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT)
    if is_na(pending_status) and is_na(double_bit):
        return not_applicable("no row remapping or page retirement on this GPU")
    retired = sum(len(pages) for pages in (double_bit, single_bit) if not is_na(pages))
    value = f"retired pages: {retired}"
    if not is_na(pending_status) and pending_status == 1:
        return warned(value + ", retirement pending", "Reboot (or reset the GPU) to retire the pending pages.")
    return passed(value)


@per_gpu_check(
    "gpu.power_limit", "Power limit", Group.GPU,
    "A power limit below the default lowers clocks under load; training runs proportionally slower.",
)
def check_power_limit(context: DoctorContext, gpu: Gpu) -> Verdict:
    call = context.nvml.call
    limit = call("nvmlDeviceGetPowerManagementLimit", gpu.handle)
    default = call("nvmlDeviceGetPowerManagementDefaultLimit", gpu.handle)
    constraints = call("nvmlDeviceGetPowerManagementLimitConstraints", gpu.handle)
    if is_na(limit) or is_na(default):
        return not_applicable("power limit not reported")
    value = f"{limit / 1000:.0f} W (default {default / 1000:.0f} W"
    if not is_na(constraints):
        value += f", max {constraints[1] / 1000:.0f} W"
    value += ")"
    if limit < default * POWER_LIMIT_TOLERANCE:
        return warned(
            value + ": capped below default",
            f"sudo nvidia-smi -i {gpu.index} -pl {default / 1000:.0f} "
            "(unless the cap was set on purpose for power or heat).",
        )
    return passed(value)


@per_gpu_check(
    "gpu.throttle", "Clock throttle reasons", Group.GPU,
    "Thermal or hardware slowdowns cut clocks hard (often by half); a power-brake signal points at the PSU. "
    "'idle' and 'power cap' under full load are normal.",
)
def check_throttle(context: DoctorContext, gpu: Gpu) -> Verdict:
    mask = context.nvml.call_first(THROTTLE_REASON_FUNCTIONS, gpu.handle)
    if is_na(mask):
        return not_applicable("throttle reasons not reported")
    reasons = decode_throttle_reasons(int(mask))
    value = ", ".join(reasons) if reasons else "none"
    if int(mask) & HARMFUL_THROTTLE_BITS:
        return warned(
            value, "Improve cooling/airflow, check the power cables and PSU, and watch temperature in the monitor.",
        )
    return passed(value)


@per_gpu_check(
    "gpu.temperature", "Temperature", Group.GPU,
    "At the slowdown threshold the GPU cuts its clocks; within a few degrees of it, a long run will throttle.",
)
def check_temperature(context: DoctorContext, gpu: Gpu) -> Verdict:
    temperature = context.nvml.call("nvmlDeviceGetTemperature", gpu.handle, NVML_TEMPERATURE_GPU)
    if is_na(temperature):
        return not_applicable("temperature not reported")
    slowdown = context.nvml.call("nvmlDeviceGetTemperatureThreshold", gpu.handle, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
    if is_na(slowdown):
        return passed(f"{temperature} °C (slowdown threshold not reported)")
    value = f"{temperature} °C (slowdown at {slowdown} °C)"
    fix = "Improve airflow (case fans, slot spacing, clean filters) or lower the power limit."
    if temperature >= slowdown:
        return failed(value, fix)
    if temperature >= slowdown - TEMPERATURE_MARGIN_C:
        return warned(value, fix)
    return passed(value)


def _nvlink(context: DoctorContext, gpu: Gpu) -> Verdict:
    present = active = 0
    for link in range(NVML_NVLINK_MAX_LINKS):
        state = context.nvml.call("nvmlDeviceGetNvLinkState", gpu.handle, link)
        if is_na(state):
            continue
        present += 1
        active += int(state == 1)
    if present == 0:
        return not_applicable("no NVLink (GPUs talk over PCIe)")
    value = f"{active} of {present} NVLink links active"
    if active < present:
        return warned(
            value, "Reseat the NVLink bridge (same-generation bridge, matching slot spacing); on HGX check "
            "nvidia-fabricmanager.",
        )
    return passed(value)


@doctor_check(
    "gpu.nvlink", "NVLink", Group.GPU,
    "Multi-GPU training exchanges gradients over NVLink when present; an inactive link falls back to "
    "PCIe, several times slower for all-reduce.",
    needs=("gpus",),
)
def check_nvlink(context: DoctorContext, gpus: list[Gpu]) -> list[Verdict]:
    if len(gpus) == 1:
        return [not_applicable("single GPU")]
    return per_gpu(context, gpus, _nvlink)


@per_gpu_check(
    "gpu.numa", "Nearest CPUs / NUMA node", Group.GPU,
    "On multi-socket machines, data loading threads on the far socket cross the inter-socket link; pin "
    "each rank near its GPU (numactl --cpunodebind=N, or torchrun --numa-binding on recent torch).",
)
def check_numa(context: DoctorContext, gpu: Gpu) -> Verdict:
    if gpu.pci_bus_id is None:
        return not_applicable("PCI bus id not reported")
    device_dir = context.sys_root / "bus" / "pci" / "devices" / sysfs_pci_address(gpu.pci_bus_id)
    node = read_text(device_dir / "numa_node")
    cpus = read_text(device_dir / "local_cpulist")
    if node is None and cpus is None:
        return not_applicable(f"{device_dir} not readable")
    node_text = "no NUMA node (single memory domain)" if node in (None, "-1") else f"NUMA node {node}"
    return passed(f"{node_text}, nearest CPUs {cpus or 'unknown'}")

"""GPU and driver checks through NVML (a guarded NvmlSession), plus the torch probe where torch matters.

The card's own state (memory errors, power, clocks, heat, links) is checked in gpu_state_checks.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from pth_top.doctor.context import DoctorContext
from pth_top.doctor.gpus import Gpu
from pth_top.doctor.model import (
    Group,
    Verdict,
    could_not_run,
    failed,
    not_applicable,
    passed,
    warned,
)
from pth_top.doctor.registry import Check, doctor_check
from pth_top.sensors.gpu import (
    CUDA_DRIVER_VERSION_FUNCTIONS,
    decode_text,
    format_cuda_version,
)
from pth_top.sensors.na import is_na
from pth_top.sensors.nvml import GpuLostError
from pth_top.units import MIB

SMALL_BAR1_BYTES = 256 * MIB
IDLE_UTILIZATION_PERCENT = 10
COMPUTE_MODES = {0: "Default", 1: "Exclusive Thread", 2: "Prohibited", 3: "Exclusive Process"}


GpuCheckFunction = Callable[[DoctorContext, Gpu], Verdict]


def per_gpu(context: DoctorContext, gpus: list[Gpu], check: GpuCheckFunction) -> list[Verdict]:
    """One verdict per GPU, labelled with it; n/a without GPUs; a lost GPU could not run."""
    if not gpus:
        return [not_applicable("no NVIDIA GPUs found")]
    verdicts = []
    for gpu in gpus:
        try:
            if gpu.handle is None:
                verdict = could_not_run("GPU stopped answering while it was listed")
            else:
                verdict = check(context, gpu)
        except GpuLostError as error:
            verdict = could_not_run(f"GPU stopped answering ({error})")
        verdicts.append(dataclasses.replace(verdict, subject=gpu.label))
    return verdicts


def per_gpu_check(
    check_id: str, title: str, group: Group, why: str, needs_torch: bool = False,
) -> Callable[[GpuCheckFunction], Check]:
    """Like `doctor_check`, for a function that judges one GPU: it runs once per GPU through `per_gpu`."""

    def decorate(function: GpuCheckFunction) -> Check:
        return doctor_check(check_id, title, group, why, needs_torch, needs=("gpus",))(
            lambda context, gpus: per_gpu(context, gpus, function)
        )

    return decorate


def parse_cuda_version(text: str) -> tuple[int, int] | None:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def _driver_cuda(context: DoctorContext) -> int | None:
    version = context.nvml.call_first(CUDA_DRIVER_VERSION_FUNCTIONS)
    return None if is_na(version) else int(version)


@doctor_check(
    "gpu.driver", "NVIDIA driver", Group.GPU,
    "The driver decides the newest CUDA version any program on this machine can use.",
    needs=("gpus",),
)
def check_driver(context: DoctorContext, gpus: list[Gpu]) -> Verdict:
    driver = context.nvml.call("nvmlSystemGetDriverVersion")
    cuda = _driver_cuda(context)
    value = (
        f"driver {'unknown' if is_na(driver) else decode_text(driver)}, "
        f"supports CUDA up to {'unknown' if cuda is None else format_cuda_version(cuda)}, {len(gpus)} GPU(s)"
    )
    if not gpus:
        return warned(value, "The driver is loaded but sees no GPU: check `nvidia-smi` and `dmesg | grep -i nvrm`.")
    return passed(value)


@doctor_check(
    "gpu.cuda_compat", "torch CUDA vs driver", Group.GPU,
    "A torch wheel built for a newer CUDA major version than the driver supports cannot use the GPU. "
    "Within one major version (12.x on a driver >= 525, 11.x on >= 450) minor-version compatibility "
    "usually works, but PTX JIT and some newer features need the newer driver.",
    needs=("gpus", "probe_or_na"),
)
def check_cuda_compatibility(context: DoctorContext, gpus: list[Gpu], probe_or_na: dict[str, Any]) -> Verdict:
    torch_cuda_text = probe_or_na.get("torch_cuda_version")
    if not torch_cuda_text:
        return not_applicable(f"torch {probe_or_na.get('torch_version')} is a CPU-only build (see torch CUDA)")
    driver_cuda = _driver_cuda(context)
    torch_cuda = parse_cuda_version(str(torch_cuda_text))
    if driver_cuda is None or torch_cuda is None:
        return not_applicable("driver CUDA version unknown")
    driver_major, driver_minor = driver_cuda // 1000, (driver_cuda % 1000) // 10
    value = f"torch built for CUDA {torch_cuda_text}, driver supports up to {format_cuda_version(driver_cuda)}"
    fix = (
        f"Update the NVIDIA driver, or install a torch wheel built for CUDA <= {format_cuda_version(driver_cuda)} "
        "(pick one on https://pytorch.org/get-started/locally: pip install torch --index-url "
        "https://download.pytorch.org/whl/cuXYZ)."
    )
    if torch_cuda[0] > driver_major:
        return failed(value, fix)
    if torch_cuda[0] == driver_major and torch_cuda[1] > driver_minor:
        return warned(value + " (relies on minor-version compatibility)", fix)
    return passed(value)


@doctor_check(
    "gpu.torch_sees_gpus", "GPUs visible to torch", Group.GPU,
    "torch only uses the GPUs CUDA shows it: CUDA_VISIBLE_DEVICES, a container started without all "
    "device mounts (--gpus), or a broken CUDA install hide GPUs that NVML still reports.",
    needs=("gpus", "probe_or_na"),
)
def check_torch_sees_gpus(context: DoctorContext, gpus: list[Gpu], probe_or_na: dict[str, Any]) -> Verdict:
    if not probe_or_na.get("torch_cuda_version"):
        return not_applicable("CPU-only torch build (see torch CUDA)")
    torch_count = int(probe_or_na.get("device_count") or 0)
    visible = probe_or_na.get("env", {}).get("CUDA_VISIBLE_DEVICES")
    value = f"torch sees {torch_count} of {len(gpus)} GPU(s)"
    if visible is not None:
        value += f" (CUDA_VISIBLE_DEVICES={visible})"
    if torch_count == len(gpus):
        return passed(value)
    if torch_count == 0:
        return failed(
            value,
            "Check CUDA_VISIBLE_DEVICES, the container's --gpus option, and that torch's CUDA matches the driver.",
        )
    if visible is not None and torch_count < len(gpus):
        return passed(value + ": restricted on purpose")
    return warned(value, "Check CUDA_VISIBLE_DEVICES and the container's device mounts (docker run --gpus all).")


def _load_link(context: DoctorContext, gpu: Gpu) -> dict[str, Any] | None:
    probe = context.torch_probe()
    load = probe.data.get("load") if probe.data else None
    if not load or gpu.pci_bus_id is None:
        return None
    for link in load.get("links") or []:
        if link and str(link.get("pci_bus_id", "")).upper() == gpu.pci_bus_id.upper():
            return link
    return None


@per_gpu_check(
    "gpu.pcie_link", "PCIe link", Group.GPU,
    "A GPU in a slower or narrower link than it supports (a x16 card in a x4 slot, Gen3 where Gen4 was "
    "possible) loads data and talks to other GPUs slower. Links drop speed at idle, so judge them under load.",
    needs_torch=True,
)
def check_pcie_link(context: DoctorContext, gpu: Gpu) -> Verdict:
    call = context.nvml.call
    max_generation = call("nvmlDeviceGetMaxPcieLinkGeneration", gpu.handle)
    max_width = call("nvmlDeviceGetMaxPcieLinkWidth", gpu.handle)
    gpu_max_generation = call("nvmlDeviceGetGpuMaxPcieLinkGeneration", gpu.handle)
    if is_na(max_generation) or is_na(max_width):
        return not_applicable("no PCIe link information (SXM or integrated GPU?)")
    loaded = _load_link(context, gpu)
    if loaded is not None:
        generation, width, when = loaded["generation"], loaded["width"], "under load"
    else:
        generation = call("nvmlDeviceGetCurrPcieLinkGeneration", gpu.handle)
        width = call("nvmlDeviceGetCurrPcieLinkWidth", gpu.handle)
        rates = call("nvmlDeviceGetUtilizationRates", gpu.handle)
        utilization = None if is_na(rates) else rates.gpu
        when = "busy" if utilization is not None and utilization >= IDLE_UTILIZATION_PERCENT else "idle"
    if is_na(generation) or is_na(width):
        return not_applicable("current PCIe link not reported")
    value = f"Gen{generation} x{width} {when} (max Gen{max_generation} x{max_width})"
    if not is_na(gpu_max_generation) and gpu_max_generation > max_generation:
        return warned(
            value + f"; the GPU supports Gen{gpu_max_generation}",
            "The slot or CPU limits the link: move the GPU to a slot wired to the CPU at the newer "
            "generation, and check BIOS PCIe speed settings.",
        )
    if generation >= max_generation and width >= max_width:
        if max_width < 16:
            return warned(
                value, "The link is narrower than x16: check the slot's lanes (board manual), risers, and lane "
                "sharing with M.2 slots.",
            )
        return passed(value)
    if when == "idle":
        return warned(
            value + ": idle links slow down to save power",
            "Re-check under load: pth-top doctor --load 5 (or l on the Doctor screen)",
        )
    return failed(
        value, "The link trained below its maximum under load: reseat the card, avoid risers/splitters, "
        "check BIOS PCIe settings and the slot's lane sharing.",
    )


@per_gpu_check(
    "gpu.bar1", "BAR1 size (Resizable BAR)", Group.GPU,
    "A 256 MiB BAR1 means the BIOS maps only a small window of GPU memory (Above 4G decoding / "
    "Resizable BAR off); multi-GPU systems may fail to map all GPUs, and peer transfers go through the window.",
)
def check_bar1(context: DoctorContext, gpu: Gpu) -> Verdict:
    memory = context.nvml.call("nvmlDeviceGetBAR1MemoryInfo", gpu.handle)
    if is_na(memory):
        return not_applicable("BAR1 size not reported")
    total = int(memory.bar1Total)
    value = f"BAR1 {total / MIB:,.0f} MiB"
    if total <= SMALL_BAR1_BYTES:
        return warned(
            value + ": Resizable BAR / Above 4G decoding is off",
            "Enable 'Above 4G Decoding' and 'Resizable BAR' in the BIOS (multi-GPU boards need Above 4G).",
        )
    return passed(value)


@per_gpu_check(
    "gpu.persistence", "Persistence mode", Group.GPU,
    "Without persistence mode the driver tears the GPU down when no process uses it: every new job "
    "pays seconds of initialisation, and clock and power settings are reset.",
)
def check_persistence(context: DoctorContext, gpu: Gpu) -> Verdict:
    mode = context.nvml.call("nvmlDeviceGetPersistenceMode", gpu.handle)
    if is_na(mode):
        return not_applicable("persistence mode not reported (Windows or unsupported)")
    if mode == 1:
        return passed("enabled")
    return warned("disabled", f"sudo nvidia-smi -i {gpu.index} -pm 1, or enable the nvidia-persistenced service.")


@per_gpu_check(
    "gpu.compute_mode", "Compute mode", Group.GPU,
    "Exclusive or prohibited compute modes make a second process (another rank, a notebook, a "
    "profiler) fail with 'CUDA-capable device is busy or unavailable'.",
)
def check_compute_mode(context: DoctorContext, gpu: Gpu) -> Verdict:
    mode = context.nvml.call("nvmlDeviceGetComputeMode", gpu.handle)
    if is_na(mode):
        return not_applicable("compute mode not reported")
    name = COMPUTE_MODES.get(int(mode), f"mode {mode}")
    if mode == 0:
        return passed(name)
    if mode == 2:
        return failed(name + ": no process may use this GPU", f"sudo nvidia-smi -i {gpu.index} -c DEFAULT")
    return warned(
        name + ": only one process may use this GPU",
        f"sudo nvidia-smi -i {gpu.index} -c DEFAULT (unless a scheduler set it on purpose)",
    )

"""The link a build gives its GPUs to the host: how many lanes each has and at which PCIe generation."""

from __future__ import annotations

from pth_top.configs.build import Build
from pth_top.configs.compat import (
    X4_SLOT_LANES,
    chipset_generation,
    chipset_slot_cards,
    gpu_lane_width,
    storage_lanes,
)


def lanes_per_gpu(build: Build) -> int:
    """The narrowest GPU's link: x4 where a card sits in the board's chipset slot, x8 where the CPU cannot give
    each of several GPUs 16 lanes beside the drives (compat's lanes note); a server or barebone wires its own."""
    gpu, cpu, storage = build.component("gpu"), build.component("cpu"), build.component("storage")
    if gpu is None or cpu is None or gpu.quantity < 2 or build.component("system") is not None:
        return 16
    if in_chipset_slot(build):
        return X4_SLOT_LANES
    drives = storage_lanes(str(storage.spec.get("interface", "")), storage.quantity) if storage is not None else 0
    return gpu_lane_width(int(cpu.spec.get("pcie_lanes_count", 0) or 0), gpu.quantity, drives)


def main_link(build: Build) -> tuple[int, int]:
    """The first card's link (lanes, PCIe generation; 0: unknown): a CPU slot, beside any card in a chipset slot."""
    gpu, cpu, board = build.component("gpu"), build.component("cpu"), build.component("motherboard")
    generation = min((generation for part in (cpu, board) if part is not None
                      and (generation := int(part.spec.get("pcie_generation", 0) or 0))), default=0)
    if gpu is None or cpu is None or board is None or gpu.quantity < 2 or build.component("system") is not None:
        return 16, generation
    storage = build.component("storage")
    drives = storage_lanes(str(storage.spec.get("interface", "")), storage.quantity) if storage is not None else 0
    on_cpu = gpu.quantity - chipset_slot_cards(int(board.spec.get("gpu_slots_count", 0) or 0), gpu.quantity)
    return gpu_lane_width(int(cpu.spec.get("pcie_lanes_count", 0) or 0), max(1, on_cpu), drives), generation


def in_chipset_slot(build: Build) -> bool:
    """Whether a card of a desktop build sits in its board's chipset slot (beyond the x8+ CPU slots)."""
    gpu, board = build.component("gpu"), build.component("motherboard")
    return gpu is not None and board is not None and build.component("system") is None and bool(
        chipset_slot_cards(int(board.spec.get("gpu_slots_count", 0) or 0), gpu.quantity))


def host_generation(build: Build) -> int:
    """The PCIe generation the host gives the GPUs: the lowest of the CPU's, the board's slots' and, where a card
    sits in a chipset slot, the chipset's; 0: unknown."""
    board = build.component("motherboard")
    given = [int(part.spec.get("pcie_generation", 0) or 0) for part in (build.component("cpu"), board)
             if part is not None]
    given += [chipset_generation(board.spec)] if board is not None and in_chipset_slot(build) else []
    return min((generation for generation in given if generation), default=0)

"""The link a build gives its GPUs to the host: how many lanes each has and at which PCIe generation."""

from __future__ import annotations

from typing import Protocol

from pth_top.configs.build import Component
from pth_top.configs.compat import (
    X4_SLOT_LANES,
    chipset_generation,
    chipset_slot_cards,
    gpu_lane_width,
    has_chipset,
    storage_lanes,
)
from pth_top.configs.parts import Part


class Components(Protocol):
    """A build, or an assembly's chosen parts: what the link rules read."""

    def component(self, role: str) -> Component | None: ...


class ChosenParts:
    """An assembly's chosen parts as a build's components, so a build is ranked at the link it will have."""

    def __init__(self, chosen: dict[str, tuple[Part, int]]) -> None:
        self._chosen = chosen

    def component(self, role: str) -> Component | None:
        found = self._chosen.get(role)
        return None if found is None else Component(role, found[0].id, found[0].name, found[1], found[0].price_cny,
                                                    found[0].spec)


def lanes_per_gpu(build: Components) -> int:
    """The narrowest GPU's link: x4 where a card sits in the board's chipset slot, x8 where the CPU cannot give
    each of several GPUs 16 lanes beside the drives (compat's lanes note); a server or barebone wires its own."""
    gpu = build.component("gpu")
    if not _several_on_a_desktop(build) or gpu is None:
        return 16
    return X4_SLOT_LANES if in_chipset_slot(build) else _cpu_slot_lanes(build, gpu.quantity)


def main_link(build: Components) -> tuple[int, int]:
    """The first card's link (lanes, PCIe generation; 0: unknown): a CPU slot, beside any card in a chipset slot."""
    gpu, board = build.component("gpu"), build.component("motherboard")
    generation = _platform_generation(build)
    if not _several_on_a_desktop(build) or gpu is None or board is None:
        return 16, generation
    on_cpu = gpu.quantity - chipset_slot_cards(int(board.spec.get("gpu_slots_count", 0) or 0), gpu.quantity)
    return _cpu_slot_lanes(build, max(1, on_cpu)), generation


def _several_on_a_desktop(build: Components) -> bool:
    gpu = build.component("gpu")
    return gpu is not None and gpu.quantity > 1 and build.component("cpu") is not None \
        and build.component("system") is None


def _cpu_slot_lanes(build: Components, cards: int) -> int:
    """Each of `cards` GPUs' lanes from the CPU, beside its drives."""
    cpu, storage, board = build.component("cpu"), build.component("storage"), build.component("motherboard")
    drives = storage_lanes(str(storage.spec.get("interface", "")), storage.quantity,
                           has_chipset(board.spec if board is not None else None)) if storage is not None else 0
    return gpu_lane_width(int(cpu.spec.get("pcie_lanes_count", 0) or 0) if cpu else 0, cards, drives)


def _platform_generation(build: Components) -> int:
    """The lower of the CPU's and the board's slots' PCIe generations; 0: unknown."""
    given = [int(part.spec.get("pcie_generation", 0) or 0) for part in (build.component("cpu"),
             build.component("motherboard")) if part is not None]
    return min((generation for generation in given if generation), default=0)


def in_chipset_slot(build: Components) -> bool:
    """Whether a card of a desktop build sits in its board's chipset slot (beyond the x8+ CPU slots)."""
    gpu, board = build.component("gpu"), build.component("motherboard")
    return gpu is not None and board is not None and build.component("system") is None and bool(
        chipset_slot_cards(int(board.spec.get("gpu_slots_count", 0) or 0), gpu.quantity))


def host_generation(build: Components) -> int:
    """The PCIe generation the host gives the GPUs: the lowest of the CPU's, the board's slots' and, where a card
    sits in a chipset slot, the chipset's; 0: unknown."""
    board, generation = build.component("motherboard"), _platform_generation(build)
    if board is None or not in_chipset_slot(build):
        return generation
    return min((each for each in (generation, chipset_generation(board.spec)) if each), default=0)

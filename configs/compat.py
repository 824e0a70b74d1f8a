"""Compatibility checks between chosen parts: socket, memory, slots, PCIe lanes, NVLink, power leads."""

from __future__ import annotations

import math
from typing import Mapping

from pth_top.configs.part_types import HOST_FREE_FORMS
from pth_top.configs.parts import Part

# role -> (part, quantity)
Chosen = Mapping[str, tuple[Part, int]]


def storage_lanes(interface: str, drives_count: int, chipset: bool = False) -> int:
    """CPU lanes the drives take: x4 an NVMe drive, x8 a SAS HBA; SATA hangs off the chipset. On a board with a
    chipset one NVMe drive is on the CPU's lanes and the others on the chipset's M.2 slots (a B650 or Z790 board's
    second and later; audit CF59: two NVMe drives beside two GPUs at x8 turned a Ryzen 7 7700X down for an EPYC)."""
    if interface == "nvme":
        return 4 * min(drives_count, 1) if chipset else 4 * drives_count
    return 8 if interface == "sas" else 0


def has_chipset(board: Part | dict | None) -> bool:
    """Whether a board has a chipset that hangs drives and slots off its own lanes (an EPYC's SoC board does not)."""
    return board is not None and board.get("chipset", "") not in ("", "SoC")


def gpu_lane_width(cpu_lanes: int, gpu_count: int, drive_lanes: int) -> int:
    """Each GPU's link width: x16 while the CPU's lanes give every GPU 16 beside the drives, else x8."""
    return 16 if 16 * gpu_count + drive_lanes <= cpu_lanes else 8


# The lanes a board's gpu_slots_count slots give a card at least, and its gpu_slots_x4_count ones (the catalog's).
SLOT_LANES = 8
X4_SLOT_LANES = 4
# A chipset's lanes are PCIe 4.0 on today's desktop platforms (AMD 600/800-series, Intel 700/800-series chipsets).
CHIPSET_PCIE_GENERATION = 4


def chipset_generation(board: Part | dict) -> int:
    """The PCIe generation of the board's chipset slots: its own where listed (B550: Gen3), else the platform's."""
    return int(board.get("chipset_pcie_generation", 0) or 0) or CHIPSET_PCIE_GENERATION


def chipset_slot_cards(gpu_slots_count: int, gpu_count: int) -> int:
    """Cards beyond a board's gpu_slots_count x8+ CPU slots: they sit in its chipset's x4 slots."""
    return max(0, gpu_count - gpu_slots_count)


def gpu_slots_at(board: Part, link_lanes: int) -> int:
    """The board's GPU slots that give a card at least `link_lanes` lanes: its x8+ CPU slots, and at x4 or less also
    the x4 slots (a chipset's) it lists."""
    x8 = int(board["gpu_slots_count"])
    return max(x8, int(board.get("gpu_slots_x4_count", 0))) if link_lanes <= X4_SLOT_LANES else x8


def runs_on(cpu: Part, board: Part) -> bool:
    """The CPU works in the board: the same socket, and a chipset it supports where it names them."""
    return cpu["socket"] == board["socket"] and (not cpu.get("chipsets") or board["chipset"] in cpu["chipsets"])


# A PCIe 8-pin lead carries 150 W: a 16-pin card's boxed adapter takes that many (an RTX 4090's 3 for 450 W, a 5090's
# 4 for 575 W); a data-centre card ships with none.
PCIE_8PIN_W = 150.0


def adapter_pcie_8pin_count(gpu: Part) -> int:
    """The PCIe 8-pin leads the adapter in a 16-pin card's box takes; 0 where none comes (a data-centre card)."""
    if gpu["power_connector"] != "12vhpwr" or gpu["form"] == "datacenter":
        return 0
    return math.ceil(gpu["board_power_w"] / PCIE_8PIN_W)


def compatibility_problems(chosen: Chosen, psu_required_w: float = 0.0,
                           link_lanes: int = SLOT_LANES) -> list[str]:
    """Everything that would not fit or work together, one sentence each (empty when all is well); `link_lanes`:
    the PCIe lanes each GPU needs for the job."""
    blockers, notes = _checks(chosen, psu_required_w, link_lanes)
    return blockers + notes


def compatibility_blockers(chosen: Chosen, psu_required_w: float = 0.0,
                           link_lanes: int = SLOT_LANES) -> list[str]:
    """Only what breaks the build (socket, memory, slots, lanes below the job's, leads, PSU size, cooler, M.2)."""
    return _checks(chosen, psu_required_w, link_lanes)[0]


def _checks(chosen: Chosen, psu_required_w: float, link_lanes: int) -> tuple[list[str], list[str]]:
    problems: list[str] = []  # blockers
    notes: list[str] = []
    gpu, gpu_count = chosen.get("gpu", (None, 0))
    cpu, _ = chosen.get("cpu", (None, 0))
    board, _ = chosen.get("motherboard", (None, 0))
    ram, ram_qty = chosen.get("memory_kit", (None, 0))
    storage, storage_qty = chosen.get("storage", (None, 0))
    psu, psu_qty = chosen.get("psu", (None, 0))
    cooler, _ = chosen.get("cooler", (None, 0))
    if cpu and board:
        if cpu["socket"] != board["socket"]:
            problems.append(f"socket: {cpu.name} is {cpu['socket']}, {board.name} is {board['socket']}")
        elif not runs_on(cpu, board):
            problems.append(f"chipset: {cpu.name} runs on {', '.join(cpu['chipsets'])} boards, {board.name} is "
                            f"{board['chipset']}")
        if board["memory_type"] not in cpu["memory_types"]:
            problems.append(
                f"memory: {cpu.name} supports {'/'.join(cpu['memory_types'])}, board takes {board['memory_type']}"
            )
        if board["cpu_sockets_count"] > 1:
            notes.append(
                f"{board.name} is a {board['cpu_sockets_count']}-socket board: with one CPU, the slots and DIMMs wired "
                "to the empty socket do not work"
            )
    if ram and board:
        if ram["memory_type"] != board["memory_type"]:
            problems.append(f"RAM is {ram['memory_type']}, {board.name} takes {board['memory_type']}")
        if ram["registered"] != board["memory_registered"]:
            problems.append(
                f"RAM is {'registered (RDIMM)' if ram['registered'] else 'unbuffered (UDIMM)'}, {board.name} needs "
                f"{'RDIMM' if board['memory_registered'] else 'UDIMM'}"
            )
        if ram["modules_count"] * ram_qty > board["dimm_slots_count"]:
            problems.append(
                f"{ram['modules_count'] * ram_qty} DIMMs but {board.name} has {board['dimm_slots_count']} slots"
            )
        if ram["capacity_gib"] * ram_qty > board["max_memory_gib"]:
            problems.append(
                f"{ram['capacity_gib'] * ram_qty} GiB RAM exceeds {board.name}'s {board['max_memory_gib']} GiB"
            )
        if ram["ecc"] and not board["memory_ecc"]:
            problems.append(f"ECC RAM on {board.name}, which does not support ECC")
    if gpu and board and gpu["form"] not in HOST_FREE_FORMS:
        if gpu_count > (slots := gpu_slots_at(board, link_lanes)):
            problems.append(f"{gpu_count} GPUs but {board.name} has {slots} x{link_lanes}-or-better GPU slot(s)")
    system, _ = chosen.get("system", (None, 0))
    # A barebone wires its GPU slots itself (the G292-Z20 through PCIe switches): the CPU lane sum does not apply.
    if gpu and cpu and gpu["form"] not in HOST_FREE_FORMS and not (system and system.get("barebone", False)):
        drive_lanes = storage_lanes(storage["interface"] if storage else "", storage_qty, has_chipset(board))
        full = 16 * gpu_count + drive_lanes
        minimum = link_lanes * gpu_count + drive_lanes
        lanes = cpu["pcie_lanes_count"]
        if minimum > lanes:
            problems.append(
                f"PCIe lanes: {gpu_count} GPUs need >= x{link_lanes} each plus {drive_lanes} for storage = {minimum}, "
                f"{cpu.name} has {lanes}"
            )
        elif board is not None and link_lanes <= X4_SLOT_LANES and (
                chipset := chipset_slot_cards(int(board["gpu_slots_count"]), gpu_count)):
            notes.append(f"PCIe lanes: {gpu_count - chipset} GPU(s) at x8 from {cpu.name}, {chipset} at x4 "
                         f"(PCIe {chipset_generation(board)}.0) from the chipset")
        elif gpu_lane_width(lanes, gpu_count, drive_lanes) < 16 and gpu_count > 1:
            # An SoC platform (EPYC) has no chipset: every lane comes from the CPU.
            soc = board is not None and board.get("chipset", "") == "SoC"
            notes.append(
                f"PCIe lanes: {gpu_count} GPUs at x16 + {drive_lanes} for storage = {full} > {cpu.name}'s "
                f"{lanes}: " + ("some GPUs run at x8 (no chipset: every lane comes from the CPU)" if soc else
                                "GPUs run at x8 or storage hangs off the chipset")
            )
    # GPUs that take turns on whole layers (x4 links) pass one token's activations: NVLink would not change the speed.
    if gpu and gpu_count > 1 and link_lanes > X4_SLOT_LANES:
        if gpu["nvlink"] == "pairs" and gpu_count > 2:
            pairs = gpu_count // 2
            notes.append(
                f"NVLink on {gpu.name} bridges pairs only: {gpu_count} cards form {pairs} NVLink "
                f"pair{'s' if pairs > 1 else ''} (bridges not in the parts or the price); 4-8-way all-to-all NVLink "
                "needs SXM/HGX"
            )
        elif gpu["nvlink"] == "pairs":
            notes.append(f"NVLink: a bridge can join the two {gpu.name} (sold apart, matching their slot spacing): it "
                         "is not in the parts or the price, so the speed is timed over PCIe")
        elif gpu["nvlink"] == "none":
            notes.append(f"{gpu.name} has no NVLink: GPU-to-GPU traffic goes over PCIe")
    if psu and gpu and gpu["form"] not in (*HOST_FREE_FORMS, "sxm", "oam"):
        connectors = gpu["power_connector_count"] * gpu_count
        if gpu["power_connector"] == "12vhpwr":
            # Cards beyond the native leads take the adapter in their box, where one comes (power.adapted_cards).
            native = psu["connectors_12vhpwr_count"] * psu_qty
            adapted, per_card = max(0, gpu_count - native), adapter_pcie_8pin_count(gpu)
            if psu["connectors_12vhpwr_count"] < 1 or adapted and not per_card \
                    or psu["pcie_8pin_count"] * psu_qty < per_card * adapted:
                adapter = (f"a card with no native lead takes the adapter in its box from {per_card} separate 8-pin "
                           "leads") if per_card else "a data-centre card comes with no adapter: a native lead each"
                problems.append(
                    f"power: {gpu_count} GPU(s) take 12VHPWR/12V-2x6 but {psu.name} x{psu_qty} "
                    f"has {native} native lead(s) and {psu['pcie_8pin_count'] * psu_qty} PCIe 8-pin ({adapter})"
                )
        else:
            # A data-centre card's CPU 8-pin input takes two PCIe 8-pin leads through NVIDIA's adapter.
            leads = connectors * (2 if gpu["power_connector"] == "eps8pin" else 1)
            if psu["pcie_8pin_count"] * psu_qty < leads:
                problems.append(
                    f"power: GPUs need {leads} PCIe 8-pin leads, "
                    f"{psu.name} x{psu_qty} has {psu['pcie_8pin_count'] * psu_qty}"
                )
        eps_needed = cpu["eps_8pin_count"] if cpu else 0
        if psu["eps_8pin_count"] * psu_qty < eps_needed:
            problems.append(
                f"power: the CPU needs {eps_needed} EPS 8-pin leads, "
                f"{psu.name} x{psu_qty} has {psu['eps_8pin_count'] * psu_qty}"
            )
    if psu and psu_required_w and psu["capacity_w"] * psu_qty < psu_required_w:
        problems.append(f"PSU {psu['capacity_w'] * psu_qty:g} W is below the {psu_required_w:,.0f} W required")
    if cooler and cpu:
        if cpu["socket"] not in cooler["sockets"]:
            problems.append(f"{cooler.name} does not fit socket {cpu['socket']}")
        if cooler["max_cpu_power_w"] < cpu["turbo_power_w"]:
            problems.append(
                f"{cooler.name} handles {cooler['max_cpu_power_w']} W, {cpu.name} draws up to {cpu['turbo_power_w']} W"
            )
    if storage:
        if storage["interface"] == "sas":
            notes.append(f"{storage.name} is a SAS drive, not NVMe: it needs a SAS HBA (an x8 PCIe card)")
        if board and storage["form_factor"] == "m2" and storage_qty > board["m2_slots_count"]:
            problems.append(f"{storage_qty} M.2 drives but {board.name} has {board['m2_slots_count']} M.2 slots")
        if board and storage["form_factor"] == "u2" and not board["memory_registered"]:
            notes.append(f"{storage.name} is U.2: a desktop board needs an adapter card")
    if gpu and gpu["cooling"] == "passive" and gpu["form"] == "datacenter" and "gpu_duct" not in chosen \
            and "system" not in chosen:
        notes.append(
            f"{gpu.name} is passively cooled: it needs a server chassis with high-pressure fans, not a desktop case"
        )
    if gpu and gpu["software"] == "rocm":
        notes.append(f"{gpu.name} runs PyTorch through ROCm, not CUDA")
    return problems, notes

"""The build's drives: the storage class and capacity floors (configs/rules.py), an edge module's own slot."""

from __future__ import annotations

import math

from pth_top.configs.assembly import Assembly, Context, offered, part_price, rank, run_fits
from pth_top.configs.market import money
from pth_top.configs.memory_terms import WEIGHT_BYTES_BY_PRECISION
from pth_top.configs.parts import Part
from pth_top.configs.rules import Floor, storage_capacity_gb, storage_class
from pth_top.configs.speed import duration


def _edge_storage_fits(drive: Part, module: Part) -> bool:
    """A module without PCIe (Raspberry Pi 4) boots from microSD and adds a USB SSD; others take M.2 NVMe, or a
    microSD card where the carrier has the slot."""
    if module["pcie_generation"] == 0:
        return drive["interface"] in ("usb", "sd")
    return drive["form_factor"] == "m2" or (drive["interface"] == "sd" and bool(module.get("microsd_slot")))


def load_s(weights_gb: float, drive: Part) -> float:
    """Seconds to read the weights once from the drive at its sequential read rate."""
    return weights_gb * 1000 / max(1, drive["seq_read_mb_per_s"])


def _edge_nvme_line(ctx: Context, drive: Part, candidates: list[tuple[float, Part, int]], weights_gb: float,
                    stored: str) -> str:
    """On a module with an M.2 slot, where the chosen card reads the weights slower than the rules allow: the NVMe
    drive that would load them in seconds, and its price (advice: the budget ranks the modules, not this)."""
    limit = ctx.rules.storage.edge_sd_max_load_s
    nvme = min((item for item in candidates if item[1]["interface"] == "nvme"), key=lambda item: item[0], default=None)
    if drive["interface"] == "nvme" or nvme is None or load_s(weights_gb, drive) <= limit:
        return ""
    price, fast, _ = nvme
    return (f"the {stored} weights, {weights_gb:,.1f} GB, take over {limit} s to read from this card (rules.toml "
            f"storage.edge_sd_max_load_s): the {fast.name} in the M.2 slot, {money(price, ctx.currency, ctx.rules)}, "
            f"reads them in ~{duration(load_s(weights_gb, fast))}")


def _weights_gb(ctx: Context, precision: str) -> float:
    """The weights' GB on disk: their published files (workload.weights_file_gb), else at `precision`."""
    return ctx.shape.weights_file_bytes / 1e9 or \
        ctx.shape.parameters * WEIGHT_BYTES_BY_PRECISION.get(precision, 2) / 1e9


def choose_storage(ctx: Context, asm: Assembly, board: Part | None, edge_module: Part | None = None) -> None:
    """The drives for the storage floor: NVMe when the weights are large enough that load time matters."""
    dataset = ctx.answers.data.dataset_size_gb
    klass, class_line = storage_class(dataset, ctx.rules)
    task = ctx.answers.task
    capacity = storage_capacity_gb(dataset, ctx.shape.parameters, ctx.rules, mode=task.mode, precision=task.precision,
                                   method=task.method, run_fits=run_fits(ctx, asm))
    if edge_module is not None:  # the PC floor (OS and tools, rules.toml's min_capacity_gb) does not apply to a module
        weights_gb = _weights_gb(ctx, task.precision)
        capacity = Floor(dataset + weights_gb, f"edge storage >= dataset {dataset:g} GB + {task.precision} weights "
                                               f"{weights_gb:,.1f} GB = {dataset + weights_gb:,.1f} GB, besides the OS")
        class_line = "edge module: storage by the module's own interface"
        included = edge_module.get("included_storage_gb", 0)
        if included and included >= capacity.value:  # a kit's own drive (audit XR11: one more was bought)
            asm.reasons["gpu"].append(f"{edge_module.name} ships with a {included:,.0f} GB drive, "
                                      f"no drive bought: {capacity.reason}")
            return
    stored = task.precision if task.mode == "inference" else "bf16"
    weights_gb = _weights_gb(ctx, stored)
    if klass == "any_ssd" and weights_gb > ctx.rules.storage.sata_max_dataset_gb and edge_module is None:
        klass, class_line = "nvme", (
            f"the {stored} weights are {weights_gb:,.0f} GB, over {ctx.rules.storage.sata_max_dataset_gb} GB: NVMe "
            f">= {ctx.rules.storage.nvme_min_read_mb_per_s} MB/s, so loading them takes seconds, not minutes (a SATA "
            "SSD reads ~550 MB/s)")
    server_board = board is not None and board["memory_registered"]
    candidates = []
    for drive in offered(ctx, "storage"):
        if drive["media"] != "ssd" or drive["interface"] == "sas":
            continue
        if edge_module is not None:
            if not _edge_storage_fits(drive, edge_module):
                continue
        elif drive["interface"] in ("usb", "sd") or (drive["form_factor"] == "u2" and not server_board):
            continue
        fast_nvme = (
            drive["interface"] == "nvme"
            and drive["seq_read_mb_per_s"] >= ctx.rules.storage.nvme_min_read_mb_per_s
        )
        if klass != "any_ssd" and not fast_nvme and edge_module is None:
            continue
        quantity = max(2 if klass == "nvme_raid0" else 1, math.ceil(capacity.value / drive["capacity_gb"]))
        if board is not None and drive["form_factor"] == "m2" and quantity > board["m2_slots_count"]:
            continue
        if edge_module is not None and quantity > 1:
            continue
        candidates.append((part_price(ctx, drive) * quantity, drive, quantity))
    drive, quantity = rank(ctx, asm, "storage", candidates, offered(ctx, "storage"), class_line)
    if quantity * drive["capacity_gb"] < capacity.value:
        asm.unsatisfied_add(f"storage {quantity} x {drive['capacity_gb']:,.0f} GB = "
                            f"{quantity * drive['capacity_gb']:,.0f} GB is below the floor: {capacity.reason}")
    lines = [class_line, capacity.reason,
             f"{quantity} x {drive['capacity_gb']:,.0f} GB {drive['interface'].upper()}, "
             f"{drive['seq_read_mb_per_s']:,} MB/s read"]
    if weights_gb >= 1 and drive["seq_read_mb_per_s"]:
        lines.append(f"load time: the {stored} weights, {weights_gb:,.0f} GB / {drive['seq_read_mb_per_s']:,} MB/s = "
                     f"~{duration(load_s(weights_gb, drive))} from this drive (sequential read)")
    if edge_module is not None and edge_module["pcie_generation"] == 0:
        lines.insert(0, f"{edge_module.name} has no PCIe/M.2 slot: storage is its microSD slot or a USB 3.0 SSD")
    elif edge_module is not None:
        card = " or a microSD card in the module's slot" if edge_module.get("microsd_slot") else ""
        lines.insert(0, f"{edge_module.name}: M.2 NVMe on the carrier board{card}")
        nvme_line = _edge_nvme_line(ctx, drive, candidates, weights_gb, stored)
        if nvme_line:
            lines.append(nvme_line)
    lines.extend(drive.notes_for(ctx.market))
    asm.reasons["storage"] = lines

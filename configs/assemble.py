"""The parts around a chosen GPU: CPU, board, RAM, storage, cooler and PSU, each the cheapest meeting the rules."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from pth_top.configs import memory as mem
from pth_top.configs.answers import Answers
from pth_top.configs.build import ROLE_LABELS
from pth_top.configs.parts import Catalog, Part
from pth_top.configs.rules import (
    Rules,
    case_fans_count,
    cpu_floor,
    power_estimate,
    ram_floor_gib,
    standard_psu_size,
    storage_capacity_gb,
    storage_class,
    wall_draw_w,
)
from pth_top.units import GIB

PC_GPU_FORMS = ("consumer", "workstation", "datacenter")


@dataclass
class Context:
    answers: Answers
    catalog: Catalog
    rules: Rules
    pins: Mapping[str, tuple[str, int]]
    shape: mem.ModelShape
    shape_line: str
    memory: mem.MemoryBreakdown
    budget_cny: float
    tier: str
    tier_line: str
    gpu_count: int
    edge: bool


@dataclass
class Assembly:
    chosen: dict[str, tuple[Part, int]] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)
    alternatives: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unit_prices: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    power_lines: tuple[str, ...] = ()
    sustained_w: float = 0.0
    peak_w: float = 0.0
    psu_required_w: float = 0.0
    psu_capacity_w: float = 0.0
    wall_w: float = 0.0
    heat_line: str = ""

    @property
    def total_cny(self) -> float:
        return sum(self.unit_prices[role] * qty for role, (_, qty) in self.chosen.items())



def gpu_price(ctx: Context, gpu: Part) -> float:
    if ctx.answers.budget.condition == "used" and gpu["form"] == "consumer":
        return gpu.price_cny * ctx.rules.budget.used_gpu_price_fraction
    return gpu.price_cny


def pinned_part(ctx: Context, role: str) -> Part:
    part_id = ctx.pins[role][0]
    part = ctx.catalog.get(part_id)
    if part is None:
        raise ValueError(f"pinned {ROLE_LABELS[role]} {part_id!r} is not in the catalog")
    return part


def assemble(ctx: Context, gpu: Part) -> Assembly:
    """Every other part for this GPU, cheapest that meets each rule (or the pinned one)."""
    asm = Assembly()
    asm.chosen["gpu"] = (gpu, ctx.gpu_count)
    asm.unit_prices["gpu"] = gpu_price(ctx, gpu)
    if ctx.edge:
        _choose_storage(ctx, asm, board=None)
        sustained = gpu["board_power_w"] + ctx.rules.power.per_drive_w
        asm.sustained_w, asm.peak_w = sustained, gpu["transient_peak_w"] + ctx.rules.power.per_drive_w
        asm.psu_required_w = asm.psu_capacity_w = 0.0
        asm.wall_w = sustained / 0.9
        asm.power_lines = (
            f"module power up to {gpu['board_power_w']:g} W from its own supply; no PC PSU, CPU, RAM or board to buy",
        )
        asm.heat_line = "cooling: the module's own fan/heatsink; keep its intake clear"
        return asm
    need_ecc = ctx.tier == "datacenter"
    total_gpu_gib = gpu["memory_gib"] * ctx.gpu_count
    host_weights_gib = ctx.shape.parameters * 2 / GIB if ctx.answers.task.mode == "inference" else 0.0
    ram_floor = ram_floor_gib(ctx.answers.data.dataset_size_gb, total_gpu_gib, host_weights_gib, ctx.rules)
    cpu = _choose_cpu(ctx, asm, need_ecc, ram_floor.value)
    board = _choose_board(ctx, asm, cpu, need_ecc, ram_floor.value)
    _choose_ram(ctx, asm, board, need_ecc, ram_floor)
    _choose_storage(ctx, asm, board)
    cooler = _choose_cooler(ctx, asm, cpu)
    _choose_psu(ctx, asm, gpu, cpu, cooler)
    return asm


def _rank(ctx: Context, asm: Assembly, role: str, candidates: list[tuple[float, Part, int]], fallback: list[Part],
          why_none: str, closest=lambda part: (part.price_cny, part.id)) -> tuple[Part, int]:
    """Pick the pinned part or the cheapest candidate; remember the order for swaps.

    When nothing qualifies, the `fallback` part that sorts first by `closest` is taken, with a warning.
    """
    fallback = sorted(fallback, key=closest)
    candidates.sort(key=lambda item: (item[0], item[1].id))
    order = [part.id for _, part, _ in candidates]
    pinned = ctx.pins.get(role)
    if pinned:
        part = pinned_part(ctx, role)
        quantity = pinned[1] or next((qty for _, p, qty in candidates if p.id == part.id), 1)
        if part.id not in order:
            asm.warnings.append(f"{ROLE_LABELS[role]} {part.name} does not meet the rules here ({why_none})")
            order.insert(0, part.id)
    elif candidates:
        _, part, quantity = candidates[0]
    else:
        part, quantity = fallback[0], 1
        asm.warnings.append(f"no {ROLE_LABELS[role]} in the catalog meets: {why_none}; picked the closest")
        order = [p.id for p in fallback]
    asm.chosen[role] = (part, quantity)
    asm.unit_prices[role] = part.price_cny
    asm.alternatives[role] = tuple(order)
    return part, quantity


def _boards_for(ctx: Context, cpu: Part, need_ecc: bool, ram_floor_gib: float) -> list[Part]:
    return [
        board for board in ctx.catalog.of_kind("motherboard")
        if board["socket"] == cpu["socket"] and board["memory_type"] in cpu["memory_types"]
        and board["gpu_slots_count"] >= ctx.gpu_count and (board["memory_ecc"] or not need_ecc)
        and board["max_memory_gib"] >= ram_floor_gib
    ]


def _choose_cpu(ctx: Context, asm: Assembly, need_ecc: bool, ram_floor: float) -> Part:
    a = ctx.answers
    complex_work = (
        ctx.gpu_count > 1 or a.data.dataset_size_gb >= ctx.rules.ram.large_dataset_gb
        or a.scenario in ("team_training", "inference_server") or ctx.shape.parameters >= 1e9
    )
    cores, threads, clock, reason = cpu_floor(ctx.gpu_count, complex_work, ctx.rules)
    lanes = ctx.rules.cpu.min_lanes_per_gpu_count * ctx.gpu_count
    candidates = [
        (cpu.price_cny, cpu, 1) for cpu in ctx.catalog.of_kind("cpu")
        if cpu["cores_count"] >= cores and cpu["threads_count"] >= threads and cpu["boost_clock_ghz"] >= clock
        and cpu["l3_cache_mb"] >= ctx.rules.cpu.min_l3_cache_mb and cpu["pcie_lanes_count"] >= lanes
        and (cpu["ecc"] or not need_ecc) and _boards_for(ctx, cpu, need_ecc, ram_floor)
    ]
    cpu, _ = _rank(ctx, asm, "cpu", candidates, ctx.catalog.of_kind("cpu"), reason)
    lines = [
        reason,
        f"PCIe: {ctx.gpu_count} GPU(s) need >= {lanes} CPU lanes at x8; {cpu.name} has {cpu['pcie_lanes_count']}",
    ]
    if need_ecc:
        lines.append("ECC memory needs a workstation/server platform (guide §6.1 high tier, §8.1)")
    lines.append(
        "cheapest CPU meeting these; the GPU does the training, the CPU feeds it (guide §9.2: upgrade the GPU first)"
    )
    lines.extend(cpu.notes)
    asm.reasons["cpu"] = lines
    return cpu


def _choose_board(ctx: Context, asm: Assembly, cpu: Part, need_ecc: bool, ram_floor: float) -> Part:
    candidates = [(board.price_cny, board, 1) for board in _boards_for(ctx, cpu, need_ecc, ram_floor)]
    all_boards = ctx.catalog.of_kind("motherboard")
    same_socket = [board for board in all_boards if board["socket"] == cpu["socket"]] or all_boards
    board, _ = _rank(ctx, asm, "motherboard", candidates, same_socket,
                     f"socket {cpu['socket']}, {ctx.gpu_count} GPU slot(s), {'ECC' if need_ecc else 'any'} memory")
    lines = [
        f"socket {cpu['socket']} and {board['memory_type']} match the CPU; "
        f"{board['gpu_slots_count']} GPU slot(s) at x8+ "
        f"for {ctx.gpu_count} GPU(s); {board['m2_slots_count']} M.2 (guide §5.1: check PCIe slot version and lanes)",
    ]
    lines.extend(board.notes)
    asm.reasons["motherboard"] = lines
    return board


def _choose_ram(ctx: Context, asm: Assembly, board: Part, need_ecc: bool, floor) -> None:
    candidates = []
    for kit in ctx.catalog.of_kind("memory_kit"):
        if kit["memory_type"] != board["memory_type"] or kit["registered"] != board["memory_registered"]:
            continue
        if need_ecc and not kit["ecc"]:
            continue
        quantity = max(1, math.ceil(floor.value / kit["capacity_gib"]))
        if quantity * kit["modules_count"] > board["dimm_slots_count"]:
            continue
        if quantity * kit["capacity_gib"] > board["max_memory_gib"]:
            continue
        candidates.append((kit.price_cny * quantity + kit["modules_count"] * quantity, kit, quantity))
    kit, quantity = _rank(ctx, asm, "memory_kit", candidates, ctx.catalog.of_kind("memory_kit"), floor.reason)
    lines = [floor.reason, f"{quantity} x {kit['capacity_gib']:g} GiB {kit['memory_type']}-{kit['speed_mt_per_s']:g} = "
             f"{quantity * kit['capacity_gib']:g} GiB, "
             f"cheapest kit that fits {board.name}'s {board['dimm_slots_count']} slots"]
    if kit["ecc"]:
        lines.append("ECC registered memory: the high budget tier asks for ECC (guide §6.1)")
    if kit["memory_type"] == "DDR4" and ctx.answers.data.dataset_size_gb >= ctx.rules.ram.large_dataset_gb:
        lines.append(
            "the guide suggests DDR5 >= 4800 for large data (§3.1); "
            "capacity matters more than generation for data loading"
        )
    asm.reasons["memory_kit"] = lines


def _choose_storage(ctx: Context, asm: Assembly, board: Part | None) -> None:
    dataset = ctx.answers.data.dataset_size_gb
    klass, class_line = storage_class(dataset, ctx.rules)
    capacity = storage_capacity_gb(dataset, ctx.shape.parameters, ctx.rules)
    server_board = board is not None and board["memory_registered"]
    candidates = []
    for drive in ctx.catalog.of_kind("storage"):
        if drive["media"] != "ssd" or drive["interface"] == "sas":
            continue
        if drive["form_factor"] == "u2" and not server_board:
            continue
        fast_nvme = (
            drive["interface"] == "nvme"
            and drive["seq_read_mb_per_s"] >= ctx.rules.storage.nvme_min_read_mb_per_s
        )
        if klass != "any_ssd" and not fast_nvme:
            continue
        if ctx.edge and drive["form_factor"] != "m2":
            continue
        quantity = max(2 if klass == "nvme_raid0" else 1, math.ceil(capacity.value / drive["capacity_gb"]))
        if board is not None and drive["form_factor"] == "m2" and quantity > board["m2_slots_count"]:
            continue
        candidates.append((drive.price_cny * quantity, drive, quantity))
    drive, quantity = _rank(ctx, asm, "storage", candidates, ctx.catalog.of_kind("storage"), class_line)
    lines = [class_line, capacity.reason,
             f"{quantity} x {drive['capacity_gb']:,.0f} GB {drive['interface'].upper()}, "
             f"{drive['seq_read_mb_per_s']:,} MB/s read"]
    lines.extend(drive.notes)
    asm.reasons["storage"] = lines


def _choose_cooler(ctx: Context, asm: Assembly, cpu: Part) -> Part:
    quiet = ctx.answers.budget.noise == "quiet"
    candidates = [
        (cooler.price_cny, cooler, 1) for cooler in ctx.catalog.of_kind("cooler")
        if cpu["socket"] in cooler["sockets"] and cooler["max_cpu_power_w"] >= cpu["turbo_power_w"]
        and (not quiet or cooler["noise"] == "quiet")
    ]
    all_coolers = ctx.catalog.of_kind("cooler")
    fallback = [cooler for cooler in all_coolers if cpu["socket"] in cooler["sockets"]] or all_coolers
    cooler, _ = _rank(ctx, asm, "cooler", candidates, fallback, f"socket {cpu['socket']}, >= {cpu['turbo_power_w']} W")
    asm.reasons["cooler"] = [
        f"CPU turbo power {cpu['turbo_power_w']} W <= cooler rating {cooler['max_cpu_power_w']} W, "
        f"socket {cpu['socket']}: "
        "air (e.g. PA120) for mid/low power, 240 mm AIO or big air for high-end (guide §4.1)",
    ]
    return cooler


def _choose_psu(ctx: Context, asm: Assembly, gpu: Part, cpu: Part, cooler: Part) -> None:
    rules = ctx.rules
    ram, ram_qty = asm.chosen["memory_kit"]
    storage, storage_qty = asm.chosen["storage"]
    heat_guess = gpu["board_power_w"] * ctx.gpu_count + cpu["turbo_power_w"]
    fans = case_fans_count(heat_guess, rules) + cooler["fans_count"]
    estimate = power_estimate(
        gpu_board_power_w=gpu["board_power_w"], gpu_transient_peak_w=gpu["transient_peak_w"], gpu_count=ctx.gpu_count,
        gpu_recommended_psu_w=gpu["recommended_psu_w"], cpu_turbo_power_w=cpu["turbo_power_w"],
        dimm_count=ram["modules_count"] * ram_qty, drive_count=storage_qty, fan_count=fans, rules=rules,
    )
    size, count = standard_psu_size(estimate.psu_required_w, rules)
    pinned = ctx.pins.get("psu")
    if pinned and pinned[1]:
        count = pinned[1]
    needs_hpwr = gpu["power_connector"] == "12vhpwr"
    candidates = []
    for psu in ctx.catalog.of_kind("psu"):
        if psu["capacity_w"] < size:
            continue
        if needs_hpwr and (psu["connectors_12vhpwr_count"] * count < ctx.gpu_count or psu["atx_version"] == "2.x"):
            continue
        if psu["pcie_8pin_count"] * count < _pcie_8pin_leads(gpu, ctx.gpu_count):
            continue
        if psu["eps_8pin_count"] * count < cpu["eps_8pin_count"]:
            continue
        candidates.append((psu.price_cny * count, psu, count))
    psu, quantity = _rank(ctx, asm, "psu", candidates, ctx.catalog.of_kind("psu"),
                          f">= {size} W x{count} with the GPU's connectors",
                          closest=lambda part: (part["capacity_w"] < size, part.price_cny, part.id))
    if not candidates and not pinned:
        quantity = count
        asm.chosen["psu"] = (psu, quantity)
    efficiency = psu["efficiency"]
    asm.sustained_w, asm.peak_w, asm.psu_required_w = estimate.sustained_w, estimate.peak_w, estimate.psu_required_w
    asm.psu_capacity_w = psu["capacity_w"] * quantity
    asm.wall_w = wall_draw_w(estimate.sustained_w, efficiency, rules)
    asm.power_lines = estimate.lines
    lines = [
        f"{estimate.psu_required_w:,.0f} W required, rounded up to a standard {size} W"
        + (f" x {count} (no single ATX PSU is that large: load-sharing PSUs in a server chassis)" if count > 1 else ""),
        f"80 PLUS {efficiency}: ~{asm.wall_w:,.0f} W from the wall at sustained load",
        "guide §4.2 examples agree: RTX 3060 + i5-12400F -> 550 W gold; RTX 4090 + i9-13900K -> >= 850 W",
    ]
    if needs_hpwr:
        lines.append(f"{gpu.name} takes a 12VHPWR/12V-2x6 lead: native ATX 3.x PSU chosen")
    if quantity > 1:
        lines.append(
            f"{quantity} PSUs give {asm.psu_capacity_w:,.0f} W only when they share the load; "
            f"a redundant (1+1) pair gives {psu['capacity_w']:,} W"
        )
    asm.reasons["psu"] = lines
    heat = estimate.sustained_w
    airflow = "" if heat <= rules.cooling.server_airflow_above_w else (
        f"; above {rules.cooling.server_airflow_above_w} W a desktop case is not enough: rack/server chassis airflow"
    )
    asm.heat_line = (
        f"cooling: ~{heat:,.0f} W of heat -> {fans - cooler['fans_count']} case fans "
        f"(1 per {rules.cooling.watts_per_case_fan_w} W, "
        f"positive pressure: more intake than exhaust, guide §4.1){airflow}"
    )


def _pcie_8pin_leads(gpu: Part, gpu_count: int) -> int:
    """PCIe 8-pin leads the GPUs take; a data-centre card's CPU 8-pin input comes from two via NVIDIA's adapter."""
    per_card = {"8pin": 1, "eps8pin": 2}.get(gpu["power_connector"], 0) * gpu["power_connector_count"]
    return per_card * gpu_count

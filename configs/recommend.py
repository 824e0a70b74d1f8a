"""Answers -> Build: memory floor, GPU by performance per yuan, then the parts the rules ask for.

The GPU is chosen first (memory floor, then score per yuan); the rest follows from it. Candidates are
tried best-first until the whole build fits the budget and power limit. Pinned parts (a preset, or a
swap in the review step) are kept as they are and only checked.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Mapping

from pth_top.configs import memory as mem
from pth_top.configs.answers import Answers
from pth_top.configs.build import ROLE_LABELS, ROLES, Build, Component, Power
from pth_top.configs.compat import compatibility_problems
from pth_top.configs.parts import STALE_PRICE_DAYS, Catalog, Part
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.rules import (
    Rules,
    budget_in_cny,
    budget_line,
    budget_tier,
    case_fans_count,
    cpu_floor,
    gpu_usable_bytes,
    load_rules,
    power_estimate,
    ram_floor_gib,
    standard_psu_size,
    storage_capacity_gb,
    storage_class,
    wall_draw_w,
)
from pth_top.configs.tomlsource import INT64_MAX
from pth_top.units import GIB

PC_GPU_FORMS = ("consumer", "workstation", "datacenter")


@dataclass
class _Context:
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
class _Assembly:
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


def recommend(
    answers: Answers, catalog: Catalog, *, rules: Rules | None = None,
    pins: Mapping[str, tuple[str, int]] | None = None,
    today: dt.date | None = None, title: str = "", comments: tuple[str, ...] = (),
) -> Build:
    rules = rules or load_rules()
    ctx = _context(answers, catalog, rules, pins or {})
    if ctx.memory.total_bytes > INT64_MAX:  # a build file holds 64-bit integers only (TOML)
        raise ValueError(
            f"the workload needs {ctx.memory.total_bytes / GIB:.3g} GiB per GPU, beyond what any machine or build "
            "file holds: check the model size, batch size and sequence length"
        )
    gpus = _ranked_gpus(ctx)
    pinned_gpu = ctx.pins.get("gpu")
    if pinned_gpu:
        gpu = _pinned_part(ctx, "gpu")
        assembly = _assemble(ctx, gpu)
        gpu_order = [gpu.id] + [part.id for part, _ in gpus if part.id != gpu.id]
    else:
        if not gpus:
            raise ValueError("the catalog has no GPU for this scenario")
        assembly, gpu = _fit_budget(ctx, gpus)
        gpu_order = [part.id for part, _ in gpus]
    assembly.alternatives["gpu"] = tuple(gpu_order)
    assembly.reasons.setdefault("gpu", [])[:0] = _gpu_reasons(ctx, gpu)
    usable = int(gpu_usable_bytes(gpu["memory_gib"], gpu["memory_kind"], rules))
    warnings = _warnings(ctx, assembly, gpu, usable, today or dt.date.today())
    total = assembly.total_cny
    general: list[str] = [ctx.shape_line, *ctx.memory.formula, ctx.tier_line]
    if answers.budget.currency != "CNY":
        general.append(budget_line(answers.budget.amount, answers.budget.currency, rules))
    general.extend(assembly.power_lines)
    general.append(assembly.heat_line)
    general.append(f"price ¥{total:,.0f} of a ¥{ctx.budget_cny:,.0f} budget (case and fans not included)")
    if not pinned_gpu and total < 0.6 * ctx.budget_cny:
        general.append(
            f"¥{ctx.budget_cny - total:,.0f} of the budget is left: the best value card was chosen; swap the GPU for "
            "a faster or larger one if speed matters more than price"
        )
    components = tuple(
        Component(
            role=role, part_id=part.id, name=part.name, quantity=qty, unit_price_cny=assembly.unit_prices[role],
            spec=dict(part.spec), reasoning=tuple(assembly.reasons.get(role, ())),
        )
        for role in ROLES if role in assembly.chosen for part, qty in [assembly.chosen[role]]
    )
    return Build(
        answers=answers, components=components, memory=ctx.memory,
        gpu_memory_per_gpu_bytes=int(gpu["memory_gib"] * GIB),
        gpu_usable_per_gpu_bytes=usable,
        power=Power(*(round(float(watts), 1) for watts in (
            assembly.sustained_w, assembly.peak_w, assembly.psu_required_w, assembly.psu_capacity_w, assembly.wall_w))),
        total_price_cny=total, budget_cny=ctx.budget_cny, reasoning=tuple(line for line in general if line),
        warnings=tuple(warnings), alternatives=dict(assembly.alternatives), pins=dict(ctx.pins),
        title=title, comments=comments,
    )


def _warnings(ctx: _Context, assembly: _Assembly, gpu: Part, usable: int, today: dt.date) -> list[str]:
    answers = ctx.answers
    warnings: list[str] = []
    if ctx.memory.total_bytes > usable:
        warnings.append(_does_not_fit(ctx, gpu, usable, ctx.catalog))
    total = assembly.total_cny
    if total > ctx.budget_cny:
        warnings.append(
            f"over budget: ¥{total:,.0f} is ¥{total - ctx.budget_cny:,.0f} above the ¥{ctx.budget_cny:,.0f} budget"
        )
    max_power = answers.budget.max_power_w
    if max_power and assembly.wall_w > max_power:
        warnings.append(f"wall draw ~{assembly.wall_w:,.0f} W exceeds the {max_power} W limit")
    warnings.extend(assembly.warnings)
    warnings.extend(compatibility_problems(assembly.chosen, assembly.psu_required_w))
    if answers.scale.sharding != "none" and ctx.gpu_count == 1:
        warnings.append(f"{answers.scale.sharding.upper()} divides by the GPU count: with one GPU it saves nothing")
    if answers.budget.condition == "used":
        warnings.append(
            "used GPUs: check the power curve and VRAM health with GPU-Z before paying, and prefer brands whose "
            "warranty follows the card (guide §6.2)"
        )
    stale = [part for part, _ in assembly.chosen.values() if (today - part.price_as_of).days > STALE_PRICE_DAYS]
    if stale:
        oldest = min(part.price_as_of for part in stale)
        warnings.append(
            f"{len(stale)} of {len(assembly.chosen)} prices are older than {STALE_PRICE_DAYS} days (oldest {oldest}): "
            "check them and override in the user catalog"
        )
    return list(dict.fromkeys(warnings))


def swap(
    build: Build, role: str, catalog: Catalog, *, rules: Rules | None = None, today: dt.date | None = None
) -> Build:
    """The same answers with `role` moved to the next-best alternative (wrapping round)."""
    options = build.alternatives.get(role, ())
    current = build.component(role)
    if not options or current is None:
        return build
    index = options.index(current.part_id) if current.part_id in options else -1
    next_id = options[(index + 1) % len(options)]
    pins = {**build.pins, role: (next_id, 0)}  # 0: the rules choose how many of the new part
    return recommend(
        build.answers, catalog, rules=rules, pins=pins, today=today, title=build.title, comments=build.comments
    )


def estimate_memory(answers: Answers, shape: mem.ModelShape) -> mem.MemoryBreakdown:
    task, scale = answers.task, answers.scale
    if task.mode == "training":
        return mem.estimate_training(
            shape, precision=task.precision, optimizer=task.optimizer, global_batch=answers.workload.batch_size,
            accumulation_steps=task.accumulation_steps, gpu_count=scale.gpu_count, sharding=scale.sharding,
            recompute=task.recompute, flash_attention=task.flash_attention, mixed_layout=task.mixed_layout,
        )
    return mem.estimate_inference(
        shape, precision=task.precision, batch=answers.workload.batch_size,
        generated_tokens=task.generated_tokens, gpu_count=scale.gpu_count,
    )


def _context(answers: Answers, catalog: Catalog, rules: Rules, pins: Mapping[str, tuple[str, int]]) -> _Context:
    shape, shape_line = model_shape(answers.workload)
    budget = budget_in_cny(answers.budget.amount, answers.budget.currency, rules)
    tier, tier_line = budget_tier(budget, rules)
    return _Context(
        answers=answers, catalog=catalog, rules=rules, pins=pins, shape=shape, shape_line=shape_line,
        memory=estimate_memory(answers, shape), budget_cny=budget, tier=tier, tier_line=tier_line,
        gpu_count=answers.scale.gpu_count, edge=answers.scenario == "edge_deployment",
    )


def _pinned_part(ctx: _Context, role: str) -> Part:
    part_id = ctx.pins[role][0]
    part = ctx.catalog.get(part_id)
    if part is None:
        raise ValueError(f"pinned {ROLE_LABELS[role]} {part_id!r} is not in the catalog")
    return part


def _gpu_price(ctx: _Context, gpu: Part) -> float:
    if ctx.answers.budget.condition == "used" and gpu["form"] == "consumer":
        return gpu.price_cny * ctx.rules.budget.used_gpu_price_fraction
    return gpu.price_cny


def _gpu_metric(ctx: _Context) -> tuple[str, str]:
    if ctx.tier == "entry":
        return "memory_gib", "GiB of GPU memory per yuan (entry tier: VRAM first, guide §6.1)"
    if ctx.answers.task.mode == "inference" and ctx.shape.kind == "transformer":
        return "bandwidth_gb_per_s", "memory bandwidth per yuan (LLM decoding is bandwidth-bound; Dettmers 2023)"
    return "bf16_dense_tflops", "dense BF16 tensor TFLOPS per yuan (training; Dettmers 2023)"


def _ranked_gpus(ctx: _Context) -> list[tuple[Part, bool]]:
    """GPUs allowed here, those meeting the memory floor first, each group by score per yuan."""
    metric, _ = _gpu_metric(ctx)
    quiet = ctx.answers.budget.noise == "quiet"
    ranked = []
    for gpu in ctx.catalog.of_kind("gpu"):
        if ctx.edge != (gpu["form"] == "edge"):
            continue
        if not ctx.edge and gpu["form"] not in PC_GPU_FORMS:
            continue
        if quiet and gpu["cooling"] in ("blower", "passive") and not ctx.edge:
            continue
        fits = ctx.memory.total_bytes <= gpu_usable_bytes(gpu["memory_gib"], gpu["memory_kind"], ctx.rules)
        preferred = ctx.tier == "datacenter" and gpu["form"] in ("workstation", "datacenter")
        score = gpu[metric] / _gpu_price(ctx, gpu)
        ranked.append((not fits, not preferred, -score, gpu.id, gpu, fits))
    ranked.sort(key=lambda item: item[:4])
    return [(gpu, fits) for *_, gpu, fits in ranked]


def _fit_budget(ctx: _Context, gpus: list[tuple[Part, bool]]) -> tuple[_Assembly, Part]:
    max_power = ctx.answers.budget.max_power_w
    fitting = [gpu for gpu, fits in gpus if fits]
    cheapest: tuple[float, _Assembly, Part] | None = None
    for gpu in fitting:
        assembly = _assemble(ctx, gpu)
        if assembly.total_cny <= ctx.budget_cny and (not max_power or assembly.wall_w <= max_power):
            return assembly, gpu
        if cheapest is None or assembly.total_cny < cheapest[0]:
            cheapest = (assembly.total_cny, assembly, gpu)
    if cheapest is not None:
        return cheapest[1], cheapest[2]
    largest = max((gpu for gpu, _ in gpus), key=lambda part: (part["memory_gib"], -part.price_cny))
    return _assemble(ctx, largest), largest


def _gpu_reasons(ctx: _Context, gpu: Part) -> list[str]:
    _, metric_text = _gpu_metric(ctx)
    need = ctx.memory.total_bytes / GIB
    usable = gpu_usable_bytes(gpu["memory_gib"], gpu["memory_kind"], ctx.rules) / GIB
    kind = "shared with the CPU" if gpu["memory_kind"] == "shared" else "dedicated"
    lines = [
        f"memory floor: this workload needs {need:.1f} GiB per GPU; {gpu.name} has {gpu['memory_gib']:g} GiB {kind} "
        f"({usable:.1f} usable at {ctx.rules.gpu.usable_memory_fraction:.0%}) (guide §2.1, formulas in builds.md)",
        f"ranked by {metric_text} among cards meeting the floor (guide §2.3)",
    ]
    preset = ctx.answers.workload.preset
    if preset.startswith("gpt2"):
        lines.append(
            f"the guide's 'GPT-2 needs >= 24 GB' (§2.1) is loose: {model_presets()[preset].name} as configured needs "
            f"{need:.1f} GiB; use the formula, not the name"
        )
    if gpu["memory_kind"] == "shared":
        lines.append(f"{gpu['memory_gib']:g} GB {gpu['memory_type']} is shared by CPU and GPU, not VRAM; the OS keeps "
                     f"{ctx.rules.ram.os_reserve_gib} GB of it")
    lines.extend(gpu.notes)
    if gpu["form"] == "consumer" and ctx.answers.budget.condition == "used":
        lines.append(f"used price assumed {ctx.rules.budget.used_gpu_price_fraction:.0%} of new (rules.toml)")
    return lines


def _does_not_fit(ctx: _Context, gpu: Part, usable: int, catalog: Catalog) -> str:
    need = ctx.memory.total_bytes / GIB
    bigger = [part for part in catalog.of_kind("gpu") if part["form"] in ("sxm", "oam")
              and gpu_usable_bytes(part["memory_gib"], part["memory_kind"], ctx.rules) >= ctx.memory.total_bytes]
    hint = "; try more GPUs with ZeRO-3/FSDP, gradient checkpointing, a smaller micro-batch or lower precision"
    if bigger and not ctx.edge:
        hint += f" (or an HGX/OAM server such as {bigger[0].name}, outside a parts build)"
    return f"does not fit: needs {need:.1f} GiB per GPU, {gpu.name} offers {usable / GIB:.1f} GiB usable{hint}"


def _assemble(ctx: _Context, gpu: Part) -> _Assembly:
    """Every other part for this GPU, cheapest that meets each rule (or the pinned one)."""
    asm = _Assembly()
    asm.chosen["gpu"] = (gpu, ctx.gpu_count)
    asm.unit_prices["gpu"] = _gpu_price(ctx, gpu)
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


def _rank(ctx: _Context, asm: _Assembly, role: str, candidates: list[tuple[float, Part, int]], fallback: list[Part],
          why_none: str, closest=lambda part: (part.price_cny, part.id)) -> tuple[Part, int]:
    """Pick the pinned part or the cheapest candidate; remember the order for swaps.

    When nothing qualifies, the `fallback` part that sorts first by `closest` is taken, with a warning.
    """
    fallback = sorted(fallback, key=closest)
    candidates.sort(key=lambda item: (item[0], item[1].id))
    order = [part.id for _, part, _ in candidates]
    pinned = ctx.pins.get(role)
    if pinned:
        part = _pinned_part(ctx, role)
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


def _boards_for(ctx: _Context, cpu: Part, need_ecc: bool, ram_floor_gib: float) -> list[Part]:
    return [
        board for board in ctx.catalog.of_kind("motherboard")
        if board["socket"] == cpu["socket"] and board["memory_type"] in cpu["memory_types"]
        and board["gpu_slots_count"] >= ctx.gpu_count and (board["memory_ecc"] or not need_ecc)
        and board["max_memory_gib"] >= ram_floor_gib
    ]


def _choose_cpu(ctx: _Context, asm: _Assembly, need_ecc: bool, ram_floor: float) -> Part:
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


def _choose_board(ctx: _Context, asm: _Assembly, cpu: Part, need_ecc: bool, ram_floor: float) -> Part:
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


def _choose_ram(ctx: _Context, asm: _Assembly, board: Part, need_ecc: bool, floor) -> None:
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


def _choose_storage(ctx: _Context, asm: _Assembly, board: Part | None) -> None:
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


def _choose_cooler(ctx: _Context, asm: _Assembly, cpu: Part) -> Part:
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


def _choose_psu(ctx: _Context, asm: _Assembly, gpu: Part, cpu: Part, cooler: Part) -> None:
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

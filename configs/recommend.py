"""Answers -> Build: memory floor, GPU by performance per yuan, then the parts the rules ask for.

The GPU is chosen first (memory floor, then score per yuan); the rest follows from it. Candidates are
tried best-first until the whole build fits the budget and power limit. Pinned parts (a preset, or a
swap in the review step) are kept as they are and only checked.
"""

from __future__ import annotations

import datetime as dt
from typing import Mapping

from pth_top.configs.answers import Answers
from pth_top.configs.assemble import PC_GPU_FORMS, assemble
from pth_top.configs.assembly import Assembly, Context, gpu_price, pinned_part
from pth_top.configs.build import ROLES, Build, Component, Power
from pth_top.configs.compat import compatibility_problems
from pth_top.configs.guide import GUIDE_TITLE, cite_guide
from pth_top.configs.memory import estimate_memory
from pth_top.configs.parts import STALE_PRICE_DAYS, Catalog, Part
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.rules import (
    Rules,
    budget_in_cny,
    budget_line,
    budget_tier,
    gpu_usable_bytes,
    load_rules,
)
from pth_top.configs.tomlsource import INT64_MAX
from pth_top.units import GIB


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
        gpu = pinned_part(ctx, "gpu")
        assembly = assemble(ctx, gpu)
        # The ranking's own order, so that repeated swaps walk every allowed GPU once before wrapping round.
        gpu_order = [part.id for part, _ in gpus]
        if gpu.id not in gpu_order:
            gpu_order.insert(0, gpu.id)
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
    general.append(f"'guide §' cites the article {GUIDE_TITLE}, whose advice these rules check")
    if not pinned_gpu and total < 0.6 * ctx.budget_cny:
        general.append(
            f"¥{ctx.budget_cny - total:,.0f} of the budget is left: the best value card was chosen; swap the GPU for "
            "a faster or larger one if speed matters more than price"
        )
    components = tuple(
        Component(
            role=role, part_id=part.id, name=part.name, quantity=qty, unit_price_cny=assembly.unit_prices[role],
            spec=dict(part.spec), reasoning=tuple(cite_guide(line) for line in assembly.reasons.get(role, ())),
        )
        for role in ROLES if role in assembly.chosen for part, qty in [assembly.chosen[role]]
    )
    return Build(
        answers=answers, components=components, memory=ctx.memory,
        gpu_memory_per_gpu_bytes=int(gpu["memory_gib"] * GIB),
        gpu_usable_per_gpu_bytes=usable,
        power=Power(*(round(float(watts), 1) for watts in (
            assembly.sustained_w, assembly.peak_w, assembly.psu_required_w, assembly.psu_capacity_w, assembly.wall_w))),
        total_price_cny=total, budget_cny=ctx.budget_cny, reasoning=tuple(cite_guide(line) for line in general if line),
        warnings=tuple(cite_guide(line) for line in warnings), alternatives=dict(assembly.alternatives),
        pins=dict(ctx.pins), title=title, comments=tuple(cite_guide(line) for line in comments),
    )


def _warnings(ctx: Context, assembly: Assembly, gpu: Part, usable: int, today: dt.date) -> list[str]:
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


def _context(answers: Answers, catalog: Catalog, rules: Rules, pins: Mapping[str, tuple[str, int]]) -> Context:
    shape, shape_line = model_shape(answers.workload)
    budget = budget_in_cny(answers.budget.amount, answers.budget.currency, rules)
    tier, tier_line = budget_tier(budget, rules)
    return Context(
        answers=answers, catalog=catalog, rules=rules, pins=pins, shape=shape, shape_line=shape_line,
        memory=estimate_memory(answers, shape), budget_cny=budget, tier=tier, tier_line=tier_line,
        gpu_count=answers.scale.gpu_count, edge=answers.scenario == "edge_deployment",
    )






def _gpu_metric(ctx: Context) -> tuple[str, str]:
    if ctx.tier == "entry":
        return "memory_gib", "GiB of GPU memory per yuan (entry tier: VRAM first, guide §6.1)"
    if ctx.answers.task.mode == "inference" and ctx.shape.kind == "transformer":
        return "bandwidth_gb_per_s", "memory bandwidth per yuan (LLM decoding is bandwidth-bound; Dettmers 2023)"
    return "bf16_dense_tflops", "dense BF16 tensor TFLOPS per yuan (training; Dettmers 2023)"


def _ranked_gpus(ctx: Context) -> list[tuple[Part, bool]]:
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
        score = gpu[metric] / gpu_price(ctx, gpu)
        ranked.append((not fits, not preferred, -score, gpu.id, gpu, fits))
    ranked.sort(key=lambda item: item[:4])
    return [(gpu, fits) for *_, gpu, fits in ranked]


def _fit_budget(ctx: Context, gpus: list[tuple[Part, bool]]) -> tuple[Assembly, Part]:
    max_power = ctx.answers.budget.max_power_w
    fitting = [gpu for gpu, fits in gpus if fits]
    cheapest: tuple[float, Assembly, Part] | None = None
    for gpu in fitting:
        assembly = assemble(ctx, gpu)
        if assembly.total_cny <= ctx.budget_cny and (not max_power or assembly.wall_w <= max_power):
            return assembly, gpu
        if cheapest is None or assembly.total_cny < cheapest[0]:
            cheapest = (assembly.total_cny, assembly, gpu)
    if cheapest is not None:
        return cheapest[1], cheapest[2]
    largest = max((gpu for gpu, _ in gpus), key=lambda part: (part["memory_gib"], -part.price_cny))
    return assemble(ctx, largest), largest


def _gpu_reasons(ctx: Context, gpu: Part) -> list[str]:
    _, metric_text = _gpu_metric(ctx)
    need = ctx.memory.total_bytes / GIB
    usable = gpu_usable_bytes(gpu["memory_gib"], gpu["memory_kind"], ctx.rules) / GIB
    kind = "shared with the CPU" if gpu["memory_kind"] == "shared" else "dedicated"
    lines = [
        f"memory floor: this workload needs {need:.1f} GiB per GPU; {gpu.name} has {gpu['memory_gib']:g} GiB {kind} "
        f"({usable:.1f} usable at {ctx.rules.gpu.usable_memory_fraction:.0%}) (guide §2.1; each term's formula under Reasoning)",
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


def _does_not_fit(ctx: Context, gpu: Part, usable: int, catalog: Catalog) -> str:
    need = ctx.memory.total_bytes / GIB
    bigger = [part for part in catalog.of_kind("gpu") if part["form"] in ("sxm", "oam")
              and gpu_usable_bytes(part["memory_gib"], part["memory_kind"], ctx.rules) >= ctx.memory.total_bytes]
    hint = "; try more GPUs with ZeRO-3/FSDP, gradient checkpointing, a smaller micro-batch or lower precision"
    if bigger and not ctx.edge:
        hint += f" (or an HGX/OAM server such as {bigger[0].name}, outside a parts build)"
    return f"does not fit: needs {need:.1f} GiB per GPU, {gpu.name} offers {usable / GIB:.1f} GiB usable{hint}"



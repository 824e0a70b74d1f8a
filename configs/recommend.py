"""Answers -> Build: memory floor, GPU by performance per yuan, then the parts the rules ask for.

The GPU is chosen first (memory floor, then score per yuan; configs.ranking); the rest follows from it.
When nothing holds the workload within budget, the build says so first and lists what is feasible
(configs.feasibility). Pinned parts (a preset, or a swap in the review step) are kept and only checked.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Callable, Mapping

from pth_top.configs import feasibility
from pth_top.configs.advice import with_advice
from pth_top.configs.answers import Answers
from pth_top.configs.assemble import assemble
from pth_top.configs.assembly import Assembly, Context, memory_on, pinned_part, usable_bytes, usable_text_of
from pth_top.configs.beyond_answers import (
    faster_server_within_budget,
    keeps_the_job,
    offload_before_a_desktop_system,
    slow_edge_passed_over,
)
from pth_top.configs.build import ROLE_LABELS, ROLES, Build, Component, Power
from pth_top.configs.compat import compatibility_problems
from pth_top.configs.cpu_only import (
    CpuOnly,
    cpu_context,
    cpu_only_alternative_line,
    cpu_only_first,
    cpu_only_inadequate_line,
    cpu_only_leads,
    cpu_only_offered,
    cpu_only_over_budget_line,
    cpu_only_pc,
    gguf_cpu_alternative,
    needs_a_gpu,
    short_of_the_rate,
)
from pth_top.configs.glossary import glossary
from pth_top.configs.guide import GUIDE_TITLE, cite_guide
from pth_top.configs.market import MARKET_NAMES, buyer_market, cny_per, money, price_indexes
from pth_top.configs.measured_ceilings import MeasuredCeilings
from pth_top.configs.memory import estimate_memory
from pth_top.configs.memory_terms import OFFLOAD_SHARDINGS, SHARDING_LABELS
from pth_top.configs.nearest import nearest_over_budget
from pth_top.configs.owned import (
    all_owned,
    check_owned,
    is_owned,
    owned_line,
    owned_pin,
    with_owned_pin,
    without_owned,
)
from pth_top.configs.part_types import DESKTOP_SYSTEM
from pth_top.configs.parts import Catalog, Part, gpu_memory_gib
from pth_top.configs.presets import (
    context_warnings,
    ignored_answer_warnings,
    model_presets,
    model_shape,
    resized_context_warning,
)
from pth_top.configs.price_notes import price_warnings, with_price_line
from pth_top.configs.ram_platform import platform_for_ram
from pth_top.configs.ranking import NEAR_TIE_TEXT, Fit, fit_budget, gpu_metric, meets_target, ranked_gpus
from pth_top.configs.rules import (
    Rules,
    budget_in_cny,
    budget_line,
    budget_tier,
    load_rules,
    shared_os_reserve_gib,
)
from pth_top.configs.slots import MOUNT_ROLES, gpu_link_lanes
from pth_top.configs.speed import SLOW_FIRST_TOKEN_S
from pth_top.configs.speed_build import with_speed
from pth_top.configs.speed_target import below_target_passed_over
from pth_top.configs.tomlsource import INT64_MAX
from pth_top.configs.way_out import just_over_budget
from pth_top.units import GIB

CPU_ONLY_ID = "none"  # the GPU "part" id of a CPU-only build, among the GPU alternatives and in pins


def recommend(
    answers: Answers, catalog: Catalog, *, rules: Rules | None = None,
    pins: Mapping[str, tuple[str, int]] | None = None,
    today: dt.date | None = None, title: str = "", comments: tuple[str, ...] = (),
    measured: MeasuredCeilings | None = None,
) -> Build:
    rules = rules or load_rules()
    check_owned(answers, catalog)
    swapped = (pins or {}).get("gpu")
    set_aside = ""
    if swapped and owned_pin(answers) and swapped[0] == answers.budget.owned_gpu:  # the buyer's own card, pinned
        if swapped[1] > 0:  # fewer: some of yours; more: the rest bought beside them
            answers = answers.with_value("scale", "gpu_count", swapped[1])
        else:  # 0, "as the rules say": the cards you have, as the answers give them
            pins = {role: pin for role, pin in (pins or {}).items() if role != "gpu"}
    elif swapped and owned_pin(answers) and tuple(swapped) != owned_pin(answers):  # other GPUs pinned: bought
        set_aside = (f"your cards (budget.owned_gpu = {answers.budget.owned_gpu}) are set aside: this build is around "
                     "the choice made instead, bought; answer budget.owned_gpu again to build around them")
        answers = without_owned(answers)
    pins = with_owned_pin(answers, pins or {})  # the cards the buyer has: the build's GPUs
    pinned = pins.get("gpu")
    if pinned and pinned[0] != CPU_ONLY_ID and pinned[1] > 0 and answers.scenario != "edge_deployment":
        answers = answers.with_value("scale", "gpu_count", pinned[1])  # "4 x H100" pinned is 4, whatever the answers
    build = _recommend(answers, catalog, rules=rules, pins=pins, today=today, title=title, comments=comments,
                       measured=measured)
    def recommend_one(changed: Answers, gpu_pin: Mapping[str, tuple[str, int]] | None = None) -> Build:
        return _recommend(changed, catalog, rules=rules, pins=gpu_pin, today=today, measured=measured)

    unpinned = not (pins and "gpu" in pins)
    passed_over = next((found for check in (below_target_passed_over, faster_server_within_budget,
                                            offload_before_a_desktop_system, slow_edge_passed_over)
                        if (found := check(build, rules, recommend_one)) is not None), None) if unpinned else None
    if passed_over is not None:  # the same build, said to be no recommendation, the faster one its alternative
        build = _recommend(answers, catalog, rules=rules, pins=pins, today=today, title=title, comments=comments,
                           measured=measured, passed_over=passed_over)
    else:
        build = with_advice(build, rules, recommend_one, _unpinned_context_for(catalog, rules), pinned=not unpinned)
    return dataclasses.replace(build, warnings=(set_aside, *build.warnings)) if set_aside else build


def _recommend(
    answers: Answers, catalog: Catalog, *, rules: Rules,
    pins: Mapping[str, tuple[str, int]] | None = None,
    today: dt.date | None = None, title: str = "", comments: tuple[str, ...] = (),
    measured: MeasuredCeilings | None = None, passed_over: tuple[str, str, Answers] | None = None,
) -> Build:
    ctx = _context(answers, catalog, rules, pins or {})
    if ctx.memory.total_bytes > INT64_MAX:  # a build file holds 64-bit integers only (TOML)
        raise ValueError(
            f"the workload needs {ctx.memory.total_bytes / GIB:.3g} GiB per GPU, beyond what any machine or build "
            "file holds: check the model size, batch size and sequence length"
        )
    gpus = ranked_gpus(ctx)
    gpu_order = [part.id for part, _ in gpus]
    pinned_gpu = ctx.pins.get("gpu")
    cpu_only = None if ctx.edge or (pinned_gpu and pinned_gpu[0] != CPU_ONLY_ID) else cpu_only_pc(ctx)
    fit: Fit | None = None
    gpu: Part | None
    if cpu_only is not None and pinned_gpu:  # CPU-only, chosen with the swap key
        gpu, assembly = None, cpu_only.asm
    elif pinned_gpu:
        gpu = pinned_part(ctx, "gpu")
        gpu, assembly = platform_for_ram(ctx, gpu, assemble(ctx, gpu), None)
        # The ranking's own order, so that repeated swaps walk every allowed GPU once before wrapping round.
        if gpu.id not in gpu_order:
            gpu_order.insert(0, gpu.id)
    else:
        if not gpus:
            raise ValueError("the catalog has no GPU for this scenario")
        fit = fit_budget(ctx, gpus)
        gpu, assembly = fit.gpu, fit.assembly
        if fit.feasible:
            gpu, assembly = platform_for_ram(ctx, gpu, assembly, [part for part, fits in gpus if fits])
        if cpu_only is not None and cpu_only_leads(ctx, cpu_only, fit):
            gpu, assembly = None, cpu_only.asm
    if cpu_only is not None or (pinned_gpu and not ctx.edge):  # a pinned GPU's swaps wrap round to CPU-only too
        gpu_order.insert(0, CPU_ONLY_ID)
    assembly.alternatives["gpu"] = tuple(gpu_order)
    build_ctx = ctx if gpu is not None else (cpu_only.ctx if cpu_only else cpu_context(ctx))
    memory = memory_on(ctx, gpu) if gpu is not None else ctx.memory
    if memory != ctx.memory:  # a Raspberry Pi, or a GPU sharing the CPU's memory
        build_ctx = dataclasses.replace(ctx, memory=memory)
    if gpu is not None:
        assembly.reasons.setdefault("gpu", [])[:0] = _gpu_reasons(build_ctx, gpu)
        usable = int(usable_bytes(build_ctx, gpu))
    else:
        usable = 0
    blockers = feasibility.blockers(build_ctx, assembly, gpu, fit)
    if passed_over is not None:  # too slow where the budget buys a faster build (faster_server_within_budget)
        blockers.insert(0, passed_over[0])
    cpu_only_inadequate = False
    if gpu is None and cpu_only is not None and needs_a_gpu(ctx, cpu_only):  # chosen or pinned
        cpu_only_inadequate = True
        blockers.insert(0, cpu_only_inadequate_line(ctx, fit))
    warnings = _warnings(build_ctx, assembly, gpu, today or dt.date.today())
    pins_kept = {role: pin for role, pin in ctx.pins.items() if role == "gpu" or role in assembly.chosen}
    dropped = [role for role in ctx.pins if role not in pins_kept]
    if (owned := owned_pin(answers)) is not None and pins_kept.get("gpu") == owned:  # they follow the answers
        del pins_kept["gpu"]
    unmounted = [role for role in dropped if role in MOUNT_ROLES]  # the cards fit the board: no frame
    boxed = [role for role in dropped if role not in (*MOUNT_ROLES, "gpu_duct")]  # a desktop system or edge module
    if boxed:
        warnings.append(f"your earlier choice of {', '.join(ROLE_LABELS[role] for role in boxed)} is dropped: this "
                        "build is one box without that part")
    if unmounted:
        warnings.append(f"your earlier choice of {', '.join(ROLE_LABELS[role] for role in unmounted)} is dropped: "
                        "these cards fit the board's own slots, with no open frame")
    if "gpu_duct" in dropped:  # no passive card a desktop case ducts
        warnings.append("your earlier choice of GPU fan duct is dropped: it cools one or two passive cards of at most "
                        "its rating in a desktop PC, and these are not")
    if passed_over is not None:
        kept = {role: pin for role, pin in ctx.pins.items() if role != "gpu"}  # the user's other parts stay
        alternatives = [feasibility.Alternative(passed_over[1], passed_over[2], kept)]
    else:
        alternatives = feasibility.feasible_alternatives(
            ctx, _unpinned_context_for(catalog, rules), rent_first=cpu_only_inadequate,
            pinned_context_for=lambda changed: _context(changed, catalog, rules, ctx.pins)) if blockers else []
        near = just_over_budget(ctx, _unpinned_context_for(catalog, rules), fit.cheapest_fitting, alternatives[0]) \
            if blockers and fit is not None and alternatives else None
        alternatives[:0] = [near] if near is not None else []
    buildable = [alternative.answers for alternative in alternatives if alternative.answers is not None]
    if blockers and gpu is not None and not any(keeps_the_job(answers, other) for other in buildable) \
            and passed_over is None:
        nearest = nearest_over_budget(ctx, _unpinned_context_for(catalog, rules), keeping_the_job=bool(buildable),
                                      unchanged=fit.cheapest_fitting if fit is not None else None,
                                      owned_levers=True)
        blockers.extend([nearest] if nearest else [])
    if passed_over is None and blockers and gpu is not None and cpu_only is not None and fit is not None and \
            cpu_only_offered(ctx, cpu_only, fit):
        line, first_s = cpu_only_alternative_line(ctx, cpu_only)
        lever_first = bool(alternatives) and alternatives[0].answers is not None  # a build, not renting
        at = 1 if lever_first and not cpu_only_first(ctx, cpu_only, fit) else 0  # after the first lever only
        if first_s > SLOW_FIRST_TOKEN_S:  # minutes to a first token: after the GPU builds (audit YJ2: 128k prompts)
            at = next((index for index, each in enumerate(alternatives) if each.answers is None), len(alternatives))
        alternatives.insert(at, feasibility.Alternative(line, answers, {"gpu": (CPU_ONLY_ID, 0)}))
    elif passed_over is None and blockers and gpu is not None and cpu_only is not None:
        blockers.extend(line for line in (cpu_only_over_budget_line(ctx, cpu_only),) if line)
        cpu_way = gguf_cpu_alternative(ctx, _unpinned_context_for(catalog, rules)) or \
            short_of_the_rate(ctx, cpu_only)
        if cpu_way is not None:  # before renting
            at = next((index for index, each in enumerate(alternatives) if each.answers is None), len(alternatives))
            alternatives.insert(at, feasibility.Alternative(cpu_way[0], cpu_way[1], {"gpu": (CPU_ONLY_ID, 0)}))
    general = [*blockers[:1], *_general_reasoning(build_ctx, assembly, gpu, cpu_only, bool(blockers))]
    said = [*general, *warnings, *(line for alternative in alternatives for line in (alternative.line,)),
            *(line for lines in assembly.reasons.values() for line in lines)]
    general.extend(glossary(said))
    components = tuple(
        Component(
            role=role, part_id=part.id, name=part.name, quantity=qty, unit_price_cny=assembly.unit_prices[role],
            spec=dict(part.spec), reasoning=tuple(cite_guide(line) for line in assembly.reasons.get(role, ())),
        )
        for role in ROLES if role in assembly.chosen for part, qty in [assembly.chosen[role]]
    )
    components = tuple(with_price_line(build_ctx, component, assembly) for component in components)
    return with_speed(Build(
        answers=answers, components=components, memory=build_ctx.memory,
        gpu_memory_per_gpu_bytes=int(gpu_memory_gib(gpu) * GIB) if gpu is not None else 0,
        gpu_usable_per_gpu_bytes=usable,
        power=Power(*(round(float(watts), 1) for watts in (
            assembly.sustained_w, assembly.peak_w, assembly.psu_required_w, assembly.psu_capacity_w, assembly.wall_w))),
        total_price_cny=round(assembly.total_cny, 2), budget_cny=ctx.budget_cny, market=ctx.market,
        currency=ctx.currency,
        cny_per_unit=cny_per(ctx.currency, rules), reasoning=tuple(cite_guide(line) for line in general if line),
        warnings=tuple(cite_guide(line) for line in warnings), alternatives=dict(assembly.alternatives),
        pins=pins_kept, title=title, comments=tuple(cite_guide(line) for line in comments),
        blockers=tuple(cite_guide(line) for line in blockers),
        feasible_alternatives=tuple(alternative.line for alternative in alternatives),
        applicable_alternatives=tuple(
            (alternative.line, alternative.answers, dict(alternative.pins))
            for alternative in alternatives if alternative.answers is not None
        ),
    ), measured)


def _unpinned_context_for(catalog: Catalog, rules: Rules) -> Callable[[Answers], Context]:
    """How the levers and alternatives see changed answers: the same catalog and rules, no pinned parts."""
    return lambda changed: _context(changed, catalog, rules, {})


def _general_reasoning(
    ctx: Context, assembly: Assembly, gpu: Part | None, cpu_only: CpuOnly | None, infeasible: bool
) -> list[str]:
    answers, rules, total = ctx.answers, ctx.rules, assembly.total_cny
    tier_line = ctx.tier_line if gpu is not None else (
        f"budget {_money(ctx, ctx.budget_cny)}: no GPU in this build, so the guide's GPU-first budget tiers "
        "(guide §6.1) do not apply; the money goes to cores, RAM and storage")
    general: list[str] = [ctx.shape_line, *ctx.memory.formula, tier_line, *_applied_answers(ctx, assembly)]
    general[2 + len(ctx.memory.formula):2 + len(ctx.memory.formula)] = feasibility.stack_verdicts(
        ctx, gpu, _unpinned_context_for(ctx.catalog, ctx.rules))
    if gpu is None and cpu_only is not None:
        general.insert(0, f"CPU-only build: {cpu_only.reason}")
    if ctx.market != "cn" or ctx.currency != "CNY":  # said first: whose prices and availability these are
        general.insert(0, f"{budget_line(answers.budget.amount, answers.budget.currency, rules)}; prices and "
                          f"availability (export rules, market-only SKUs) are the {MARKET_NAMES[ctx.market]} "
                          f"market's, in {ctx.currency} where the catalog has them")
    general.extend(assembly.power_lines)
    general.append(assembly.heat_line)
    included = "the server's chassis, fans and PSUs included" if "system" in assembly.chosen else (
        "a whole computer" if gpu is not None and gpu["form"] == DESKTOP_SYSTEM else
        "fans beyond the case's own not included" if "case" in assembly.chosen else "case and fans not included")
    closest = "the closest build, for reference only; " if infeasible else ""
    general.append(f"price {_money(ctx, total)} of a {_money(ctx, ctx.budget_cny)} budget ({closest}{included})")
    general.append(f"'guide §' cites the article {GUIDE_TITLE}, whose advice these rules check")
    if not ctx.pins.get("gpu") and gpu is not None and total < 0.6 * ctx.budget_cny and not infeasible:
        left = _money(ctx, ctx.budget_cny - total)
        general.append(  # edge modules, and cards short of a stated rate, are ranked fastest first
            f"{left} of the budget is left: no faster module for this job is within the budget" if ctx.edge else
            f"{left} of the budget is left: no card within it meets the stated rate, and this one comes nearest"
            if not meets_target(ctx, gpu) else
            f"{left} of the budget is left: the best value card was chosen; swap the GPU for a faster or larger one "
            "if speed matters more than price"
        )
    return general


def _applied_answers(ctx: Context, assembly: Assembly) -> list[str]:
    """The noise and power-limit answers, said as applied, so a user sees they were read."""
    budget, lines = ctx.answers.budget, []
    if budget.noise == "quiet":
        lines.append("noise 'quiet' applied: no blower or passive GPUs, quiet-rated CPU coolers only")
    if budget.max_power_w:
        within = "within it" if assembly.wall_w <= budget.max_power_w else "OVER it"
        lines.append(f"power limit {budget.max_power_w:,} W applied: the build draws ~{assembly.wall_w:,.0f} W at the "
                     f"wall, {within}")
    return lines


# Terms the reasoning uses, explained once (in a last line) when they appear.
def _warnings(ctx: Context, assembly: Assembly, gpu: Part | None, today: dt.date) -> list[str]:
    answers = ctx.answers
    warnings: list[str] = resized_context_warning(answers)
    total = assembly.total_cny
    if total > ctx.budget_cny:
        warnings.append(f"over budget: {_money(ctx, total)} is {_money(ctx, total - ctx.budget_cny)} above the "
                        f"{_money(ctx, ctx.budget_cny)} budget")
    warnings.extend(assembly.warnings)
    warnings.extend(compatibility_problems(assembly.chosen, assembly.psu_required_w, gpu_link_lanes(ctx)))
    warnings.extend(context_warnings(answers, ctx.shape.sequence_length))
    warnings.extend(ignored_answer_warnings(answers, ctx.shape))
    if answers.task.layer_offload and gpu is not None and "gpu" not in ctx.pins:
        warnings.append("task.layer_offload is not used: -ngl runs what a card you have (budget.owned_gpu) or pin "
                        "cannot hold on the CPU; a card the wizard chooses holds the whole model")
    if answers.scale.sharding not in ("none", *OFFLOAD_SHARDINGS) and ctx.gpu_count == 1:
        warnings.append(f"{SHARDING_LABELS[answers.scale.sharding]} divides by the GPU count: with one GPU it saves "
                        "nothing")
    if answers.budget.condition == "used" and not all_owned(answers, gpu):  # some bought
        warnings.append(
            "used GPUs: before paying, run `pth-top bench --accept` on the card (a 5-minute burn, a VRAM pattern test "
            "and the ECC/remap/Xid counters; README 'Burn-in and used-GPU acceptance'), and prefer brands whose "
            "warranty follows the card (guide §6.2); the other parts are priced new: the catalog has used listings "
            "for GPUs only"
        )
    warnings.extend(price_warnings(ctx, assembly, today))
    return list(dict.fromkeys(warnings))


def swap(
    build: Build, role: str, catalog: Catalog, *, rules: Rules | None = None, today: dt.date | None = None
) -> Build:
    """The same answers with `role` moved to the next-best alternative (wrapping round)."""
    options = build.alternatives.get(role, ())
    current = build.component(role)
    current_id = current.part_id if current is not None else CPU_ONLY_ID if role == "gpu" else None
    if not options or current_id is None:
        return build
    index = options.index(current_id) if current_id in options else -1
    next_id = options[(index + 1) % len(options)]
    pins = {**build.pins, role: (next_id, 0)}  # 0: the rules choose how many of the new part
    return recommend(
        build.answers, catalog, rules=rules, pins=pins, today=today, title=build.title, comments=build.comments,
        measured=build.measured,
    )


def _context(answers: Answers, catalog: Catalog, rules: Rules, pins: Mapping[str, tuple[str, int]]) -> Context:
    pins = with_owned_pin(answers, pins)
    shape, shape_line = model_shape(answers.workload)
    budget = budget_in_cny(answers.budget.amount, answers.budget.currency, rules)
    currency = answers.budget.currency
    tier, tier_line = budget_tier(budget, rules, None if currency == "CNY" else (
        lambda cny: money(cny, currency, rules)))
    market = buyer_market(answers.budget.market, answers.budget.currency)
    indexes = price_indexes(catalog, market, answers.budget.currency, rules.budget.indexed_kinds,
                            rules.budget.index_min_parts_count, rules.budget.index_base_before, rules)
    return Context(
        answers=answers, catalog=catalog, rules=rules, pins=pins, shape=shape, shape_line=shape_line,
        memory=estimate_memory(answers, shape), budget_cny=budget, tier=tier, tier_line=tier_line,
        gpu_count=answers.scale.gpu_count, edge=answers.scenario == "edge_deployment",
        market=market, currency=answers.budget.currency, price_indexes=indexes,
    )


def _money(ctx: Context, amount_cny: float) -> str:
    return money(amount_cny, ctx.currency, ctx.rules)


def _memory_text(gpu: Part) -> str:
    reported_mib = gpu.get("memory_reported_mib") or 0
    if not reported_mib:
        return f"{gpu['memory_gib']:g} GiB"
    return f"{gpu_memory_gib(gpu):.4g} GiB (nvidia-smi's {reported_mib:,.0f} MiB; sold as {gpu['memory_gib']:g} GB)"


def _gpu_reasons(ctx: Context, gpu: Part) -> list[str]:
    _, metric_text = gpu_metric(ctx)
    need = ctx.memory.total_bytes / GIB
    kind, usable_text = usable_text_of(ctx, gpu)
    per_gpu = " per GPU" if ctx.gpu_count > 1 else ""
    lines = [
        f"memory floor: this workload needs {need:.1f} GiB{per_gpu}; {gpu.name} has {_memory_text(gpu)} {kind} "
        f"({usable_text}) (guide §2.1; each term's formula under Reasoning)",
        owned_line(ctx.answers) if is_owned(ctx.answers, gpu) else f"ranked by {metric_text} among cards meeting the "
        f"floor, {NEAR_TIE_TEXT} (guide §2.3)",
    ]
    preset = ctx.answers.workload.preset
    if preset.startswith("gpt2"):
        lines.append(
            f"the guide's 'GPT-2 needs >= 24 GB' (§2.1) is loose: {model_presets()[preset].name} as configured needs "
            f"{need:.1f} GiB; use the formula, not the name"
        )
    if gpu["form"] == DESKTOP_SYSTEM and not ctx.pins.get("gpu"):
        lines.append("a desktop system is offered only when no PC card within budget holds the job: for the same "
                     "money a card that holds it is faster")
    if gpu["memory_kind"] == "shared":
        lines.append(f"{gpu['memory_gib']:g} GB {gpu['memory_type']} is shared by CPU and GPU, not VRAM; the OS keeps "
                     f"{shared_os_reserve_gib(gpu['form'], ctx.rules)} GB of it")
    lines.extend(gpu.notes_for(ctx.market))
    return lines

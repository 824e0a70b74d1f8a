"""Feasibility first: why a build cannot be recommended, and what is feasible instead, best first."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from pth_top.configs import scale_out, stacks
from pth_top.configs.answers import MAX_GPUS, Answers
from pth_top.configs.assembly import (
    SHORT,
    TIGHT,
    Assembly,
    Context,
    buyable,
    memory_fit,
    needed_bytes,
    part_price,
)
from pth_top.configs.beyond_answers import changed_answers, keeps_the_job
from pth_top.configs.cheap_levers import cheap_levers, recompute_only, with_cheap_label
from pth_top.configs.engine_plan import FULLER_ENGINE_PLAN_LABEL
from pth_top.configs.fewer_gpus import faster_on_fewer_gpus, on_fewer_gpus, with_a_smaller_cache
from pth_top.configs.levers import answer_changes, more_gpus, queue_lever, split_label
from pth_top.configs.market import MARKET_NAMES, money
from pth_top.configs.memory_methods import pretraining
from pth_top.configs.memory_terms import SHARDING_LABELS
from pth_top.configs.micro_batch import halved_again, halved_micro_batch, micro_batch_label, micro_batch_of
from pth_top.configs.nearest import decode_rate_text
from pth_top.configs.on_your_cards import more_of_your_cards, on_the_pinned_gpus
from pth_top.configs.owned import all_owned, is_owned, owned_pin
from pth_top.configs.part_types import DESKTOP_SYSTEM, SYSTEM_GPU_FORMS
from pth_top.configs.parts import Part
from pth_top.configs.platforms import barebone_fit_problems, barebones, system_options, systems_for
from pth_top.configs.power import power_limit_line
from pth_top.configs.ranking import (
    Fit,
    fits_the_machine,
    trains_at_precision,
    usable_bytes,
    weight_format_problem,
)
from pth_top.configs.shorter_context import longest_that_fits, shorter_still
from pth_top.configs.way_out import (
    SLOW_RATE_BAND,
    Alternative,
    feasible_build,
    most_at_once,
    same_build_fastest_first,
    slowest_last,
)
from pth_top.units import GIB


def blockers(ctx: Context, assembly: Assembly, gpu: Part | None, fit: Fit | None) -> list[str]:
    """What stops this build being a recommendation; the first line says it plainly."""
    lines: list[str] = []
    budget = _money(ctx, ctx.budget_cny)
    need = ctx.memory.total_bytes / GIB
    if gpu is not None and ctx.memory.total_bytes > usable_bytes(ctx, gpu):
        if fit is None:
            card = f"your {gpu.name} (budget.owned_gpu) has" if is_owned(ctx.answers, gpu) else \
                f"the pinned {gpu.name} has"
        elif assembly.total_cny <= ctx.budget_cny:
            card = f"the largest card within budget, {gpu.name}, has"
        else:
            card = f"even the cheapest build ({_money(ctx, assembly.total_cny)}) is over budget and its {gpu.name} has"
        usable = usable_bytes(ctx, gpu) / GIB
        at = f" at micro-batch {micro_batch_of(ctx.answers)}" if ctx.answers.task.mode == "training" else ""
        places = 2 if f"{need:.1f}" == f"{usable:.1f}" else 1  # "needs 23.3, has 23.3" reads as a fit
        line = (f"not feasible within {budget}: needs {need:.{places}f} GiB per GPU{at}, {card} {usable:.{places}f} "
                "GiB usable")
        if fit is not None and fit.cheapest_fitting is not None:
            fitting_build, fitting = fit.cheapest_fitting
            price = fitting_build.total_cny
            count = f"{ctx.gpu_count} x " if ctx.gpu_count > 1 else ""
            line += f"; the cheapest build whose GPU holds it costs {_money(ctx, price)} ({count}{fitting.name}" \
                f"{decode_rate_text(ctx, fitting)})"
            if price <= ctx.budget_cny:  # within budget yet not chosen: it breaks a rule or the power limit
                line += _why_not_chosen(ctx, fitting_build)
        elif fit is not None:
            box = " (the closest build, a desktop system, is one box and cannot be split)" if (
                gpu["form"] == DESKTOP_SYSTEM) else ""
            line += f"; {_no_holder(ctx)}: {_spread_advice(ctx)}{box} (below)"
        lines.append(line)
    elif assembly.total_cny > ctx.budget_cny:
        what = "the cheapest build that holds the workload" if fit is not None else (
            "this build around your cards" if is_owned(ctx.answers, gpu) else "this build with its pinned parts")
        line = f"not feasible within {budget}: {what} costs {_money(ctx, assembly.total_cny)}"
        if gpu is None and fit is not None and fit.assembly.total_cny > assembly.total_cny:  # a CPU-only PC, nearer
            line += f", a CPU-only PC; the cheapest GPU build costs {_money(ctx, fit.assembly.total_cny)}"
        if fit is not None and fit.breaking_within is not None:
            breaking, breaking_gpu = fit.breaking_within
            count = f"{ctx.gpu_count} x " if ctx.gpu_count > 1 else ""
            line += (f"; the build within it, {count}{breaking_gpu.name}, breaks its own rules: "
                     f"{breaking.unsatisfied[-1]}")
        if gpu is not None and fit is None and all_owned(ctx.answers, gpu) and memory_fit(ctx, gpu) != SHORT:
            # Audit ZW: an RTX 3060 that holds GPT-J's int8 LoRA, refused for CNY 414 over on a new PC around it.
            yours = ("the cards you have hold" if ctx.gpu_count > 1 else "the card you have holds") + (
                " (tightly, short of the estimator's margin)" if memory_fit(ctx, gpu) == TIGHT else "")
            line += (f"; {yours} the job ({needed_bytes(ctx, gpu) / GIB:.1f} of {usable_bytes(ctx, gpu) / GIB:.1f} GiB "
                     "usable a GPU): in a PC you have with the RAM and power supply this build lists, there is "
                     "nothing to buy")
        lines.append(line)
    if gpu is not None and not buyable(ctx, gpu) and not all_owned(ctx.answers, gpu):
        lines.append(f"{gpu.name} cannot be bought {ctx.answers.budget.condition} in the {MARKET_NAMES[ctx.market]} "
                     f"market ({_unbuyable_reason(ctx, gpu)}): swap the GPU" + (
                         ", or allow used GPUs" if ctx.answers.budget.condition == "new" else ""))
    if gpu is not None and (problem := weight_format_problem(ctx, gpu)):  # a pinned or owned card, not ranked
        lines.append(f"{gpu.name}: {problem}")
    if gpu is not None and not trains_at_precision(ctx, gpu):
        lines.append(f"{gpu.name} has no {ctx.answers.task.precision} tensor cores to train at: answer task.precision "
                     "= \"amp_fp16\" (Volta and Turing have no bf16)")
    max_power = ctx.answers.budget.max_power_w
    if max_power and assembly.wall_w > max_power:
        # The GPUs' power limit, where a measured one brings the draw under it (audit ZI: the lever was the circuit's).
        psu = assembly.chosen.get("psu")
        capped = power_limit_line(gpu, ctx.gpu_count, assembly.wall_w, max_power, psu[0]["efficiency"], ctx.rules,
                                  f"stay under the {max_power} W limit") if psu and gpu is not None else ""
        lines.append(f"not feasible within the {max_power} W limit: the build draws ~{assembly.wall_w:,.0f} W"
                     + (f"; {capped.removeprefix('or ')}" if capped else ""))
    lines.extend(f"breaks its own rules: {line}" for line in assembly.unsatisfied)
    return lines


def _money(ctx: Context, amount_cny: float) -> str:
    return money(amount_cny, ctx.currency, ctx.rules)


def _no_holder(ctx: Context) -> str:
    """That no card holds the job: in the catalog, or (naming the ones that would) none this buyer can buy."""
    unbuyable = [gpu for gpu in ctx.catalog.of_kind("gpu") if fits_the_machine(ctx, gpu)
                 and not buyable(ctx, gpu) and memory_fit(ctx, gpu) != SHORT]
    servers = _other_server_counts(ctx)
    counts = f" in a machine of {ctx.gpu_count} GPU{'s' if ctx.gpu_count > 1 else ''}" if servers else ""
    unhoused = _unhoused(ctx)
    if unhoused:  # a card holds it, but no chassis in the catalog takes it (audit ZG: 4 x H200 NVL)
        return unhoused + (f" ({servers}: scale.gpu_count)" if servers else "")
    if not unbuyable:
        return f"no GPU in this catalog holds that much{counts}" + (f" ({servers}: scale.gpu_count)" if servers else "")
    named = "; ".join(f"{gpu.name}: {_unbuyable_reason(ctx, gpu)}" for gpu in unbuyable[:3])
    more = f" and {len(unbuyable) - 3} more" if len(unbuyable) > 3 else ""
    return (f"no GPU sold {ctx.answers.budget.condition} in the {MARKET_NAMES[ctx.market]} market holds that much"
            f"{counts} (those that would are not: {named}{more}" + (f"; {servers}: scale.gpu_count" if servers else "")
            + ")")


def _unhoused(ctx: Context) -> str:
    """Passive cards that hold the job but that no server chassis in the catalog takes, why, and what to do; "" for
    none (they are never ranked: a passive card lives in a server's airflow)."""
    found = [gpu for gpu in ctx.catalog.of_kind("gpu") if fits_the_machine(ctx, gpu) and buyable(ctx, gpu)
             and gpu["form"] == "datacenter" and gpu["cooling"] == "passive" and memory_fit(ctx, gpu) != SHORT
             and not system_options(ctx, gpu)]
    if not found:
        return ""
    gpu = min(found, key=lambda part: (part_price(ctx, part), part.id))
    chassis = barebones(ctx)
    why = "; ".join(barebone_fit_problems(chassis[0], gpu, ctx.gpu_count)) if chassis else "the catalog has none"
    return (f"{gpu.name} holds it, but no server chassis in the catalog takes {ctx.gpu_count} of these passive cards "
            f"({why}; a PCIe GPU server whose slots do can be added to the user catalog)")


def _other_server_counts(ctx: Context) -> str:
    """Modules this buyer can buy that hold the job only in a server of another GPU count (the HGX H200: 8); none
    for an edge job, which is one module."""
    found: list[str] = []
    if ctx.edge:
        return ""
    for gpu in ctx.catalog.of_kind("gpu"):
        if gpu["form"] not in SYSTEM_GPU_FORMS or not buyable(ctx, gpu) or fits_the_machine(ctx, gpu) \
                or memory_fit(ctx, gpu) == SHORT:
            continue
        counts = sorted({int(system["gpu_count"]) for system in systems_for(ctx, gpu)} - {ctx.gpu_count})
        if counts:
            found.append(f"{gpu.name} does, in a server of {' or '.join(map(str, counts))}")
    return "; ".join(found[:2])


def _unbuyable_reason(ctx: Context, gpu: Part) -> str:
    """Why the part is not sold to this buyer: a market-only SKU, or the catalog's (China market) reason."""
    sold_in = gpu.spec.get("sold_new_in") or []
    if sold_in and ctx.market not in sold_in:
        return "sold new only in " + ", ".join(MARKET_NAMES.get(market, market) for market in sold_in)
    return str(gpu.spec.get("availability_reason") or "not sold new")


def _why_not_chosen(ctx: Context, assembly: Assembly) -> str:
    """Why a build within budget whose GPU holds the job is not the recommendation."""
    if assembly.unsatisfied:
        return f", but breaks a rule: {assembly.unsatisfied[0]}"
    limit = ctx.answers.budget.max_power_w
    if limit and assembly.wall_w > limit:
        return f", but draws ~{assembly.wall_w:,.0f} W at the wall, over the {limit:,.0f} W limit"
    return ""


def _spread_advice(ctx: Context) -> str:
    """How a job too large for any one card goes on: by the kind of workload, never ZeRO for inference."""
    if ctx.edge:
        return "an edge module is one device: quantize it, or a smaller model or a shorter context"
    full = ctx.gpu_count >= MAX_GPUS
    if ctx.answers.task.mode == "inference":
        return ("more nodes (pipeline parallel), quantize it, or a smaller model" if full else
                "split it over the machine's GPUs (tensor parallel), quantize it, or a smaller model")
    activations, total = ctx.memory.activations_bytes / GIB, ctx.memory.total_bytes / GIB
    if activations > total / 2:  # ZeRO-3/FSDP shard the weights, gradients and optimizer states, not these
        return (f"a smaller micro-batch with gradient accumulation, or activation recompute: activations are "
                f"{activations:,.0f} of the {total:,.0f} GiB a GPU, which ZeRO-3/FSDP do not shard")
    if full and ctx.answers.scale.sharding in ("zero3", "fsdp"):
        return (f"{MAX_GPUS} GPUs with {SHARDING_LABELS[ctx.answers.scale.sharding]} are one machine's most: more "
                "nodes, or shrink it")
    if full:
        return f"ZeRO-3/FSDP over the {MAX_GPUS} GPUs, more nodes, or shrink it"
    return "shard it over more GPUs of one machine with ZeRO-3/FSDP, or shrink it"


def feasible_alternatives(
    ctx: Context, context_for: Callable[[Answers], Context], *, rent_first: bool = False,
    pinned_context_for: Callable[[Answers], Context] | None = None,
) -> list[Alternative]:
    """Each change to the answers that yields an acceptable build within budget, cheapest lever first, then renting
    (renting first where a pinned CPU-only PC is the build for GPU-scale training); a job no machine of 8 GPUs
    holds is sized across nodes first (configs/scale_out.py). With a pinned GPU (the user's own cards), the cheapest
    lever that fits the job on them leads."""
    kept = on_the_pinned_gpus(ctx, pinned_context_for) if pinned_context_for is not None else []
    added = more_of_your_cards(ctx, context_for)
    if added is not None and kept and kept[0].answers is not None and kept[0].answers.task.layer_offload:
        kept = [added, *kept]  # cards bought at the job's rate before layers run on the CPU at a fraction of it
        added = None
    found: list[Alternative] = [*kept, *([added] if added is not None else [])]
    changes = answer_changes(ctx)
    halved = halved_micro_batch(ctx.answers)
    own_levers = [halved, recompute_only(ctx.answers)]  # not to be mixed with mb 1
    queued = queue_lever(ctx)  # the server's lever most_at_once sizes
    on_fewer: list[tuple[Answers, str]] = []  # training levers that no build of the GPUs asked holds within budget
    asked_cards = bool(ctx.answers.budget.owned_gpu or "gpu" in ctx.pins)  # yours, or chosen: their count stays

    def attempt(changed: Answers, changed_label: str) -> tuple[Answers, str, Alternative | None]:
        """A change's build, else with the quality-free levers added (shorter_still's tries)."""
        found_build = feasible_build(ctx, changed_label, context_for(changed))
        return (changed, changed_label, found_build) if found_build is not None else _with_cheap_levers(
            ctx, changed, cheap_levers(ctx, changed), changed_label, context_for)

    for label, answers in changes:
        if owned_pin(answers) is not None:
            continue  # a lever on the buyer's own cards: on_the_pinned_gpus' (their build), never other cards
        if label == queued:
            found += [replace(alternative, answers=changed) for changed, alternative in most_at_once(
                ctx, context_for, more_gpus(ctx.answers, "none", split_label(ctx.answers) + " across {n} GPUs"))]
            continue
        feasible = feasible_build(ctx, label, context_for(answers))
        lever, lever_label = answers, label
        if feasible is None and label == FULLER_ENGINE_PLAN_LABEL:
            continue  # alone or not at all: beside a split or a smaller cache it is their lines' margin
        while feasible is None and answers == halved and (deeper := halved_again(ctx.shape, halved)) is not None:
            # The largest micro-batch that fits.
            answers, label = deeper, micro_batch_label(ctx.answers, deeper, ctx.shape)
            feasible = feasible_build(ctx, label, context_for(answers))
            halved = deeper
            own_levers.append(deeper)
        cheap = cheap_levers(ctx, answers) if answers not in own_levers else answers
        training = answers.task.mode == "training"
        if feasible is None and training:
            answers, label, feasible = _with_cheap_levers(ctx, answers, cheap, label, context_for)
        if feasible is None and training and not ctx.edge and answers != ctx.answers and not asked_cards \
                and answers.scale.gpu_count == ctx.answers.scale.gpu_count > 1:
            on_fewer.append((answers, label))
        if (feasible is None and not training and not ctx.edge and answers != ctx.answers
                and answers.scale.gpu_count == ctx.answers.scale.gpu_count):  # the lever with tensor parallel
            alone, alone_label = answers, label
            for more_label, more in more_gpus(answers, "none", split_label(answers) + " across {n} GPUs"):
                feasible = feasible_build(ctx, f"{label}, {more_label}", context_for(more))
                if feasible is not None:
                    answers, label = more, f"{label}, {more_label}"
                    break
            # Smaller weights (a quality change already) with an 8-bit KV cache on the answers' GPUs, where cheaper: a
            # split costing as much as the split alone is dropped below (audit BD50: Q3_K_S with a q8_0 cache on one
            # 3090 was never offered); a server's other levers keep tensor parallel before the cache.
            smaller = (alone.task.precision, alone.task.quantization) != (ctx.answers.task.precision,
                                                                          ctx.answers.task.quantization)
            kv_answers, kv_label, kv_feasible = _with_cheap_levers(ctx, alone, cheap, alone_label, context_for) \
                if feasible is not None and smaller else (alone, alone_label, None)
            if kv_feasible is not None and feasible is not None and kv_feasible.price_cny < feasible.price_cny:
                answers, label, feasible = kv_answers, kv_label, kv_feasible
        if feasible is None and not training:  # then with an 8-bit KV cache, on the answers' GPUs
            alone, alone_label = answers, label
            answers, label, feasible = _with_cheap_levers(ctx, answers, cheap, label, context_for)
            if feasible is None:  # fewer cards than asked, with a q4_0 KV cache
                answers, label, feasible = with_a_smaller_cache(ctx, alone, alone_label, changes, context_for)
        if feasible is None:  # a context shorter than half, where half fits no build
            answers, label, feasible = shorter_still(lever, lever_label, attempt)
        if feasible is not None:  # a shorter context: the longest the build holds
            answers, label, feasible = longest_that_fits(ctx, answers, label, feasible, context_for)
        if feasible is not None and all(alternative.answers != answers for alternative in found):  # one per change
            found.append(replace(feasible, answers=answers))
        if feasible is not None and answers == ctx.answers:
            break  # only the pinned parts were in the way: dropping them is the whole answer
    if not any(alternative.answers is not None for alternative in found):  # no machine of the count asked
        if on_fewer:  # the job as asked first: a lever is no part of a way out that holds without it (audit ZJ31)
            on_fewer.insert(0, (ctx.answers, ""))
        for answers, label in on_fewer:
            fewer, fewer_label, feasible = on_fewer_gpus(ctx, answers, label, context_for)
            if feasible is not None and all(alternative.answers != fewer for alternative in found):
                found.append(replace(feasible, answers=fewer))
    # A combination whose part alone fits as cheaply and as fast adds a change for nothing (an fp8 KV cache beside
    # the tensor parallel that holds the job with its 16-bit cache on the same 8 cards): not offered. One that runs
    # closer to a stated rate is (audit PP: FP8 weights over the tensor parallel that alone missed it).
    made = [changed_answers(ctx.answers, alternative.answers) if alternative.answers is not None else set()
            for alternative in found]
    found = [alternative for alternative, changes in zip(found, made, strict=True) if alternative in kept
             or not any(other and other < changes and other_alternative.price_cny <= alternative.price_cny
                        and not _faster(alternative, other_alternative)
                        for other, other_alternative in zip(made, found, strict=True))]
    found = [alternative for alternative in found if not _q4_0_needless(alternative, found)]
    # No new card holds the job as asked: a used one may, after the changes that keep the job and before those that
    # change it (audit T: Qwen2-VL-7B LoRA for CNY 12,000 led with QLoRA where a used RTX 3090 keeps LoRA); where
    # nothing new fits at all, also with the first lever that does it.
    if ctx.answers.budget.condition == "new" and not ctx.edge and owned_pin(ctx.answers) is None:
        for label, changed in [("", ctx.answers), *(changes if not found else [])]:
            used = changed.with_value("budget", "condition", "used")
            feasible = feasible_build(ctx, "a used GPU (check it with `pth-top bench --accept` before paying)"
                                       + (f", {label}" if label else ""), context_for(used))
            if feasible is not None and any(other.build_key == feasible.build_key for other in found):
                break  # the best build with used cards allowed is a new one offered already (audit EE: an H200 server)
            if feasible is not None:
                found.insert(_used_at(ctx, found, feasible, bool(label)), replace(feasible, answers=used))
                break
    # A way out that cannot serve at the rate asked is no way out yet (audit FF: 32 users at 20 tokens/s each led with
    # a DGX Spark at ~2.1): those that decode fast enough come first, in their order, then the slow ones fastest first;
    # the ways out on the pinned or owned cards lead, unless they are the slow ones.
    on_them = [alternative for alternative in found if alternative in (*kept, added) and not alternative.slow_rate]
    found = on_them + slowest_last([alternative for alternative in found if alternative not in on_them])
    found = same_build_fastest_first(found, _keeping(ctx, found))
    faster = faster_on_fewer_gpus(ctx, found, context_for) if not asked_cards and not ctx.edge else None
    found[:0] = [faster] if faster is not None else []  # twice as fast as any on the count asked: it leads
    rent = scale_out.rent_line(ctx, context_for)
    if rent:
        found.insert(0 if rent_first else len(found), Alternative(rent))
    beyond = scale_out.beyond_one_machine(ctx, context_for)
    # The job as asked on one machine (micro-batch 1, a chunked loss) before more nodes; a pretraining corpus no one
    # machine holds is sized in nodes first (audit ZY: GLM-130B's 400B tokens, 657 days on a used HGX B200, led).
    keeping = 0 if pretraining(ctx.answers, ctx.shape.parameters) else _keeping(ctx, found)
    found[keeping:keeping] = [Alternative(line) for line in beyond]
    if not found:  # one machine holds it but none within budget, nor one rented node: rent several
        found = [Alternative(line) for line in scale_out.rented_nodes(ctx, context_for)]
    return found


def _faster(alternative: Alternative, other: Alternative) -> bool:
    """Whether a way out meets the job's rate where another does not, or decodes a band (SLOW_RATE_BAND) faster."""
    return bool(other.slow_rate) and (not alternative.slow_rate
                                      or alternative.slow_rate > other.slow_rate * SLOW_RATE_BAND)


def _with_cheap_levers(ctx: Context, answers: Answers, cheap: Answers, label: str,
                       context_for: Callable[[Answers], Context]) -> tuple[Answers, str, Alternative | None]:
    """A change retried with the quality-free levers added, where they add any: its answers, label and build."""
    if cheap == answers:
        return answers, label, None
    label = with_cheap_label(ctx, label, answers, cheap)
    return cheap, label, feasible_build(ctx, label, context_for(cheap))


def _used_at(ctx: Context, found: list[Alternative], used: Alternative, changed: bool) -> int:
    """Where a used card goes: after the ways out that keep the job, or, running the job unchanged, before the first
    of them it trains SLOW_RATE_BAND faster than (audit ZR24: InstructPix2Pix's SD 1.5 fine-tune for CNY 15,000, a
    used RTX 3090 listed after two CPU offloads that train far slower); a tight one leads a roomy way out only at
    TIGHT_USED_BAND its rate (audit CL61: a used RTX A4000 at 15.2 of 15.2 GiB, 1.6x as fast, led an 8-bit
    optimizer's 10.9 GiB on a new 16 GB card)."""
    keeping = _keeping(ctx, found)
    if changed or not used.training_rate:
        return keeping
    def outpaces(alternative: Alternative, band: float) -> bool:
        return bool(alternative.training_rate) and used.training_rate >= band * alternative.training_rate

    held_back = [index for index, alternative in enumerate(found[:keeping]) if used.tight and not alternative.tight
                 and not outpaces(alternative, TIGHT_USED_BAND)]  # roomy ways out a tight used card stays behind
    start = held_back[-1] + 1 if held_back else 0
    return next((index for index, alternative in enumerate(found[:keeping])
                 if index >= start and outpaces(alternative, SLOW_RATE_BAND)), keeping)


TIGHT_USED_BAND = 2.0  # a used card short of the estimator's margin leads a roomy way out at twice its rate


def _keeping(ctx: Context, found: list[Alternative]) -> int:
    """How many of the alternatives, from the first, keep the job as asked."""
    keeping = 0
    while keeping < len(found) and _keeps_the_job(ctx, found[keeping]):
        keeping += 1
    return keeping


def _keeps_the_job(ctx: Context, alternative: Alternative) -> bool:
    """A quality-free change, or a server's requests queued beyond those it holds at once: every one still served."""
    changed = alternative.answers
    if changed is None:
        return False
    if ctx.answers.scenario == "inference_server":  # the requests queued count as served: the rest as for any change
        changed = changed.with_value("workload", "batch_size", ctx.answers.workload.batch_size)
    return keeps_the_job(ctx.answers, changed)


def stack_verdicts(ctx: Context, gpu: Part | None, context_for: Callable[[Answers], Context]) -> list[str]:
    """Other common stacks (training loss, serving engine) under which the workload fits this GPU when it does not
    here, or does not when it does: one line each way, so that the stack reads as the lever it is."""
    if gpu is None or ctx.shape.kind != "transformer":
        return []
    task = ctx.answers.task
    current: str
    if task.mode == "training":
        if not ctx.shape.logits_vocabulary_size:
            return []
        key, current, labels = "training_stack", task.training_stack, stacks.TRAINING_STACK_LABELS
    else:
        key, labels = "serving_engine", stacks.SERVING_ENGINE_LABELS
        current = stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision)
    usable = usable_bytes(ctx, gpu)
    fits_here = memory_fit(ctx, gpu) != SHORT
    changed: dict[bool, list[str]] = {True: [], False: []}
    for choice in labels:
        if choice == current:
            continue
        other = context_for(ctx.answers.with_value("task", key, choice))
        fit = memory_fit(other, gpu)
        fits = fit != SHORT
        if fits != fits_here:
            tight = ", tight: inside usable memory, not the estimator's margin" if fit == TIGHT else ""
            own = usable_bytes(other, gpu)  # an engine's own share of the card (vLLM's 0.9, llama.cpp's 0.97)
            of = f" of {own / GIB:.1f} usable" if abs(own - usable) > 0.05 * GIB else ""
            changed[fits].append(f"{labels[choice].split(' (')[0]} {other.memory.total_bytes / GIB:.1f} GiB{of}{tight}")
    lines = []
    if changed[True]:  # a stack's loss, recompute or offload (Unsloth's checkpoints in RAM), not its loss alone
        kind = "another training stack" if task.mode == "training" else "another engine"
        lines.append(f"with {kind} ({', '.join(changed[True])}) this fits the {gpu.name} "
                     f"({usable / GIB:.1f} GiB usable); the estimate above assumes {labels[current]}")
    if changed[False]:
        lines.append(f"with {', '.join(changed[False])} this would not fit the {gpu.name} "
                     f"({usable / GIB:.1f} GiB usable): the estimate assumes {labels[current]}")
    return lines


def _q4_0_needless(alternative: Alternative, found: list[Alternative]) -> bool:
    """A q4_0 KV cache where the same answers with an fp8 one are a way out as cheap: its larger accuracy cost buys
    nothing."""
    answers = alternative.answers
    if answers is None or answers.task.kv_cache_dtype != "q4_0":
        return False
    with_fp8 = answers.with_value("task", "kv_cache_dtype", "fp8")
    return any(other.answers == with_fp8 and other.price_cny <= alternative.price_cny for other in found)

"""A training build that leaves speed on the table: one that spends under half the budget names more GPUs within it,
a run of months on the build that trains the most a unit of money names the card that finishes it soonest, and a long
or one-off run names the rented node that does it for less."""

from __future__ import annotations

import functools
import math
from typing import Callable

from pth_top.configs.answers import Answers
from pth_top.configs.assembly import Context, usable_bytes
from pth_top.configs.beyond_answers import MORE_GPU_COUNTS, gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.cheap_levers import small_activations, small_activations_label
from pth_top.configs.market import money
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.part_types import SYSTEM_GPU_FORMS
from pth_top.configs.parts import Part
from pth_top.configs.presets import model_shape
from pth_top.configs.rules import Rules
from pth_top.configs.scale_out import (
    LLAMA2_SCALING,
    best_bought,
    bought_line,
    fewest_nodes,
    global_batch_note,
    interconnect,
    nic_bound_text,
    rent_market_note,
    spread,
)
from pth_top.configs.sequence_split import training_split
from pth_top.configs.speed import SLOW_RUN_DAYS, duration
from pth_top.configs.speed_build import job_rate, training_rate

NODE_GPUS = 8  # a rented node: 8 GPUs, sharded with FSDP for a full fine-tune
RENTED_TIME_FRACTION_MAX = 0.9  # a rented node is named when it takes under 90 % of the build's time, or costs less
# Rented nodes within 10 % of the cheapest run's money count as as cheap: the fastest of them is named (8 x A100 40GB
# at $1.48 and 8 x H100 SXM at $3.78 an hour cost about the same for a training run; the H100s take 40 % of the days).
RENT_COST_TIE = 1.1
# A run of a day or more that a rented node does for at most a quarter of the build's price is priced beside it too,
# not only a run of months (audit KK: a 410M pretraining, ~11 days on a CNY 299,000 build, ~CNY 16,000 rented).
ONE_OFF_RUN_HOURS = 24.0
ONE_OFF_RENT_SHARE = 0.25
# How much faster another card must train to be named: one model times both, so their errors largely cancel.
LONG_RUN_SPEEDUP = 1.3
SAME_RATE = 0.98  # cards within 2 % of the fastest train as fast: the cheapest of them is named


def fastest_card_for_a_long_run(build: Build, rules: Rules, recommend_one: Callable[..., Build],
                                alternative: bool = False) -> str:
    """A run over SLOW_RUN_DAYS names the fastest card the budget buys at this GPU count, where it trains at least
    LONG_RUN_SPEEDUP times as fast (MPT-7B on 1T tokens for $350,000: 8 x RTX PRO 6000 Max-Q, $83,476, ~259 days;
    8 x H100 SXM, $240,000, ~150; llm-foundry's own run is on H100s). `alternative`: the build is the first
    alternative of one that is no recommendation (audit CF59: Llama3-German-8B's 65B tokens for EUR 350,000 led with
    8 x RTX PRO 4500 at ~57 days, unsaid, where an HGX H200 within it takes ~16.5)."""
    hours = build.speed.figures.get("epoch_hours", 0.0)
    rate = training_rate(build.speed.figures)
    card = build.component("gpu")
    if (build.answers.task.mode != "training" or build.blockers or card is None or not rate
            or hours < SLOW_RUN_DAYS * 24):
        return ""
    faster: list[tuple[float, Build, str]] = []
    for part_id in build.alternatives.get("gpu", ()):
        if part_id in ("none", card.part_id):
            continue
        pinned = functools.partial(recommend_one, gpu_pin={"gpu": (part_id, card.quantity)})
        found = gpu_build(pinned, build.answers)
        if found is None or found[0].total_price_cny > found[0].budget_cny:
            continue
        other_rate = training_rate(found[0].speed.figures)
        if other_rate >= LONG_RUN_SPEEDUP * rate:
            faster.append((other_rate, found[0], found[1].name))
    if not faster:
        return ""
    top = max(each[0] for each in faster)  # an H200 trains this as fast as an H100
    other_rate, other, name = min((each for each in faster if each[0] >= SAME_RATE * top),
                                  key=lambda each: each[1].total_price_cny)
    unit = "tokens" if build.speed.figures.get("training_tokens_per_s") else "samples"
    other_hours = other.speed.figures.get("epoch_hours", hours * rate / other_rate)
    here = "on the first alternative" if alternative else "here"
    return (f"faster within budget: {card.quantity} x {name} train ~{other_rate:,.0f} {unit}/s (~{rate:,.0f} {here}), "
            f"one epoch in ~{duration(other_hours * 3600)} (~{duration(hours * 3600)} {here}), "
            f"{within_text(other, build, rules)}: {'its' if alternative else 'this'} build trains the most a unit of "
            "money, that one finishes soonest (in `pth-top wizard`, "
            + ("apply the first alternative, then " if alternative else "") + "key 1 steps through the GPUs to it)")


SHARDED_HOW = {"fsdp": " with FSDP", "layers": " with its layers split over them"}


def faster_training_within_budget(build: Build, rules: Rules, recommend_one: Callable[..., Build]) -> str:
    """A training build that spends under half the budget names the build of more GPUs (up to 8) within it that
    trains at least twice as fast (a lab's CNY 300,000 bought a CNY 33,000 box and said CNY 267,000 was left; a
    $150,000 lab's 30-day pretraining run on $33,000 of 4 cards)."""
    answers = build.answers
    figures = build.speed.figures
    rate = training_rate(figures)
    if (answers.task.mode != "training" or answers.scale.gpu_count >= 8 or build.blockers or not rate
            or build.total_price_cny > build.budget_cny / 2):
        return ""
    # Plain data parallel first; FSDP only where each GPU cannot hold the whole model (and the answers shard none).
    sharded = "layers" if answers.task.method == "lora_int8" else "fsdp"  # 8-bit weights do not shard (audit BW56)
    shardings = ("none", sharded) if answers.scale.sharding == "none" else (answers.scale.sharding,)
    card = build.component("gpu")
    for count in (count for count in MORE_GPU_COUNTS if count > answers.scale.gpu_count):
        for sharding in shardings:
            changed = answers.with_value("scale", "gpu_count", count).with_value("scale", "sharding", sharding)
            found, kept = gpu_build(recommend_one, changed), ""
            # 1.99: twice the same card scales to 2.0 in the model, give or take rounding
            if (found is None or training_rate(found[0].speed.figures) < 1.99 * rate) and card is not None:
                found = gpu_build(functools.partial(recommend_one, gpu_pin={"gpu": (card.part_id, count)}), changed)
                kept = (" (the wizard ranks another card first there: in `pth-top wizard`, key 1 steps through the "
                        "GPUs to this one)")
            if found is None or training_rate(found[0].speed.figures) < 1.99 * rate:
                continue
            other, gpu = found
            other_rate = training_rate(other.speed.figures)
            unit = "tokens" if figures.get("training_tokens_per_s") else "samples"
            how = SHARDED_HOW.get(sharding, "") if sharding != answers.scale.sharding else ""
            return (f"faster within budget: {count} x {gpu.name}{how} train ~{other_rate:,.0f} {unit}/s "
                    f"(~{rate:,.0f} here), {within_text(other, build, rules)}: answer scale.gpu_count = {count}"
                    + (f' and scale.sharding = "{sharding}"' if how else "") + kept)
    return ""


def _as_answered_across_nodes(rented: Context, context_for: Callable[[Answers], Context], gpu: Part, node: Answers,
                              shape: ModelShape, work: float, small_hours: float) -> float | None:
    """A node's hours for a month-plus run at the job's own micro-batch and recompute, where ZeRO-3 across the nodes
    that finish it holds it and it beats `small_hours` (one node's, at full recompute and micro-batch 1); else None
    (audit YB14: Skywork-13B's 3.2T tokens on 48 nodes at the recomputed rate, ~36 without it)."""
    own_rate = job_rate(node, shape, dict(gpu.spec), gpu.name, NODE_GPUS)
    if not own_rate or work / own_rate >= small_hours:
        return None
    own_hours = work / own_rate
    across = spread(rented, context_for, NODE_GPUS * max(2, math.ceil(own_hours / (SLOW_RUN_DAYS * 24))), node)
    return own_hours if across.memory.total_bytes <= usable_bytes(across, gpu) else None


def rented_run_line(build: Build, context_for: Callable[[Answers], Context], which: str = "this",
                    changed: str = "") -> str:
    """A training run of over SLOW_RUN_DAYS on the build, or of a day or more that renting does for a quarter of its
    price (ONE_OFF_*): the rented node of 8 (rules.toml's rates) that does it for the least money (the fastest within
    RENT_COST_TIE of that), its time and cost beside the build's, for a one-off job (a continued pretraining);
    `changed` says what the first alternative changed in the job, which the rented nodes run too."""
    answers, figures = build.answers, build.speed.figures
    hours = figures.get("epoch_hours", 0.0)  # a data set's epoch: without one there is no run to price
    rate = training_rate(figures)
    if answers.task.mode != "training" or build.blockers or not rate or hours < ONE_OFF_RUN_HOURS:
        return ""
    node = answers.with_value("scale", "gpu_count", NODE_GPUS)
    if answers.scale.sharding == "layers":  # a rented node's 8 GPUs each take their own samples, not one at a time
        node = node.with_value("scale", "sharding", "none")
    if answers.task.method == "full" and node.scale.sharding in ("none", "zero1", "zero2"):
        node = node.with_value("scale", "sharding", "fsdp")
    rented = context_for(node)
    shape, _ = model_shape(node.workload)
    # Micro-batch 1 with accumulation keeps the job on one node where the build's micro-batch does not (audit VV:
    # "rent 2 nodes, the fewest that hold it", where one 8 x H100 node holds it at micro-batch 1).
    small = small_activations(node)
    small_rented = context_for(small) if small != node else None
    # Each: $, node-hours, GPU, $/GPU-hour, nodes, the answers a node runs (`small` at micro-batch 1).
    runs: list[tuple[float, float, Part, float, int, Answers]] = []
    for gpu_id, usd in rented.rules.rent.usd_per_gpu_hour.items():
        gpu = rented.catalog.get(gpu_id)
        if gpu is None:
            continue
        least, run_as = 1, node  # the nodes that hold it: ZeRO-3 across several where one node of these does not
        if rented.memory.total_bytes > usable_bytes(rented, gpu):
            if small_rented is not None and small_rented.memory.total_bytes <= usable_bytes(small_rented, gpu):
                run_as = small
            elif gpu["form"] not in SYSTEM_GPU_FORMS:  # a PCIe node is not linked to another
                continue
            elif (one := spread(rented, context_for, NODE_GPUS, node)).memory.total_bytes <= usable_bytes(one, gpu):
                run_as = one.answers  # ZeRO-3 over the node's 8 (audit YF15: a MoE's QLoRA sized at 2 nodes)
            else:
                least, _, holds = fewest_nodes(rented, context_for, gpu, node)
                if not holds:
                    continue
        rented_rate = job_rate(run_as, shape, dict(gpu.spec), gpu.name, NODE_GPUS)
        rented_hours = hours * rate / rented_rate if rented_rate else 0.0  # on one node
        if run_as is small and rented_hours > SLOW_RUN_DAYS * 24 and gpu["form"] in SYSTEM_GPU_FORMS:
            own_hours = _as_answered_across_nodes(rented, context_for, gpu, node, shape, hours * rate, rented_hours)
            if own_hours is not None:
                run_as, rented_hours = node, own_hours
        if rented_hours:
            runs.append((rented_hours * usd * NODE_GPUS, rented_hours, gpu, usd, least, run_as))
    if not runs:
        return ""
    cheapest = min(run[0] for run in runs)
    dollars, rented_hours, gpu, usd, least, run_as = min(
        (run for run in runs if run[0] <= cheapest * RENT_COST_TIE), key=lambda run: run[1])
    rules = rented.rules
    rented_cny = dollars * rules.currency.cny_per_usd
    if hours <= SLOW_RUN_DAYS * 24 and rented_cny > ONE_OFF_RENT_SHARE * build.total_price_cny:
        return ""  # a run of days that renting does not make much cheaper: the build is the answer
    cost = money(rented_cny, build.currency, rules)
    cheaper = rented_cny < build.total_price_cny
    here = f"~{duration(hours * 3600)} on {which} {money(build.total_price_cny, build.currency, rules)} build" + (
        f" ({changed})" if changed else "")
    how = f" ({small_activations_label(node)})" if run_as is small else ""
    rate_text = (f"{NODE_GPUS} x {gpu.name}{how} at ${usd:g}/GPU-hour ({rules.rent.source}, as of {rules.rent.as_of})"
                 f"{rent_market_note(build.market)}")
    nodes = max(least, math.ceil(rented_hours / (SLOW_RUN_DAYS * 24)))
    if nodes > 1:  # one node is slow too, or does not hold it: as many as finish it in SLOW_RUN_DAYS
        lead = f"to finish in ~{SLOW_RUN_DAYS:g} days, rent {nodes} nodes" if nodes > least else \
            f"rent {nodes} nodes, the fewest that hold it with ZeRO-3 across them,"
        over = f", {money(rented_cny - build.budget_cny, build.currency, rules)} over the budget" \
            if rented_cny > build.budget_cny else ""
        # ZeRO-3's gathers cross the NICs as well as NVLink (audit ZF30: OpenThinker-32B's full fine-tune on 2 rented
        # nodes at ~12 h, where 4 nodes took ~90 h and the run at a node's rate said nothing of them).
        nic = nic_bound_text(run_as, shape, gpu, nodes, rented_hours / nodes * 3600)
        return (f"{lead} of {rate_text}, {nodes * NODE_GPUS:,} GPUs over {interconnect(gpu)}: "
                f"~{duration(rented_hours / nodes * 3600)} for ~{cost}{over} (at a node's rate the GPU-hours do not "
                f"change with the node count){nic}, against {here}; data parallel scales near-linearly across nodes "
                f"({LLAMA2_SCALING}){global_batch_note(answers.workload.batch_size, nodes, training_split(answers))}")
    if rented_hours >= RENTED_TIME_FRACTION_MAX * hours and not cheaper:
        return ""  # the same GPUs for the same time at more money: nothing to say
    return (f"or rent it: {rate_text} run it in ~{duration(rented_hours * 3600)} for ~{cost}, against {here}"
            + (": for a one-off run, renting is cheaper" if cheaper else ""))


def bought_nodes_for_a_long_run(build: Build, context_for: Callable[[Answers], Context]) -> str:
    """A training run of over SLOW_RUN_DAYS on one machine, where the budget buys several whole 8-GPU servers: as many
    as finish it in SLOW_RUN_DAYS that it buys, within it (audit AO44: Granite-3.0-8B's 12T tokens for $5M sold one
    DGX B200 at ~975 days with $4.5M left; GRIN-MoE's 4T for CNY 30M one HGX H200 at ~1,326 days; neither was told
    of more servers)."""
    if build.answers.task.mode != "training" or build.blockers or \
            build.speed.figures.get("epoch_hours", 0.0) < SLOW_RUN_DAYS * 24:
        return ""
    ctx = context_for(build.answers)
    best = best_bought(ctx, context_for)
    if best is None or best.nodes < 2 or best.price > ctx.budget_cny:
        return ""
    return f"to finish sooner within the budget, {bought_line(ctx, best, holds_on_one=True)}"

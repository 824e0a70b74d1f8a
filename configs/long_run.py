"""A training build that leaves speed on the table: one that spends under half the budget names more GPUs within it,
and a run of months on the build that trains the most a unit of money names the card that finishes it soonest."""

from __future__ import annotations

import functools
from typing import Callable

from pth_top.configs.beyond_answers import MORE_GPU_COUNTS, gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.rules import Rules
from pth_top.configs.speed import SLOW_RUN_DAYS, duration
from pth_top.configs.speed_build import training_rate

# How much faster another card must train to be named: one model times both, so their errors largely cancel.
LONG_RUN_SPEEDUP = 1.3
SAME_RATE = 0.98  # cards within 2 % of the fastest train as fast: the cheapest of them is named


def fastest_card_for_a_long_run(build: Build, rules: Rules, recommend_one: Callable[..., Build]) -> str:
    """A run over SLOW_RUN_DAYS names the fastest card the budget buys at this GPU count, where it trains at least
    LONG_RUN_SPEEDUP times as fast (MPT-7B on 1T tokens for $350,000: 8 x RTX PRO 6000 Max-Q, $83,476, ~259 days;
    8 x H100 SXM, $240,000, ~150; llm-foundry's own run is on H100s)."""
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
    return (f"faster within budget: {card.quantity} x {name} train ~{other_rate:,.0f} {unit}/s (~{rate:,.0f} here), "
            f"one epoch in ~{duration(other_hours * 3600)} (~{duration(hours * 3600)} here), "
            f"{within_text(other, build, rules)}: this build trains the most a unit of money, that one finishes "
            "soonest (in `pth-top wizard`, key 1 steps through the GPUs to it)")


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
    shardings = ("none", "fsdp") if answers.scale.sharding == "none" else (answers.scale.sharding,)
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
            fsdp = " with FSDP" if sharding != answers.scale.sharding else ""
            return (f"faster within budget: {count} x {gpu.name}{fsdp} train ~{other_rate:,.0f} {unit}/s "
                    f"(~{rate:,.0f} here), {within_text(other, build, rules)}: answer scale.gpu_count = {count}"
                    + (' and scale.sharding = "fsdp"' if fsdp else "") + kept)
    return ""

"""A training run of months on the build that trains the most a unit of money: the card that finishes it soonest
within the budget, at the same GPU count, is named where it is clearly faster."""

from __future__ import annotations

import functools
from typing import Callable

from pth_top.configs.beyond_answers import gpu_build, within_text
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

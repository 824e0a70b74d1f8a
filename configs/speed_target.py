"""A stated decode rate (task.target_tokens_per_s_per_stream): a build under it is no recommendation where more GPUs
within budget, or the nearest build over it, meets it.

Cards that meet the target are chosen first (ranking._fitting_tiers); this is for the budget whose cards at the
answered GPU count all fall short: 24 real-time Orpheus speech streams need ~84 tokens/s each.
"""

from __future__ import annotations

import math
from typing import Callable

from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import gpu_build, within_text
from pth_top.configs.build import Build
from pth_top.configs.levers import split_label
from pth_top.configs.market import cny_per, money
from pth_top.configs.rules import Rules

# How far over budget a build under the target looks for the nearest that meets it.
TARGET_BUDGET_MULTIPLIERS = (1.25, 1.5, 2.0, 3.0, 5.0, 10.0)
GPU_COUNTS = (2, 4, 8)


def _per_stream(build: Build) -> float:
    return build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0)


def below_target_passed_over(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                             ) -> tuple[str, str, Answers] | None:
    """A build under the answered decode rate a stream is passed over for more GPUs with tensor parallel within budget
    that meet it, else for the nearest build over budget that does: why, the alternative's line and its answers."""
    answers, here = build.answers, build.component("gpu")
    target, rate = answers.task.target_tokens_per_s_per_stream, _per_stream(build)
    if not target or answers.task.mode != "inference" or build.blockers or here is None or not 0 < rate < target:
        return None
    short = (f"below the target: ~{rate:,.1f} tokens/s per stream on {here.quantity} x {here.name}, under "
             f"task.target_tokens_per_s_per_stream = {target:g}")
    for count in (count for count in GPU_COUNTS if count > answers.scale.gpu_count):
        changed = answers.with_value("scale", "gpu_count", count)
        found = gpu_build(recommend_one, changed)
        if found is None or _per_stream(found[0]) < target:
            continue
        other, gpu = found
        line = (f"{count} x {gpu.name} with {split_label(changed)}: ~{_per_stream(other):,.1f} tokens/s per stream, "
                f"{within_text(other, build, rules)} (answer scale.gpu_count = {count})")
        return f"{short}, where {count} GPUs within budget decode ~{_per_stream(other):,.1f} (below)", line, changed
    for multiplier in TARGET_BUDGET_MULTIPLIERS:
        found = gpu_build(recommend_one, answers.with_value("budget", "amount", answers.budget.amount * multiplier))
        if found is None or _per_stream(found[0]) < target:
            continue
        other, gpu = found
        amount = math.ceil(other.total_price_cny / cny_per(build.currency, rules))
        changed = answers.with_value("budget", "amount", float(max(amount, answers.budget.amount)))
        price = money(other.total_price_cny, build.currency, rules)
        over = money(other.total_price_cny - build.budget_cny, build.currency, rules)
        line = (f"{gpu.quantity} x {gpu.name}, a build of {price} "
                f"({over} over {money(build.budget_cny, build.currency, rules)}): ~{_per_stream(other):,.1f} "
                f"tokens/s per stream (answer budget.amount = {amount:g})")
        return f"{short}, where the nearest build that meets it costs {price} ({over} over the budget; below)", line, \
            changed
    return None

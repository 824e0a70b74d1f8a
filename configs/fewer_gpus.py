"""A way out on fewer GPUs than asked: a training lever where no machine of the count asked holds the job within
budget, or one that trains twice as fast as those on them; an inference job on fewer, larger cards with a smaller KV
cache."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from pth_top.configs import stacks
from pth_top.configs.answers import Answers, cross_field_problems
from pth_top.configs.assembly import Context
from pth_top.configs.beyond_answers import keeps_the_job
from pth_top.configs.cheap_levers import cheap_levers, with_cheap_label
from pth_top.configs.levers import answer_changes
from pth_top.configs.way_out import Alternative, feasible_build

# How much faster fewer GPUs must train than the ways out on the count asked (small cards stepping from CPU RAM over
# PCIe, or at micro-batch 1): twice, as more GPUs are named at twice their rate (README).
FEWER_GPUS_TRAINING_SPEEDUP = 2.0
ON_FEWER_LABEL = "on {count} of the {asked} GPUs asked (scale.gpu_count = {count})"  # a way out's GPUs, fewer


def on_fewer_gpus(ctx: Context, answers: Answers, label: str, context_for: Callable[[Answers], Context]
                  ) -> tuple[Answers, str, Alternative | None]:
    """A training lever on fewer GPUs: half the count, down to one (audit ZL22: Llama 2 70B's LoRA on 4 used GPUs for
    EUR 5,000, whose 4-GPU platform alone broke the budget, was sent to a 13B model or to renting; QLoRA of the 70B
    holds it on one machine within it)."""
    count = answers.scale.gpu_count // 2
    while count >= 1:
        fewer = answers.with_value("scale", "gpu_count", count)
        if cross_field_problems(fewer):  # a sequence split over more GPUs than are left (review r73)
            break
        fewer_label = f"{label}, " if label else ""
        fewer_label += ON_FEWER_LABEL.format(count=count, asked=answers.scale.gpu_count)
        feasible = feasible_build(ctx, fewer_label, context_for(fewer))
        if feasible is not None:
            return fewer, fewer_label, feasible
        count //= 2
    return answers, label, None


def faster_on_fewer_gpus(ctx: Context, found: list[Alternative], context_for: Callable[[Answers], Context]
                         ) -> Alternative | None:
    """The job, or a lever that keeps it (keeps_the_job), on fewer GPUs than asked (half, else a quarter, down to
    one), each alone or with the quality-free levers where it needs them, where it trains
    FEWER_GPUS_TRAINING_SPEEDUP times as fast as every way out on the count asked: the fastest with the estimator's
    margin, else the fastest (audit BZ57: Firefly-LLaMA2-13B's QLoRA for CNY 40,000 on 4 GPUs led with 4 x RTX 3060
    under FSDP CPU offload, ~585 tokens/s, where 2 x RTX 4090 at micro-batch 4 train ~1,553 for less). Never a smaller
    model or a shorter sequence, which change the job (review r73)."""
    rates = [each.training_rate for each in found if each.answers is not None and each.training_rate]
    asked = ctx.answers.scale.gpu_count
    if not rates or asked < 2 or ctx.answers.task.sequence_parallel:  # a split sequence is its own GPU count
        return None
    count, faster, held = asked // 2, list[Alternative](), False  # held: a build on `count` holds the job
    while count >= 1 and not faster and not held:  # fewer still, only where none of these holds it
        fewer = ctx.answers.with_value("scale", "gpu_count", count)
        on_fewer = context_for(fewer)
        tries = [("", fewer)] + [(label, answers) for label, answers in answer_changes(on_fewer)
                                 if answers.scale.gpu_count == count and answers != fewer]
        where = ON_FEWER_LABEL.format(count=count, asked=asked)
        for label, answers in tries:  # each alone, else with the quality-free levers
            cheap = cheap_levers(on_fewer, answers)
            cheap_label = with_cheap_label(on_fewer, label, answers, cheap)
            for each, each_label in [(answers, label)] + ([(cheap, cheap_label)] if cheap != answers else []):
                if not keeps_the_job(ctx.answers, each) or cross_field_problems(each):
                    continue
                feasible = feasible_build(ctx, f"{each_label}, {where}" if each_label else where, context_for(each))
                if feasible is not None and feasible.training_rate >= FEWER_GPUS_TRAINING_SPEEDUP * max(rates):
                    faster.append(replace(feasible, answers=each))
                if feasible is not None:
                    held = True
                    break
        count //= 2
    return max(faster, key=lambda each: (not each.tight, each.training_rate)) if faster else None


def with_a_smaller_cache(ctx: Context, answers: Answers, label: str, changes: list[tuple[str, Answers]],
                         context_for: Callable[[Answers], Context]) -> tuple[Answers, str, Alternative | None]:
    """An inference job on fewer cards than asked, with the q4_0 KV cache where it is a lever (audit BY57: Reka Flash 3
    Q4_K_M at 32k on 2 GPUs for EUR 1,200 was sent to a CPU-only PC at ~4.4 tokens/s, where one used RTX A4000 with a
    q4_0 cache decodes ~25 for EUR 952)."""
    if answers.scale.gpu_count >= ctx.answers.scale.gpu_count or not any(
            each == stacks.KV_CACHE_Q4_0_LABEL for each, _ in changes):
        return answers, label, None
    smaller = answers.with_value("task", "kv_cache_dtype", "q4_0")
    label = f"{label}, {stacks.KV_CACHE_Q4_0_LABEL}"
    return smaller, label, feasible_build(ctx, label, context_for(smaller))

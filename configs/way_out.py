"""A way out of an infeasible build: its line, its build's price and, for a language model, whether it decodes fast
enough to serve the job (on its build's RAM where layers or experts run there)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Mapping, TypeVar

from pth_top.configs import speed as sp
from pth_top.configs.answers import Answers
from pth_top.configs.assembly import TIGHT, Assembly, Context, fits_on, memory_fit, memory_on, needed_bytes
from pth_top.configs.beyond_answers import DATASHEET_PACE, RAM_PACE, keeps_the_job, slow_rate_text
from pth_top.configs.layer_offload import with_ram_split
from pth_top.configs.levers import queued_label
from pth_top.configs.market import cny_per
from pth_top.configs.market import money as market_money
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.parts import Part
from pth_top.configs.ram_platform import platform_for_ram, runs_from_ram
from pth_top.configs.ranking import first_acceptable, ranked_gpus
from pth_top.configs.speed_build import device_for, inference, job_prediction, training_rate
from pth_top.configs.speed_notes import FP8_BLOCKS_NOTE, FP8_SPLIT_WAY_OUT
from pth_top.units import GIB

Found = TypeVar("Found")  # what an attempt at a request count found


@dataclass(frozen=True, slots=True)
class Alternative:
    """One feasible way forward: its line, and the answers and pins that give it (None: not a build, e.g. renting)."""

    line: str
    answers: Answers | None = None
    pins: Mapping[str, tuple[str, int]] = field(default_factory=dict)
    price_cny: float = math.inf  # the build's, where the line is one
    slow_rate: float = 0.0  # tokens/s a stream where under the stated target (or 5): after those that are not
    build_key: tuple[str, int, int, float] = ("", 0, 0, 0.0)  # its GPU, how many, GiB needed a GPU and price
    tight: bool = False  # it fits usable memory, not the estimator's margin
    training_rate: float = 0.0  # a training job's predicted tokens, samples or images a second on its build


SLOW_RATE_BAND = 1.25  # a quarter: a faster way out leads a roomier or higher-quality one only past it


def slowest_last(found: list[Alternative]) -> list[Alternative]:
    """Those that decode fast enough in their order, then the slow ones fastest first: each band within
    SLOW_RATE_BAND of the fastest left in the levers' order."""
    ordered = [alternative for alternative in found if not alternative.slow_rate]
    slow = sorted((alternative for alternative in found if alternative.slow_rate), key=lambda one: -one.slow_rate)
    while slow:
        band = [alternative for alternative in slow if alternative.slow_rate * SLOW_RATE_BAND >= slow[0].slow_rate]
        ordered += sorted(band, key=found.index)
        slow = [alternative for alternative in slow if alternative not in band]
    return ordered


def feasible_build(ctx: Context, label: str, alternative: Context, gpus: list[tuple[Part, bool]] | None = None
                   ) -> Alternative | None:
    """The best acceptable build for the changed context, as an alternative's line and price (its answers are the
    caller's); None where none is."""
    ranked = ranked_gpus(alternative) if gpus is None else gpus
    found = first_acceptable(alternative, ranked)
    if found is None:
        return None
    holding = None if gpus is not None or "gpu" in alternative.pins else [part for part, fits in ranked if fits]
    gpu, assembly = platform_for_ram(alternative, found[1], found[0], holding)  # the card and platform it is built on
    count = f"{alternative.gpu_count} x " if alternative.gpu_count > 1 else ""
    prediction, from_ram = way_out_prediction(alternative, gpu, assembly)
    rate, slow = slow_decode(alternative, prediction)
    pace = "" if slow else (f"{RAM_PACE}~{rate:,.1f} tokens/s per stream" if rate else "") if from_ram else \
        DATASHEET_PACE + prediction.summary[0] if prediction is not None and prediction.summary else ""
    need_gib = needed_bytes(alternative, gpu) / GIB
    split = prediction is not None and any(line.startswith(FP8_BLOCKS_NOTE) for line in prediction.warnings)
    return Alternative(f"{label}: {need_gib:.1f} GiB per GPU "
                       f"{fits_on(alternative, gpu, count + gpu.name)}; build {money(ctx, assembly.total_cny)} "
                       f"within {money(ctx, ctx.budget_cny)}" + (f"; {slow}" if slow else "")
                       + (f"; {pace}" if pace else "") + (f"; {FP8_SPLIT_WAY_OUT}" if split else ""),
                       price_cny=assembly.total_cny, slow_rate=rate if slow else 0.0,
                       build_key=(gpu.id, alternative.gpu_count, round(need_gib * 10), round(assembly.total_cny)),
                       tight=memory_fit(alternative, gpu) == TIGHT,
                       training_rate=training_rate(prediction.figures) if prediction is not None else 0.0)


JUST_OVER_BUDGET = 1.05  # a build that keeps the job this far over the budget leads ways out that change it


def just_over_budget(ctx: Context, context_for: Callable[[Answers], Context], cheapest: tuple[Assembly, Part] | None,
                     first: Alternative | None) -> Alternative | None:
    """The job as answered on the cheapest build that holds it, up to 5 % over the budget, where the first way out
    within it changes the job (audit BA49: a q4_0 KV cache on two 16 GB cards, tight, led two used RTX 3090s that
    hold the job as asked for EUR 33 over EUR 2,500) or is no build, renting (audit CB58: Nemotron-70B in Q4_K_M for
    EUR 2,500 was told to rent two A100s, where two used RTX 3090s decode ~16.9 tokens/s for EUR 33 over)."""
    if cheapest is None or first is None or (first.answers is not None and keeps_the_job(ctx.answers, first.answers)):
        return None
    price = cheapest[0].total_cny
    if not ctx.budget_cny < price <= JUST_OVER_BUDGET * ctx.budget_cny:
        return None
    amount = math.ceil(price / cny_per(ctx.currency, ctx.rules))
    raised = context_for(ctx.answers.with_value("budget", "amount", float(amount)))
    over = f"{money(ctx, price - ctx.budget_cny)} ({(price / ctx.budget_cny - 1):.1%})"
    found = feasible_build(raised, f"the job as answered, {over} over the budget (answer budget.amount = {amount})",
                           raised)
    return None if found is None else dataclasses.replace(found, answers=raised.answers)


def same_build_fastest_first(found: list[Alternative], keeping: int) -> list[Alternative]:
    """Of the first `keeping` ways out (those that keep the job), one on the same build (its GPUs and price) that
    trains SLOW_RATE_BAND faster, with the margin where the next has it, or one on the same GPUs with the margin the
    next lacks, no dearer and no slower, comes before the next in the levers' order
    (audit ZD19: phi-1's fine-tune on 8 x RTX PRO 4500 led with recompute at micro-batch 4, ~11.7 h, where micro-batch
    1 without recompute on that build takes ~8.8)."""
    def build(one: Alternative) -> tuple[str, int, float]:
        return one.build_key[0], one.build_key[1], one.build_key[3]

    remaining, ordered = list(found[:keeping]), []
    while remaining:
        next_one = remaining[0]
        faster = [other for other in remaining if build(other) == build(next_one) and next_one.training_rate
                  and other.training_rate >= SLOW_RATE_BAND * next_one.training_rate
                  and (next_one.tight or not other.tight)]
        # A tight fit gives way to one on the same cards with the margin, no dearer and no slower (audit ZC28: a 7B
        # full fine-tune on 4 x RTX 4060 Ti led with a tight ZeRO-Offload before ZeRO-3 with CPU offload, cheaper and
        # faster by the same figures).
        roomier = [other for other in remaining if next_one.tight and not other.tight and next_one.training_rate
                   and other.build_key[:2] == next_one.build_key[:2] and other.price_cny <= next_one.price_cny
                   and other.training_rate >= next_one.training_rate]
        # One on any build, no dearer, no slower and no tighter, and better in one of them (audit BC49: Dolphin's full
        # fine-tune on 4 used cards led with ZeRO-Offload at EUR 14,031, ~2,486 tokens/s, before ZeRO-3 with CPU
        # offload at EUR 13,305, ~2,764).
        better = [other for other in remaining if next_one.training_rate and other.price_cny <= next_one.price_cny
                  and other.training_rate >= next_one.training_rate and (next_one.tight or not other.tight)
                  and (other.price_cny < next_one.price_cny or other.training_rate > next_one.training_rate)
                  and _same_condition(other, next_one)]
        pick = max(faster, key=lambda other: other.training_rate) if faster else roomier[0] if roomier else \
            better[0] if better else next_one
        remaining.remove(pick)
        ordered.append(pick)
    return ordered + found[keeping:]


def _same_condition(one: Alternative, other: Alternative) -> bool:
    """Whether two ways out buy on the same terms: a used card is offered where it is, not ahead of a new one."""
    return one.answers is None or other.answers is None or \
        one.answers.budget.condition == other.answers.budget.condition


def way_out_prediction(ctx: Context, gpu: Part, assembly: Assembly) -> tuple[sp.Prediction | None, bool]:
    """The job's speed on a way out's GPUs before its build is made, and whether part of it runs from the assembly's
    RAM: then at that RAM's rate, else on the GPUs' datasheet (audit XJ8: a 12T-token pretraining run offered 8 x RTX
    PRO 4000 with no time, ~35 years)."""
    shape = ctx.shape
    if ctx.answers.task.mode == "inference" and runs_from_ram(ctx, gpu):  # layers or experts on the CPU
        cpu, kit = assembly.chosen.get("cpu"), assembly.chosen.get("memory_kit")
        device = with_ram_split(device_for(dict(gpu.spec), gpu.name, ctx.gpu_count, ctx.answers, shape, None),
                                ctx.answers, shape, memory_on(ctx, gpu), dict(cpu[0].spec) if cpu else None,
                                dict(kit[0].spec) if kit else None, kit[1] if kit else 0)
        return inference(ctx.answers, shape, device), True
    return job_prediction(ctx.answers, shape, dict(gpu.spec), gpu.name, ctx.gpu_count), False


def slow_decode(ctx: Context, prediction: sp.Prediction | None) -> tuple[float, str]:
    """A language model's decode rate a stream in the way out's prediction, and why it is too slow to serve the job
    (under the stated target, or under SLOW_DECODE_TOKENS_PER_S); "" where it is not."""
    task, shape = ctx.answers.task, ctx.shape
    if task.mode != "inference" or shape.kind != "transformer" or shape.denoising_steps or forward_only(shape):
        return 0.0, ""
    stated = sp.stated_target(task)
    floor = stated[1] if stated is not None and stated[0].decode else sp.SLOW_DECODE_TOKENS_PER_S
    figures = prediction.figures if prediction is not None else {}
    idle = figures.get("decode_tokens_per_s_per_stream", 0.0)
    rate = sp.held_rate(figures, stated[0]) if stated is not None and stated[0].decode else idle
    loaded = stated is not None and sp.held_under_load(figures, stated[0])
    if not 0 < rate < floor:
        return rate, ""
    under = f"task.{stated[0].answer_key} = {floor:g}" if stated is not None and stated[0].decode else \
        f"{floor:g}, slower than reading"
    why = f" under load (~{idle:.1f} idle)" if loaded else ""
    return rate, slow_rate_text(rate, why, under)


def money(ctx: Context, amount_cny: float) -> str:
    return market_money(amount_cny, ctx.currency, ctx.rules)


def most_at_once(ctx: Context, context_for: Callable[[Answers], Context], splits: list[tuple[str, Answers]]
                 ) -> list[tuple[Answers, Alternative]]:
    """A server that cannot hold all its concurrent requests: the most one build within budget holds at once, at
    least a quarter (the last queued waits at most three requests' time), the rest queued as its engine queues them;
    on the asked GPUs, and on a split of `splits` (label, answers) that holds more but not all (the split alone is
    its own lever; audit YA: 87 on one card, 192 on two); on a build that decodes at the rate (way_out.slow_decode)
    and with the estimator's margin where a quarter has them, else TIGHT or slow, said (audit UU: DeepSeek-V3.2)."""
    asked = ctx.answers.workload.batch_size
    built: dict[tuple[str, int], tuple[Answers, Alternative | None]] = {}  # each count a split is built once

    def tried(split: str, base: Answers, fast: bool, roomy: bool, count: int) -> tuple[Answers, Alternative] | None:
        if (split, count) not in built:
            answers = base.with_value("workload", "batch_size", count)
            built[split, count] = answers, feasible_build(ctx, queued_label(ctx.answers, count, split),
                                                          context_for(answers))
        answers, found = built[split, count]
        return None if found is None or (roomy and found.tight) or (fast and found.slow_rate) else (answers, found)

    # Fewer at once on a card that serves them before more on one under the rate (audit ZA: Qwen1.5-7B for 100 users
    # was 87 at once on a DGX Spark at ~2.6 tokens/s each, where one RTX PRO 6000 holds 62 at ~20).
    for fast, roomy in ((True, True), (True, False), (False, True), (False, False)):
        found = [each for split, base in [("", ctx.answers), *splits]
                 if (not split or tried(split, base, fast, roomy, asked) is None)
                 and (each := largest_at_once(asked, partial(tried, split, base, fast, roomy))) is not None]
        if found:
            best = max(found, key=lambda each: each[0])  # the fewest GPUs among equals: the first
            return [each[1] for each in found if each is found[0] or each is best]
    return []


def largest_at_once(asked: int, attempt: Callable[[int], Found | None]) -> tuple[int, Found] | None:
    """The most of `asked` requests at once that `attempt` holds (what it found there), at least a quarter of them
    (the last queued waits at most three requests' time): halved until one holds, then bisected to a sixteenth."""
    low, high, best = asked // 2, asked, None
    while low >= max(1, -(-asked // 4)) and (best := attempt(low)) is None:
        low, high = low // 2, low
    while best is not None and high - low > max(1, low // 16):
        middle = (low + high) // 2
        found = attempt(middle)
        low, high, best = (middle, high, found) if found is not None else (low, middle, best)
    return None if best is None else (low, best)

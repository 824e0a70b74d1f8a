"""What lies beyond the answers as given: the nearest build over budget, a faster one the budget buys."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from typing import Callable

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import SECTIONS, Answers, splits_over_gpus
from pth_top.configs.assembly import TIGHT_FIT
from pth_top.configs.build import Build, Component
from pth_top.configs.levers import (
    more_gpu_counts,
    split_label,
)
from pth_top.configs.market import cny_per, money
from pth_top.configs.part_types import DESKTOP_SYSTEM
from pth_top.configs.rules import Rules
from pth_top.configs.speed import SLOW_DECODE_TOKENS_PER_S, duration

MORE_GPU_COUNTS = (2, 4, 8)  # the machines of more GPUs a faster build is looked for in (tensor parallel's)
SLOW_WAY_OUT = "but ~"  # how a way out too slow for the job says its rate (configs.feasibility writes it)


def slow_rate_text(rate: float, loaded: str, under: str) -> str:
    """'but ~14.1 tokens/s per stream under load, under task.target_... = 15': a way out's rate short of the job's."""
    return f"{SLOW_WAY_OUT}{rate:.1f} tokens/s per stream{loaded}, under {under}"

# Answer fields whose change keeps the job as asked (the model, its method and precision, its data): stack, memory
# and parallelism levers. An 8-bit optimizer and an fp8 KV cache are counted here: their loss is within noise.
QUALITY_FREE_FIELDS = frozenset({
    ("task", "training_stack"), ("task", "recompute"), ("task", "accumulation_steps"), ("task", "optimizer"),
    ("task", "kv_cache_dtype"), ("task", "cache_embeddings"), ("task", "sync_each_batch"), ("task", "vae_slicing"),
    ("task", "sequence_parallel"),
    ("scale", "sharding"),
    ("scale", "gpu_count"),
    ("budget", "condition"),
})


def keeps_the_job(before: Answers, after: Answers) -> bool:
    """Whether a change touches only the quality-free levers (QUALITY_FREE_FIELDS)."""
    if before.scenario != after.scenario:
        return False
    changed = {(section, key) for section, key, _ in changed_answers(before, after)}
    if mixed_precision_of_fp32(before, after):  # fp32 master weights: fp32's accuracy (arXiv:1710.03740)
        changed.discard(("task", "precision"))
    if after.task.kv_cache_dtype == "q4_0" != before.task.kv_cache_dtype:  # fp8's cost is small, q4_0's is not
        return False
    return changed <= QUALITY_FREE_FIELDS


def mixed_precision_of_fp32(before: Answers, after: Answers) -> bool:
    """Whether a change trains an fp32 full training job in bf16 mixed precision (its weights and states fp32)."""
    return before.task.mode == after.task.mode == "training" and before.task.method == after.task.method == "full" \
        and (before.task.precision, after.task.precision) == ("fp32", "bf16")


def changed_answers(before: Answers, after: Answers) -> set[tuple[str, str, object]]:
    """The answers a change sets: (section, key, new value as an answers file writes it) for each that differs."""
    old, new = before.to_dict(), after.to_dict()
    return {(section, key, json.dumps(value)) for section in SECTIONS for key, value in new[section].items()
            if old[section].get(key) != value}


def answer_text(before: Answers, after: Answers) -> str:
    """'task.recompute = "full", task.accumulation_steps = 8': the answers a change sets, in key order."""
    return ", ".join(f"{section}.{key} = {value}" for section, key, value in sorted(changed_answers(before, after)))


def gpu_build(recommend_one: Callable[[Answers], Build], answers: Answers) -> tuple[Build, Component] | None:
    """The recommendation for changed answers, and its GPU, where it is one: a GPU build with nothing blocking it,
    within its budget (an edge build's budget is the raised one it was asked with); None where the engine cannot split
    the model over its GPUs."""
    if not splits_over_gpus(answers):
        return None
    try:
        other = recommend_one(answers)
    except ValueError:
        return None
    gpu = other.component("gpu")
    if gpu is None or other.blockers or other.total_price_cny > other.budget_cny:
        return None
    return other, gpu


def within_text(other: Build, build: Build, rules: Rules) -> str:
    """'a build of <its price> within <the budget>', in the buyer's currency."""
    return (f"a build of {money(other.total_price_cny, build.currency, rules)} within "
            f"{money(build.budget_cny, build.currency, rules)}")


def warned(build: Build, prefix: str) -> bool:
    """Whether a build carries a warning of this kind ("slow:", "tight fit: ")."""
    return any(line.startswith(prefix) for line in build.warnings)


def faster_server_within_budget(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                                ) -> tuple[str, str, Answers] | None:
    """A server under SLOW_DECODE_TOKENS_PER_S a stream is passed over for the build within budget, the same card
    with an fp8 KV cache or 2-8 cards with tensor parallel, that decodes at least twice as fast and above that rate,
    one with the estimator's margin first (a TIGHT one said so): why, the alternative's line and its answers (issue:
    a slow box is passed over for one in budget that does it)."""
    answers = build.answers
    per_stream = _stream_rate(build.speed.figures)
    if (answers.task.mode != "inference" or answers.scale.gpu_count != 1 or answers.scenario == "edge_deployment"
            or build.blockers or not 0 < per_stream < SLOW_DECODE_TOKENS_PER_S):
        return None
    fp8_kv = stacks.fp8_kv_cache_open(answers.task, answers.scenario)
    tries = [(1, "fp8")] if fp8_kv else []  # the same card with an fp8 KV cache first (its batch may then fit)
    counts = more_gpu_counts(answers)
    tight: tuple[int, str, Answers, Build, Component] | None = None  # a fit short of the margin, if nothing roomier
    last = counts[-1] if counts else 1  # after a tight build, a roomier one is looked for one GPU count further only
    for count, kv in tries + [(count, kv) for count in counts for kv in ("auto", "fp8")[:1 + fp8_kv]]:
        if count > last:
            break
        changed = answers.with_value("scale", "gpu_count", count)
        changed = changed.with_value("task", "kv_cache_dtype", "fp8") if kv == "fp8" else changed
        found = gpu_build(recommend_one, changed)
        if found is None:
            continue
        other, gpu = found
        rate = _stream_rate(other.speed.figures)
        if rate < max(2 * per_stream, SLOW_DECODE_TOKENS_PER_S):
            continue
        if warned(other, TIGHT_FIT):
            if tight is None:
                tight = (count, kv, changed, other, gpu)
                last = next((more for more in counts if more > count), count)
            continue
        return _faster_server(build, rules, count, kv, changed, other, gpu)
    return _faster_server(build, rules, *tight) if tight else None


def _stream_rate(figures: dict[str, float]) -> float:
    """A server's decode a stream under load where its requests bring fresh prompts, else when idle (audit AV47: 9
    streams of 32,000-token prompts, 53 tokens/s idle and 2 under load, kept an RTX 5090 box)."""
    return figures.get("sustained_tokens_per_s_per_stream") or figures.get("decode_tokens_per_s_per_stream", 0.0)


def _faster_server(build: Build, rules: Rules, count: int, kv: str, changed: Answers, other: Build, gpu: Component
                   ) -> tuple[str, str, Answers]:
    """faster_server_within_budget's reason and line for the build it found."""
    answers = build.answers
    per_stream, rate = _stream_rate(build.speed.figures), _stream_rate(other.speed.figures)
    loaded = " under load" if build.speed.figures.get("sustained_tokens_per_s_per_stream") else ""
    device = build.component("gpu")
    why = (f"slow: ~{per_stream:.1f} tokens/s per stream{loaded} on {device.name if device else 'it'} is under "
           f"{SLOW_DECODE_TOKENS_PER_S:g}, slower than reading, where a build within "
           f"{money(build.budget_cny, build.currency, rules)} decodes ~{rate:,.1f} (below)")
    kv_text = ", an fp8 KV cache" if kv == "fp8" else ""
    kv_answer = " and task.kv_cache_dtype = \"fp8\"" if kv == "fp8" else ""
    how = f"{split_label(answers)}{kv_text}" if count > 1 else "an fp8 KV cache"
    tight = " (fits TIGHT: inside usable memory, not the estimator's margin)" if warned(other, TIGHT_FIT) else ""
    line = (f"{count} x {gpu.name} with {how}{tight}: ~{rate:,.1f} tokens/s per stream, "
            f"{within_text(other, build, rules)} (answer scale.gpu_count = {count}{kv_answer})")
    return why, line, changed


def offload_before_a_desktop_system(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                                    ) -> tuple[str, str, Answers] | None:
    """A diffusion pipeline put on a desktop system (DGX Spark) because no PC card holds it whole is passed over for a
    PC card with Diffusers model offload within budget that makes its images faster: a desktop system is for jobs no
    PC card holds (CogView4-6B: 5.4 min a batch on the Spark, 3.1 with offload on a 32 GB card, for less)."""
    answers, gpu = build.answers, build.component("gpu")
    batch_s = build.speed.figures.get("image_batch_s", 0.0)
    if (gpu is None or gpu.spec.get("form") != DESKTOP_SYSTEM or build.blockers or not batch_s
            or answers.task.pipeline_offload or not answers.workload.frozen_parameters):
        return None
    changed = answers.with_value("task", "pipeline_offload", True)
    found = gpu_build(recommend_one, changed)
    if found is None or found[1].spec.get("form") == DESKTOP_SYSTEM:
        return None
    other, card = found
    other_s = other.speed.figures.get("image_batch_s", 0.0)
    if not other_s or other_s >= batch_s:
        return None
    why = (f"a desktop system is for a job no PC card holds, and {card.name} holds this one with Diffusers model "
           f"offload, ~{duration(other_s)} a batch against ~{duration(batch_s)} on {gpu.name} (below)")
    line = (f"Diffusers model offload (task.pipeline_offload = true) on {card.name}: ~{duration(other_s)} a batch, "
            f"{within_text(other, build, rules)}")
    return why, line, changed


def raised_budget_build(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build], answers: Answers,
                        multipliers: tuple[float, ...], rejects: Callable[[Build], bool] = lambda other: False,
                        ) -> tuple[Build, Component, int] | None:
    """The first GPU build within the answers' budget raised by each multiplier in turn that `rejects` lets through,
    its GPU, and the whole amount in the buyer's currency its build needs."""
    for multiplier in multipliers:
        found = gpu_build(recommend_one, answers.with_value("budget", "amount", answers.budget.amount * multiplier))
        if found is not None and not rejects(found[0]):
            other, gpu = found
            return other, gpu, math.ceil(other.total_price_cny / cny_per(build.currency, rules))
    return None


EDGE_BUDGET_MULTIPLIERS = (1.25, 1.5, 2.0, 3.0)  # how far over budget a slow edge build looks for a module that is not


def slow_edge_passed_over(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                          ) -> tuple[str, str, Answers] | None:
    """A slow edge build (decode under SLOW_DECODE_TOKENS_PER_S, or minutes to the first token) is passed over for
    the nearest module over budget that is not slow: $400 bought a Raspberry Pi 4 at 1.2 tokens/s and a 52-minute
    first token for Gemma 2 2B, where a $429 Jetson decodes ~22 (issue: a box that cannot do the job in reasonable
    time says so, or is passed over). Its answers raise the budget to that module's build."""
    answers, here = build.answers, build.component("gpu")
    over_budget_only = build.memory_fits and all(line.startswith("not feasible within") for line in build.blockers)
    if answers.scenario != "edge_deployment" or not over_budget_only or here is None or not warned(build, "slow:"):
        return None  # a module short of the budget alone (the cheapest over it) is passed over too (audit MM: a Pi 4)
    within = _edge_with_a_smaller_kv_cache(build, rules, recommend_one)
    if within is not None:
        return within
    found = raised_budget_build(build, rules, recommend_one, answers, EDGE_BUDGET_MULTIPLIERS,
                                lambda other: warned(other, "slow:"))
    limit, power = answers.budget.max_power_w, ""
    if found is None and limit:  # the power limit leaves only slow modules: name the nearest one, and its watts
        answers = answers.with_value("budget", "max_power_w", 0)
        found = raised_budget_build(build, rules, recommend_one, answers, EDGE_BUDGET_MULTIPLIERS,
                                    lambda other: warned(other, "slow:"))
        watts = found[0].power.wall_draw_w if found else 0.0
        power = f" and draws ~{watts:,.0f} W at the wall, over the {limit:g} W limit" if found else ""
    if found is None:
        return None
    other, gpu, amount = found
    changed = answers.with_value("budget", "amount", float(max(amount, answers.budget.amount)))
    if power:
        changed = changed.with_value("budget", "max_power_w", math.ceil(other.power.wall_draw_w))
    price = money(other.total_price_cny, build.currency, rules)
    over = money(other.total_price_cny - build.budget_cny, build.currency, rules)
    why = (f"too slow for the job on {here.name} ({build.speed.summary[0]}), where the "
           f"nearest module that is not, {gpu.name}, costs {price} ({over} over the budget{power}; below)")
    raised_limit = f" and budget.max_power_w = {math.ceil(other.power.wall_draw_w)}" if power else ""
    line = (f"{gpu.name}, a build of {price} ({over} over {money(build.budget_cny, build.currency, rules)}): "
            f"{other.speed.summary[0]} (answer budget.amount = {amount:g}{raised_limit})")
    return why, line, changed


def _edge_with_a_smaller_kv_cache(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                                  ) -> tuple[str, str, Answers] | None:
    """The module within budget that an fp8, then a q4_0, KV cache lets hold the job and is not slow, before any over
    it (audit AJ43: InternLM3-8B in Q4_K_M at 8k for $700 was sent to a $1,500 Orin NX where the $399 Orin Nano Super
    holds it with llama.cpp's q4_0 cache, and Aya Expanse 8B with its q8_0 one; NVIDIA runs 8B int4 models on it)."""
    answers, here = build.answers, build.component("gpu")
    task = answers.task
    if here is None:
        return None
    levers = [(stacks.fp8_kv_cache_open(task, answers.scenario), "fp8", "an 8-bit KV cache", stacks.KV_CACHE_FP8_LABEL),
              (stacks.q4_0_kv_cache_open(task, answers.scenario), "q4_0", "a q4_0 KV cache",
               stacks.KV_CACHE_Q4_0_LABEL)]
    for is_open, value, short, label in levers:
        if not is_open:
            continue
        changed = answers.with_value("task", "kv_cache_dtype", value)
        found = gpu_build(recommend_one, changed)
        if found is None or warned(found[0], "slow:"):
            continue
        other, gpu = found
        tight = " (fits TIGHT: inside usable memory, not the estimator's margin)" if warned(other, TIGHT_FIT) else ""
        why = (f"too slow for the job on {here.name} ({build.speed.summary[0]}), where {gpu.name} with {short} is "
               f"not, within budget (below)")
        line = (f"{gpu.name} with {label}{tight}: {other.speed.summary[0]}, {within_text(other, build, rules)} "
                f"(answer task.kv_cache_dtype = \"{value}\")")
        return why, line, changed
    return None


def first_alternative_timed(build: Build, recommend_one: Callable[..., Build]) -> tuple[Build, Build | None]:
    """A build that is no recommendation gives its first alternative's predicted speed: the multi-GPU server a
    one-card answer cannot be is chosen on it (Kimi-K2 FP8 at 128k: TP8 on a DGX B200, ~76 tokens/s a stream). Also
    that alternative's build, where it is one."""
    if not build.blockers or not build.applicable_alternatives:
        return build, None
    line, answers, pins = build.applicable_alternatives[0]
    try:
        other = recommend_one(answers, pins or None)
    except ValueError:
        return build, None
    gpu = other.component("gpu")
    if other.blockers or not other.speed.figures or (gpu.name if gpu else "CPU-only") not in line:
        return build, None  # no time for another build than the line's (a CPU-only PC beside a card's line)
    if line not in build.feasible_alternatives or other.speed.summary[0] in _without_pace(line) \
            or f"; {SLOW_WAY_OUT}" in line:  # a passed-over or slow one says it
        return build, other
    timed = f"{_without_pace(line)}; {other.speed.summary[0]}{_under_target(other)}"
    lines = tuple(timed if each == line else each for each in build.feasible_alternatives)
    return dataclasses.replace(build, feasible_alternatives=lines, applicable_alternatives=(
        (timed, answers, pins), *build.applicable_alternatives[1:])), other


# How a way out's pace is reckoned before its build is made (way_out.datasheet_pace): the datasheet's, an upper bound
# where the build's slots give the cards fewer lanes or an older PCIe generation; with part of the job in the RAM its
# assembly holds, that RAM's.
DATASHEET_PACE = "on the cards' datasheet and full x16 links: "
RAM_PACE = "with what runs from the build's RAM: "


def _without_pace(line: str) -> str:
    """A way out's line without the pace reckoned before its build, for its build's own."""
    for pace in (DATASHEET_PACE, RAM_PACE):
        head, found, _ = line.rpartition(f"; {pace}")
        if found:
            return head
    return line


def _under_target(other: Build) -> str:
    """'; but ~14.1 tokens/s per stream under load, under task.target_... = 15' where the build's held rate misses
    the stated decode target its idle headline meets (audit YM2: a queued Qwen1.5-110B server quoted ~23.1)."""
    stated = sp.stated_target(other.answers.task)
    if stated is None or not stated[0].decode:
        return ""
    held = sp.held_rate(other.speed.figures, stated[0])
    if not 0 < held < stated[1]:
        return ""
    loaded = " under load" if sp.held_under_load(other.speed.figures, stated[0]) else ""
    return f"; {slow_rate_text(held, loaded, f'task.{stated[0].answer_key} = {stated[1]:g}')}"


def alternative_label(line: str) -> str:
    """What an alternative changes in the job: its line up to its memory need ("int4 weights")."""
    found = re.match(r"(.*?): [\d.,]+ GiB per GPU", line)
    return found.group(1) if found else ""

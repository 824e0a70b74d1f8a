"""A stated rate (speed.RATE_TARGETS: a decode a stream, or inputs a second): a build under it is no recommendation
where more GPUs within budget, or the nearest build over it, meets it.

Cards that meet the target are chosen first (ranking._fitting_tiers); this is for the budget whose cards at the
answered GPU count all fall short: 24 real-time Orpheus speech streams need ~84 tokens/s each, a camera at 25 FPS
25 images a second.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, NamedTuple

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.beyond_answers import EDGE_BUDGET_MULTIPLIERS, MORE_GPU_COUNTS, gpu_build, warned, within_text
from pth_top.configs.build import Build, Component
from pth_top.configs.levers import split_label
from pth_top.configs.market import cny_per, money
from pth_top.configs.memory_inference import forward_only, takes_inputs
from pth_top.configs.presets import model_shape
from pth_top.configs.rules import Rules
from pth_top.configs.speed_forward import EAGER_FLOOR

# How far over budget a server or home build under the target looks for the nearest that meets it (an edge job:
# EDGE_BUDGET_MULTIPLIERS, as a slow edge build).
TARGET_BUDGET_MULTIPLIERS = (1.25, 1.5, 2.0, 3.0, 5.0, 10.0)
GPU_COUNTS = (1, *MORE_GPU_COUNTS)
# More GPUs within budget that miss the target but run this much faster lead the way out, unless a build within this
# much of the budget meets it.
NEARER_BAND = 1.25


def below_target_passed_over(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build]
                             ) -> tuple[str, str, Answers] | None:
    """A build under the stated rate is passed over for more GPUs (tensor parallel, or each its own inputs) within
    budget that meet it, else for the cheapest build over budget, at any GPU count, that does: why, the
    alternative's line and its answers."""
    answers, here = build.answers, build.component("gpu")
    stated = sp.stated_target(answers.task)
    if stated is None or answers.task.mode != "inference" or build.blockers or here is None:
        return None
    rate_target, target = stated

    def rate_of(one: Build) -> float:
        return sp.held_rate(one.speed.figures, rate_target)

    rate = rate_of(build)
    if not 0 < rate < target:
        return None
    unit = rate_target.unit + (" under load" if sp.held_under_load(build.speed.figures, rate_target) else "")
    short = (f"{sp.BELOW_TARGET}~{rate:,.1f} {unit} on {here.quantity} x {here.name}, under "
             f"task.{rate_target.answer_key} = {target:g}")
    edge = answers.scenario == "edge_deployment"
    # No lever costs less than compiling a forward pass that eager PyTorch runs (its launches and activations held
    # back; the same rate on this card can be another's compiled: a ResNet-50 server on an RTX 4090, not two cards).
    shape = model_shape(answers.workload)[0]
    eager = stacks.forward_runtime(answers.task.forward_runtime, answers.scenario) == "eager"
    compiles = warned(build, EAGER_FLOOR) or eager and (shape.kind == "cnn" or forward_only(shape))
    if compiles:
        asked = answers.scale.gpu_count
        # The fewest GPUs that meet it, up to the inputs at once: more would sit idle (audit ZX38: EfficientNet-B4 at
        # batch 1 for 200 images/s was offered 4 x RTX 5060 compiled for CNY 37,325, where one compiled card meets it).
        counts = range(1, max(1, min(asked, answers.workload.batch_size)) + 1) if asked > 1 else (asked,)
        # An engine builds in fp16 where fp32 was answered (audit ZV26: Depth-Anything-Large's 12 ms in TensorRT FP16).
        fp32 = answers.task.precision in ("fp32", "tf32")
        engine = ("a TensorRT engine: its fused encoder kernels' rate" if forward_only(shape) else
                  "a TensorRT engine, or torch.compile(mode=\"reduce-overhead\")")
        for count, half in ((count, half) for count in counts for half in (False, True)[:1 + fp32]):
            tried = answers.with_value("task", "forward_runtime", "compiled").with_value("scale", "gpu_count", count)
            tried = tried.with_precision("fp16") if half else tried
            compiled = gpu_build(recommend_one, tried)
            if compiled is not None and rate_of(compiled[0]) >= target:
                other, gpu = compiled
                fp16 = " in fp16" if half else ""
                answer = 'task.forward_runtime = "compiled"' + (', task.precision = "fp16"' if fp16 else "") + (
                    f", scale.gpu_count = {count}" if count != asked else "")
                line = (f"a compiled forward pass{fp16} ({engine}): {gpu.quantity} x {gpu.name}, "
                        f"~{rate_of(other):,.1f} {unit}, {within_text(other, build, rules)} (answer {answer})")
                return f"{short} in eager PyTorch, where compiled{fp16} it runs ~{rate_of(other):,.1f} (below)", \
                    line, other.answers
    # The cheap lever first: a server of many streams reads their caches every token, and fp8 halves them.
    fp8_open = rate_target.decode and stacks.fp8_kv_cache_open(answers.task, answers.scenario)
    cheaper = gpu_build(recommend_one, answers.with_value("task", "kv_cache_dtype", "fp8")) if fp8_open else None
    if cheaper is not None and rate_of(cheaper[0]) >= target:
        other, gpu = cheaper
        line = (f"{stacks.KV_CACHE_FP8_LABEL}: {gpu.quantity} x {gpu.name}, ~{rate_of(other):,.1f} {unit}, "
                f"{within_text(other, build, rules)} (answer task.kv_cache_dtype = \"fp8\")")
        return f"{short}, where an fp8 KV cache runs ~{rate_of(other):,.1f} within budget (below)", line, \
            other.answers
    # Then fp8 weights, which halve a 16-bit decode's reads and run FP8 matmuls at near-lossless quality (audit YM2:
    # EuroLLM-9B for 32 streams at 20 tokens/s on one RTX 5090 for EUR 6,466, where 2 x 5090 over budget were named).
    for with_cache in (False, True) if rate_target.decode else ():
        changed = _fp8_weights(answers, with_cache)
        found = gpu_build(recommend_one, changed) if changed is not None and (fp8_open or not with_cache) else None
        if found is not None and rate_of(found[0]) >= target:
            other, gpu = found
            cache = f", and {stacks.KV_CACHE_FP8_LABEL}" if with_cache else ""
            line = (f"{FP8_WEIGHTS_LABEL}{cache}: {gpu.quantity} x {gpu.name}, ~{rate_of(other):,.1f} {unit}, "
                    f"{within_text(other, build, rules)} (answer {_fp8_answer(with_cache)})")
            return f"{short}, where fp8 weights run ~{rate_of(other):,.1f} within budget (below)", line, other.answers
    nearer: tuple[Build, Component, int, Answers] | None = None  # more GPUs within budget, short but nearer

    def count_line(other: Build, gpu: Component, count: int, changed: Answers, note: str = "",
                   answered: str = "") -> str:
        how = split_label(changed) if rate_target.decode else "each its own inputs"
        return (f"{count} x {gpu.name} with {how}: ~{rate_of(other):,.1f} {unit}{note}, "
                f"{within_text(other, build, rules)} (answer {answered}scale.gpu_count = {count})")

    by_inputs = not rate_target.decode and takes_inputs(shape)
    for count in (count for count in GPU_COUNTS if count > answers.scale.gpu_count and not edge
                  and (not by_inputs or count <= answers.workload.batch_size)):  # each its own inputs, none idle
        changed = answers.with_value("scale", "gpu_count", count)
        found = gpu_build(recommend_one, changed)
        if found is None:
            continue
        other, gpu = found
        if rate_of(other) >= target:
            return f"{short}, where {count} GPUs within budget run ~{rate_of(other):,.1f} (below)", \
                count_line(other, gpu, count, changed), changed
        # Those GPUs with fp8 weights and cache too (audit YP2: CodeGeeX4-9B for 32 users on 8 x RTX PRO 4000 ran
        # 16.9 tokens/s with 16-bit weights, 22.4 with fp8, the two levers never tried together).
        in_fp8 = _fp8_weights(changed, fp8_open) if rate_target.decode else None
        quick = gpu_build(recommend_one, in_fp8) if in_fp8 is not None else None
        if quick is not None and rate_of(quick[0]) >= target:
            return (f"{short}, where {count} GPUs with fp8 weights run ~{rate_of(quick[0]):,.1f} within budget "
                    "(below)", count_line(quick[0], quick[1], count, changed, f" with {FP8_WEIGHTS_LABEL}",
                                          f"{_fp8_answer(fp8_open)}, "), quick[0].answers)
        if rate_of(other) > max(rate * NEARER_BAND, rate_of(nearer[0]) if nearer else 0.0):
            nearer = other, gpu, count, changed
    over = _nearest_meeting(build, rules, recommend_one, rate_of, target, unit) or _beyond_the_limits(
        build, rules, recommend_one, rate_of, target, unit)
    if compiles:  # the nearest build over budget that meets it compiled, where cheaper (audit DL69: Depth-Anything)
        compiled_over = _nearest_meeting(dataclasses.replace(build, answers=answers.with_value(
            "task", "forward_runtime", "compiled")), rules, recommend_one, rate_of, target, unit,
            'compiled (a TensorRT engine or torch.compile), ', 'task.forward_runtime = "compiled", ')
        if compiled_over is not None and (over is None or compiled_over.build.total_price_cny
                                          < over.build.total_price_cny):
            over = compiled_over._replace(price=f"{compiled_over.price} compiled")
    if over is not None and over.build.total_price_cny <= build.budget_cny * NEARER_BAND:
        nearer = None  # a quarter over the budget meets it: that first
    if nearer is not None:  # the budget's best before the money to meet it (audit ZF: 4 x RTX PRO 4000, not a Spark)
        other, gpu, count, changed = nearer
        costs = f"; the nearest build that meets it costs {over.price} ({over.over} over the budget)" if over else ""
        return f"{short}, where {count} GPUs within budget run ~{rate_of(other):,.1f}{costs} (below)", \
            count_line(other, gpu, count, changed, ", nearer the target"), changed
    if over is None:
        return None
    return f"{short}, where the nearest build that meets it costs {over.price} ({over.over} over the budget; below)", \
        over.line, over.answers


FP8_WEIGHTS_LABEL = ("fp8 weights (an FP8 checkpoint, or vLLM/SGLang --quantization fp8: 1 B a weight, FP8 "
                     "matmuls on Ada, Hopper and Blackwell cards)")


def _fp8_weights(answers: Answers, with_cache: bool = False) -> Answers | None:
    """The 16-bit weights in fp8 (and the KV cache, `with_cache`) where the engine runs FP8 matmuls
    (stacks.FP8_GEMM_ENGINES); None elsewhere."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    if task.precision not in ("bf16", "fp16") or engine not in stacks.FP8_GEMM_ENGINES:
        return None
    changed = answers.with_value("task", "precision", "int8").with_value("task", "quantization", "fp8")
    return changed.with_value("task", "kv_cache_dtype", "fp8") if with_cache else changed


def _fp8_answer(with_cache: bool) -> str:
    """What to answer for fp8 weights (and the fp8 KV cache)."""
    return 'task.precision = "int8", task.quantization = "fp8"' + (', task.kv_cache_dtype = "fp8"' if with_cache
                                                                    else "")


def _beyond_the_limits(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build],
                       rate_of: Callable[[Build], float], target: float, unit: str) -> _Meeting | None:
    """Where no build within the answers' noise and power limits meets the target, the nearest that does past one
    of them, saying which (audit YP2: a quiet 450 W office server at ~8.4 tokens/s a stream was a recommendation)."""
    budget = build.answers.budget
    limits: list[tuple[str, object, str]] = [
        ("noise", "any", f'budget.noise = "any" (not "{budget.noise}")')] if budget.noise != "any" else []
    limits += [("max_power_w", 0, f"budget.max_power_w above {budget.max_power_w:g} W")] if budget.max_power_w else []
    for dropped in [[limit] for limit in limits] + ([limits] if len(limits) > 1 else []):
        relaxed = build.answers
        for key, value, _ in dropped:
            relaxed = relaxed.with_value("budget", key, value)
        found = _nearest_meeting(dataclasses.replace(build, answers=relaxed), rules, recommend_one, rate_of, target,
                                 unit)
        if found is not None:
            said = " and ".join(text for _, _, text in dropped)
            return found._replace(line=f"{found.line}; past your limits: {said}")
    return None


class _Meeting(NamedTuple):
    """The cheapest build over budget that meets the target: its line, answers, build, price and how far over."""

    line: str
    answers: Answers
    build: Build
    price: str
    over: str


def _nearest_meeting(build: Build, rules: Rules, recommend_one: Callable[[Answers], Build],
                     rate_of: Callable[[Build], float], target: float, unit: str, how: str = "",
                     answered: str = "") -> _Meeting | None:
    """The cheapest build over budget, at any GPU count, that meets the target (`how` it runs, and what else to
    answer for it); None within the multipliers."""
    answers = build.answers
    edge = answers.scenario == "edge_deployment"
    counts = (1,) if edge else GPU_COUNTS
    for multiplier in EDGE_BUDGET_MULTIPLIERS if edge else TARGET_BUDGET_MULTIPLIERS:
        raised = answers.with_value("budget", "amount", answers.budget.amount * multiplier)
        meeting = [found for found in (gpu_build(recommend_one, raised.with_value("scale", "gpu_count", count))
                                       for count in counts) if found is not None and rate_of(found[0]) >= target]
        if not meeting:
            continue
        other, gpu = min(meeting, key=lambda found: found[0].total_price_cny)
        amount = math.ceil(other.total_price_cny / cny_per(build.currency, rules))
        changed = other.answers.with_value("budget", "amount", float(max(amount, answers.budget.amount)))
        price = money(other.total_price_cny, build.currency, rules)
        over = money(other.total_price_cny - build.budget_cny, build.currency, rules)
        count_answer = f", scale.gpu_count = {gpu.quantity}" if gpu.quantity != answers.scale.gpu_count else ""
        line = (f"{how}{gpu.quantity} x {gpu.name}, a build of {price} ({over} over "
                f"{money(build.budget_cny, build.currency, rules)}): ~{rate_of(other):,.1f} {unit} "
                f"(answer {answered}budget.amount = {amount:g}{count_answer})")
        return _Meeting(line, changed, other, price, over)
    return None

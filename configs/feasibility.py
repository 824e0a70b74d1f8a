"""Feasibility first: why a build cannot be recommended, and what is feasible instead, best first."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

from pth_top.configs.answers import FIELDS, Answers
from pth_top.configs.assembly import Assembly, Context
from pth_top.configs.parts import Part
from pth_top.configs.presets import model_presets
from pth_top.configs.ranking import Fit, first_acceptable, ranked_gpus, usable_bytes
from pth_top.units import GIB

# Precisions an inference workload can step down to, smallest last.
INFERENCE_STEPS = ("fp16", "int8", "int4")
MAX_RENTED_GPUS = 64  # the rent line doubles the GPU count (ZeRO-3) up to this many


def blockers(ctx: Context, assembly: Assembly, gpu: Part | None, fit: Fit | None) -> list[str]:
    """What stops this build being a recommendation; the first line says it plainly."""
    lines: list[str] = []
    budget = f"¥{ctx.budget_cny:,.0f}"
    need = ctx.memory.total_bytes / GIB
    if gpu is not None and ctx.memory.total_bytes > usable_bytes(ctx, gpu):
        if fit is None:
            card = f"the pinned {gpu.name} has"
        elif assembly.total_cny <= ctx.budget_cny:
            card = f"the largest card within budget, {gpu.name}, has"
        else:
            card = f"even the cheapest build (¥{assembly.total_cny:,.0f}) is over budget and its {gpu.name} has"
        usable = usable_bytes(ctx, gpu) / GIB
        line = f"not feasible within {budget}: needs {need:.1f} GiB per GPU, {card} {usable:.1f} GiB usable"
        if fit is not None and fit.cheapest_fitting is not None:
            price, fitting = fit.cheapest_fitting
            line += f"; the cheapest build whose GPU holds it costs ¥{price:,.0f} ({fitting.name})"
        elif fit is not None:
            line += ("; no GPU in this catalog holds that much: spread it over more GPUs with ZeRO-3/FSDP, or shrink "
                     "it (below)")
        lines.append(line)
    elif assembly.total_cny > ctx.budget_cny:
        what = "the cheapest build that holds the workload" if fit is not None else "this build with its pinned parts"
        lines.append(f"not feasible within {budget}: {what} costs ¥{assembly.total_cny:,.0f}")
    condition = ctx.answers.budget.condition
    if gpu is not None and not gpu.buyable(condition):
        reason = gpu.spec.get("availability_reason") or "not sold new"
        lines.append(f"{gpu.name} cannot be bought new ({reason}): allow used GPUs, or swap the GPU")
    max_power = ctx.answers.budget.max_power_w
    if max_power and assembly.wall_w > max_power:
        lines.append(f"not feasible within the {max_power} W limit: the build draws ~{assembly.wall_w:,.0f} W")
    lines.extend(f"breaks its own rules: {line}" for line in assembly.unsatisfied)
    return lines


@dataclass(frozen=True, slots=True)
class Alternative:
    """One feasible way forward: its line, and the answers and pins that give it (None: not a build, e.g. renting)."""

    line: str
    answers: Answers | None = None
    pins: Mapping[str, tuple[str, int]] = field(default_factory=dict)


def feasible_alternatives(
    ctx: Context, context_for: Callable[[Answers], Context], *, rent_first: bool = False
) -> list[Alternative]:
    """Each change to the answers that yields an acceptable build within budget, best first, then renting
    (renting first where the closest build is a CPU-only PC for GPU-scale training)."""
    found = []
    for label, answers in _changes(ctx):
        line = _feasible_line(ctx, label, context_for(answers))
        if not line and answers.task.mode == "training" and answers.task.recompute != "full":
            answers = _small_activations(answers)
            line = _feasible_line(ctx, label + ", full recompute, micro-batch 1", context_for(answers))
        if line:
            found.append(Alternative(line, answers))
        if line and answers == ctx.answers:
            break  # only the pinned parts were in the way: dropping them is the whole answer
    if not found and ctx.answers.budget.condition == "new" and not ctx.edge:  # nothing new fits: a used card may
        used = ctx.answers.with_value("budget", "condition", "used")
        line = _feasible_line(ctx, "a used GPU (check it with `pth-top bench --accept` before paying)",
                              context_for(used))
        if line:
            found.append(Alternative(line, used))
    rent = _rent_line(ctx, context_for)
    if rent:
        found.insert(0 if rent_first else len(found), Alternative(rent))
    return found


def _feasible_line(ctx: Context, label: str, alternative: Context) -> str:
    found = first_acceptable(alternative, ranked_gpus(alternative))
    if found is None:
        return ""
    assembly, gpu = found
    count = f"{alternative.gpu_count} x " if alternative.gpu_count > 1 else ""
    return (f"{label}: {alternative.memory.total_bytes / GIB:.1f} GiB per GPU fits {count}{gpu.name}; "
            f"build ¥{assembly.total_cny:,.0f} within ¥{ctx.budget_cny:,.0f}")


def _small_activations(answers: Answers) -> Answers:
    """Full recompute and a micro-batch of 1 (the global batch kept by gradient accumulation)."""
    micro_batch_one = max(1, math.ceil(answers.workload.batch_size / answers.scale.gpu_count))
    steps = min(micro_batch_one, int(FIELDS["task"]["accumulation_steps"].high or 1))  # stays a valid answer
    return answers.with_value("task", "recompute", "full").with_value("task", "accumulation_steps", steps)


def _changes(ctx: Context) -> list[tuple[str, Answers]]:
    """Answer changes that shrink GPU memory, in the order an engineer would try them."""
    answers = ctx.answers
    task, scale = answers.task, answers.scale
    changes: list[tuple[str, Answers]] = []
    if ctx.pins:
        changes.append(("the same answers without the pinned parts", answers))
    if task.mode == "training":
        if task.method == "full" and ctx.shape.kind == "transformer":
            changes.append((f"LoRA (rank {task.lora_rank}, bf16 base)", answers.with_value("task", "method", "lora")))
        smaller = _small_activations(answers)  # keeps the method (and a bf16 base) before quantizing it
        if smaller != answers:
            changes.append(("full recompute (gradient checkpointing) and micro-batch 1 with gradient accumulation",
                            smaller))
        if task.method in ("full", "lora") and ctx.shape.kind == "transformer":
            changes.append(("LoRA on an int8 base (LLM.int8(): 1 B per projection weight), bf16 adapters",
                            answers.with_value("task", "method", "lora_int8")))
        if task.method in ("full", "lora", "lora_int8") and ctx.shape.kind == "transformer":
            changes.append(("QLoRA (4-bit NF4 base dequantized to bf16 at every matmul, bf16 adapters)",
                            answers.with_value("task", "method", "qlora")))
        if task.method == "full" and scale.sharding != "zero_offload" and task.precision != "fp32":
            changes.append(("ZeRO-Offload: optimizer states and fp32 master weights in CPU RAM",
                            answers.with_value("scale", "sharding", "zero_offload")))
    else:
        steps = INFERENCE_STEPS[INFERENCE_STEPS.index(task.precision) + 1:] if task.precision in INFERENCE_STEPS else ()
        for precision in steps:
            changes.append((f"{precision} weights", answers.with_value("task", "precision", precision)))
    smaller_model = _smaller_preset(ctx)
    if smaller_model is not None:
        name = model_presets()[smaller_model].name
        changes.append((f"a smaller model of the same family, {name}",
                        answers.with_value("workload", "preset", smaller_model)))
    return changes


def model_family(preset_id: str) -> str:
    """The family presets substitute within: "llama-13b" -> "llama", "resnet50" -> "resnet", "llama3-8b" -> "llama3"."""
    head = preset_id.split("-")[0]
    return head if "-" in preset_id else head.rstrip("0123456789")


def _smaller_preset(ctx: Context) -> str | None:
    """The largest preset of the same family with fewer parameters: another family is no substitute (a GPT-2 XL
    does not do a Llama-7B's job), so none is offered then."""
    family = model_family(ctx.answers.workload.preset)
    smaller = [
        preset for preset in model_presets().values()
        if model_family(preset.id) == family and preset.parameters < ctx.shape.parameters
    ]
    return max(smaller, key=lambda preset: preset.parameters).id if smaller else None


def _rent_line(ctx: Context, context_for: Callable[[Answers], Context]) -> str:
    """The cheapest listed cloud GPU that holds the workload, by the hour, as a comparison with buying; when none
    holds it at this GPU count, the fewest GPUs (doubling, ZeRO-3 across them) at which one does."""
    if ctx.edge:
        return ""
    rented, sharded = ctx, ""
    while True:
        line = _rent_option(ctx, rented, sharded)
        if line or rented.gpu_count * 2 > MAX_RENTED_GPUS:
            return line
        count = rented.gpu_count * 2
        rented = context_for(ctx.answers.with_value("scale", "gpu_count", count)
                             .with_value("scale", "sharding", "zero3"))
        sharded = f", ZeRO-3 across {count} GPUs: {rented.memory.total_bytes / GIB:.1f} GiB per GPU"


def _rent_option(ctx: Context, rented: Context, sharded: str) -> str:
    rent = ctx.rules.rent
    options = []
    for gpu_id, usd in rent.usd_per_gpu_hour.items():
        gpu = ctx.catalog.get(gpu_id)
        if gpu is not None and rented.memory.total_bytes <= usable_bytes(rented, gpu):
            options.append((usd, gpu))
    if not options:
        return ""
    usd, gpu = min(options, key=lambda option: (option[0], option[1].id))
    cny = usd * ctx.rules.currency.cny_per_usd * rented.gpu_count
    count = f"{rented.gpu_count} x " if rented.gpu_count > 1 else ""
    return (f"rent {count}{gpu.name}{sharded} at ${usd:g}/GPU-hour (~¥{cny:,.0f}/h for the machine; {rent.source}, "
            f"as of {rent.as_of}): ¥{ctx.budget_cny:,.0f} buys ~{ctx.budget_cny / cny:,.0f} hours")

"""The levers that cost no model quality, added to a change that alone does not fit, and how a way out names them."""

from __future__ import annotations

import math

from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.assembly import Context
from pth_top.configs.memory import micro_batch_per_gpu
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.micro_batch import (
    MAX_ACCUMULATION_STEPS,
    batch_statistics_note,
    micro_batch_at_most,
    micro_batch_label,
    micro_batch_of,
    recompute_of_answers,
    sharded_gradients,
    smallest_micro_batch,
    synced_note,
)
from pth_top.configs.sequence_split import data_parallel_gpus

RECOMPUTE_LABEL = "full recompute (gradient checkpointing)"
CHUNKED_LOSS_LABEL = ("a chunked loss (Liger's fused linear cross-entropy, or torchtune's chunked cross-entropy) "
                      "instead of the eager fp32 logits")
SDPA_LABEL = "SDPA (task.flash_attention = true)"
# BatchNorm's statistics hold down to 16 images a GPU: ResNet-50's ImageNet error 23.6 % at 32, 23.7 at 16, 24.8 at 8,
# 27.3 at 4 and 34.7 at 2 (Wu & He, Group Normalization, ECCV 2018), so a CNN's quality-free micro-batch stops there.
BATCHNORM_QUALITY_FREE_MICRO_BATCH = 16


def recompute_only(answers: Answers) -> Answers:
    """Full recompute at the same micro-batch (CNNs' and transformers' activations: configs.memory); none where the
    stack recomputes already (Unsloth)."""
    if answers.task.mode != "training" or recompute_of_answers(answers) == "full":
        return answers
    return answers.with_value("task", "recompute", "full")


def small_activations(answers: Answers) -> Answers:
    """Full recompute and a micro-batch of 1, or of one pair (the global batch kept by gradient accumulation)."""
    per_gpu = max(1, math.ceil(answers.workload.batch_size / data_parallel_gpus(answers)))
    steps = min(max(1, per_gpu // smallest_micro_batch(answers)), MAX_ACCUMULATION_STEPS)  # stays a valid answer
    return sharded_gradients(recompute_only(answers).with_value("task", "accumulation_steps", steps))


def small_activations_label(before: Answers, shape: ModelShape | None = None) -> str:
    """What the small-activations change adds: recompute only where the answers do not have it already, and the
    micro-batch it comes to (1, or more where the accumulation steps reach their cap), with what a CNN's BatchNorm
    then sees."""
    after = small_activations(before)
    micro = micro_batch_per_gpu(after.workload.batch_size, after.task.accumulation_steps, data_parallel_gpus(after))
    recompute = "" if recompute_of_answers(before) == "full" else f"{RECOMPUTE_LABEL} and "
    norms = batch_statistics_note(shape, micro, micro_batch_of(before), data_parallel_gpus(after),
                                  before.task.contrastive_texts)
    return (f"{recompute}micro-batch {micro} with gradient accumulation{synced_note(before, after)}"
            + (f" ({norms})" if norms else ""))


def chunked_loss(answers: Answers, shape: ModelShape) -> Answers:
    """The same training with Liger's fused linear cross-entropy where the eager loss holds s x b x V logits."""
    if answers.task.mode != "training" or answers.task.training_stack != "hf_trainer" \
            or not shape.logits_vocabulary_size:
        return answers
    return answers.with_value("task", "training_stack", "liger")


def cheap_levers(ctx: Context, answers: Answers) -> Answers:
    """What costs no model quality, added to a change that alone does not fit: SDPA for eager attention, the chunked
    loss, full recompute and micro-batch 1 in training (a CNN's BatchNorm: 16 or what was answered; a contrastive
    sample's negatives: what was answered); an 8-bit KV cache where the engine has one in inference."""
    if answers.task.mode != "training":  # vLLM's fuller plan stands alone (review r72): nothing is added to it
        fuller = answers.task.engine_memory_fraction != ctx.answers.task.engine_memory_fraction
        return answers if fuller else _eight_bit_kv(ctx, answers)
    if ctx.shape.kind == "transformer" and ctx.shape.attention_heads:  # audit DB66: qlora.py's eager attention
        answers = answers.with_value("task", "flash_attention", True)
    answers = chunked_loss(answers, ctx.shape)
    if answers.task.contrastive_texts:  # review r76: its in-batch negatives are the loss's, not quality-free
        return recompute_only(answers)
    if ctx.shape.kind == "cnn":  # review r75: BatchNorm over 1 image a GPU is not quality-free
        floor = min(BATCHNORM_QUALITY_FREE_MICRO_BATCH, micro_batch_of(answers))
        smaller = micro_batch_at_most(answers, floor)
        # Where no share of the GPU's images lies between the floor and 16, the micro-batch stays (review r76: 17 -> 1).
        return sharded_gradients(recompute_only(smaller if micro_batch_of(smaller) >= floor else answers))
    return small_activations(answers)


def _eight_bit_kv(ctx: Context, answers: Answers) -> Answers:
    if ctx.shape.kind != "transformer" or ctx.shape.denoising_steps or ctx.shape.encoder_only \
            or not stacks.fp8_kv_cache_open(answers.task, answers.scenario):
        return answers
    return answers.with_value("task", "kv_cache_dtype", "fp8")


def with_cheap_label(ctx: Context, label: str, before: Answers, after: Answers) -> str:
    """'<a lever>, <what the quality-free levers add to it>'; a micro-batch lever they take to micro-batch 1 is named
    by what they make of the answers, not as both (audit CU64: "a micro-batch of 16 ..., micro-batch 1")."""
    task = ctx.answers.task
    micro_lever = before.with_value("task", "accumulation_steps", task.accumulation_steps).with_value(
        "task", "recompute", task.recompute).with_value("task", "sync_each_batch", task.sync_each_batch) == ctx.answers
    if micro_lever and before != ctx.answers and after.task.accumulation_steps != before.task.accumulation_steps:
        accumulation = ctx.answers.task.accumulation_steps
        others = cheap_levers_label(ctx, ctx.answers.with_value("task", "accumulation_steps",
                                                                after.task.accumulation_steps), after)
        micro = micro_batch_label(after.with_value("task", "accumulation_steps", accumulation), after, ctx.shape)
        return ", ".join(part for part in (others, micro) if part)
    return ", ".join(part for part in (label, cheap_levers_label(ctx, before, after)) if part)


def cheap_levers_label(ctx: Context, before: Answers, after: Answers) -> str:
    """The quality-free levers a change took, by name; a smaller micro-batch says what its batch statistics see."""
    micro = micro_batch_of(after)
    norms = batch_statistics_note(ctx.shape, micro, micro_batch_of(before), data_parallel_gpus(after),
                                  after.task.contrastive_texts)
    changes = (
        (SDPA_LABEL, after.task.flash_attention and not before.task.flash_attention),
        ("chunked loss", after.task.training_stack != before.task.training_stack),
        ("full recompute", recompute_of_answers(after) != recompute_of_answers(before)),
        (f"micro-batch {micro}" + (f" ({norms})" if norms else ""),
         after.task.accumulation_steps != before.task.accumulation_steps),
        ("FSDP's gradients synced each micro-batch", after.task.sync_each_batch != before.task.sync_each_batch),
        ("an 8-bit KV cache", after.task.kv_cache_dtype != before.task.kv_cache_dtype),
    )
    return ", ".join(text for text, changed in changes if changed)

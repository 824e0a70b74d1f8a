"""A build that fits its card only short of the estimator's margin names what holds it with the margin: more cards
within budget for a server, a change that costs no quality on the same card for a training job."""

from __future__ import annotations

from typing import Callable

from pth_top.configs.assembly import TIGHT_FIT
from pth_top.configs.beyond_answers import MORE_GPU_COUNTS, answer_text, gpu_build, warned, within_text
from pth_top.configs.build import Build
from pth_top.configs.cheap_levers import (
    CHUNKED_LOSS_LABEL,
    RECOMPUTE_LABEL,
    chunked_loss,
    recompute_only,
    small_activations,
    small_activations_label,
)
from pth_top.configs.levers import split_label
from pth_top.configs.presets import model_shape
from pth_top.configs.rules import Rules
from pth_top.units import GIB


def roomier_within_budget(build: Build, rules: Rules, recommend_one: Callable[..., Build], pinned: bool) -> str:
    """A tight build's way to the margin: a training job's change on the same card (below), pinned or not; an
    unpinned server's 2-8 card build within budget."""
    answers = build.answers
    if build.blockers or not warned(build, TIGHT_FIT) or answers.scenario == "edge_deployment":
        return ""
    if answers.task.mode == "training":
        return _room_on_the_card(build, recommend_one)
    if pinned or answers.task.mode != "inference" or answers.scale.gpu_count != 1:
        return ""
    # Mistral Small 3.1 for 4 users at 64k: 85.9 of 86.0 GiB on a 96 GB card, with $50,000 of $60,000 left.
    for count in MORE_GPU_COUNTS:
        found = gpu_build(recommend_one, answers.with_value("scale", "gpu_count", count))
        if found is None or warned(found[0], TIGHT_FIT):
            continue
        other, gpu = found
        return (f"room within budget: {count} x {gpu.name} with {split_label(answers)} hold it with the estimator's "
                f"margin ({other.memory.total_bytes / GIB:.1f} GiB a GPU), "
                f"{within_text(other, build, rules)}: answer scale.gpu_count = {count}")
    return ""


def _room_on_the_card(build: Build, recommend_one: Callable[..., Build]) -> str:
    """A chunked loss, full recompute, then also the smallest micro-batch, on the same GPUs where one holds the job
    with the margin (Gemma 2 9B LoRA at 512 tokens, no recompute: 22.2 of 22.8 GiB on a 24 GB card, where LitGPT's
    same run ran out of memory on a 24 GB A10G; 18.9 GiB with full recompute)."""
    answers, gpu = build.answers, build.component("gpu")
    if gpu is None:
        return ""
    # The chunked loss first: no extra compute (audit ZL22: LongLoRA's 7B at 100k, 73.3 of 76.0 GiB on 8 x A100 80GB,
    # 35.8 GiB of it the eager loss's fp32 logits, where recompute and micro-batch 1 were already answered).
    changes = ((chunked_loss(answers, model_shape(answers.workload)[0]), CHUNKED_LOSS_LABEL),
               (recompute_only(answers), f"{RECOMPUTE_LABEL}, ~1/3 more compute"),
               (small_activations(answers), small_activations_label(answers)))
    for changed, label in changes:
        if changed == answers:
            continue
        try:
            other = recommend_one(changed, {"gpu": (gpu.part_id, gpu.quantity)})
        except ValueError:
            continue
        if other.blockers or warned(other, TIGHT_FIT):
            continue
        rate = f"; {other.speed.summary[0]}" if other.speed.summary else ""
        return (f"room on this card: {label}: {other.memory.total_bytes / GIB:.1f} GiB a GPU, with the estimator's "
                f"margin{rate}: answer {answer_text(answers, changed)}")
    return ""

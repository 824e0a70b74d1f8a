"""A training job's micro-batch: halved with the accumulation steps (the same global batch), and how a lever that
changes it is named."""

from __future__ import annotations

import math

from pth_top.configs import stacks
from pth_top.configs.answers import FIELDS, Answers
from pth_top.configs.memory import micro_batch_per_gpu
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.sequence_split import data_parallel_gpus

MAX_ACCUMULATION_STEPS = int(FIELDS["task"]["accumulation_steps"].high or 1)  # what the answers accept


def smallest_micro_batch(answers: Answers) -> int:
    """1, a preference trainer's pair (audit BT55: Mistral-ORPO at micro-batch 1 split each chosen and rejected) or a
    contrastive sample's texts (audit DH68: LLM2Vec's query, positive and hard negative)."""
    return max(2 if answers.task.preference_pairs else 1, answers.task.contrastive_texts)


def micro_batch_at_most(answers: Answers, at_most: int) -> Answers:
    """The largest micro-batch up to `at_most` that divides a GPU's share of the batch, so the global batch stays
    as it was (review AF: 48 on 8 GPUs was "2 x 4" = 64), its accumulation steps valid, whole pairs where its samples
    are; the answers where none is."""
    task, batch, gpus = answers.task, answers.workload.batch_size, data_parallel_gpus(answers)
    per_gpu = math.ceil(batch / gpus)
    unit = smallest_micro_batch(answers)
    size = next((size for size in range(min(at_most, per_gpu), 0, -1) if per_gpu % size == 0 and size % unit == 0),
                0)
    steps = per_gpu // size if size else 0
    if not size or steps == task.accumulation_steps or steps > min(batch, MAX_ACCUMULATION_STEPS):
        return answers
    return sharded_gradients(answers.with_value("task", "accumulation_steps", steps))


def micro_batch_of(answers: Answers) -> int:
    """The answers' micro-batch a GPU."""
    workload, task = answers.workload, answers.task
    return micro_batch_per_gpu(workload.batch_size, task.accumulation_steps, data_parallel_gpus(answers))


def halved_micro_batch(answers: Answers) -> Answers:
    """Half the micro-batch or less (the largest that divides a GPU's share), while it is above 1."""
    return micro_batch_at_most(answers, micro_batch_of(answers) // 2) if micro_batch_of(answers) >= 2 else answers


def halved_again(shape: ModelShape, halved: Answers, least: int = 2) -> Answers | None:
    """Half the micro-batch again, down to `least` (micro-batch 1 with recompute is the small-activations lever's),
    where accumulation leaves the loss as it was: a decoder's tokens, not an encoder's in-batch negatives or a CNN's
    batch statistics."""
    if shape.kind != "transformer" or shape.encoder_only or halved.task.contrastive_texts:
        return None
    deeper = halved_micro_batch(halved)
    return None if deeper == halved or micro_batch_of(deeper) < least else deeper


def halvings(shape: ModelShape, answers: Answers, least: int = 2) -> list[Answers]:
    """The micro-batch halved again and again down to `least`, where accumulation keeps the loss (halved_again):
    each a lever, the largest that fits the fastest (audit YK2: micro-batch 2 on 8 V100s, 81 days, where recompute
    and micro-batch 1 took 108; audit YM2: recompute at micro-batch 4 ~1.5x faster than at 1)."""
    found: list[Answers] = []
    while (deeper := halved_again(shape, found[-1] if found else answers, least)) is not None:
        found.append(deeper)
    return found


def smaller_micro_batch(answers: Answers) -> Answers:
    """The next smaller micro-batch that divides a GPU's share of the batch (audit YL2: BEiT-L at 6 a GPU was offered
    3 where 4, x 12, fits)."""
    return micro_batch_at_most(answers, micro_batch_of(answers) - 1) if micro_batch_of(answers) >= 2 else answers


def micro_batch_steps(shape: ModelShape, answers: Answers, least: int = 2) -> list[Answers]:
    """The micro-batch levers: the next smaller one, then halved again down to `least` where accumulation keeps the
    loss (1 without recompute: review AF, Llemma at 16 or 32 steps)."""
    first = smaller_micro_batch(answers)
    return [] if first == answers else [first, *halvings(shape, first, least)]


def micro_batch_label(before: Answers, after: Answers, shape: ModelShape | None = None) -> str:
    """'a micro-batch of 8 with gradient accumulation x 16 (the same global batch, no recompute)'; a CNN's says what
    its BatchNorm layers then see (audit AC40: ICNet's SyncBN over 8 images told "the same global batch" at 4)."""
    micro = micro_batch_per_gpu(after.workload.batch_size, after.task.accumulation_steps, data_parallel_gpus(after))
    kept = ", no recompute" if recompute_of_answers(before) == "none" else ""
    was = micro_batch_per_gpu(before.workload.batch_size, before.task.accumulation_steps, data_parallel_gpus(before))
    norms = batch_statistics_note(shape, micro, was, data_parallel_gpus(after), after.task.contrastive_texts)
    return (f"a micro-batch of {micro} with gradient accumulation x {after.task.accumulation_steps} (the same global "
            f"batch for the gradients{kept}){'; ' + norms if norms else ''}{synced_note(before, after)}")


def batch_statistics_note(shape: ModelShape | None, micro: int, was: int, gpus: int = 1, texts: int = 0) -> str:
    """What a smaller micro-batch changes beyond the gradients: a CNN's BatchNorm statistics (SyncBN's over `gpus`), a
    contrastive loss's in-batch negatives (an encoder's if its loss is, a sample of `texts` answered's), counted in
    samples; "" for other models or the same micro-batch."""
    if shape is None or micro >= was:
        return ""
    if texts:  # task.contrastive_texts: a contrastive loss, its negatives the other samples
        micro, was = max(1, micro // texts), was // texts
    samples = "sample" if micro == 1 else "samples"
    if shape.kind == "cnn":
        synced = f", all {gpus} GPUs' together under SyncBN" if gpus > 1 else ""
        return f"any BatchNorm layers that train see {micro} {samples} a GPU, not {was}{synced}"
    unless = ", unless GradCache or a cached loss keeps them all, which is not modelled"
    if texts:
        return f"its in-batch negatives come from {micro} {samples} a GPU, not {was}{unless}"
    if shape.encoder_only:  # audit AW47: nomic-embed's 16,384 negatives cut to 8 unsaid; CU64: a masked LM's is not
        return f"if its loss is contrastive, the in-batch negatives are {micro} {samples} a GPU's, not {was}{unless}"
    return ""


def sharded_gradients(answers: Answers) -> Answers:
    """Accumulation under the Trainer's FSDP with its gradients reduce-scattered each micro-batch, not held whole."""
    task = answers.task
    if stacks.unsharded_between_syncs(answers.scale.sharding, task.training_stack, task.accumulation_steps,
                                      answers.scale.gpu_count, task.sync_each_batch):
        return answers.with_value("task", "sync_each_batch", True)
    return answers


SYNC_EACH_BATCH_LABEL = "FSDP's gradients reduce-scattered each micro-batch (task.sync_each_batch)"


def synced_note(before: Answers, after: Answers) -> str:
    """What a change that brings in accumulation says when it also syncs FSDP's gradients each micro-batch."""
    return f", {SYNC_EACH_BATCH_LABEL}" if after.task.sync_each_batch and not before.task.sync_each_batch else ""


def recompute_of_answers(answers: Answers) -> str:
    return stacks.recompute_of(answers.task.training_stack, answers.task.recompute)

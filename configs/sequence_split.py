"""A transformer trained with each sequence split over the machine's GPUs (task.sequence_parallel in training): ring
attention, as EasyContext's zigzag ring and Megatron's and torchtitan's context parallel run it. Each GPU holds 1/n of
every sample's tokens, their activations and logits; the K and V blocks go round the GPUs while attention computes.
A layer split's share of the layers (layers_on_one_gpu) is here too."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pth_top.configs.answer_sections import MAX_GPUS
from pth_top.configs.memory_terms import ModelShape

if TYPE_CHECKING:  # answers import this module's checks
    from pth_top.configs.answers import Answers

# A sequence this long or longer is offered the split where it does not fit (EasyContext splits from 64K; its 8 A100s
# held 64K without it and 512K with it).
SPLIT_OFFERED_FROM_TOKENS = 32_768
SEQUENCE_SPLIT_LABEL = ("each sequence split over the {n} GPUs (task.sequence_parallel: ring attention, as "
                        "EasyContext's zigzag ring and Megatron's and torchtitan's context parallel run it): 1/{n} of "
                        "its tokens' activations and logits on each, its K and V passed round the GPUs")


def training_split(answers: Answers) -> int:
    """How many GPUs each training sample is split over under task.sequence_parallel: task.sequence_parallel_gpus,
    or a node's (scale.gpu_count, at most 8); else 1. Nodes beyond one take their own samples, the ring kept on
    NVLink or PCIe."""
    task, gpus = answers.task, min(answers.scale.gpu_count, MAX_GPUS)
    degree = min(task.sequence_parallel_gpus or gpus, gpus)
    return degree if task.mode == "training" and task.sequence_parallel and degree > 1 else 1


def data_parallel_gpus(answers: Answers) -> int:
    """The GPUs that each take their own samples: all of them, or one group where each sample is split over all (its
    tokens, or its layers: scale.sharding = "layers")."""
    if answers.scale.sharding == "layers":
        return 1
    return max(1, answers.scale.gpu_count // training_split(answers))


def training_split_problem(answers: Answers, model_kind: str) -> str:
    """Why task.sequence_parallel cannot split this training job's sequences; "" where it can."""
    workload, task = answers.workload, answers.task
    # A video diffusion transformer's clip is split too: Cosmos-Predict2's post-training runs context_parallel_size 2
    # (audit AT46), as Wan's and HunyuanVideo's trainers split a clip's tokens (Ulysses, ring).
    if model_kind != "transformer" or workload.denoising_steps or workload.vision_layers or workload.decoder_layers \
            or answers.data.kind == "images":
        return ("splits a language model's, a text encoder's or a video diffusion transformer's sequences in training, "
                "not an image model's, a vision encoder's or a CNN's")
    if answers.scale.gpu_count < 2 or not task.flash_attention:
        return "splits each sequence over scale.gpu_count GPUs of 2 or more, with task.flash_attention (ring attention)"
    degree = task.sequence_parallel_gpus
    if degree and (degree < 2 or answers.scale.gpu_count % degree):
        return (f"task.sequence_parallel_gpus ({degree}) splits each sequence over 2 or more GPUs, a divisor of "
                f"scale.gpu_count ({answers.scale.gpu_count})")
    return ""


def offered_split(answers: Answers, model_kind: str, sequence_length: int) -> Answers | None:
    """The training answers with each sequence split over the machine's GPUs, where that is a way out still open: a
    sequence of SPLIT_OFFERED_FROM_TOKENS or more not split yet, a model and machine the split suits."""
    if answers.task.mode != "training" or answers.task.sequence_parallel or sequence_length < SPLIT_OFFERED_FROM_TOKENS:
        return None
    split = answers.with_value("task", "sequence_parallel", True)
    return None if training_split_problem(split, model_kind) else split


def split_shape(shape: ModelShape, split: int) -> ModelShape:
    """The shape one GPU's slice of each sequence has: 1/split of its tokens."""
    return dataclasses.replace(shape, sequence_length=-(-shape.sequence_length // split)) if split > 1 else shape


def ring_seconds(shape: ModelShape, samples: float, split: int, passes: int, value_bytes: float,
                 busbw_gb_per_s: float) -> tuple[float, str]:
    """The K and V blocks a GPU passes on in a step: (n-1)/n of each sample's K and V a full-attention layer, forward,
    and again in backward with their gradients (x 2), and in a recomputed forward, at the ring's bus bandwidth."""
    if split <= 1 or busbw_gb_per_s <= 0:
        return 0.0, ""
    per_layer = (split - 1) / split * shape.sequence_length * 2 * shape.kv_width * value_bytes
    moved = samples * shape.full_attention_layers * per_layer * passes
    seconds = moved / (busbw_gb_per_s * 1e9)
    return seconds, (f"ring attention: {samples:g} samples x {shape.full_attention_layers} layers x "
                     f"({split}-1)/{split} x {shape.sequence_length:,} tokens' K and V ({2 * shape.kv_width:,} x "
                     f"{value_bytes:g} B) x {passes} passes = {moved / 1e9:,.1f} GB a GPU at {busbw_gb_per_s:,.0f} "
                     f"GB/s = {seconds:.3g} s")


def layers_on_one_gpu(shape: ModelShape, gpus: int) -> ModelShape:
    """The layers one GPU of a layer split holds, ceil(L/n), its window, linear and parallel state-space ones in their
    share (a decoder's: answers.py refuses an encoder-decoder's split, whose first GPU holds the encoder)."""
    if gpus <= 1 or shape.layers <= 1:
        return shape
    held = -(-shape.layers // gpus)

    def share(count: int) -> int:
        return min(held, round(count * held / shape.layers))
    return dataclasses.replace(shape, layers=held, sliding_window_layers=share(shape.sliding_window_layers),
                               linear_attention_layers=share(shape.linear_attention_layers),
                               parallel_ssm_layers=share(shape.parallel_ssm_layers))

"""Training with the model's layers split over the GPUs in one process (scale.sharding = "layers"): accelerate's
device_map="auto", as multi-GPU QLoRA scripts load a base too large for one card (audit AZ48)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.memory import model_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.configs.speed_build import training
from pth_top.units import GIB
from tests.configs.builders import answers, custom
from tests.configs.published_speeds import catalog_gpu

TODAY = dt.date(2026, 5, 10)
# OpenBuddy-Llama2-70B (its config.json: 80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672, V 37,632) in
# ms-swift's qlora_mp script: NF4, LoRA r8 on q and v, 2,048 tokens, batch 1 x 16 accumulation, checkpointing.
OPENBUDDY_70B_QLORA = {
    **custom(69_000_000_000, 80, 8192, 64, 8, 37_632, 28_672), "workload__kind": "transformer",
    "workload__sequence_length": 2048, "workload__batch_size": 16, "task__mode": "training", "task__method": "qlora",
    "task__precision": "bf16", "task__lora_rank": 8, "task__recompute": "full", "task__accumulation_steps": 16,
    "scale__gpu_count": 2, "budget__amount": 3000.0, "budget__currency": "EUR", "budget__condition": "used"}
MS_SWIFT = ("modelscope/ms-swift examples/pytorch/llm/scripts/openbuddy_llama2_70b_chat/qlora_mp/sft.sh: "
            "'# Experimental environment: 2 * 3090', '# 2 * 23GB GPU memory'")


def _memory(sharding: str, gpus: int = 2):
    job = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": sharding, "scale__gpu_count": gpus})
    return model_memory(job, model_shape(job.workload)[0], 512 * 2**20)


def test_each_gpu_holds_its_half_of_the_layers_and_the_whole_micro_batch():
    split, whole = _memory("layers"), _memory("none")
    assert split.weights_bytes == pytest.approx(whole.weights_bytes / 2, rel=0.01)
    assert split.optimizer_states_bytes == pytest.approx(whole.optimizer_states_bytes / 2, rel=0.01)
    # 40 of the 80 layers' checkpoints, with the loss's logits and the backward working set whole: over half.
    assert 0.5 * whole.activations_bytes < split.activations_bytes < 0.7 * whole.activations_bytes
    assert any("40 of the 80 layers" in line for line in split.formula), split.formula


def test_a_70b_qlora_split_over_two_3090s_fits_as_ms_swift_runs_it(catalog):
    # Data parallel copies the 34 GiB NF4 base to each card and cannot; the split holds ~20 GiB a card (2 x 23 GB).
    job = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers"})
    build = recommend(job, catalog, today=TODAY, pins={"gpu": ("rtx-3090-24gb", 2)})
    assert build.memory_fits and 18 * GIB < build.memory.total_bytes < 23 * GIB, (MS_SWIFT, build.memory.total_bytes)
    copied = recommend(answers(**OPENBUDDY_70B_QLORA), catalog, today=TODAY, pins={"gpu": ("rtx-3090-24gb", 2)})
    assert not copied.memory_fits


def test_the_split_runs_one_gpu_at_a_time_with_no_gradient_exchange():
    # A step takes one GPU's time for the whole model: the rate of one card, where data parallel would be ~2x.
    job = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers"})
    shape = model_shape(job.workload)[0]
    two = training(job, shape, catalog_gpu("rtx-3090-24gb", job, 2), 25.0)
    one = training(job.with_value("scale", "gpu_count", 1).with_value("scale", "sharding", "none"), shape,
                   catalog_gpu("rtx-3090-24gb", job, 1), 25.0)
    assert two.figures["training_tokens_per_s"] == pytest.approx(one.figures["training_tokens_per_s"], rel=0.02)
    assert two.figures["communication_exposed_s"] == 0.0
    assert any("one GPU runs at a time" in line for line in two.formula), two.formula


def test_a_layer_split_is_for_training_a_transformer_without_a_sequence_split():
    inference = answers(workload__preset="llama-7b", task__mode="inference", scale__gpu_count=2,
                        scale__sharding="layers")
    assert ("scale", "sharding") in [(section, key) for section, key, _ in cross_field_problems(inference)]
    ring = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers", "task__sequence_parallel": True})
    assert "sharding" in [key for _, key, _ in cross_field_problems(ring)]
    assert not cross_field_problems(answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers"}))
    # An encoder-decoder's device map puts its encoder on the first GPU, not a share of each stack (review r71).
    whisper = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers", "workload__decoder_layers": 40,
                         "workload__decoder_sequence_length": 448})
    assert "sharding" in [key for _, key, _ in cross_field_problems(whisper)]


def test_a_split_on_one_gpu_is_the_same_job_and_a_rented_node_runs_data_parallel(catalog):
    # Review r71: AMP's fp32 norms were dropped under a layer split (4 GiB less than the same job on one GPU), and the
    # rented node of 8 kept the split, one GPU at a time: 8 H100s priced at one's rate (~4.7 days, where ~14 h).
    job = answers(**{**OPENBUDDY_70B_QLORA, "task__precision": "amp_fp16", "scale__gpu_count": 1})
    one = {sharding: _memory_of(job.with_value("scale", "sharding", sharding)) for sharding in ("none", "layers")}
    assert one["none"].activations_bytes == one["layers"].activations_bytes
    split = answers(**{**OPENBUDDY_70B_QLORA, "scale__sharding": "layers", "data__tokens_count": 300_000_000})
    build = recommend(split, catalog, today=TODAY, pins={"gpu": ("rtx-3090-24gb", 2)})
    slow = next(line for line in build.warnings if line.startswith("slow: "))
    assert "where a layer split runs one at a time" in slow and "more or faster GPUs" not in slow, slow
    rent = next(line for line in build.warnings if line.startswith("or rent it: 8 x "))
    hours = float(re.search(r"run it in ~([\d.]+) h for", rent).group(1))  # data parallel: each card holds a copy
    assert hours < 24, rent


def _memory_of(job):
    return model_memory(job, model_shape(job.workload)[0], 512 * 2**20)

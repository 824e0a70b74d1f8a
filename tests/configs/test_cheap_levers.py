"""The quality-free levers a way out adds to its change (configs.cheap_levers), and what a smaller micro-batch
changes beyond the gradients (configs.micro_batch.batch_statistics_note) wherever a way out names it."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.recommend import recommend
from tests.configs.builders import answers

TODAY = dt.date(2026, 11, 1)


def test_a_cnns_micro_batch_taken_down_by_the_quality_free_levers_says_what_batchnorm_sees(catalog):
    # Audit DC66: TResNet-M at batch 512 on an owned RTX 3090, way out 3 "buying other cards ..., full recompute,
    # micro-batch 1" said nothing of BatchNorm's statistics over one image, where way out 1 (accumulation) did.
    job = answers(workload__preset="custom", workload__kind="cnn", workload__parameters=31_390_000,
                  workload__input_size_px=224, workload__forward_gflops_per_sample=11.0, workload__batch_size=512,
                  task__mode="training", task__precision="amp_fp16", task__optimizer="sgd", data__kind="images",
                  budget__currency="EUR", budget__amount=2500.0, budget__owned_gpu="rtx-3090-24gb",
                  budget__owned_gpu_count=1)
    # Review r75: the quality-free levers stop a CNN's micro-batch at 16, where BatchNorm's statistics hold (Wu & He
    # 2018: ResNet-50's error 23.6 % at 32 a GPU, 23.7 at 16, 34.7 at 2); a one-GPU build names no SyncBN.
    build = recommend(job, catalog, today=TODAY)
    lines = [line for line, _, _ in build.applicable_alternatives if line.startswith("buying other cards")]
    assert lines and "full recompute, micro-batch 16 (any BatchNorm layers that train see 16 samples a GPU, not 512)" \
        in lines[0] and "micro-batch 1 " not in lines[0], lines


def test_eager_attention_is_switched_to_sdpa_with_the_other_quality_free_levers(catalog):
    # Audit DB66: Airoboros-33B's QLoRA (qlora.py: eager attention, micro-batch 2 x 16) for CNY 15,000 used led with
    # FSDP-QLoRA's CPU offload on a new 16 GB card; SDPA, micro-batch 1 and an 8-bit optimizer hold it on the used
    # RTX 3090 the budget buys (its eager scores alone were 60 layers' worth of 52 x 2,048^2 a sample).
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=32_500_000_000,
                  workload__layers=60, workload__hidden_size=6656, workload__attention_heads=52,
                  workload__intermediate_size=17920, workload__gated_mlp=True, workload__vocabulary_size=32000,
                  workload__sequence_length=2048, workload__batch_size=32, task__mode="training",
                  task__precision="bf16", task__optimizer="adamw", task__recompute="full",
                  task__flash_attention=False, task__accumulation_steps=16, task__method="qlora", task__lora_rank=64,
                  task__lora_targets="all_linear", data__kind="text", data__dataset_size_gb=0.05,
                  budget__amount=15000.0, budget__currency="CNY", budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    line, changed, _ = build.applicable_alternatives[0]
    assert not build.feasible and changed.task.flash_attention and "SDPA (task.flash_attention = true)" in line, line
    assert "RTX 3090" in line and changed.scale.sharding == "none", line


def test_the_batch_statistics_note_reads_inside_one_pair_of_parentheses():
    # Review r75: a way out wraps the note in parentheses, so it holds none of its own; SyncBN only over several GPUs.
    from pth_top.configs.memory_terms import ModelShape
    from pth_top.configs.micro_batch import batch_statistics_note

    encoder = ModelShape("transformer", 335_000_000, layers=24, hidden_size=1024, encoder_only=True)
    cnn = ModelShape("cnn", 25_000_000)
    notes = [batch_statistics_note(encoder, 1, 1024), batch_statistics_note(cnn, 16, 512),
             batch_statistics_note(cnn, 16, 512, gpus=8)]
    assert all(note and "(" not in note and ")" not in note for note in notes), notes
    assert "SyncBN" not in notes[1] and "all 8 GPUs' together under SyncBN" in notes[2], notes
    assert batch_statistics_note(cnn, 512, 512) == ""


def test_a_cnns_quality_free_levers_never_raise_its_micro_batch(catalog):
    # Re-read of r75's mend: 64 images a GPU at 8 x 8 were taken to 16 x 4, more activations, by "at most 16".
    from pth_top.configs.cheap_levers import cheap_levers
    from pth_top.configs.micro_batch import micro_batch_of
    from pth_top.configs.recommend import _context
    from pth_top.configs.rules import load_rules

    job = answers(workload__preset="resnet50", workload__batch_size=64, task__mode="training",
                  task__precision="amp_fp16", task__accumulation_steps=8, data__kind="images")
    assert micro_batch_of(cheap_levers(_context(job, catalog, load_rules(), {}), job)) == 8
    bigger = job.with_value("task", "accumulation_steps", 1)
    assert micro_batch_of(cheap_levers(_context(bigger, catalog, load_rules(), {}), bigger)) == 16
    # Review r76: 136 images on 8 GPUs are 17 a GPU, whose only smaller share is 1: the micro-batch stays at 17.
    prime = job.with_value("workload", "batch_size", 136).with_value("task", "accumulation_steps", 1) \
        .with_value("scale", "gpu_count", 8)
    assert micro_batch_of(cheap_levers(_context(prime, catalog, load_rules(), {}), prime)) == 17

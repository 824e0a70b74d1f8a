"""Inference of an fp32 model under fp16 autocast (task.precision = "amp_fp16"): fp32 weights, fp16 activations and
matmuls, as research repos' reference scripts run their models."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.recommend import recommend
from pth_top.units import GIB
from tests.configs.builders import answers

TODAY = dt.date(2026, 12, 7)
# DynamiCrafter1024 (Doubiiu/DynamiCrafter README: "576x1024 | 18.3GB & 75s (perframe_ae=True)" on an A100, its
# inference scripts load the model in fp32 and sample under torch.cuda.amp.autocast): a 1.4B 3D UNet, its CLIP image
# and OpenCLIP text encoders and VAE ~1.07B, 16 frames of 72 x 128 latents, 50 DDIM steps with guidance (audit CS63).
DYNAMICRAFTER = dict(
    workload__preset="custom", workload__parameters=1_400_000_000, workload__frozen_parameters=1_070_000_000,
    workload__frozen_precision="fp32", workload__layers=32, workload__hidden_size=1280, workload__attention_heads=20,
    workload__sequence_length=16 * 72 * 128, workload__sliding_window_tokens=72 * 128,
    workload__sliding_window_layers=32, workload__denoising_steps=50, workload__classifier_free_guidance=True,
    workload__forward_gflops_per_sample=32000.0, workload__output_width_px=1024, workload__output_height_px=576,
    workload__batch_size=1, task__mode="inference", data__kind="video", budget__amount=2500.0,
    budget__currency="USD", budget__condition="used")


def test_an_fp32_model_under_autocast_holds_fp32_weights_and_fp16_activations(catalog):
    autocast = recommend(answers(**DYNAMICRAFTER, task__precision="amp_fp16"), catalog, today=TODAY)
    half = recommend(answers(**{**DYNAMICRAFTER, "workload__frozen_precision": "fp16"}, task__precision="fp16"),
                     catalog, today=TODAY)
    published = 18.3e9 / GIB
    assert abs(autocast.memory.total_bytes / GIB / published - 1) < 0.15, autocast.memory.total_bytes / GIB
    # The 3D UNet in fp32 with autocast's cached fp16 copy of each weight (review r74), its frozen encoders in fp32.
    assert autocast.memory.weights_bytes == pytest.approx(1_400_000_000 * (4 + 2) + 1_070_000_000 * 4, rel=1e-6)
    assert half.memory.weights_bytes == pytest.approx((1_400_000_000 + 1_070_000_000) * 2, rel=1e-6)
    assert autocast.memory.activations_bytes == half.memory.activations_bytes
    assert autocast.feasible and autocast.component("gpu").spec["memory_gib"] >= 20  # not a 16 GB card
    assert "dense FP16 tensor" in " ".join(autocast.speed.formula)


def test_an_engine_that_loads_16_bit_weights_is_not_answered_with_autocast():
    job = answers("inference_server", workload__preset="llama-7b", task__mode="inference", task__precision="amp_fp16",
                  task__serving_engine="vllm")
    assert [(section, key) for section, key, _ in cross_field_problems(job)] == [("task", "precision")]
    assert cross_field_problems(job.with_value("task", "serving_engine", "auto")) == []

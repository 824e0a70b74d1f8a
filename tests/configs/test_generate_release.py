"""generate() under the transformers release it runs (task.transformers_version): the prefill's logits before 4.45,
the KV cache's copies a decode step (DynamicCache's torch.cat; repeat_kv before 4.48 or under eager attention)."""

from __future__ import annotations

import datetime as dt

from pth_top.configs import stacks
from pth_top.configs.levers import CURRENT_TRANSFORMERS_LABEL
from pth_top.configs.recommend import recommend
from tests.configs.builders import answers, custom

TODAY = dt.date(2026, 11, 1)
# Qwen1.5-32B-Chat (64 layers of 5120, 40 heads, 8 KV heads, SwiGLU 27392, V 152,064) at a 30,720-token prompt,
# 2,048 generated: QwenLM/Qwen3#291 ran it on 2 x A100-SXM4-80GB, 117.19 GiB in all.
QWEN15_32B_30K = dict(**custom(32_512_218_112, 64, 5120, 40, 8, 152_064, 27392), workload__sequence_length=30720,
                      workload__batch_size=1, task__mode="inference", task__precision="bf16",
                      task__serving_engine="hf_generate", task__generated_tokens=2048, budget__currency="USD",
                      budget__amount=30000.0, budget__owned_gpu="a100-80gb-pcie", budget__owned_gpu_count=1)


def test_a_2024_generate_at_30k_tokens_does_not_fit_one_a100_and_a_current_release_is_the_first_way_out(catalog):
    # Audit DM70: "fits TIGHT" at 74.35 GiB on one A100 80GB, where the 2024 run needed two: the prefill's logits at
    # every prompt position, bf16 and fp32, are 30,720 x 152,064 x 6 B = 26.1 GiB.
    build = recommend(answers(**QWEN15_32B_30K, task__transformers_version="4.38.2"), catalog, today=TODAY)
    assert not build.feasible
    assert any("x 6 B, every prompt position" in line for line in build.memory.formula), build.memory.formula
    line, changed, _ = build.applicable_alternatives[0]
    assert line.startswith(f"keeping your NVIDIA A100 80GB PCIe, {CURRENT_TRANSFORMERS_LABEL}"), line
    assert changed.task.transformers_version == ""
    current = recommend(answers(**QWEN15_32B_30K), catalog, today=TODAY)
    assert current.feasible and current.memory.total_bytes < build.memory.total_bytes - 25 * 2**30


def test_generate_moves_its_kv_cache_more_than_once_a_step():
    # DynamicCache's torch.cat reads and rewrites the cache each step; repeat_kv (transformers before 4.48's SDPA, or
    # eager attention) writes it again for each of a KV head's query heads, and attention reads that copy.
    assert stacks.generate_kv_passes("hf_generate", "", True, 5.0)[0] == 3.0
    assert stacks.generate_kv_passes("hf_generate", "4.38.2", True, 5.0)[0] == 13.0
    assert stacks.generate_kv_passes("hf_generate", "4.48", True, 5.0)[0] == 3.0
    assert stacks.generate_kv_passes("hf_generate", "", False, 5.0)[0] == 13.0
    assert stacks.generate_kv_passes("hf_generate", "4.38.2", True, 1.0)[0] == 3.0  # no grouped heads to copy to
    assert stacks.generate_kv_passes("vllm", "4.38.2", True, 5.0) == (1.0, "")
    assert stacks.generate_kv_passes("hf_generate", "", True, 5.0, compiled=True) == (1.0, "")  # a static cache
    assert stacks.generate_full_prompt_logits("hf_generate", "4.44.2")
    assert not stacks.generate_full_prompt_logits("hf_generate", "4.45")
    assert not stacks.generate_full_prompt_logits("vllm", "4.38.2")


# Yuan2.0-M32 (IEIT-Yuan/Yuan2.0-M32: 24 layers of 2048, 16 heads of 256, 32 experts of which 2 a token, V 135,040;
# 40B, 3.7B active) in BF16 under generate() on 2 x 80GB, 13.16 tokens/s (docs/README_GPTQ_EN.md): its remote code's
# GroupedMLP loops over the 32 experts in Python.
YUAN2_M32 = dict(**custom(40_000_000_000, 24, 2048, 16, 16, 135_040, 16384), workload__head_dim=256,
                 workload__active_parameters=3_700_000_000, workload__experts_count=32, workload__experts_per_token=2,
                 workload__sequence_length=512, workload__batch_size=1, task__mode="inference", task__precision="bf16",
                 task__serving_engine="hf_generate", task__generated_tokens=512, scale__gpu_count=2,
                 budget__currency="USD", budget__amount=80000.0, budget__owned_gpu="a100-80gb-pcie",
                 budget__owned_gpu_count=2)


def _rate(build) -> float:
    return build.speed.figures["decode_tokens_per_s_per_stream"]


def test_a_mixture_under_generate_timed_as_grouped_gemms_says_its_rate_under_the_python_loop(catalog):
    # Audit DP71: 56.4 tokens/s with no word that the experts were timed as grouped GEMMs, where Yuan's remote code
    # loops over them (13.16 published); the warning gives the looped rate, and a 4.x release answered times the loop.
    grouped = recommend(answers(**YUAN2_M32), catalog, today=TODAY)
    note = [line for line in grouped.warnings if line.startswith("timed with the experts as grouped GEMMs")]
    assert note and "task.experts_loop = true" in note[0], grouped.warnings
    looped = recommend(answers(**YUAN2_M32, task__experts_loop=True), catalog, today=TODAY)
    assert f"~{round(_rate(looped))} tokens/s per stream with that loop" in note[0], (note, _rate(looped))
    assert abs(_rate(looped) / 13.16 - 1) < 0.35 and _rate(grouped) > 3 * _rate(looped)
    by_release = recommend(answers(**YUAN2_M32, task__transformers_version="4.40.1"), catalog, today=TODAY)
    assert _rate(by_release) == _rate(looped)
    assert not [line for line in by_release.warnings if line.startswith("timed with the experts as grouped")]

"""Eager attention under generate(): a prompt's prefill holds each layer's a x s^2 scores (configs.memory_inference)."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.levers import FLASH_ATTENTION_LABEL
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.units import GIB
from tests.configs.builders import answers, custom

TODAY = dt.date(2026, 12, 2)
# GLM-4-9B-Chat (THUDM config.json: 40 layers of 4,096, 32 heads, 2 KV groups, SwiGLU 13,696, V 151,552) in bf16 under
# transformers at a 32,000-token prompt, which THUDM runs with SDPA in 27,779 MiB on an A100 (github.com/THUDM/GLM-4
# basic_demo/README_en.md).
GLM4_9B_32K = dict(**custom(9_400_000_000, 40, 4096, 32, 2, 151_552, 13_696), workload__sequence_length=32_000,
                   workload__batch_size=1, task__mode="inference", task__precision="bf16",
                   task__serving_engine="hf_generate", budget__currency="USD", budget__amount=6000.0)


def test_eager_prefill_holds_the_scores_and_sdpa_is_the_way_out(catalog):
    sdpa = answers("personal_research", **GLM4_9B_32K)
    eager = sdpa.with_value("task", "flash_attention", False)
    # 3 copies x 2 B x 32 heads x 32,000^2 = 183 GiB more: transformers' eager attention cannot run this prompt
    scores = estimate_memory(eager, model_shape(eager.workload)[0]).total_bytes \
        - estimate_memory(sdpa, model_shape(sdpa.workload)[0]).total_bytes
    assert scores / GIB == pytest.approx(3 * 2 * 32 * 32_000 ** 2 / GIB, rel=0.01)
    build = recommend(eager, catalog, today=TODAY)
    assert not build.feasible
    ways = [way for way in build.feasible_alternatives if not way.startswith("beyond one machine")]
    assert ways[0].startswith(FLASH_ATTENTION_LABEL)  # before quantizing or a shorter prompt: the same results
    assert "GiB per GPU fits" in ways[0]


def test_an_engine_with_its_own_attention_kernels_ignores_the_answer():
    vllm = answers("personal_research", **{**GLM4_9B_32K, "task__serving_engine": "vllm"})
    eager = vllm.with_value("task", "flash_attention", False)
    assert estimate_memory(eager, model_shape(eager.workload)[0]).total_bytes == \
        estimate_memory(vllm, model_shape(vllm.workload)[0]).total_bytes

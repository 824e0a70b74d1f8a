"""llama.cpp's q4_0 KV cache (-ctk/-ctv q4_0): answerable, sized at its blocks' bytes, and a way out where q8_0's is
not enough (audit ZD29: Qwen3.5-27B at 128K, whose source ran q4_0, could not be answered so).
"""

from __future__ import annotations

import datetime as dt

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.units import GIB
from tests.configs.builders import answers

TODAY = dt.date(2026, 11, 1)
# Qwen3.5-27B from its config.json: 64 layers (48 Gated DeltaNet, 16 full attention), hidden 5120, 24 heads, 4 KV
# heads of 256, SwiGLU 17408, vocabulary 248,320; its Q4_K_M file ~16.5 GB.
QWEN35_27B_Q4 = dict(
    workload__preset="custom", workload__kind="transformer", workload__layers=64, workload__hidden_size=5120,
    workload__attention_heads=24, workload__kv_heads=4, workload__head_dim=256, workload__intermediate_size=17408,
    workload__gated_mlp=True, workload__vocabulary_size=248320, workload__linear_attention_layers=48,
    workload__weights_file_gb=16.5, workload__batch_size=1, task__mode="inference", task__precision="int4",
    task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp", task__generated_tokens=200,
    budget__currency="USD", budget__amount=2500.0, budget__condition="used", budget__owned_gpu="rtx-4090-24gb",
    budget__owned_gpu_count=1,
)


def _kv_bytes(dtype: str, tokens: int) -> int:
    return _memory(tokens, dtype).kv_cache_bytes


def _memory(tokens: int, dtype: str):
    job = answers(**QWEN35_27B_Q4, workload__sequence_length=tokens, task__kv_cache_dtype=dtype)
    return estimate_memory(job, model_shape(job.workload)[0])


def test_a_q4_0_kv_cache_takes_its_blocks_bytes_18_per_32_values():
    # ggml's block_q4_0: a 2-byte scale and 16 bytes of 4-bit values for 32 values; q8_0 34 bytes for 32. The 48
    # Gated DeltaNet layers' state stays F32 whatever the cache's type (llama_memory_recurrent): not in the ratio.
    state = 48 * 5120 * 256 * 4
    q4, q8, f16 = (_kv_bytes(dtype, 131072) - state for dtype in ("q4_0", "fp8", "auto"))
    assert abs(q4 / q8 - 18 / 34) < 0.01 and abs(q4 / f16 - 18 / 64) < 0.01
    # Published: the 16 attention layers' cache at 128K in q4_0 is "about 2 GB" (tianchengwu.com, 2026-04-05).
    assert 1.8e9 < q4 < 2.6e9, q4


def test_a_q4_0_kv_cache_is_llama_cpps_alone():
    job = answers(**{**QWEN35_27B_Q4, "task__serving_engine": "vllm", "task__quantization": "awq"},
                  task__kv_cache_dtype="q4_0")
    assert any(key == "kv_cache_dtype" and "llama.cpp" in reason for _, key, reason in cross_field_problems(job))
    assert not cross_field_problems(answers(**QWEN35_27B_Q4, workload__sequence_length=2048,
                                            task__kv_cache_dtype="q4_0"))


def test_where_q8_0_is_not_enough_on_the_card_you_have_a_q4_0_cache_leads_and_where_it_is_only_q8_0_is_offered(
        catalog):
    # At 250K tokens (the model's 262,144) a q8_0 cache does not fit an owned 4090; q4_0's does, on the same card.
    long = recommend(answers(**QWEN35_27B_Q4, workload__sequence_length=250_000, task__kv_cache_dtype="fp8"),
                     catalog, today=TODAY)
    assert long.blockers
    first = long.feasible_alternatives[0]
    assert first.startswith("keeping your NVIDIA GeForce RTX 4090") and "q4_0 KV cache" in first, first
    assert "accuracy cost" in first
    # A buyer at 128K with a 16-bit cache: q8_0's fits a used 3090 and q4_0's on it costs no less, so its larger
    # accuracy cost buys nothing and it is not offered.
    buyer = {**QWEN35_27B_Q4, "budget__owned_gpu": "", "budget__owned_gpu_count": 0}
    auto = recommend(answers(**buyer, workload__sequence_length=131072), catalog, today=TODAY)
    assert auto.feasible_alternatives[0].startswith("an fp8 KV cache"), auto.feasible_alternatives
    assert not any("q4_0 KV cache" in line for line in auto.feasible_alternatives), auto.feasible_alternatives
    assert _memory(131072, "q4_0").total_bytes < 22 * GIB

"""Answers for a test, written as keyword changes: answers(workload__preset="llama-7b", budget__amount=9e3)."""

from __future__ import annotations

from typing import Any

from pth_top.configs.answers import Answers


def answers(scenario: str = "personal_research", **changes) -> Answers:
    result = Answers(scenario=scenario)
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        result = result.with_value(section, key, value)
    return result


def custom(parameters: int, layers: int, hidden: int, heads: int, kv_heads: int, vocabulary: int, mlp: int,
           gated: bool = True) -> dict[str, Any]:
    """A custom transformer's shape as answer keys, as its config.json gives it."""
    return {"workload__preset": "custom", "workload__parameters": parameters, "workload__layers": layers,
            "workload__hidden_size": hidden, "workload__attention_heads": heads, "workload__kv_heads": kv_heads,
            "workload__vocabulary_size": vocabulary, "workload__intermediate_size": mlp, "workload__gated_mlp": gated}


# Qwen2.5-3B from its config.json (3.09B, 36 layers, hidden 2048, 16 heads, 2 KV heads, SwiGLU 11008, vocab 151936).
QWEN25_3B = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=3_085_938_688, workload__layers=36,
    workload__hidden_size=2048, workload__attention_heads=16, workload__kv_heads=2, workload__intermediate_size=11008,
    workload__gated_mlp=True, workload__vocabulary_size=151936,
)
# Qwen2.5-32B from its config.json (32.76B, 64 layers, hidden 5120, 40 heads, 8 KV heads, SwiGLU 27648, vocab 152064).
QWEN25_32B = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=32_763_876_352,
    workload__layers=64, workload__hidden_size=5120, workload__attention_heads=40, workload__kv_heads=8,
    workload__intermediate_size=27648, workload__gated_mlp=True, workload__vocabulary_size=152_064,
)
# DeepSeek-LLM-67B (deepseek-ai/deepseek-llm-67b-base config.json: 95 layers, hidden 8192, 64 heads, 8 KV heads,
# SwiGLU 22016, vocab 102400; 67B).
DEEPSEEK_LLM_67B = dict(
    workload__preset="custom", workload__parameters=67_000_000_000, workload__layers=95, workload__hidden_size=8192,
    workload__attention_heads=64, workload__kv_heads=8, workload__intermediate_size=22016, workload__gated_mlp=True,
    workload__vocabulary_size=102_400,
)
# GLM-4.5-Air (zai-org/GLM-4.5-Air config.json: 106B with 12B active, 46 layers, hidden 4096, 96 heads of 128, 8 KV
# heads, MLP 12672, vocab 151552; 128 routed experts, 8 a token, given where a test needs them).
GLM45_AIR = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=106_000_000_000,
    workload__active_parameters=12_000_000_000, workload__layers=46, workload__hidden_size=4096,
    workload__attention_heads=96, workload__kv_heads=8, workload__head_dim=128, workload__intermediate_size=12672,
    workload__gated_mlp=True, workload__vocabulary_size=151_552,
)
# Command R v01 (CohereForAI/c4ai-command-r-v01 config.json: 35B, 40 layers of 8192, 64 heads, 64 KV heads, SwiGLU
# 22528, V 256,000, tied) in llama.cpp's Q4_K_M at a 32,512-token prompt, one stream (ollama/ollama#4790, audit DS72).
COMMAND_R_V01_Q4_32K = dict(
    workload__preset="custom", workload__parameters=35_000_000_000, workload__layers=40, workload__hidden_size=8192,
    workload__attention_heads=64, workload__kv_heads=64, workload__intermediate_size=22528, workload__gated_mlp=True,
    workload__vocabulary_size=256_000, workload__tied_embeddings=True, workload__sequence_length=32512,
    workload__batch_size=1, task__mode="inference", task__precision="int4", task__quantization="gguf_q4_k_m",
    task__serving_engine="llama_cpp", task__generated_tokens=256,
)
# Reka Flash 3 (20.9B; 44 layers of 6,144, 64 heads, 8 KV heads, SwiGLU 19,648, V 100,352) in llama.cpp's Q4_K_M at
# its 32k context, one stream, for a EUR 1,200 used-card PC (audit BY57).
REKA_FLASH_3_Q4_32K = dict(
    workload__preset="custom", workload__parameters=20_900_000_000, workload__layers=44, workload__hidden_size=6144,
    workload__attention_heads=64, workload__kv_heads=8, workload__intermediate_size=19648, workload__gated_mlp=True,
    workload__vocabulary_size=100352, workload__sequence_length=28672, workload__batch_size=1, task__mode="inference",
    task__precision="int4", task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp",
    task__generated_tokens=4096, budget__currency="EUR", budget__amount=1200.0, budget__condition="used",
)

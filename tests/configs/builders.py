"""Answers for a test, written as keyword changes: answers(workload__preset="llama-7b", budget__amount=9e3)."""

from __future__ import annotations

from pth_top.configs.answers import Answers


def answers(scenario: str = "personal_research", **changes) -> Answers:
    result = Answers(scenario=scenario)
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        result = result.with_value(section, key, value)
    return result


# Qwen2.5-3B from its config.json (3.09B, 36 layers, hidden 2048, 16 heads, 2 KV heads, SwiGLU 11008, vocab 151936).
QWEN25_3B = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=3_085_938_688, workload__layers=36,
    workload__hidden_size=2048, workload__attention_heads=16, workload__kv_heads=2, workload__intermediate_size=11008,
    workload__gated_mlp=True, workload__vocabulary_size=151936,
)

"""The wizard's memory estimate beside the `memory` kernel's measured peak (the child cannot import configs)."""

from __future__ import annotations

from typing import Any

from pth_top.configs.memory import estimate_training
from pth_top.configs.memory_terms import CUDA_CONTEXT_BYTES, ModelShape

MIB_BYTES = 2**20


def estimated_bytes(model: dict[str, Any], *, cuda: bool) -> int:
    """The estimator's per-GPU figure for the model a `memory` row describes (no CUDA context off CUDA)."""
    number = lambda key: int(model.get(key) or 0)  # noqa: E731 - rows hold JSON numbers
    if model.get("kind") == "cnn":
        shape = ModelShape("cnn", number("parameters"),
                           activation_elements_per_sample=number("activation_elements_per_sample"),
                           largest_activation_elements=number("largest_activation_elements"))
    else:
        shape = ModelShape("transformer", number("parameters"), layers=number("layers"),
                           hidden_size=number("hidden_size"), attention_heads=number("attention_heads"),
                           sequence_length=number("sequence_length"), intermediate_size=number("intermediate_size"))
    breakdown = estimate_training(
        shape, precision=str(model.get("precision", "fp32")), optimizer=str(model.get("optimizer", "adamw")),
        global_batch=max(1, number("batch")), flash_attention=bool(model.get("flash_attention", False)),
        method=str(model.get("method", "full")), lora_rank=max(1, number("lora_rank") or 16),
        lora_targets=str(model.get("lora_targets", "attention")),
        cuda_context_bytes=CUDA_CONTEXT_BYTES if cuda else 0,
    )
    # max_memory_allocated counts tensors only: the context is outside it on CUDA too.
    return breakdown.total_bytes - breakdown.cuda_context_bytes


def comparison_note(row: dict[str, Any]) -> str:
    """'estimate 31.9 MiB (+9.6 %)' for a `memory` row, or '' when the row has no model or value."""
    model = (row.get("details") or {}).get("model")
    measured_mib = row.get("value")
    if not isinstance(model, dict) or not isinstance(measured_mib, (int, float)) or measured_mib <= 0:
        return ""
    try:
        estimate = estimated_bytes(model, cuda=str(row.get("device", "")).startswith("cuda"))
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        return "estimate: the row's model description is not one the estimator reads"
    error = estimate / MIB_BYTES / measured_mib - 1
    return f"estimate {estimate / MIB_BYTES:,.1f} MiB ({error:+.1%} vs measured)"

"""The terms a build's reasoning uses, said once at its end."""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "micro-batch": "micro-batch = samples per GPU in one forward/backward pass (gradient accumulation adds passes "
                   "up to the global batch)",
    "Korthikanti": "Korthikanti = the activation formula of Korthikanti et al. 2022 (arXiv:2205.05198): s sequence "
                   "length, b micro-batch, h hidden size, a attention heads, L layers (5as/h: the attention scores "
                   "flash attention does not keep)",
    "h_kv": "h_kv = the width of the K and V projections (KV heads x head size; below h with grouped-query "
            "attention)",
    "ZeRO": "ZeRO-1/2/3 = DeepSpeed's sharding of optimizer states / + gradients / + weights across the GPUs "
            "(arXiv:1910.02054); FSDP is PyTorch's ZeRO-3; ZeRO-Offload keeps states in CPU RAM",
    "N+R": "N+R = N power supplies carrying the load plus R redundant spares",
}


def glossary(lines: list[str]) -> list[str]:
    """The meaning of each GLOSSARY term the lines use, as one line; none where they use none."""
    text = "\n".join(lines)
    used = [meaning for term, meaning in GLOSSARY.items() if term in text]
    return [f"terms: {'; '.join(used)}"] if used else []

"""Published figures that depend on the software stack (configs/stacks.py), with the estimator's figure for each.

Each case is a PublishedCase (tests/configs/published_figures.py): `about` within 15 %.
"""

from __future__ import annotations

from dataclasses import replace

from pth_top.configs import stacks
from pth_top.configs.answer_types import Workload
from pth_top.configs.memory import estimate_training
from pth_top.configs.memory_inference import estimate_inference
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.presets import model_shape
from pth_top.configs.rules import gpu_usable_bytes, load_rules
from pth_top.units import GIB
from tests.configs.published_figures import PublishedCase

# Llama 3.1 8B has Llama 3 8B's shape (huggingface.co/meta-llama/Llama-3.1-8B config.json: 32 layers, hidden 4096,
# 8 KV heads, SwiGLU 14336, V 128,256) with a 128K context; the preset's 8K context does not bound training.
LLAMA31_8B = model_shape(Workload(preset="llama3-8b"))[0]


def qlora_tokens(shape: ModelShape, sequence_length: int, stack: str) -> int:
    """Unsloth's benchmark setting: 4-bit QLoRA on all linear layers, rank 32, batch 1, checkpointing."""
    return estimate_training(replace(shape, sequence_length=sequence_length), precision="bf16", optimizer="adamw",
                             global_batch=1, method="qlora", lora_rank=32, lora_targets="all_linear",
                             recompute="full", stack=stack).total_bytes


def longest_context(memory_gib: float, stack: str) -> int:
    """The longest sequence whose estimate fits a card of `memory_gib` (its usable share, rules.toml)."""
    usable = gpu_usable_bytes(memory_gib, "dedicated", load_rules())
    low, high = 0, 4_000_000
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if qlora_tokens(LLAMA31_8B, middle, stack) <= usable else (low, middle - 1)
    return low


# Llama 3.1 8B Instruct (the shape above) served by vLLM on one RTX 3090 (23.58 GiB) at gpu_memory_utilization 0.90
# with max_model_len 35,000 (vllm-project/vllm#10517): peak_torch_memory 15.05 GiB, non_torch_memory 0.35 GiB, so
# the KV cache gets 23.58 x 0.90 - 15.05 - 0.35 = 5.82 GiB.
VLLM_3090_KV_BYTES = (23.58 * 0.90 - 15.05 - 0.35) * GIB
LLAMA31_8B_35K = replace(LLAMA31_8B, sequence_length=35_000, max_context_tokens=0)


def vllm_kv_room(memory_gib: float) -> float:
    """What vLLM leaves for the KV cache on a card: its 0.9 share less every other term of the estimate."""
    served = estimate_inference(LLAMA31_8B_35K, precision="bf16", batch=1, engine="vllm")
    usable = gpu_usable_bytes(memory_gib, "dedicated", load_rules(), served.usable_fraction)
    return usable - (served.total_bytes - served.kv_cache_bytes)


# Liger-Kernel's own benchmark of the eager loss it replaces (benchmark/benchmark_fused_linear_cross_entropy.py:
# torch Linear + CrossEntropyLoss in bf16, H 4096, V 128,256; H100 results in benchmark/fused_linear_cross_entropy_
# memory/nvidia_h100_80gb_hbm3/*.csv): 15,237.13 MiB at BT 16,384 and 27,504.45 MiB at BT 32,768, so each token
# costs (27,504.45 - 15,237.13) / 16,384 MiB; the eager loss holds HF_LOSS_FP32_COPIES copies of the logits at its
# peak, here in bf16 (no upcast in that benchmark).
EAGER_LOSS_BYTES_PER_TOKEN = (27_504.450977 - 15_237.125977) * 2**20 / 16_384


def eager_loss_bytes_per_token() -> float:
    return stacks.loss_logits_bytes("hf_trainer", 16_384, 128_256, 4096, 2.0)[0] / 16_384 / 2  # fp32 -> bf16


# unslothai/unsloth README, "Context length benchmarks", Llama 3.1 (8B) max. context length: "4bit QLoRA on all
# linear layers (Q, K, V, O, gate, up and down) with rank = 32 with a batch size of 1" (Cut Cross Entropy and
# offloaded gradient checkpointing, unsloth.ai/blog/llama3-3). The 8 GB row (2,972 tokens) is left out: the fixed
# cost is all but the whole card there, and the estimate's 5,868 tokens is twice it.
UNSLOTH_LLAMA31_8B_CONTEXT = {12: 21_848, 16: 40_724, 24: 78_475, 40: 153_977, 48: 191_728, 80: 342_733}

CASES: tuple[PublishedCase, ...] = (
    *(PublishedCase(f"unsloth-llama31-8b-qlora-context-{gib}gb", "github.com/unslothai/unsloth README", tokens,
                    lambda gib=gib: longest_context(gib, "unsloth"))
      for gib, tokens in UNSLOTH_LLAMA31_8B_CONTEXT.items()),
    PublishedCase("liger-benchmark-eager-cross-entropy-per-token", "github.com/linkedin/Liger-Kernel benchmark",
                  EAGER_LOSS_BYTES_PER_TOKEN, eager_loss_bytes_per_token),
    PublishedCase("vllm-3090-llama31-8b-kv-cache", "github.com/vllm-project/vllm/issues/10517", VLLM_3090_KV_BYTES,
                  lambda: vllm_kv_room(24)),
)

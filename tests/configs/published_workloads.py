"""End-to-end published workloads: answers run through recommend(), each checked for the property an ML engineer
would check (fits or does not fit on card X, the speed within 35 %, the market and currency), with its source.

Counted with the other corpora (published_figures.py 30, published_stacks.py 8, published_speeds.py 22,
test_requests.py 13): 73 before this file.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from pth_top.configs.build import Build

TODAY = dt.date(2026, 5, 10)
SPEED_TOLERANCE = 0.35
GPT_OSS_120B = "huggingface.co/openai/gpt-oss-120b model card: MXFP4 MoE weights let gpt-oss-120b 'run on a single " \
    "80GB GPU (like NVIDIA H100 or AMD MI300X)' and gpt-oss-20b 'within 16GB of memory'"
SGLANG_DEEPSEEK = "docs.sglang.io/docs/basic_usage/deepseek_v3: FP8 (native) on 8 x H200; BF16 on 2 x 8 x H200; " \
    "FP8 on 2 x 8 x H100"
MIXTRAL_TABLE = "gigagpu.com/mixtral-8x7b-quantization-consumer-gpu: Mixtral 8x7B GGUF Q4_K_M 27 GB (~30 GB at 4K " \
    "context) needs an RTX 5090 32 GB; 4-bit GPTQ runs on 2 x RTX 3090"


@dataclass(frozen=True)
class Workload:
    id: str
    source: str  # URL and what the figure is
    prop: str  # "fits", "does_not_fit", "speed", "currency"
    answers: dict[str, Any]
    gpu: tuple[str, int] | None = None  # the pinned card and count
    published: float = 0.0  # tokens/s for "speed"
    expect: dict[str, Any] = field(default_factory=dict)  # "currency": the symbol; "figure": the speed key
    note: str = ""  # what the estimator cannot express here


def inference(preset: str, precision: str, context: int, gpus: int = 1, **more: Any) -> dict[str, Any]:
    return {"workload__preset": preset, "workload__batch_size": 1, "workload__sequence_length": context,
            "task__mode": "inference", "task__precision": precision, "scale__gpu_count": gpus,
            "budget__amount": 5e6, **more}


CASES: tuple[Workload, ...] = (
    Workload("gpt-oss-120b-mxfp4-one-h100", GPT_OSS_120B, "fits",
             inference("gpt-oss-120b", "int4", 131072), ("h100-80gb-sxm", 1),
             note="MXFP4 is 4.25 bit; the estimate's int4 is 4.5 bit with 16-bit embeddings (an upper bound), and "
                  "its KV cache counts the sliding-window layers in full"),
    Workload("gpt-oss-20b-mxfp4-in-16-gb", GPT_OSS_120B, "fits",
             inference("gpt-oss-20b", "int4", 16384), ("rtx-5060-ti-16gb", 1),
             note="at 131k tokens the full-attention KV cache (6 GiB here) no longer fits 16 GB: the claim is for "
                  "shorter contexts"),
    Workload("gpt-oss-20b-decode-rtx-4080-super",
             "smeltcore.com/recipes/gpt-oss-20b-on-rtx-4080-super-mxfp4-chat-at-139-tok-s-via-ollama-or-vllm: "
             "139.1 tokens/s generation, MXFP4, 4k context", "speed",
             inference("gpt-oss-20b", "int4", 4096), ("rtx-4080-super-16gb", 1), published=139.1),
    Workload("qwen3-30b-a3b-q4-one-24-gb-card",
             "smeltcore.com/recipes/qwen3-30b-a3b-rtx-3090-ti: the Q4_K_M GGUF (~18.6 GB) fits a 24 GB card fully "
             "(-ngl 99, no offload)", "fits",
             inference("qwen3-30b-a3b", "int4", 4096), ("rtx-3090-24gb", 1)),
    Workload("qwen3-30b-a3b-decode-rtx-4090",
             "runaihome.com/blog/qwen3-30b-a3b-local-ai-guide-2026: up to 196 tokens/s on one RTX 4090 (Q4)", "speed",
             inference("qwen3-30b-a3b", "int4", 4096), ("rtx-4090-24gb", 1), published=196.0,
             note="the MoE bandwidth fraction is calibrated on the same model on an RTX 3090 Ti (configs/speed.py); "
                  "the RTX 4090 has the same 1,008 GB/s, so this checks the card, not the model"),
    Workload("mixtral-8x7b-int4-not-one-24-gb-card", MIXTRAL_TABLE, "does_not_fit",
             inference("mixtral-8x7b", "int4", 4096), ("rtx-4090-24gb", 1)),
    Workload("mixtral-8x7b-int4-two-3090s", MIXTRAL_TABLE, "fits",
             inference("mixtral-8x7b", "int4", 4096, gpus=2, budget__condition="used"), ("rtx-3090-24gb", 2)),
    Workload("deepseek-v3-fp8-8x-h200", SGLANG_DEEPSEEK, "fits",
             inference("deepseek-v3", "int8", 8192, gpus=8, task__serving_engine="sglang"), ("h200-141gb-sxm", 8),
             note="FP8 is given as int8 (8.5 bit with block scales, an upper bound); MLA's 576-value cache is the "
                  "preset's kv width"),
    Workload("deepseek-v3-bf16-not-8x-h200", SGLANG_DEEPSEEK, "does_not_fit",
             inference("deepseek-v3", "bf16", 8192, gpus=8, task__serving_engine="sglang"), ("h200-141gb-sxm", 8)),
    Workload("deepseek-v3-fp8-not-8x-h100", SGLANG_DEEPSEEK, "does_not_fit",
             inference("deepseek-v3", "int8", 8192, gpus=8, task__serving_engine="sglang"), ("h100-80gb-sxm", 8)),
    Workload("qwen3-30b-a3b-usd-buyer",
             "configs/catalog/gpus.toml US prices (runlocalai.co/guides/best-gpu-for-local-ai-2026, May 2026): a "
             "$2,500 budget buys a 24 GB card's box in dollars", "currency",
             inference("qwen3-30b-a3b", "int4", 4096, budget__amount=2500.0, budget__currency="USD"),
             expect={"currency": "$"}),
    Workload("gpt-oss-20b-eur-buyer",
             "configs/catalog/gpus.toml EU prices; the model card's 16 GB: a EUR 1,500 budget holds it", "currency",
             inference("gpt-oss-20b", "int4", 16384, budget__amount=1500.0, budget__currency="EUR"),
             expect={"currency": "€"}),
)


def speed_of(build: Build) -> float:
    return float(build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0))

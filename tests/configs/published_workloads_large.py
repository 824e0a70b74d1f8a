"""Published workloads of large models, each run through recommend() as published_workloads.py's are: 2025 MoE
vision-language models across the GPUs their vendors name, MiMo-V2-Flash's MTP decoding on 8 x H200, Grok-1 across
eight A100s, and Baichuan-13B LoRA and full fine-tunes on the cards LLaMA-Factory's users ran out of memory on or
trained with.
"""

from __future__ import annotations

from typing import Any

from tests.configs.builders import custom
from tests.configs.published_workloads import Workload, inference, training

# Intern-S1 (its README: Qwen3-235B-A22B's language model, 94 layers, 128 experts of which 8 a token of 1,536, beside
# the 5.9B InternViT-6B, 45 layers of 3,200; vocabulary 153,216), served by vLLM with tensor parallel at 32k.
INTERN_S1 = {
    **custom(235_000_000_000, 94, 4096, 64, 4, 153_216, 8 * 1536), "workload__kind": "transformer",
    "workload__active_parameters": 22_000_000_000, "workload__experts_count": 128, "workload__experts_per_token": 8,
    "workload__head_dim": 128, "workload__vision_layers": 45, "workload__vision_hidden_size": 3200,
    "workload__vision_tokens": 1024, "workload__frozen_parameters": 5_900_000_000, "task__serving_engine": "vllm",
    "task__generated_tokens": 4096, "scenario": "inference_server"}
INTERN_S1_README = "github.com/InternLM/Intern-S1 README 'Serving', the minimum GPUs: BF16 on 8 A100, H800 or H100, " \
    "or 4 H200; FP8 on 4 H800 or H100, or 2 H200"

# GLM-4.5V (zai-org/GLM-V: GLM-4.5-Air's 106B-A12B language model, 46 layers, 128 experts of which 8 a token of 1,408
# and one shared, 96 heads of 128, 8 KV heads, vocabulary 151,552; a ~1B ViT), FP8 under vLLM at 64k on 2 GPUs.
GLM_45V_FP8 = {
    **custom(106_000_000_000, 46, 4096, 96, 8, 151_552, 9 * 1408), "workload__active_parameters": 12_000_000_000,
    "workload__experts_count": 128, "workload__experts_per_token": 8, "workload__head_dim": 128,
    "workload__vision_layers": 24, "workload__vision_hidden_size": 1536, "workload__vision_tokens": 4096,
    "workload__frozen_parameters": 1_000_000_000, "task__quantization": "fp8", "task__serving_engine": "vllm",
    "task__generated_tokens": 2048, "scenario": "inference_server"}

# Kimi-VL-A3B (MoonshotAI/Kimi-VL config: Moonlight's 16B-A3B, 27 layers of 2,048, 64 experts of which 6 a token of
# 1,408 beside 2 shared, 16 heads of 160 (MLA, counted as full heads), vocabulary 163,840; MoonViT 0.4B), generate().
KIMI_VL_A3B = {
    **custom(16_000_000_000, 27, 2048, 16, 16, 163_840, 8 * 1408), "workload__active_parameters": 2_800_000_000,
    "workload__experts_count": 64, "workload__experts_per_token": 6, "workload__head_dim": 160,
    "workload__vision_layers": 27, "workload__vision_hidden_size": 1152, "workload__vision_tokens": 4096,
    "workload__frozen_parameters": 400_000_000, "task__serving_engine": "hf_generate",
    "task__generated_tokens": 1024}

# Grok-1 (xai-org/grok-1: 314B, 8 experts of which 2 a token of 32,768, 64 layers of 6,144, 48 heads, 8 KV heads,
# vocabulary 131,072; ~86B active), int8 weights, one stream after a 5-token prompt.
GROK_1 = {
    **custom(314_000_000_000, 64, 6144, 48, 8, 131_072, 2 * 32_768), "workload__active_parameters": 86_000_000_000,
    "workload__experts_count": 8, "workload__experts_per_token": 2, "workload__head_dim": 128,
    "task__quantization": "fp8", "task__serving_engine": "vllm", "task__generated_tokens": 200}

# MiMo-V2-Flash (XiaomiMiMo/MiMo-V2-Flash: 309B, 15B active, 256 experts of which 8 a token, 48 layers of 4,096, 64
# heads of 160 (counted as the query width) over 4 KV heads, 39 of them sliding-window layers of 128 tokens,
# vocabulary 152,576), FP8 under SGLang with its 3 MTP layers drafting 3 tokens a step.
MIMO_V2_FLASH = {
    **custom(309_000_000_000, 48, 4096, 64, 4, 152_576, 8 * 2048), "workload__active_parameters": 15_000_000_000,
    "workload__experts_count": 256, "workload__experts_per_token": 8, "workload__head_dim": 160,
    "workload__sliding_window_tokens": 128, "workload__sliding_window_layers": 39, "task__quantization": "fp8",
    "task__serving_engine": "sglang", "task__generated_tokens": 1024, "task__speculative_draft_tokens": 3,
    "task__speculative_accept_length": 3.6, "scenario": "inference_server"}

# Baichuan-13B (baichuan-inc/Baichuan-13B-Base config.json: 40 layers of 5,120, 40 heads, SwiGLU 13,696, vocabulary
# 64,000; 13.26B), fine-tuned by LLaMA-Factory in fp16 with checkpointing and eager attention, as its 2023 runs were.
BAICHUAN_13B = {**custom(13_264_901_120, 40, 5120, 40, 40, 64_000, 13_696), "workload__kind": "transformer",
                "task__precision": "amp_fp16", "task__optimizer": "adamw", "task__flash_attention": False,
                "task__training_stack": "hf_trainer", "data__kind": "text"}
LORA_W_PACK = {"task__method": "lora", "task__lora_rank": 8, "task__lora_targets": "attention"}


def baichuan(context: int, batch: int, gpus: int, accumulation: int, **more: Any) -> dict[str, Any]:
    """Baichuan-13B trained at `batch` sequences a step of `accumulation` micro-batches on `gpus` GPUs."""
    return training(BAICHUAN_13B, context, batch, gpus, task__accumulation_steps=accumulation, **more)


LARGE_CASES: tuple[Workload, ...] = (
    Workload("vllm-intern-s1-bf16-not-4x-h100", INTERN_S1_README + ": BF16 needs 8 x H100, so 4 do not hold it",
             "does_not_fit", inference("custom", "bf16", 32_768, gpus=4, **INTERN_S1), ("h100-80gb-sxm", 4)),
    Workload("vllm-intern-s1-bf16-fits-4x-h200", INTERN_S1_README + ": BF16 on 4 x H200", "fits",
             inference("custom", "bf16", 32_768, gpus=4, **INTERN_S1), ("h200-141gb-nvl", 4),
             note="the 6B encoder is split with the model, as vLLM's tensor-parallel encoder layers are"),
    Workload("vllm-intern-s1-fp8-fits-2x-h200", INTERN_S1_README + ": FP8 on 2 x H200", "fits",
             inference("custom", "int8", 32_768, gpus=2, task__quantization="fp8", **INTERN_S1),
             ("h200-141gb-nvl", 2)),
    Workload("vllm-glm-45v-fp8-fits-2x-h100",
             "github.com/zai-org/GLM-V/issues/116: GLM-4.5V-FP8 on 2 x H100 80GB with vLLM tensor parallel 2 "
             "(maintainer: '可以', it can)", "fits",
             inference("custom", "int8", 65_536, gpus=2, **GLM_45V_FP8), ("h100-80gb-sxm", 2)),
    Workload("generate-kimi-vl-a3b-fits-40gb",
             "github.com/MoonshotAI/Kimi-VL/issues/1: Kimi-VL-A3B-Instruct in bf16 under transformers (maintainer: "
             "'40G GPU memory should be enough')", "fits",
             inference("custom", "bf16", 8192, **KIMI_VL_A3B), ("a100-40gb-sxm", 1)),
    Workload("grok-1-int8-8x-a100-decode",
             "github.com/meta-pytorch/gpt-fast/pull/171: Grok-1 int8 weight-only, tensor parallel 8 on 8 x A100 80GB "
             "(power-capped at 330 W), 73.15 tokens/s at 3,057 GB/s", "speed",
             inference("custom", "int8", 8, gpus=8, **GROK_1), ("a100-80gb-sxm", 8), published=73.15,
             note="gpt-fast's tensor parallel is answered as vLLM's, as task.forward_runtime's help says"),
    Workload("sglang-mimo-v2-flash-mtp-8x-h200-decode",
             "lmsys.org/blog/2025-12-16-mimo-v2-flash (lm-sys.github.io blog/2025-12-16-mimo-v2-flash.md): decode on "
             "8 x H200, DP 2 x TP 4, EP 8, 16k input, 16 requests a DP rank, MTP accept length 3.6 "
             "(--speculative-num-steps 3): ~150 tokens/s a request", "speed",
             inference("custom", "int8", 16_384, gpus=8, workload__batch_size=32, **MIMO_V2_FLASH),
             ("h200-141gb-sxm", 8), published=150.0,
             note="67 tokens/s without speculative decoding (audit XI8); the intermediate size is 8 experts x 2,048"),
    Workload("llamafactory-baichuan-13b-lora-fits-a100-40gb",
             "github.com/hiyouga/LlamaFactory/issues/920: Baichuan-13B fp16 LoRA on W_pack, cutoff 1024, micro-batch "
             "4; the maintainer: one card is enough (the reporter's A100 40GB)", "fits",
             baichuan(1024, 16, 1, 4, **LORA_W_PACK), ("a100-40gb-sxm", 1)),
    Workload("llamafactory-baichuan-13b-lora-ddp-not-2x-4090",
             "github.com/hiyouga/LlamaFactory/issues/634: the same fp16 LoRA on 2 x RTX 4090 runs out of memory; the "
             "maintainer: 'a 4090 needs 4-bit to fine-tune 13B'", "does_not_fit",
             baichuan(1024, 16, 2, 4, scale__sharding="none", **LORA_W_PACK), ("rtx-4090-24gb", 2)),
    Workload("llamafactory-baichuan-13b-full-zero2-not-4x-a100-80gb",
             "github.com/hiyouga/LlamaFactory/issues/740: full fp16 fine-tune, ZeRO-2, micro-batch 1 of 2,000 + 1,200 "
             "tokens, out of memory on 4 x A100 80GB; #1158, the maintainer: 'ZeRO-2 needs 8 A100s, 4 need ZeRO-3'",
             "does_not_fit", baichuan(3200, 8, 4, 2, task__method="full", scale__sharding="zero2"),
             ("a100-80gb-sxm", 4)),
    Workload("llamafactory-baichuan-13b-full-zero3-fits-6x-a100-80gb",
             "github.com/hiyouga/LlamaFactory/issues/713: full fine-tune under DeepSpeed ZeRO-3 'on 6*A100-80G without "
             "offloading ... works just fine'", "fits",
             baichuan(1024, 24, 6, 4, task__method="full", scale__sharding="zero3"), ("a100-80gb-sxm", 6)),
    Workload("llamafactory-baichuan-13b-full-ddp-not-8x-a800",
             "github.com/hiyouga/LlamaFactory/issues/713: the same full fine-tune under plain DDP on 8 x A800 80GB "
             "runs out of memory 'even at batch size 1'", "does_not_fit",
             baichuan(1024, 32, 8, 4, task__method="full", scale__sharding="none"), ("a100-80gb-sxm", 8),
             note="an A800 is an A100 80GB with NVLink cut to 400 GB/s: the same memory"),
)

"""End-to-end published workloads: answers run through recommend(), each checked for the property an ML engineer
would check (fits or does not fit on card X, the speed within 35 %, the market and currency), with its source.

Counted with the other corpora (published_figures.py 35, published_stacks.py 8, published_speeds.py 240,
test_requests.py 13, published_workloads_large.py 12): 66 here (374 in all).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from pth_top.configs.build import Build
from tests.configs.builders import custom

TODAY = dt.date(2026, 5, 10)
SPEED_TOLERANCE = 0.35
GPT_OSS_120B = "huggingface.co/openai/gpt-oss-120b model card: MXFP4 MoE weights let gpt-oss-120b 'run on a single " \
    "80GB GPU (like NVIDIA H100 or AMD MI300X)' and gpt-oss-20b 'within 16GB of memory'"
SGLANG_DEEPSEEK = "docs.sglang.io/docs/basic_usage/deepseek_v3: FP8 (native) on 8 x H200; BF16 on 2 x 8 x H200; " \
    "FP8 on 2 x 8 x H100"
MIXTRAL_TABLE = "gigagpu.com/mixtral-8x7b-quantization-consumer-gpu: Mixtral 8x7B GGUF Q4_K_M 27 GB (~30 GB at 4K " \
    "context) needs an RTX 5090 32 GB; 4-bit GPTQ runs on 2 x RTX 3090"


MINIMAX_M1 = "huggingface.co/MiniMaxAI/MiniMax-M1-80k docs/vllm_deployment_guide_cn.md: on vLLM with 8 x H800 up " \
    "to 2M tokens, with 8 x H20 96GB up to 5M tokens"
# MiniMax-M1 (its config.json: 456B, 45.9B active, 32 experts top-2, 80 layers of which 70 lightning attention, hidden
# 6144, 64 heads, 8 KV heads of 128, vocabulary 200,064, SwiGLU 9216), experts in FP8, one 1M-token request.
MINIMAX_M1_1M = {
    **custom(456_000_000_000, 80, 6144, 64, 8, 200_064, 9216), "workload__active_parameters": 45_900_000_000,
    "workload__experts_count": 32, "workload__experts_per_token": 2, "workload__linear_attention_layers": 70,
    "workload__head_dim": 128, "workload__sequence_length": 1_000_000, "workload__batch_size": 1,
    "task__mode": "inference",
    "task__precision": "int8", "task__quantization": "fp8", "task__serving_engine": "vllm",
    "task__generated_tokens": 4096, "scale__gpu_count": 8, "budget__amount": 1_200_000.0, "budget__currency": "CNY"}


# FramePack (HunyuanVideo's 13B DiT, 60 blocks of 3072), a 33-frame section, ~17,000 tokens with its history, 25 steps;
# LLaVA-Llama-3-8B, CLIP, SigLIP and the VAE beside it (8.8B, fp16).
FRAMEPACK_SECTION = {
    "workload__preset": "custom", "workload__kind": "transformer", "workload__parameters": 12_800_000_000,
    "workload__layers": 60, "workload__hidden_size": 3072, "workload__attention_heads": 24,
    "workload__intermediate_size": 12288, "workload__sequence_length": 17000, "workload__denoising_steps": 25,
    "workload__frozen_parameters": 8_800_000_000, "workload__frozen_precision": "fp16",
    "workload__output_width_px": 640, "workload__output_height_px": 608, "workload__batch_size": 1,
    "task__mode": "inference", "task__precision": "bf16", "task__vae_tiling": True, "data__kind": "video",
    "budget__amount": 2500.0, "budget__currency": "USD"}


DINO_MEMORY = "github.com/IDEA-Research/DINO/issues/76, the maintainer: 'Around 15G mem is enough for batchsize 2'"
DINO_4SCALE = {"workload__preset": "custom", "workload__kind": "cnn", "workload__parameters": 47_000_000,
               "workload__layers": 50, "workload__input_size_px": 1033, "workload__forward_gflops_per_sample": 558.0,
               "workload__dense_head": "query", "workload__batch_size": 2, "task__mode": "training",
               "task__precision": "fp32", "data__kind": "images", "budget__amount": 5e6}


@dataclass(frozen=True)
class Workload:
    id: str
    source: str  # URL and what the figure is
    prop: str  # "fits", "does_not_fit", "speed", "currency", "used" (fits, priced at the used listing)
    answers: dict[str, Any]
    gpu: tuple[str, int] | None = None  # the pinned card and count
    published: float = 0.0  # tokens/s for "speed"
    expect: dict[str, Any] = field(default_factory=dict)  # "currency": the symbol; "figure": the speed key
    note: str = ""  # what the estimator cannot express here
    xfail: str = ""  # the wizard's advice disagrees with the source: the gap, run as xfail(strict=True)


def _dense_cnn(parameters: int, px: int, batch: int) -> dict[str, object]:
    """A custom CNN given by its parameters and input side only, trained in fp32 with SGD, as mmseg and mmdet do."""
    return {"workload__preset": "custom", "workload__kind": "cnn", "workload__parameters": parameters,
            "workload__input_size_px": px, "workload__batch_size": batch, "task__mode": "training",
            "task__precision": "fp32", "task__optimizer": "sgd", "data__kind": "images", "budget__amount": 5e6}

def inference(preset: str, precision: str, context: int, gpus: int = 1, **more: Any) -> dict[str, Any]:
    return {"workload__preset": preset, "workload__batch_size": 1, "workload__sequence_length": context,
            "task__mode": "inference", "task__precision": precision, "scale__gpu_count": gpus,
            "budget__amount": 5e6, **more}


def inference_custom(shape: dict[str, Any], precision: str = "bf16") -> dict[str, Any]:
    return {**shape, "workload__batch_size": 1, "task__mode": "inference", "task__precision": precision,
            "budget__amount": 5e6}


def training(shape: dict[str, Any], context: int, batch: int = 1, gpus: int = 1, **more: Any) -> dict[str, Any]:
    return {**shape, "workload__sequence_length": context, "workload__batch_size": batch, "task__mode": "training",
            "task__recompute": "full", "scale__gpu_count": gpus, "budget__amount": 5e6, **more}


def qlora(shape: dict[str, Any], context: int, stack: str) -> dict[str, Any]:
    """Unsloth's table setting: 4-bit QLoRA on all linear layers, rank 32, batch 1, checkpointing, and its notebooks'
    optim = "adamw_8bit"."""
    return training(shape, context, task__method="qlora", task__lora_rank=32, task__lora_targets="all_linear",
                    task__training_stack=stack, task__optimizer="adam8bit")


# Qwen2.5-7B-Instruct-1M (28 layers, hidden 3584, 28 heads, 4 KV heads, SwiGLU 18944, V 152,064; 7.62B) and
# Qwen2.5-14B-Instruct-1M (48 layers, hidden 5120, 40 heads, 8 KV heads, SwiGLU 13824, V 152,064; 14.7B), config.json;
# served by vLLM with the card's chunked prefill of 131,072 tokens.
QWEN25_7B = custom(7_615_616_512, 28, 3584, 28, 4, 152_064, 18_944)
QWEN25_14B = custom(14_770_033_664, 48, 5120, 40, 8, 152_064, 13_824)
QWEN25_1M_SERVE = {"task__serving_engine": "vllm", "task__prefill_chunk_tokens": 131_072,
                   "task__generated_tokens": 8192}
QWEN_1M = ("huggingface.co/Qwen/Qwen2.5-14B-Instruct-1M README, 'VRAM Requirement for processing 1 million-token "
           "sequences': at least 120 GB for the 7B and 320 GB for the 14B (total across GPUs), with vLLM "
           "--enable-chunked-prefill --max-num-batched-tokens 131072")
# Shapes from each model's config.json on huggingface.co: Llama 3.1 8B (meta-llama/Llama-3.1-8B), Llama 3.1/3.3 70B
# (meta-llama/Llama-3.3-70B-Instruct, 70.55B), Qwen1.5-7B (Qwen/Qwen1.5-7B-Chat: no GQA, 7.72B), Qwen2.5-1.5B
# (Qwen/Qwen2.5-Coder-1.5B-Instruct, 1.54B).
LLAMA31_8B = custom(8_030_261_248, 32, 4096, 32, 8, 128_256, 14_336)
WHISPER_EVENT = ("github.com/huggingface/community-events whisper-fine-tuning-event/README.md, 'Recommended Batch "
                 "Sizes with DeepSpeed'")
# openai/whisper-large-v3 config.json: 32 encoder + 32 decoder layers, d_model 1280, 20 heads, FFN 5120, V 51,866,
# 1,500 encoder positions, at most 448 decoder positions; 1.55B parameters.
WHISPER_LARGE = {**custom(1_543_490_560, 64, 1280, 20, 20, 51_866, 5120, gated=False),
                 "workload__sequence_length": 1500, "workload__decoder_layers": 32,
                 "workload__decoder_sequence_length": 448, "task__mode": "training", "task__precision": "amp_fp16",
                 "task__recompute": "full", "scale__sharding": "zero_offload", "data__kind": "audio",
                 "budget__amount": 5e6}
LLAMA33_70B = custom(70_553_706_496, 80, 8192, 64, 8, 128_256, 28_672)
QWEN15_7B = custom(7_721_324_544, 32, 4096, 32, 32, 151_936, 11_008)
QWEN25_15B = custom(1_543_714_304, 28, 1536, 12, 2, 151_936, 8960)
# SmolLM-135M (HuggingFaceTB/SmolLM-135M config.json: 30 layers, hidden 576, 9 heads, 3 KV heads, SwiGLU 1536,
# V 49,152, tied embeddings), QuantFactory's Q2_K GGUF.
SMOLLM_135M = {**custom(134_515_008, 30, 576, 9, 3, 49_152, 1536), "workload__tied_embeddings": True,
               "task__quantization": "gguf_q2_k", "task__serving_engine": "llama_cpp", "task__generated_tokens": 19}
# FLUX.1-dev's transformer (black-forest-labs/FLUX.1-dev transformer/config.json): 11.9B parameters, 19 double- and
# 38 single-stream blocks of width 3072 (24 heads x 128), MLP ratio 4; a 1024 px image is 4096 latent tokens + 512
# T5 tokens. No vocabulary: it predicts latents, not logits.
# Beside it on the GPU (the repository's safetensors sizes): text_encoder_2, T5-XXL's encoder, 9.52 GB bf16 =
# 4.76B, which ai-toolkit quantizes to 8 bit with the transformer (quantize_te follows quantize); text_encoder,
# CLIP-L's text model, 246 MB, and the VAE, 168 MB, stay bf16: 2 x 207M at 1 B.
FLUX1_DEV = {**custom(11_901_408_320, 57, 3072, 24, 24, 0, 12_288, gated=False), "workload__sequence_length": 4608,
             "workload__frozen_parameters": 4_762_310_656 + 2 * (123_060_480 + 83_819_683),
             "workload__frozen_precision": "int8"}
# SDXL base 1.0's UNet (stabilityai/stable-diffusion-xl-base-1.0 unet/config.json, 2,567,463,684 parameters) seen as
# its 70 transformer blocks at width 1280 over 4,096 latent tokens + 77 text; 6,761 GFLOP a pass at 1024 px, counted
# with torch.utils.flop_counter on diffusers' UNet2DConditionModel built from that config (meta tensors).
SDXL_BASE = {**custom(2_567_463_684, 70, 1280, 20, 20, 0, 5120, gated=False), "workload__sequence_length": 4173,
             "workload__forward_gflops_per_sample": 6761.0, "workload__classifier_free_guidance": True,
             "workload__frozen_parameters": 123_060_480 + 694_659_840 + 83_653_863,
             "workload__frozen_precision": "fp16"}
# Segmind SSD-1B (huggingface.co/segmind/SSD-1B: SDXL distilled, "50% smaller", 1.3B) given as a user would: no
# counted FLOPs, workload.unet at 1024 px; its text encoders and VAE as SDXL's, frozen.
SSD_1B = {**custom(1_300_000_000, 40, 1280, 20, 20, 0, 5120, gated=False), "workload__sequence_length": 4173,
          "workload__unet": True, "workload__classifier_free_guidance": True,
          "workload__frozen_parameters": 123_060_480 + 694_659_840 + 83_653_863, "workload__frozen_precision": "fp16"}
# Stable Diffusion 1.5's UNet (diffusers' UNet2DConditionModel defaults, cross-attention 768): 859.5M, 16 transformer
# blocks (width 320-1280; 640 given) over 64 x 64 latent tokens + 77 text at 512 px; 803.3 GFLOP a pass, counted as
# SDXL's. Frozen beside it: CLIP ViT-L/14's text encoder and the VAE, in fp16.
SD15 = {**custom(859_520_964, 16, 640, 8, 8, 0, 2560, gated=False), "workload__sequence_length": 4173,
        "workload__forward_gflops_per_sample": 803.3, "workload__classifier_free_guidance": True,
        "workload__frozen_parameters": 123_060_480 + 83_653_863, "workload__frozen_precision": "fp16"}
# Mochi 1's AsymmDiT (genmo/mochi-1-preview transformer/config.json): 48 layers of visual width 3072 (24 heads x 128),
# SwiGLU 8192 (4 x 3072 x 2/3), ~10.0B; 848 x 480 x 85 frames is 15 x 30 x 53 = 23,850 latent tokens + 256 text, with
# CFG. Frozen beside it: T5-XXL's encoder, 4.76B, and the VAE, 0.36B, in bf16.
MOCHI1 = {**custom(10_000_000_000, 48, 3072, 24, 24, 0, 8192), "workload__sequence_length": 24_106,
          "workload__denoising_steps": 64, "workload__classifier_free_guidance": True,
          "workload__frozen_parameters": 5_120_000_000, "workload__frozen_precision": "bf16"}
MOCHI_DOCS = "github.com/huggingface/diffusers docs/source/en/api/pipelines/mochi.md, 'Using a lower precision " \
    "variant to save memory': the bf16 variant with enable_model_cpu_offload() and enable_vae_tiling(), 85 frames, " \
    "'requires 22GB VRAM to run'"
# Open-Sora 1.2's STDiT3-XL/2 (1.1B: 28 blocks of 1152, 16 heads, MLP 4608) at 720p for 4 s: 30 latent frames x 3,600
# tokens, spatial attention within a frame (a 3,600-token window), CFG, 30 steps; T5-XXL (4.76B) and its VAE (0.38B)
# resident in bf16; its spatial VAE (SD's AutoencoderKL) decodes 4 frames at a time (micro_batch_size 4).
OPEN_SORA_720P_4S = {**custom(1_120_000_000, 28, 1152, 16, 16, 0, 4608, gated=False),
                     "workload__sequence_length": 108_000, "workload__sliding_window_tokens": 3600,
                     "workload__sliding_window_layers": 28, "workload__denoising_steps": 30,
                     "workload__classifier_free_guidance": True, "workload__frozen_parameters": 5_140_000_000,
                     "workload__output_width_px": 1280, "workload__output_height_px": 720,
                     "workload__decoded_frames_at_once": 4, "data__kind": "video"}
# Allegro (rhymes-ai): a 2.8B video DiT (32 blocks of 2304, 24 heads, GELU MLP 9216) over 88 frames at 720p (79,200
# tokens), 100 steps with CFG; T5-XXL (4.94B) in bf16, the larger model; its VAE tiled.
ALLEGRO = {**custom(2_800_000_000, 32, 2304, 24, 24, 0, 9216, gated=False), "workload__sequence_length": 79_200,
           "workload__denoising_steps": 100, "workload__classifier_free_guidance": True,
           "workload__frozen_parameters": 4_935_000_000, "workload__frozen_precision": "bf16",
           "workload__output_width_px": 1280, "workload__output_height_px": 720,
           "workload__decoded_frames_at_once": 4, "data__kind": "video", "task__vae_tiling": True}
ALLEGRO_README = "github.com/rhymes-ai/Allegro README: '--enable_cpu_offload ... about 9.3G, compared to 27.5G if " \
    "CPU offload is not enabled'"
OPEN_SORA = "github.com/hpcaitech/Open-Sora README (v1.2), 'On a 80G H100 GPU': 720p 4s, 130 s, peak memory 39G"
UNSLOTH = "github.com/unslothai/unsloth README, 'Context length benchmarks' (4bit QLoRA, all linear layers, rank 32, " \
    "batch 1)"
LIGER = "github.com/linkedin/Liger-Kernel README: LLaMA 3-8B, batch 8, bf16, AdamW, checkpointing, FSDP1 on 8 A100s " \
    "(80 GB, arXiv:2410.10989 §4): Hugging Face OOMs from 4K tokens, Hugging Face + Liger scales to 16K"
QWEN_3090 = "github.com/QwenLM/Qwen3/issues/16: vLLM, Qwen1.5-7B-Chat-GPTQ-Int4 on one RTX 3090 24G: 'max seq len " \
    "(32768) is larger than the maximum number of tokens that can be stored in KV cache (24320)'; the fix given: " \
    "--max-model-len 24320"
HOLOHUB = "github.com/nvidia-holoscan/holohub/issues/170: llama.cpp on the Orin iGPU ('identical to AGX'), Llama 2 " \
    "4-bit: 7B 22.5, 13B 13.3, 70B 3.0 tokens/s"
TORCHTUNE_70B = "github.com/pytorch/torchtune recipes/configs/llama3_3/70B_full_multinode.yaml: full bf16 fine-tune " \
    "of Llama 3.3 70B, batch 4, 1,024 tokens, checkpointing, 'only tested on 2 nodes w/ 8 H100'; the one-node " \
    "llama3_1/70B_full.yaml needs fsdp_cpu_offload on 8 x A100"
DUAL_3090 = "runlocalai.co/stacks/dual-3090-workstation (reviewed 2026-05-06): two used RTX 3090s, vLLM tensor " \
    "parallel 2, Llama 3.3 70B AWQ-INT4 at ~25-30 tokens/s decode, 'used 3090 prices ... $600-900 per card'"
HF_FLUX_OOM = "huggingface.co/datasets/model-metadata/code_execution_files commit a389130 (FLUX.1-dev_1.txt): " \
    "DiffusionPipeline.from_pretrained('black-forest-labs/FLUX.1-dev', dtype=torch.bfloat16, device_map='cuda') " \
    "fails: 'Tried to allocate 22.17 GiB. GPU 0 has a total capacity of 22.03 GiB' (the card is not named: 22.03 " \
    "GiB is what torch reports for a 24 GB L4 or A10G; checked on the catalog's L4)"
AI_TOOLKIT = "github.com/ostris/ai-toolkit config/examples/train_lora_flux_24gb.yaml: FLUX.1-dev LoRA rank 16, " \
    "batch 1, 1024 px, checkpointing, adamw8bit, 'quantize: true # run 8bit mixed precision', for a 24 GB card"

# Lumina-Image-2.0's Next-DiT (Alpha-VLLM/Lumina-Image-2.0 transformer/config.json): 2.61B parameters, 26 layers of
# 2,304, 24 heads, 8 KV heads, SwiGLU 6,144; at 1024 px 4,096 latent tokens + 256 text tokens. Frozen beside it:
# Gemma-2-2B (2.61B) and the FLUX VAE, bf16, whose outputs SimpleTuner caches before training. A rank-16 LoRA with
# its 1024 x 1024 validation images.
LUMINA2_LORA = {
    **custom(2_610_000_000, 26, 2304, 24, 8, 0, 6144), "workload__kind": "transformer",
    "workload__sequence_length": 4352, "workload__batch_size": 1, "workload__single_stream_dit": True,
    "workload__frozen_parameters": 2_700_000_000, "workload__frozen_precision": "bf16", "task__mode": "training",
    "task__precision": "bf16", "task__method": "lora", "task__lora_rank": 16, "task__lora_targets": "attention",
    "task__recompute": "full", "task__cache_embeddings": True, "data__kind": "images",
    "budget__currency": "EUR", "budget__amount": 1500.0}
SIMPLETUNER_LUMINA2 = ("github.com/bghira/SimpleTuner documentation/quickstart/LUMINA2.md, 'Hardware requirements': "
                       "'Approximately 12-14GB VRAM for LoRA training'; minimum 'a single RTX 3060 12GB or RTX 4060 "
                       "Ti 16GB'")
# LLaMA-Factory's README 'Hardware Requirement' (estimated): a 7B full fine-tune in bf16 mixed precision 120 GB (18x),
# with pure_bf16 60 GB (8x). Qwen2-7B (its config.json) under ZeRO-3 on 4 GPUs, 1 x 2,048 tokens a GPU, 2 accumulated.
LLAMAFACTORY_QWEN2_7B_FULL = training(custom(7_615_616_512, 28, 3584, 28, 4, 152_064, 18_944), 2048, 8, 4,
                                      task__method="full", task__precision="bf16", task__flash_attention=True,
                                      task__accumulation_steps=2, scale__sharding="zero3")
LLAMAFACTORY_TABLE = "github.com/hiyouga/LLaMA-Factory README, 'Hardware Requirement': Full (bf16 or fp16) 7B 120GB; " \
    "Full (pure_bf16) 7B 60GB"

CASES: tuple[Workload, ...] = (
    # Audit BO53: its run_sft.sh trains the extended embeddings and LM head whole beside LoRA (modules_to_save); without
    # them it was 18.2 GiB and "fit" the card its FAQ says runs out.
    Workload("chinese-alpaca-2-7b-lora-embeddings-not-24-gb",
             "github.com/ymcui/Chinese-LLaMA-Alpaca-2 README FAQ: '问题7：为什么24G显存微调Chinese-Alpaca-2-7B会OOM？' "
             "(why fine-tuning Chinese-Alpaca-2-7B on 24 GB runs out); scripts/training/run_sft.sh: lora_rank 64 on "
             "every projection, modules_to_save embed_tokens,lm_head, fp16, micro-batch 1 of 1,024 tokens, "
             "gradient checkpointing, DeepSpeed ZeRO-2 (ds_zero2_no_offload.json); Llama-2-7B's shape with a "
             "vocabulary of 55,296", "does_not_fit",
             {**custom(6_929_000_000, 32, 4096, 32, 32, 55_296, 11008), "task__mode": "training",
              "task__precision": "amp_fp16", "task__method": "lora", "task__lora_rank": 64,
              "task__lora_targets": "all_linear", "task__lora_dropout": 0.05, "task__lora_trains_embeddings": True,
              "task__recompute": "full", "workload__sequence_length": 1024, "workload__batch_size": 1,
              "scale__sharding": "zero2", "data__kind": "text", "budget__amount": 5e6}, ("rtx-4090-24gb", 1)),
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
    # Audit Y: Mask2Former R-50 (44M parameters, 226 GMACs at 1024 px) trained at 2 images a GPU in fp32, its
    # DETR-family head answered (workload.dense_head = "query").
    Workload("mask2former-r50-1024px-not-8-gb",
             "github.com/open-mmlab/mmdetection configs/mask2former/README.md, instance segmentation: R-50, LSJ "
             "1024 px, 8 GPUs x 2 images (mask2former_r50_8xb2-lsj-50e_coco.py), Mem 13.7 GB", "does_not_fit",
             {"workload__preset": "custom", "workload__kind": "cnn", "workload__parameters": 44_000_000,
              "workload__input_size_px": 1024, "workload__forward_gflops_per_sample": 452.0,
              "workload__dense_head": "query", "workload__batch_size": 2, "task__mode": "training",
              "task__precision": "fp32", "data__kind": "images", "budget__amount": 5e6}, ("rtx-5060-8gb", 1)),
    # Audit XK8: DINO-4scale R-50 (47M parameters, ~279 GMACs at 1333 x 800) at 2 images a GPU in fp32 with AdamW.
    Workload("dino-4scale-r50-not-12-gb", DINO_MEMORY + ": an 11 GB card runs out at 2 images", "does_not_fit",
             DINO_4SCALE, ("rtx-3080-ti-12gb", 1),
             note="as a detector of its FLOPs (dense_head \"detection\") it was 7.3 GiB, and 12 GB cards were bought"),
    Workload("dino-4scale-r50-fits-16-gb", DINO_MEMORY, "fits", DINO_4SCALE, ("v100-16gb-sxm2", 1)),
    # Audits YO2 and YS2: a custom CNN at 512 px or more with neither count nor FLOPs, sized as a dense-prediction
    # net (configs/custom_cnn.py DENSE_PREDICTION_ACTIVATION_FACTOR), where ResNet-50's per-pixel count was 2.5-4x low.
    Workload("panoptic-fpn-r50-detector-fits-12-gb",
             "github.com/facebookresearch/detectron2 MODEL_ZOO.md: Panoptic FPN R50-FPN 1x, 2 images a GPU of "
             "800x1333, train mem 4.8 GB", "fits",
             {**_dense_cnn(46_000_000, 1033, 2), "workload__dense_head": "detection"}, ("rtx-3060-12gb", 1)),
    # Audit XQ10: YOLOF's one level at C5 on a backbone trained from its second stage (frozen_stages=1) keeps 0.53 of
    # ResNet-50's values a pixel; as a detector of its FLOPs at ResNet-50's density it was 1.76x, and 12 GB refused.
    Workload("yolof-r50-c5-b8-fits-12-gb",
             "github.com/open-mmlab/mmdetection configs/yolof/README.md: YOLOF R-50-C5 (caffe, frozen_stages=1), 1x, "
             "8 GPUs x 8 images of 1333x800 (yolof_r50_c5_8x8_1x_coco.py), Mem 8.3 GB; 44.16M parameters "
             "(PaddleDetection's YOLOF table), 86 G multiply-adds (the YOLOF paper, arXiv:2103.09460, Table 1)", "fits",
             {**_dense_cnn(44_160_000, 1033, 8), "workload__dense_head": "detection",
              "workload__forward_gflops_per_sample": 172.0}, ("rtx-3060-12gb", 1)),
    # Audit XH7: SOLO's mask branch (a mask a grid cell at 1/4 scale) keeps 2.1x a detector's values; as a detector it
    # was 4.3 GiB, and an 8 GB card was called a fit.
    Workload("solo-r50-1333x800-not-8-gb",
             "github.com/open-mmlab/mmdetection configs/solo/README.md: SOLO R-50 1x, COCO 1333x800, 2 images a GPU, "
             "Mem 8.0 GB (~36M parameters)", "does_not_fit",
             {**_dense_cnn(36_000_000, 1033, 2), "workload__dense_head": "instance"}, ("rtx-3060-ti-8gb", 1)),
    Workload("upernet-r50-512x1024-fits-12-gb",
             "github.com/open-mmlab/mmsegmentation configs/upernet/README.md: UPerNet R-50, Cityscapes 512x1024, "
             "2 images a GPU, Mem 6.4 GB", "fits", _dense_cnn(66_500_000, 724, 2), ("rtx-3060-12gb", 1)),
    Workload("yolact-r101-550px-b8-not-10-gb",
             "github.com/open-mmlab/mmdetection configs/yolact/README.md: YOLACT R-101, 550 px, batch 8 on one GPU, "
             "'~12GB VRAM'", "does_not_fit", _dense_cnn(53_700_000, 550, 8), ("rtx-3080-10gb", 1)),
    # Audit YY4: a real-time segmenter under 5M parameters was sized at 3.5x too (BiSeNetV2: 24.0 GiB against
    # 7.64 GB), and a USD 1,500 budget was refused; it is 1.8x, the largest of mmseg's four (configs/custom_cnn.py).
    Workload("bisenetv2-1024px-b4-fits-16-gb",
             "github.com/open-mmlab/mmsegmentation configs/bisenetv2/README.md: BiSeNetV2, Cityscapes 1024x1024, "
             "4 images a GPU (bisenetv2_fcn_4x4_1024x1024_160k_cityscapes.py), Mem 7.64 GB", "fits",
             _dense_cnn(3_400_000, 1024, 4), ("rtx-5060-ti-16gb", 1)),
    Workload("erfnet-512x1024-b4-fits-8-gb",
             "github.com/open-mmlab/mmsegmentation configs/erfnet/README.md: ERFNet (2.1M parameters), Cityscapes "
             "512x1024, 4 images a GPU (erfnet_fcn_4xb4-160k_cityscapes-512x1024.py), Mem 6.04 GB", "fits",
             _dense_cnn(2_070_000, 724, 4), ("rtx-5060-8gb", 1)),
    Workload("cgnet-512x1024-b8-not-8-gb",
             "github.com/open-mmlab/mmsegmentation configs/cgnet/README.md: CGNet M3N21 (0.5M parameters), "
             "Cityscapes 512x1024, 8 images a GPU (cgnet_512x1024_60k_cityscapes.py: batch_size=8), Mem 8.3 GB",
             "does_not_fit", _dense_cnn(500_000, 724, 8), ("rtx-5060-8gb", 1)),
    # Audit XN9: a real-time segmenter over 5M parameters was sized as UPerNet, 3.5x (STDC1: 35.8 GiB a GPU against
    # 7.15, a EUR 12,000 build refused); said so, it is 1.25x, the largest of mmseg's real-time six.
    Workload("stdc1-512x1024-b12-fits-16-gb",
             "github.com/open-mmlab/mmsegmentation configs/stdc/README.md: STDC-1 (no pretrain), Cityscapes 512x1024, "
             "12 images a GPU on 4 (stdc1_4xb12-80k_cityscapes-512x1024.py), Mem 7.15 GB; ~8.4M parameters", "fits",
             {**_dense_cnn(8_400_000, 724, 12), "workload__dense_head": "realtime_segmentation"},
             ("rtx-5060-ti-16gb", 1), note="1.25x is the group's largest; STDC1's own is 0.71x, so it is ~13 GiB "
             "and a 12 GB card, which holds it, is refused"),
    # Audit XE6: a dilated R-101 keeps 17 more blocks at 1/8 of the input than R-50 (configs/custom_cnn.py); at R-50's
    # factor CCNet R-101-D8 was 7.1 GiB, "fits" a 10 GB card, against 9.5 GB published.
    Workload("pspnet-r101-d8-512x1024-not-10-gb",
             "github.com/open-mmlab/mmsegmentation configs/pspnet/README.md: PSPNet R-101-D8, Cityscapes 512x1024, "
             "2 images a GPU (pspnet_r101-d8_4xb2-40k_cityscapes-512x1024.py), Mem 9.6 GB (R-50-D8: 6.1); ~68M "
             "parameters (ResNet-101's 42.5M, the pyramid head's 23M, the auxiliary head's 2.4M)", "does_not_fit",
             {**_dense_cnn(68_000_000, 724, 2), "workload__layers": 101}, ("rtx-3080-10gb", 1)),
    # Audit XC6: generate()'s bitsandbytes 4-bit swaps the vision tower's nn.Linear layers too
    # (configs/vision_encoder.py); at 16 bits its 4.5B made 15.6 GiB and a 16 GB card was refused.
    Workload("glm-4v-9b-bnb-int4-fits-12-gb",
             "github.com/THUDM/GLM-4 basic_demo/README_en.md: GLM-4V-9B Int4 (transformers, bitsandbytes), input "
             "length 1,000, peak 10,267 MiB on one A100 (BF16: 28,131 MiB); the 9.4B GLM-4-9B (40 x 4096, 2 KV groups, "
             "SwiGLU 13,696, V 151,552) and the 4.5B EVA2-CLIP-E tower (63 x 1792, 6,400 patches of a 1,120 px image)",
             "fits",
             inference_custom({"workload__preset": "custom", "workload__kind": "transformer",
                               "workload__parameters": 9_400_000_000, "workload__layers": 40,
                               "workload__hidden_size": 4096, "workload__attention_heads": 32, "workload__kv_heads": 2,
                               "workload__intermediate_size": 13696, "workload__gated_mlp": True,
                               "workload__vocabulary_size": 151_552, "workload__sequence_length": 1000,
                               "workload__vision_layers": 63, "workload__vision_hidden_size": 1792,
                               "workload__vision_tokens": 6400, "workload__frozen_parameters": 4_500_000_000,
                               "task__serving_engine": "hf_generate", "task__quantization": "bnb_nf4",
                               "data__kind": "mixed"}, "int4"), ("rtx-5070-12gb", 1)),
    Workload("mixtral-8x7b-int4-two-3090s", MIXTRAL_TABLE, "fits",
             inference("mixtral-8x7b", "int4", 4096, gpus=2, budget__condition="used"), ("rtx-3090-24gb", 2)),
    Workload("deepseek-v3-fp8-8x-h200", SGLANG_DEEPSEEK, "fits",
             inference("deepseek-v3", "int8", 8192, gpus=8, task__serving_engine="sglang", task__quantization="fp8"),
             ("h200-141gb-sxm", 8), note="MLA's 576-value cache is the preset's kv width"),
    Workload("minimax-m1-int8-experts-1m-fits-8x-h20", MINIMAX_M1, "fits", MINIMAX_M1_1M, ("h20-96gb", 8)),
    # Audit AX48: 92.1 GiB on the 96 GB card matched the log within 0.3 %, and the rules' 95 % refused it; llama.cpp
    # allocates its buffers once and fills up to 97 % of a card (configs/stacks.py STATIC_BUFFERS_FRACTION).
    Workload("dots-llm1-q4_0-32k-q8-cache-fits-rtx-pro-6000",
             "github.com/ggml-org/llama.cpp/pull/14118 (DocShotgun, 2025-06-12): dots.llm1.inst Q4_0 on an RTX PRO "
             "6000 96GB, '32k ctx allocated with q8_0 cache and flash attention': CUDA0 model buffer 76,515.78 MiB, KV "
             "buffer 16,864.00 MiB, compute buffer 321.00 MiB", "fits",
             {**custom(142_000_000_000, 62, 4096, 32, 32, 152_064, 11_264), "workload__kind": "transformer",
              "workload__active_parameters": 14_000_000_000, "workload__experts_count": 128,
              "workload__experts_per_token": 6, "workload__head_dim": 128, "workload__sequence_length": 32_768,
              "workload__batch_size": 1, "task__mode": "inference", "task__precision": "int4",
              "task__quantization": "gguf_q4_0", "task__serving_engine": "llama_cpp", "task__kv_cache_dtype": "fp8",
              "task__generated_tokens": 512, "budget__amount": 1500.0, "budget__currency": "EUR"},
             ("rtx-pro-6000-blackwell-96gb", 1)),
    Workload("deepseek-v3-bf16-not-8x-h200", SGLANG_DEEPSEEK, "does_not_fit",
             inference("deepseek-v3", "bf16", 8192, gpus=8, task__serving_engine="sglang"), ("h200-141gb-sxm", 8)),
    Workload("deepseek-v3-fp8-not-8x-h100", SGLANG_DEEPSEEK, "does_not_fit",
             inference("deepseek-v3", "int8", 8192, gpus=8, task__serving_engine="sglang", task__quantization="fp8"),
             ("h100-80gb-sxm", 8)),
    Workload("qwen3-30b-a3b-usd-buyer",
             "configs/catalog/gpus.toml US prices (runlocalai.co/guides/best-gpu-for-local-ai-2026, May 2026): a "
             "$3,000 budget buys a 24 GB card's box in dollars (an RTX 4090's, ~$2,700 with 2026 RAM and drive "
             "prices)", "currency",
             inference("qwen3-30b-a3b", "int4", 4096, budget__amount=3000.0, budget__currency="USD"),
             expect={"currency": "$"}),
    Workload("gpt-oss-20b-eur-buyer",
             "configs/catalog/gpus.toml EU prices; the model card's 16 GB: a EUR 2,200 budget holds it (an RTX "
             "5060 Ti 16GB box, ~EUR 2,000 at Greek retail in October 2026)", "currency",
             inference("gpt-oss-20b", "int4", 16384, budget__amount=2200.0, budget__currency="EUR"),
             expect={"currency": "€"}),
    # Long-context fine-tunes on each stack.
    Workload("hf-qlora-llama31-8b-28k-fits-80-gb", f"{UNSLOTH}: Hugging Face + FA2 reaches 28,454 tokens on 80 GB",
             "fits", qlora(LLAMA31_8B, 28_454, "hf_trainer"), ("a100-80gb-sxm", 1),
             note="the estimate's longest context there is ~40k: eager HF costs more per token than counted"),
    Workload("hf-qlora-llama31-8b-12k-not-24-gb", f"{UNSLOTH}: Hugging Face + FA2 reaches 5,789 tokens on 24 GB, "
             "12,264 on 40 GB", "does_not_fit", qlora(LLAMA31_8B, 12_264, "hf_trainer"), ("rtx-4090-24gb", 1)),
    Workload("hf-qlora-llama33-70b-6916-fits-80-gb",
             f"{UNSLOTH}: Llama 3.3 70B, Hugging Face + FA2 6,916 tokens on 80 GB",
             "fits", qlora(LLAMA33_70B, 6916, "hf_trainer"), ("a100-80gb-sxm", 1)),
    Workload("hf-qlora-llama33-70b-not-48-gb", f"{UNSLOTH}: Llama 3.3 70B, Hugging Face + FA2 OOM on 48 GB",
             "does_not_fit", qlora(LLAMA33_70B, 6916, "hf_trainer"), ("rtx-a6000-48gb", 1)),
    Workload("unsloth-qlora-llama33-70b-12k-fits-48-gb", f"{UNSLOTH}: Llama 3.3 70B, Unsloth 12,106 tokens on 48 GB",
             "fits", qlora(LLAMA33_70B, 12_106, "unsloth"), ("rtx-a6000-48gb", 1)),
    Workload("unsloth-qlora-llama33-70b-89k-fits-80-gb", f"{UNSLOTH}: Llama 3.3 70B, Unsloth 89,389 tokens on 80 GB",
             "fits", qlora(LLAMA33_70B, 89_389, "unsloth"), ("a100-80gb-sxm", 1),
             xfail="79.9 GiB against 76.0 usable. The fixed part is right (45.1 GiB at 12,106 tokens, 45.6 usable on "
                   "48 GB); the per-token part is 59 B x h (one recomputed layer 45 x h, Korthikanti's 34 with the "
                   "gated-MLP and LoRA terms, + the backward working set 2 x mlp x 2 B = 14 x h) where Unsloth's rows "
                   "give (76.0 - 45.6) GiB / 77,283 tokens = 51.6 x h. The 8B rows show the same ~10 % excess "
                   "(-9.6 % context at 80 GB, inside their 15 %), so it is a coefficient of the recomputed layer, "
                   "not a 70B term; dropping the working set (Unsloth's in-place SwiGLU backward) overshoots the 8B "
                   "rows by 18-37 %: the layer's count would have to be rebuilt from what fast_lora.py's LoRA_MLP "
                   "and LoRA_QKV save (X, e, g; X)"),
    Workload("liger-llama3-8b-16k-fsdp-8x-a100", LIGER, "fits",
             training(LLAMA31_8B, 16_384, batch=64, gpus=8, scale__sharding="fsdp", task__training_stack="liger"),
             ("a100-80gb-sxm", 8)),
    Workload("hf-llama3-8b-16k-not-fsdp-8x-a100", LIGER, "does_not_fit",
             training(LLAMA31_8B, 16_384, batch=64, gpus=8, scale__sharding="fsdp", task__training_stack="hf_trainer"),
             ("a100-80gb-sxm", 8)),
    # Long-context servers (vLLM: chunked prefill, its 0.9 share of the card).
    Workload("vllm-qwen15-7b-int4-32k-not-3090", QWEN_3090, "does_not_fit",
             inference("custom", "int4", 32_768, **{**QWEN15_7B, "task__serving_engine": "vllm"}),
             ("rtx-3090-24gb", 1)),
    Workload("vllm-qwen15-7b-int4-24k-fits-3090", QWEN_3090, "fits",
             inference("custom", "int4", 24_320, **{**QWEN15_7B, "task__serving_engine": "vllm"}),
             ("rtx-3090-24gb", 1)),
    Workload("vllm-qwen25-14b-1m-131k-chunk-not-8x32-gb", QWEN_1M, "does_not_fit",
             inference("custom", "bf16", 1_010_000, gpus=8, **QWEN25_1M_SERVE, **QWEN25_14B),
             ("rtx-pro-4500-blackwell-32gb", 8),
             note="over its 131,072-token prefill chunk one layer's working set is 2.1 GiB a GPU; over vLLM's default "
                  "2,048 it was 0.5 and 256 GB held it"),
    Workload("vllm-qwen25-7b-1m-131k-chunk-not-2x48-gb", QWEN_1M, "does_not_fit",
             inference("custom", "bf16", 1_010_000, gpus=2, **QWEN25_1M_SERVE, **QWEN25_7B),
             ("rtx-pro-5000-blackwell-48gb", 2),
             xfail="43.1 GiB of 43.2 usable a GPU (tight, 86 GiB in all) against the card's 120 GB: the weights, the "
                   "1M-token KV cache and the 131k chunk's working set are counted; the dual chunk attention and "
                   "sparse attention buffers of Qwen's vLLM branch are not"),
    # A full fine-tune beyond one 8 x 80 GB machine.
    Workload("torchtune-llama33-70b-full-not-8x-h100", TORCHTUNE_70B, "does_not_fit",
             training(LLAMA33_70B, 1024, batch=32, gpus=8, scale__sharding="fsdp", task__training_stack="torchtune"),
             ("h100-80gb-sxm", 8),
             note="torchtune's 8 B a parameter (bf16 weights, gradients and AdamW states) over 8 GPUs is 65.8 GiB; "
                  "FSDP's gathered units (5.6 GiB: 2 x the 2 GiB embedding unit and a layer's gradients) and the "
                  "activations put it at 79 GiB, past 76 usable; the wizard names no node count here because 8 x "
                  "B200 (180 GB) holds it, which is true"),
    # Edge modules (llama.cpp, 4-bit).
    Workload("llamacpp-agx-orin-llama2-7b", HOLOHUB, "speed",
             inference("llama-7b", "int4", 2048, budget__amount=5e5, scenario="edge_deployment"),
             ("jetson-agx-orin-64gb", 1), published=22.5),
    Workload("llamacpp-agx-orin-llama2-13b", HOLOHUB, "speed",
             inference("llama-13b", "int4", 2048, budget__amount=5e5, scenario="edge_deployment"),
             ("jetson-agx-orin-64gb", 1), published=13.3),
    Workload("llamacpp-agx-orin-llama2-70b", HOLOHUB, "speed",
             inference("llama-70b", "int4", 2048, budget__amount=5e5, scenario="edge_deployment"),
             ("jetson-agx-orin-64gb", 1), published=3.0),
    Workload("llamacpp-orin-nano-qwen25-1.5b",
             "github.com/paiml/realizar/issues/120: Jetson Orin Nano 8GB (102 GB/s, the Super mode), llama.cpp, "
             "qwen2.5-coder-1.5b-instruct-q4_k_m 32.1 tokens/s decode", "speed",
             inference("custom", "int4", 2048, budget__amount=5e5, scenario="edge_deployment",
                       **QWEN25_15B), ("jetson-orin-nano-super-8gb", 1),
             published=32.1,
             note="the per-layer term (configs/speed.py DECODE_LAYER_*) was fitted on this row and the RTX 4090's "
                  "Qwen2 3B: half of the 31 ms a token is the 28 layers' small kernels on the Orin's 1,024 cores"),
    Workload("llamacpp-orin-nano-super-smollm-135m",
             "github.com/hybridgroup/yzma benchmarks/linux.md: Jetson Orin Nano Super, CUDA, llama.cpp b10964, "
             "SmolLM-135M Q2_K, 190.5 tokens a second counting the 6-token prompt's (pkg/llama/benchmark_test.go: "
             "25 tokens a run of 19 decode calls), i.e. 144.8 decoded", "speed",
             inference("custom", "int4", 64, budget__amount=5e5, scenario="edge_deployment", **SMOLLM_135M),
             ("jetson-orin-nano-super-8gb", 1), published=190.5 * 19 / 25,
             note="a 576-wide layer's small kernels do 576/1536 of the fitted width's work (audit XF7: 56 tokens/s "
                  "at the full part, so a 120 tokens/s target bought an AGX Orin)"),
    Workload("mlc-orin-nano-super-llama31-8b-int4-fits",
             "developer.nvidia.com/blog/nvidia-jetson-orin-nano-developer-kit-gets-a-super-boost: Llama 3.1 8B, "
             "MLC INT4, 19.14 tokens/s on the 8 GB Orin Nano Super", "fits",
             inference("custom", "int4", 2048, budget__amount=5e5, scenario="edge_deployment", **LLAMA31_8B),
             ("jetson-orin-nano-super-8gb", 1),
             note="fits only with the headless L4T's ~2 GB for the OS (rules.toml edge_os_reserve_gib), not a PC's 4"),
    # An encoder-decoder: Whisper large fine-tuned with DeepSpeed ZeRO-2 and the optimizer on the CPU (the event's
    # ds_config.json), fp16, checkpointing; its logits are over at most 448 label tokens, not the 1,500 audio frames.
    Workload("hf-whisper-large-batch-32-fits-a100-40gb", WHISPER_EVENT + ": A100 / 40GB, large, batch 32", "fits",
             WHISPER_LARGE | {"workload__batch_size": 32}, ("a100-40gb-sxm", 1)),
    Workload("hf-whisper-large-batch-8-fits-v100-16gb", WHISPER_EVENT + ": V100 / 16 GB, large, batch 8", "fits",
             WHISPER_LARGE | {"workload__batch_size": 8}, ("v100-16gb-sxm2", 1)),
    # A used multi-GPU build.
    Workload("vllm-llama33-70b-awq-2x-used-3090", DUAL_3090, "used",
             inference("custom", "int4", 8192, gpus=2, budget__amount=6000.0, budget__currency="USD",
                       budget__condition="used", task__serving_engine="vllm", task__quantization="awq_g128",
                       **LLAMA33_70B), ("rtx-3090-24gb", 2),
             note="AWQ g128 stores 4.16 bit (an fp16 scale and a 4-bit zero per 128 weights): 21.1 GiB per GPU of "
                  "21.6 usable, where GGUF's 4.5-4.8 bit would not fit"),
    Workload("vllm-llama33-70b-awq-2x-3090-decode", DUAL_3090, "speed",
             inference("custom", "int4", 8192, gpus=2, task__serving_engine="vllm", **LLAMA33_70B),
             ("rtx-3090-24gb", 2), published=27.5),
    # Diffusion transformer LoRA.
    Workload("hf-flux1-dev-bf16-pipeline-not-24-gb-l4", HF_FLUX_OOM, "does_not_fit",
             inference_custom({**FLUX1_DEV, "workload__frozen_precision": "bf16", "workload__denoising_steps": 28,
                               "task__pipeline_offload": True}), ("l4-24gb", 1),
             note="with the text encoders offloaded, as the failed load's 22.17 GiB is the denoiser alone"),
    Workload("diffusers-mochi-1-bf16-offload-fits-24-gb", MOCHI_DOCS, "fits",
             inference_custom({**MOCHI1, "task__pipeline_offload": True}), ("rtx-4090-24gb", 1),
             note="inference holds one layer's working set, 20 B a token an h here, not the 34 training saves: 34 "
                  "put it at 23.8 GiB of 22.8 usable"),
    Workload("allegro-offload-fits-16-gb", ALLEGRO_README, "fits",
             inference_custom({**ALLEGRO, "task__pipeline_offload": True}), ("rtx-4060-ti-16gb", 1),
             note="model offload holds one model at a time: the denoiser's working set beside the 2.8B denoiser, "
                  "12.5 GiB, not beside T5-XXL, the larger model held for the prompt (audit XX: 16.5, a 16 GB card "
                  "refused)"),
    Workload("open-sora-12-720p-4s-not-24-gb", OPEN_SORA, "does_not_fit", inference_custom(OPEN_SORA_720P_4S),
             ("rtx-4090-24gb", 1), note="its VAE decodes 4 frames of 1280 x 720 at once, 21.8 GiB: 34.0 GiB in all, "
                                       "where the denoiser's 4.6 GiB working set put it at 16.8"),
    Workload("open-sora-12-720p-4s-fits-80-gb", OPEN_SORA, "fits", inference_custom(OPEN_SORA_720P_4S),
             ("h100-80gb-sxm", 1)),
    Workload("framepack-13b-block-offload-fits-8-gb",
             "github.com/lllyasviel/FramePack README: 'minimal required GPU memory is 6GB' for the 13B model (its "
             "models stream from RAM, DynamicSwap), 'RTX 3060 6GB laptop' included", "fits",
             {**FRAMEPACK_SECTION, "task__block_offload": True}, ("rtx-5060-8gb", 1)),
    Workload("ai-toolkit-flux1-dev-lora-fits-24-gb", AI_TOOLKIT, "fits",
             training(FLUX1_DEV, 4608, task__method="lora_int8", task__lora_targets="all_linear",
                      task__optimizer="adam8bit", budget__amount=5e5), ("rtx-4090-24gb", 1)),
    Workload("ai-toolkit-flux1-dev-lora-not-16-gb", AI_TOOLKIT, "does_not_fit",
             training(FLUX1_DEV, 4608, task__method="lora_int8", task__lora_targets="all_linear",
                      task__optimizer="adam8bit", budget__amount=5e5), ("rtx-4060-ti-16gb", 1),
             note="the text encoders (5.2 GB, workload.frozen_parameters) are what 16 GB lacks: the DiT alone fits"),
    # A long-context LoRA on torchtune (chunked cross-entropy), with and without activation checkpointing. Qwen2.5-7B's
    # shape from github.com/zyzshishui/slime scripts/models/qwen2.5-7B.sh (28 layers, hidden 3584, 28 heads, 4 KV
    # groups, SwiGLU 18944, vocabulary 152,064, untied; q/k/v biases): 7.62B parameters counted from it.
    Workload("torchtune-qwen25-7b-lora-20k-fits-h100",
             "github.com/meta-pytorch/torchtune/issues/2078: torchtune's qwen2_5/7B_lora config (LoRA r8 on q, v, "
             "output and the MLP; CEWithChunkedOutputLoss), unpacked samples of 50 to 19,900 tokens: it trains "
             "end-to-end on one GPU (the reporter's H100s) only with activation checkpointing, at 91-97 % of the "
             "card's memory", "fits",
             training(custom(7_615_616_512, 28, 3584, 28, 4, 152_064, 18_944), 19_900, task__method="lora",
                      task__lora_rank=8, task__lora_targets="all_linear", task__training_stack="torchtune"),
             ("h100-80gb-sxm", 1),
             note="the estimate counts allocated bytes; the 91-97 % is what the card shows with "
                  "variable-length batches, where the maintainer's answer points at fragmentation (expandable "
                  "segments); all_linear adds the k projection the config leaves out"),
    Workload("torchtune-qwen25-7b-lora-20k-no-checkpointing-not-h100",
             "github.com/meta-pytorch/torchtune/issues/2078: the same Qwen2.5-7B LoRA without activation "
             "checkpointing OOMs on one H100 ('otherwise I run straight into OOM'); the maintainer: 'It is not "
             "possible to fit 20k context length with 7b in 2 gpus without activation checkpointing'", "does_not_fit",
             training(custom(7_615_616_512, 28, 3584, 28, 4, 152_064, 18_944), 19_900, task__method="lora",
                      task__lora_rank=8, task__lora_targets="all_linear", task__training_stack="torchtune",
                      task__recompute="none"),
             ("h100-80gb-sxm", 1)),
    Workload("simpletuner-lumina2-lora-validation-fits-16-gb", SIMPLETUNER_LUMINA2, "fits",
             {**LUMINA2_LORA, "workload__output_width_px": 1024, "workload__output_height_px": 1024},
             ("rtx-4060-ti-16gb", 1)),
    Workload("simpletuner-lumina2-lora-validation-not-8-gb", SIMPLETUNER_LUMINA2, "does_not_fit",
             {**LUMINA2_LORA, "workload__output_width_px": 1024, "workload__output_height_px": 1024},
             ("rtx-5060-8gb", 1), note="the 1024 px validation decode (6.2 GiB) is what 8 GB lacks: the step fits"),
    Workload("llamafactory-qwen2-7b-full-pure-bf16-fits-4x24-gb", LLAMAFACTORY_TABLE + " (8x: 15 GB a GPU over 4)",
             "fits", {**LLAMAFACTORY_QWEN2_7B_FULL, "task__mixed_layout": "bf16_pure"}, ("rtx-3090-24gb", 4)),
    Workload("llamafactory-qwen2-7b-full-mixed-not-4x24-gb", LLAMAFACTORY_TABLE + " (18x: 34 GB a GPU over 4)",
             "does_not_fit", LLAMAFACTORY_QWEN2_7B_FULL, ("rtx-3090-24gb", 4)),
)


def speed_of(build: Build) -> float:
    return float(build.speed.figures.get("decode_tokens_per_s_per_stream", 0.0))

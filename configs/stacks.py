"""The software stack an estimate assumes: the training loss (and where checkpoints live), the serving engine.

Sources (cited again in tests/configs/published_stacks.py):
- Hugging Face Trainer: transformers' ForCausalLMLoss upcasts the logits (logits.float()) and runs eager
  cross-entropy; at backward's peak the saved fp32 log-softmax, nll's gradient and log-softmax's gradient live
  at once: 3 x s x b x V x 4 B (measured: tests/configs/test_memory_logits.py).
- torchtune: CEWithChunkedOutputLoss (num_output_chunks 8) upcasts one chunk at a time; eager cross-entropy
  still saves each chunk's fp32 log-softmax for backward: 1 copy kept + 2 chunks in flight.
- Liger-Kernel: LigerFusedLinearCrossEntropy never builds the s x b x V logits: it takes
  chunk_size = next_pow2(ceil(BT / ceil(V / H))) rows at a time in the input's dtype, overwrites them with their
  gradient, and writes the hidden gradient (BT x H) in forward (src/liger_kernel/ops/fused_linear_cross_entropy.py).
- Unsloth: Apple's Cut Cross Entropy (no logits tensor) and "unsloth" gradient checkpointing, which moves each
  layer's saved input to CPU RAM (unsloth.ai/blog/llama3-3).
- Serving: vLLM gpu_memory_utilization 0.9 and max_num_batched_tokens 2048 (vllm serve on cards under 70 GiB,
  vllm/engine/arg_utils.py); SGLang chunked_prefill_size 8192 (server_args.py); llama.cpp n_ubatch 512
  (common/common.h); Hugging Face generate() prefills the whole prompt x batch at once.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, get_args

from pth_top.configs.memory_terms import OFFLOAD_SHARDINGS
from pth_top.configs.quantization import FORMATS, weight_format
from pth_top.units import GIB

if TYPE_CHECKING:
    from pth_top.configs.answer_types import Task

TrainingStack = Literal["hf_trainer", "torchtune", "liger", "unsloth"]
ServingEngine = Literal["auto", "vllm", "sglang", "llama_cpp", "hf_generate"]
# The KV cache's precision: auto, the weights' 16 bits; fp8, one byte a value (vLLM and SGLang --kv-cache-dtype fp8,
# llama.cpp -ctk q8_0 -ctv q8_0 at 8.5 bits), half the KV cache for a small accuracy cost (vLLM's quantized KV
# cache docs); q4_0, llama.cpp's -ctk q4_0 -ctv q4_0 at 4.5 bits, a quarter of it.
KvCacheDtype = Literal["auto", "fp8", "q4_0"]
# How a CNN or an encoder runs its forward pass: eager PyTorch (each kernel launched from Python), or compiled into
# one launch (a TensorRT engine, torch.compile(mode="reduce-overhead")'s CUDA graphs); auto: compiled at the edge.
ForwardRuntime = Literal["auto", "eager", "compiled"]
# How torch.optim steps: foreach (its default on CUDA) or a fused kernel; auto: foreach_optimizer() decides.
OptimizerKernel = Literal["auto", "foreach", "fused"]


def forward_runtime(runtime: str, scenario: str) -> str:
    """The runtime a forward pass is timed for: as answered, or for "auto" a TensorRT engine on an edge module (the
    Jetson deployments' own), eager PyTorch elsewhere."""
    if runtime != "auto":
        return runtime
    return "compiled" if scenario == "edge_deployment" else "eager"


KV_CACHE_FP8_LABEL = ("an fp8 KV cache (vLLM/SGLang --kv-cache-dtype fp8, llama.cpp -ctk/-ctv q8_0): about half "
                      "its bytes")
KV_CACHE_Q4_0_LABEL = ("a q4_0 KV cache (llama.cpp -ctk/-ctv q4_0): about a quarter of its bytes, with a larger "
                       "accuracy cost than q8_0's that depends on the model: check it on your prompts")
# Bytes a KV value takes in fp8: one, and llama.cpp's q8_0 blocks 34 bytes per 32 values; generate() has none.
FP8_KV_VALUE_BYTES = {"vllm": 1.0, "sglang": 1.0, "llama_cpp": 34 / 32}
# In q4_0: llama.cpp's blocks of 32 values, 16 bytes of 4-bit values and a 2-byte scale (ggml-common.h block_q4_0).
Q4_0_KV_VALUE_BYTES = {"llama_cpp": 18 / 32}
KV_VALUE_BYTES = {"fp8": FP8_KV_VALUE_BYTES, "q4_0": Q4_0_KV_VALUE_BYTES}


def kv_value_bytes(kv_cache_dtype: str, engine: str, default: float) -> float:
    """A KV cache value's bytes on this engine: fp8 or q4_0 where the engine has it, else the weights' `default`."""
    return KV_VALUE_BYTES.get(kv_cache_dtype, {}).get(engine, default)


TRAINING_STACKS: tuple[str, ...] = get_args(TrainingStack)
SERVING_ENGINES: tuple[str, ...] = get_args(ServingEngine)

TRAINING_STACK_LABELS = {
    "hf_trainer": "Hugging Face Trainer (eager cross-entropy on fp32 logits)",
    "torchtune": "torchtune (CEWithChunkedOutputLoss, 8 chunks)",
    "liger": "Liger-Kernel (fused linear cross-entropy)",
    "unsloth": "Unsloth (Cut Cross Entropy, checkpoints offloaded to CPU RAM)",
}
# The stacks that load a QLoRA or 8-bit base through transformers and bitsandbytes, which leaves a MoE's fused experts
# 16-bit (memory_methods.BNB_SKIPS_FUSED_EXPERTS); Unsloth quantizes them, torchtune uses neither.
BNB_TRANSFORMERS_STACKS = ("hf_trainer", "liger")


def experts_left_16_bit(stack: str, quantize_moe_experts: bool) -> bool:
    """Whether a QLoRA or 8-bit base keeps a MoE's fused experts 16-bit: under BNB_TRANSFORMERS_STACKS unless they are
    quantized after loading (Axolotl's quantize_moe_experts)."""
    return stack in BNB_TRANSFORMERS_STACKS and not quantize_moe_experts


# The same stacks train a mixture of experts in transformers' modeling code, whose Python loop over the experts
# (task.experts_loop: 4.x, or experts_implementation="eager"; 5's default is grouped_mm) costs
# speed_moe.HF_MOE_TRAINING_EXPERT_PASS_S; torchtune and Unsloth run grouped GEMMs.
HF_EXPERT_LOOP_STACKS = BNB_TRANSFORMERS_STACKS
# The stacks whose loss never holds the whole s x b x V logits: what "chunked cross-entropy" names.
CHUNKED_LOSS_STACKS = ("torchtune", "liger")
SERVING_ENGINE_LABELS = {
    "vllm": "vLLM", "sglang": "SGLang", "llama_cpp": "llama.cpp", "hf_generate": "Hugging Face generate()",
}

HF_LOSS_FP32_COPIES = 3
TORCHTUNE_OUTPUT_CHUNKS = 8
# Tokens one prefill step runs through the model (0: the whole prompt x batch at once).
PREFILL_CHUNK_TOKENS = {"vllm": 2048, "sglang": 8192, "llama_cpp": 512, "hf_generate": 0}


# vLLM's server batches 8,192 tokens a step on a card of 70 GiB or more other than an A100, 2,048 elsewhere
# (vllm/engine/arg_utils.py get_batch_defaults, PR #17885; audit AX48: Llama 4 Maverick's H100s were counted at 2,048).
LARGE_CARD_CHUNK_TOKENS = {"vllm": 8192}
PREFILL_CHUNK_FLAG = {"vllm": "--max-num-batched-tokens"}
LARGE_CARD_GIB = 70


def large_card_chunk(engine: str, card_gib: float, card_name: str) -> bool:
    """Whether the engine's default prefill chunk on this card is its large cards' (LARGE_CARD_CHUNK_TOKENS)."""
    return engine in LARGE_CARD_CHUNK_TOKENS and card_gib >= LARGE_CARD_GIB and "a100" not in card_name.lower()


def prefill_chunk(engine: str, answered: int, large_card: bool = False) -> int:
    """The tokens a prefill step runs: as answered (task.prefill_chunk_tokens), else the engine's default there."""
    return answered or (LARGE_CARD_CHUNK_TOKENS.get(engine, 0) if large_card else 0) or PREFILL_CHUNK_TOKENS[engine]


# The share of the card the engine plans for, replacing the rules' usable fraction (0: the rules' fraction).
ENGINE_MEMORY_FRACTION = {"vllm": 0.9}
# llama.cpp allocates its buffers once, with no caching allocator's slack: dots.llm1's Q4_0 at 32k ran in 93,701 MiB of
# them on a 97,887 MiB card (96 % with its context; ggml-org/llama.cpp#14118, audit AX48); 3 % stays back for a display.
STATIC_BUFFERS_FRACTION = {"llama_cpp": 0.97}
# SGLang plans its static pool (weights and KV cache) as the card less a reserve for activations and CUDA graphs:
# server_args.py's mem_fraction_static = (card - reserved) / card, reserved = 512 MiB + 1.5 MiB a prefill-chunk token +
# 2 MiB a captured graph batch + 128 MiB a GPU of tensor parallel, at least 10 GiB on a card over 60 GiB; the chunk
# and the largest graph batch by the card's memory and the GPUs (sgl-project/sglang#10975, October 2025). Grok-2 in
# FP8 on 8 GPUs: xAI's README asks for over 40 GB each, where 34 GiB a GPU fitted a 40 GB A100 at the rules' 95 %.
SGLANG_CHUNK_AND_GRAPHS = ((20, 2048, 8, 8), (35, 2048, 24, 80), (60, 4096, 32, 160), (160, 8192, 256, 512),
                           (float("inf"), 16384, 512, 512))  # (under GiB, chunk, graph batch under 4 GPUs, 4 or more)


def sglang_reserved_gib(card_gib: float, gpus: int, chunk_tokens: int = 0) -> float:
    """What SGLang keeps back of each GPU beyond its static pool; `chunk_tokens` as launched (0: its default)."""
    _, chunk, small, large = next(bucket for bucket in SGLANG_CHUNK_AND_GRAPHS if card_gib < bucket[0])
    reserved_mib = 512 + max(chunk_tokens or chunk, 2048) * 1.5 + (small if gpus < 4 else large) * 2 + gpus / 8 * 1024
    return max(reserved_mib, 10 * 1024) / 1024 if card_gib > 60 else reserved_mib / 1024


ENGINE_RESERVED_GIB = {"sglang": sglang_reserved_gib}
# CUDA graphs captured for decoding: vLLM logs 0.21-0.36 GiB ("Graph capturing finished ... took 0.21 GiB",
# vllm-project/vllm#11349; "Estimated CUDA graph memory: 0.36 GiB", gpustack/runner#251); SGLang captures too.
CUDA_GRAPH_BYTES = {"vllm": int(0.5 * GIB), "sglang": int(0.5 * GIB)}
# Engines that read a checkpoint a safetensors shard at a time (vLLM's safetensors_weights_iterator; SGLang's loader
# derives from it): host RAM never holds the whole model (vllm-project/vllm issue #759, closed as fixed).
SHARD_STREAMING_ENGINES = ("vllm", "sglang")


def stages_no_whole_checkpoint(engine: str, gpu_count: int) -> bool:
    """Whether inference leaves the whole checkpoint out of host RAM: vLLM and SGLang stream its shards, llama.cpp maps
    its file, and generate() over several GPUs loads through accelerate's device map a shard at a time (MOSS-16B's
    fp16 on two RTX 3090s, load_checkpoint_and_dispatch; audit AI42)."""
    return engine in (*SHARD_STREAMING_ENGINES, "llama_cpp") or (engine == "hf_generate" and gpu_count > 1)
# Engines that split a model over GPUs within each layer (tensor parallel); llama.cpp and generate()'s device_map give
# each GPU whole layers, which take turns on a token.
TENSOR_PARALLEL_ENGINES = ("vllm", "sglang")
# Engines whose FP8 weights run W8A8 FP8 GEMMs; llama.cpp and generate() have no FP8 kernels.
FP8_GEMM_ENGINES = ("vllm", "sglang")
# Stacks that accumulate gradients under FSDP's no_sync: accelerate under the Trainer (Liger patches the Trainer's
# model); torchtune's loop leaves FSDP2's gradient sync on.
NO_SYNC_STACKS = ("hf_trainer", "liger")


def recompute_of(stack: str, answered: str) -> str:
    """The gradient checkpointing a stack trains with: Unsloth's get_peft_model checkpoints every layer to CPU RAM
    by default (use_gradient_checkpointing="unsloth"), whatever was answered; other stacks the answered one."""
    return "full" if stack == "unsloth" else answered


def autocast(precision: str, sharding: str) -> bool:
    """Whether the step runs under PyTorch autocast over an fp32 model: AMP (amp_fp16) in plain data parallel; DeepSpeed
    and FSDP cast the weights to 16-bit themselves (their own mixed precision, no autocast)."""
    return precision == "amp_fp16" and sharding in ("none", "layers")


def mixed_layout_of(stack: str, precision: str, answered: str) -> str:
    """The bytes-a-parameter layout a stack trains with: torchtune trains bf16 through and through, with no fp32
    master copy (its memory guide), whatever was answered; other stacks the answered one."""
    return "bf16_pure" if stack == "torchtune" and precision == "bf16" else answered


def q4_0_kv_cache_open(task: Task, scenario: str) -> bool:
    """Whether a q4_0 KV cache is a lever still open: not answered, and the engine is llama.cpp."""
    return task.kv_cache_dtype != "q4_0" and serving_engine(task.serving_engine, scenario,
                                                            task.precision) in Q4_0_KV_VALUE_BYTES


def fp8_kv_cache_open(task: Task, scenario: str) -> bool:
    """Whether an fp8 KV cache is a lever still open: not answered yet, and the engine has one (FP8_KV_VALUE_BYTES)."""
    return task.kv_cache_dtype == "auto" and serving_engine(task.serving_engine, scenario,
                                                            task.precision) in FP8_KV_VALUE_BYTES


def serving_engine(engine: str, scenario: str, precision: str) -> str:
    """The engine an estimate assumes: as answered, or for "auto" vLLM on a server, llama.cpp on an edge module or
    for 4-bit weights at home, Hugging Face generate() otherwise."""
    if engine != "auto":
        return engine
    if precision == "amp_fp16":  # an fp32 model under autocast: PyTorch's own generate(), not an engine's kernels
        return "hf_generate"
    if scenario == "inference_server":
        return "vllm"
    if scenario == "edge_deployment" or precision == "int4":
        return "llama_cpp"
    return "hf_generate"


# transformers 4.45 added num_logits_to_keep; before it generate()'s prefill computed the logits at every prompt
# position, in the model's dtype and again in fp32: Qwen2-0.5B's peak 1.17 -> 27.61 GiB from 1 to 30,720 prompt tokens,
# 26.1 of them those logits (Qwen2's speed benchmark, transformers 4.38.2).
GENERATE_LAST_LOGITS_SINCE = (4, 45)
# transformers 4.48's sdpa_attention_forward runs grouped-query heads with enable_gqa (torch >= 2.5, no mask); before
# it, and under eager attention, repeat_kv copies each layer's cache to every query head at each decode step.
SDPA_GQA_SINCE = (4, 48)
# DynamicCache appends a token with torch.cat: each step reads each layer's cache and writes it anew.
DYNAMIC_CACHE_PASSES = 3.0


def release(version: str) -> tuple[int, int]:
    """(major, minor) of an answered release (schema.RELEASE_PATTERN); empty: a current one, never before anything."""
    if not version:
        return (10**6, 0)
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def generate_full_prompt_logits(engine: str, transformers_version: str) -> bool:
    """Whether generate()'s prefill holds the logits of every prompt position (transformers before 4.45)."""
    return engine == "hf_generate" and release(transformers_version) < GENERATE_LAST_LOGITS_SINCE


# transformers 5 runs a mixture's experts as grouped GEMMs (experts_implementation="grouped_mm"); every 4.x release's
# blocks loop over them in Python.
GROUPED_EXPERTS_SINCE = (5, 0)


def experts_looped(task: Task) -> bool:
    """Whether generate() loops over a mixture's experts in Python: as answered (task.experts_loop), or by the
    transformers release answered (before 5)."""
    return task.experts_loop or bool(task.transformers_version) and \
        release(task.transformers_version) < GROUPED_EXPERTS_SINCE


def generate_kv_passes(engine: str, transformers_version: str, flash_attention: bool,
                       kv_groups: float, compiled: bool = False) -> tuple[float, str]:
    """How many times generate() moves each stream's KV cache a decode step (1 for an engine's paged kernels, or a
    compiled generate()'s static cache), and why: DynamicCache's copy, and repeat_kv's copy to every query head
    (kv_groups of them a KV head) and its read."""
    if engine != "hf_generate" or compiled:
        return 1.0, ""
    text = "DynamicCache's torch.cat reads and rewrites it"
    if kv_groups > 1 and (not flash_attention or release(transformers_version) < SDPA_GQA_SINCE):
        why = "eager attention" if not flash_attention else f"transformers {transformers_version}'s SDPA"
        return (DYNAMIC_CACHE_PASSES + 2 * kv_groups,
                f"{text}, and {why} copies it to all {kv_groups:g} query heads a KV head (repeat_kv) and reads "
                "that copy")
    return DYNAMIC_CACHE_PASSES, text


def takes_turns(mode: str, engine: str, scenario: str, precision: str) -> bool:
    """Inference whose GPUs take turns on whole layers (llama.cpp, generate()'s device map) or serve alone, not
    splitting each layer (vLLM's and SGLang's tensor parallel): one token's activations pass between cards."""
    return mode == "inference" and serving_engine(engine, scenario, precision) not in TENSOR_PARALLEL_ENGINES


def splits_heads(engine: str, heads: int, gpu_count: int, kv_heads: int = 0) -> bool:
    """Whether the engine spreads a model of `heads` attention heads over the GPUs: tensor parallel (vLLM, SGLang)
    divides them evenly, and its KV heads too or copies each to a whole number of GPUs (vLLM refuses to start
    otherwise: Pixtral-Large's 8 KV heads on 6 GPUs, vllm-project/recipes#517, audit XU12); a layer split takes any
    count."""
    if engine not in TENSOR_PARALLEL_ENGINES or not heads:
        return True
    groups = kv_heads or heads
    return heads % gpu_count == 0 and (groups % gpu_count == 0 or gpu_count % groups == 0)


def loss_logits_bytes(stack: str, tokens: int, vocabulary: int, hidden: int, value_bytes: float) -> tuple[int, str]:
    """What the loss over V holds at its peak for `tokens` (s x b) positions, and the line saying why."""
    if not vocabulary:
        return 0, ""
    if stack == "hf_trainer":
        return int(HF_LOSS_FP32_COPIES * tokens * vocabulary * 4), (
            f"loss logits {HF_LOSS_FP32_COPIES} x s*b*V x 4 B = {HF_LOSS_FP32_COPIES} x {tokens:,} x {vocabulary:,} "
            "x 4 (fp32 upcast, log-softmax, its gradient; Hugging Face Trainer)")
    if stack == "torchtune":
        copies = 1 + 2 / TORCHTUNE_OUTPUT_CHUNKS
        return int(copies * tokens * vocabulary * 4), (
            f"loss logits (1 + 2/{TORCHTUNE_OUTPUT_CHUNKS}) x s*b*V x 4 B: each chunk's fp32 log-softmax kept, two "
            f"chunks' upcast and gradient in flight (torchtune CEWithChunkedOutputLoss)")
    rows = min(tokens, 2 ** math.ceil(math.log2(max(1, math.ceil(tokens / max(1, math.ceil(vocabulary / hidden)))))))
    hidden_gradient = tokens * hidden * value_bytes
    if stack == "liger":  # the chunk's logits stay in the input's dtype and take their gradient in place
        return int(rows * vocabulary * value_bytes + hidden_gradient), (
            f"loss: one chunk of {rows:,} rows x V x {value_bytes:g} B + the hidden gradient s*b*h x {value_bytes:g} B "
            "(Liger fused linear cross-entropy; no s*b*V logits)")
    return int(hidden_gradient), (
        f"loss: the hidden gradient s*b*h x {value_bytes:g} B (Cut Cross Entropy; no s*b*V logits, Unsloth)")


def split_label(engine: str, scenario: str, precision: str) -> str:
    """How a server's engine spreads a model over GPUs: vLLM and SGLang within each layer, the others by layers."""
    chosen = serving_engine(engine, scenario, precision)
    if chosen in TENSOR_PARALLEL_ENGINES:
        return "tensor parallel"
    return "llama.cpp's layer split" if chosen == "llama_cpp" else "generate()'s layer split (device_map)"


def fp8_matmuls(task: Task, scenario: str) -> bool:
    """FP8 weights in an engine with FP8 GEMMs (FP8_GEMM_ENGINES), on a card with FP8 tensor cores (Ada, Hopper,
    Blackwell)."""
    engine = serving_engine(task.serving_engine, scenario, task.precision)
    return task.mode == "inference" and engine in FP8_GEMM_ENGINES \
        and weight_format(task.quantization, task.precision, engine) is FORMATS["fp8"]


def unsharded_between_syncs(sharding: str, stack: str, accumulation_steps: int, gpus: int,
                            sync_each_batch: bool = False) -> bool:
    """FSDP (FSDP1) under no_sync holds each GPU's gradients whole between syncs (PyTorch's FSDP.no_sync: "FSDP will
    accumulate the full model gradients"), as NO_SYNC_STACKS use it unless sync_each_batch."""
    return sharding == "fsdp" and accumulation_steps > 1 and gpus > 1 and stack in NO_SYNC_STACKS \
        and not sync_each_batch


def foreach_optimizer(kernel: str, optimizer: str, sharding: str, data_kind: str) -> bool:
    """Whether the optimizer step runs torch.optim's foreach implementation, which "uses ~ sizeof(params) more peak
    memory than the for-loop version due to the intermediates being a tensorlist" (torch.optim's docs). Auto: not
    under DeepSpeed (its FusedAdam) or with an 8-bit optimizer (bitsandbytes' kernels); text models train under the
    HF Trainer (adamw_torch_fused, its default from torch 2.8) or torchtune (fused=True); image, video and audio
    trainers call torch.optim directly (diffusers' examples, timm, mmengine), whose CUDA default is foreach. An
    optimizer stepped on the CPU (ZeRO-Offload, FSDP's CPU offload) holds its intermediates there, not on the GPU;
    transformers' Adafactor (kohya's) steps each parameter in a loop."""
    if optimizer in ("adam8bit", "adafactor") or sharding in OFFLOAD_SHARDINGS:
        return False
    fused_for_text = data_kind == "text" and optimizer != "rmsprop"  # torch's RMSprop has no fused step
    return kernel == "foreach" if kernel != "auto" else not sharding.startswith("zero") and not fused_for_text

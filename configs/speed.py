"""How fast a job runs: decode and first-token time for inference, tokens or images per second for training.

Every constant the prediction uses is here, with its source; configs.speed_build applies them to a build.
Validated against published throughput figures in tests/configs/published_speeds.py.
- Decode reads every weight (and the KV cache) once per step: tokens/s = fraction x bandwidth / bytes read.
- Prefill and training are compute-bound: FLOPs / (fraction x matmul TFLOP/s); 2N FLOPs per token forward,
  6N + 12*L*h*s for training (Kaplan et al. 2020, arXiv:2001.08361; PaLM appendix B, arXiv:2204.02311), s the keys a
  query attends: half the sequence under a decoder's causal mask (speed_build.training_work).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pth_top.configs.memory_methods import FROZEN_BACKWARD_METHODS
from pth_top.configs.speed_speculative import speculative_factor, speculative_text

if TYPE_CHECKING:
    from pth_top.configs.answer_types import Task

# Fraction of the datasheet memory bandwidth decoding reaches. llama.cpp on a P40 (347 GB/s): 56.8 tokens/s on
# a 3.56 GiB Q4_0 7B = 0.62 (github.com/ggml-org/llama.cpp/pull/4766); MLC on an RTX 4090: 191 tokens/s on a
# 4-bit Llama-2 7B = 0.72 (github.com/mlc-ai/llm-perf-bench/pull/1).
DECODE_BANDWIDTH_FRACTION = 0.65
# Mixture of experts at batch 1 reaches less: each token's experts are small scattered matmuls plus routing.
# With the per-layer term below, llama.cpp's Qwen3-30B-A3B Q4_K on an RTX 3090 Ti (1,008 GB/s): 166.9 tokens/s x
# 2.5 GB read per token (active weights, 16-bit LM head, KV cache at 4k) over 48 layers = 0.61
# (smeltcore.com/recipes/qwen3-30b-a3b-rtx-3090-ti); gpt-oss-20b MXFP4 on an RTX 4080 Super, 139 tokens/s, gives
# ~0.46 (tests/configs/published_workloads.py): between the two.
MOE_DECODE_BANDWIDTH_FRACTION = 0.55
MOE_DECODE_SHARE = MOE_DECODE_BANDWIDTH_FRACTION / DECODE_BANDWIDTH_FRACTION  # a MoE's fraction to a dense model's
# Each layer of a decode step also runs a dozen small kernels (norms, RoPE, attention, residual adds) whose time
# does not scale with the bytes read: a launch part and a part that takes longer the fewer CUDA cores there are.
# Fitted, with bandwidth at DECODE_BANDWIDTH_FRACTION, on two llama.cpp figures: RTX 4090 (82.6 FP32 TFLOP/s),
# Qwen2 3B Q4_0, 236 tokens/s = 28 us a layer over 36 layers (github.com/ggml-org/llama.cpp/pull/12183), and Orin
# Nano Super (1.9), Qwen2.5 1.5B Q4_K_M, 32.1 tokens/s = 557 us a layer over 28 (github.com/paiml/realizar/issues/120);
# checked out of sample on the AGX Orin's 7B/13B/70B rows (tests/configs/published_workloads.py).
DECODE_LAYER_LAUNCH_S = 15e-6
DECODE_LAYER_SMALL_KERNEL_FLOP = 1.03e9
# A narrower model's layer does that part's work in proportion to its width (wider ones fill the GPU: the 2k-8k rows
# above hold at the constant). SmolLM-135M (576 wide) in llama.cpp b10964 runs ~190 us a layer on the Orin Nano Super
# and ~37 us on an RTX 4070 Laptop (hybridgroup/yzma benchmarks/linux.md), 557 and 81 at the full part.
DECODE_LAYER_FITTED_WIDTH = 1536
# llama.cpp's CUDA build of 2025-26 on a CUDA GPU other than a Jetson module (discrete cards, the DGX Spark) reaches
# more of the bandwidth with smaller fixed kernels a layer. Fitted on 2026 Q4_K_M tg rows: an RTX 2080 (448 GB/s),
# Llama-3.1-8B 71.9 and six more 4-8B models (github.com/AlexsJones/llmfit/pull/773 and /778), an RTX 5060 Ti and an
# RTX 3090, Qwen2.5-7B 87.8 and 150.3 (github.com/danielesalpietro/kickstart-berlin/issues/58), an RTX PRO 6000
# Server, Qwen3-32B 65.35 (github.com/ggml-org/llama.cpp/issues/28196). Taken whatever the bits: 2024 builds' F16
# rows already ran at it (-2 % to +15 %), their quantized ones 10-30 % under it (those rows are timed at the generic
# constants they were fitted with: published_speeds.decode's build_2024).
LLAMA_CPP_DECODE_BANDWIDTH_FRACTION = 0.84
LLAMA_CPP_LAYER_LAUNCH_S = 20e-6
LLAMA_CPP_LAYER_SMALL_KERNEL_FLOP = 0.4e9
# Hugging Face generate() runs each layer eagerly from Python, no CUDA graph: ~0.4 ms more a layer a token. Fitted on
# Qwen's Transformers rows on an H20 (Qwen3-0.6B to 8B, 0.31-0.58 ms a layer; QwenLM/Qwen2.5 speed_benchmark.md);
# checked on Llama 7B fp16 on an RTX 3090, 32.89 ms a token (bitsandbytes#347), ~32 predicted.
HF_GENERATE_LAYER_S = 0.4e-3
# vLLM or SGLang without CUDA graphs (--enforce-eager) launches a layer's kernels from Python at each token, about as
# slow: Qwen2.5-Omni-7B's thinker on an A800, TPOT 22-23 ms eager against 13 with graphs over 28 layers, 0.34 ms a
# layer (vllm-project/vllm-omni#7960); Hunyuan-Large's MoE layers on 8 x H20 are the check (published_speeds.py).
ENGINE_EAGER_LAYER_S = 0.4e-3
# Fraction of the dense 16-bit tensor rate a prompt's prefill reaches (llama.cpp pp512 on an RTX 4090, Qwen2 3B:
# 18,155 tokens/s x 2 x 3.4 GFLOP = 0.75 of 165 TFLOP/s, github.com/ggml-org/llama.cpp/pull/12183).
PREFILL_COMPUTE_FRACTION = 0.6
# A long prompt's attention core (QK^T, softmax, AV) reaches less: Qwen3-Coder-Next at 256k on an H200 in vLLM, 20.4 s
# to the first token (millstoneai.com, 2026), is 0.40 of the BF16 rate with its matmuls at 0.6; FlashAttention 2 in
# PyTorch's SDPA ran fwd+bwd at 0.28 and cuDNN's at 0.48 on the H200 here (tests/fakes/recorded/h200).
PREFILL_ATTENTION_FRACTION = 0.4
# An encoder's forward pass in eager PyTorch (transformers with FlashAttention 2 and unpadding): ModernBERT-large at
# 8,192 tokens on an RTX 4090, 46.8k tokens/s x 1.1 GFLOP = 0.32 of 165 TFLOP/s (arXiv:2412.13663, Table 2).
# TensorRT's fused BERT kernels reach about twice that; no engine offered here is TensorRT.
ENCODER_FORWARD_FRACTION = 0.3
# A ViT over a large batch a GPU reaches about twice that: timm's vit_base_patch16_224 at AMP batch 1,024, 2,993 and
# 3,916 images/s on an RTX 4090 and 5090 (0.64 and 0.66; pytorch-image-models results/benchmark-infer-amp-nchw-pt291-*).
IMAGE_ENCODER_FORWARD_FRACTION = 0.65
# Below ViT-B/16's work at that batch a GPU keeps the eager 0.3: one image does not fill it (NanoOWL's OWL-ViT B/16 at
# batch 1: ~0.35, AGX Orin). The work, not the images: DINOv2 ViT-L/14 at 518 px, 384 images, 108.27 a second (0.67)
# and ViT-g/14 at 128, 33.11 (0.72) in timm's pt240 RTX 4090 table, where 256 images made them 0.3 (audit ZA39).
IMAGE_ENCODER_LARGE_BATCH_IMAGES = 256
# A compiled engine's fused encoder kernels reach twice the eager rate: TensorRT's BERT-Large at 384 tokens, batch 128,
# 782 sequences/s on an A100 (0.62; NVIDIA/TensorRT demo/BERT README); Depth-Anything-Large's 12 ms a 518 px frame on
# an RTX 4090 in TensorRT FP16, pre- and post-processing included (0.55; spacewalk01/depth-anything-tensorrt). Not on
# a Jetson module, whose TensorRT OWL-ViT keeps the eager share (NanoOWL's above).
COMPILED_ENCODER_FORWARD_FRACTION = 0.6
# Model FLOPs utilization of transformer training on tensor cores: llm.c GPT-2 on 8x A100 49-64 %
# (github.com/karpathy/llm.c discussions/481, scripts/run_gpt2_774M.sh); nanoGPT on one RTX 4090 ~55 % of its
# peak (karpathy/nanoGPT#182); PaLM 46 % at 6144 chips (arXiv:2204.02311 Table 3).
TRANSFORMER_TRAINING_MFU = 0.55
# A training micro-batch is never faster than its eager dispatch: each layer's forward and backward kernels launched
# from Python (autograd, PEFT's adapters, the checkpoint's re-forward), ~1.3 ms a layer a forward-sized pass. Fitted on
# Qwen-1.8B LoRA with recompute (24 layers x 4 passes) at 1.0 s for 8 micro-batches of 256 tokens on an A100 SXM, flat
# to 512 (github.com/QwenLM/Qwen README, "Profiling of Memory and Speed"); its 7B and 14B rows are the check.
TRAINING_DISPATCH_S_PER_LAYER_PASS = 1.3e-3
# CNNs keep tensor cores far less busy: ResNet-50 mixed precision in NVIDIA DeepLearningExamples (pytorch-21.03)
# trains 2,470 img/s on an A100 (0.19 of 312 TFLOP/s) and 1,200 img/s on a V100 (0.24 of 125).
CNN_TENSOR_FRACTION = 0.19
# A GeForce card's tensor figures are its FP32-accumulate rates, half its FP16-accumulate ones, and cuDNN's
# convolutions run ~1.8x the fraction above of them (timm on an RTX 3090: ResNet-50 AMP training 826 img/s,
# ResNet-152 370; on an RTX 5090 ResNet-152 inference at 288 px 1,743: 0.32-0.36 of the figure; audit YC).
GEFORCE_CNN_TENSOR_FRACTION = 0.34
# A CNN's data-parallel steps lose to stragglers, input pipelines and the gradient all-reduce at each step's end:
# NVIDIA's DeepLearningExamples scale 8 GPUs to 6.3-6.9x one (ResNet-50 6.73x on A100s, 6.94x on V100s; ResNeXt101
# 6.32x and 6.46x; Mask R-CNN 6.51x): ~0.94 a doubling, 0.83 on 8.
CNN_DATA_PARALLEL_SCALING_PER_DOUBLING = 0.94


def cnn_data_parallel_scaling(gpus: int) -> float:
    """The share of linear speed-up a CNN's data-parallel training keeps on this many GPUs."""
    return CNN_DATA_PARALLEL_SCALING_PER_DOUBLING ** math.log2(gpus) if gpus > 1 else 1.0
# Without tensor cores (FP32 on CUDA cores, a CPU-only edge board): ResNet-50 FP32 on a V100, 367 img/s = 0.57 of
# 15.7 TFLOP/s (same table).
CUDA_CORE_FRACTION = 0.55
# LoRA on an int8 base (LLM.int8(): its outliers split off in fp16, the weights dequantized for the input's gradient)
# takes 1.56x QLoRA's step: FinGPT v3.1.1 and v3.1.2, ChatGLM2-6B on the same data and batch on one RTX 3090, "in int8
# ... in 6h28min" against "in 4bit ... in 4h9min" (AI4Finance-Foundation/FinGPT README; audit CD58).
LLM_INT8_OVER_QLORA = 388 / 249
# Tensor parallel inference: every layer all-reduces its activations (Megatron-LM, arXiv:1909.08053); an
# estimate of what is left of the summed bandwidth (no single published figure isolates it).
TENSOR_PARALLEL_EFFICIENCY = {"nvlink": 0.85, "pcie": 0.7}
# A decode layer of a mixture of experts split over tensor-parallel GPUs (its all-reduces, its sliced experts):
# fitted on SGLang's Qwen3-235B-A22B FP8 over 4 H20s (71.65 tokens/s), checked on BF16 over 8 (74.50; QwenLM/Qwen2.5
# speed_benchmark.md); no PCIe figure, so NVLink's is used as a floor.
TENSOR_PARALLEL_MOE_LAYER_S = 55e-6
# A mixture of experts' decode layer on one GPU in vLLM or SGLang beyond a dense layer's small kernels: routing,
# top-k and the grouped expert GEMMs' launches. Each row's step net of its reads and kernels, a layer: Laguna-XS.2 on
# an H200 (SGLang cookbook, TPOT 5.10 ms) 53 us, gpt-oss-20b on an RTX PRO 6000 41 us and Qwen3-Coder-Next on an
# H200 47 us (Millstone, vLLM), Qwen3-30B-A3B on an H20 15 us (its card's fitted decode fraction takes the rest).
MOE_LAYER_S = 45e-6
# Transformers' MoE block loops over every routed expert of a layer in Python, a host sync each, at each decode step:
# fitted on Qwen3-30B-A3B BF16 on an H20 (128 experts, 48 layers; Transformers 4.51.3, 1.89 tokens/s, QwenLM/Qwen2.5
# speed_benchmark.md); Qwen2-57B-A14B's GPTQ-Int4 on an A100 (64 experts, 28 layers; 4.38.2: 5.55) is the check.
# Charged under task.experts_loop, and for each expert a step hits where the loop skips the rest
# (speed_moe.decode_expert_loop); transformers 5 runs grouped GEMMs (grouped_mm), charged MOE_LAYER_S's routing instead.
HF_MOE_EXPERT_S = 85e-6


# Bytes per parameter of a frozen base that FSDP gathers or uploads: NF4 (QLoRA) and int8 bases, else 16-bit.
BASE_WEIGHT_BYTES = {"qlora": 0.5, "lora_int8": 1.0}
# A copy from pinned host RAM to a GPU (the offloads' experts and models): the same reference's ~25 of 31.5 GB/s.
HOST_COPY_FRACTION = 25 / 31.5
# PCIe x16 bandwidth per direction, GB/s, by generation (PCI-SIG base specs: 8b/10b to Gen2, 128b/130b after).
PCIE_X16_GB_PER_S = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0}
DEFAULT_HOST_PCIE_GB_PER_S = PCIE_X16_GB_PER_S[4]  # a GPU's link to the host when the build does not say


def pcie_gb_per_s(generation: int, lanes: int = 16) -> float:
    """A PCIe link's one-way GB/s: the x16 rate of its generation over its lanes (Gen3's for an unknown one)."""
    return PCIE_X16_GB_PER_S.get(generation, PCIE_X16_GB_PER_S[3]) * lanes / 16
# NVLink per GPU per direction: V100 300 GB/s, A100 600, H100/H200 900 in total (NVIDIA datasheets), by the
# module's PCIe generation. A PCIe card's 2-GPU bridge is not a catalog part: its pair is timed over PCIe.
NVLINK_SXM_GB_PER_S = {3: 150.0, 4: 300.0, 5: 450.0}
# What a bench run measures of the datasheet, typically: GEMM 75-87 % of dense peak, HBM copy 85-89 %
# (../shared/reference/benchmarks.md). With measured ceilings the fractions above are divided by these.
BENCH_MATMUL_FRACTION = 0.8
BENCH_BANDWIDTH_FRACTION = 0.87
# Data set size to work: ~4 bytes of English text per BPE token (OpenAI tokenizer guide: "1 token ~= 4 chars");
# ImageNet-1k train, 1,281,167 JPEGs in ~140 GB: ~110 KB per image.
BYTES_PER_TEXT_TOKEN = 4.0
BYTES_PER_IMAGE = 110e3
# What "cannot do the job in reasonable time" means for the warnings.
SLOW_DECODE_TOKENS_PER_S = 5.0
SLOW_FIRST_TOKEN_S = 60.0
SLOW_RUN_DAYS = 30.0
# A share of a server's time in prompts' prefills from which it is prefill-bound: warned, and its remedy is theirs.
PREFILL_SHARE_WARNING = 0.25
BELOW_TARGET = "below the target: "  # a rate under a stated target (RATE_TARGETS) starts its warning so


@dataclass(frozen=True, slots=True)
class Device:
    """What the prediction reads of the GPUs, per GPU; `measured_*` says a bench run measured that ceiling."""

    name: str
    count: int
    bandwidth_gb_per_s: float
    tflops: float  # the rate the job's matmuls run at
    rate_name: str
    tensor: bool  # tensor cores (else CUDA cores or a CPU)
    link: str = ""  # what joins the GPUs ("NVLink", "PCIe Gen4 x16"); "" for one GPU
    link_gb_per_s: float = 0.0  # per direction
    nvlink: bool = False
    measured_bandwidth: bool = False
    measured_tflops: bool = False
    busbw_gb_per_s: float = 0.0  # a measured all-reduce bus bandwidth (0: from the link)
    fp32_tflops: float = 0.0  # the CUDA-core rate small kernels run at; 0 for a CPU (no per-layer launch cost)
    # llama.cpp's default --split-mode layer: each GPU holds some layers and they take turns on a token, so
    # decoding runs at one GPU's bandwidth (Llama 3 70B Q4_K_M: 16.6 tokens/s on 2 x RTX 3090, 17.1 on 4).
    layer_split: bool = False
    # The build's system RAM bandwidth (configs.speed_cpu), for experts llama.cpp runs on the CPU; 0: not known.
    host_ram_gb_per_s: float = 0.0
    layers_in_ram: int = 0  # llama.cpp -ngl: the layers the CPU runs from RAM (configs.layer_offload)
    experts_in_ram_share: float = 1.0  # of the routed experts, what llama.cpp keeps in RAM (--n-cpu-moe N of L layers)
    host_pcie_gb_per_s: float = 0.0  # the GPU's PCIe link to the host, per direction (0: Gen4 x16 assumed)
    main_pcie_gb_per_s: float = 0.0  # the first card's, in a CPU slot, where llama.cpp offloads matmuls (0: the above)
    decode_bandwidth_fraction: float = 0.0  # this card's own decode share of its datasheet bandwidth; 0: the common
    training_mfu: float = 0.0  # this card's own transformer training MFU; 0: TRANSFORMER_TRAINING_MFU
    peer_to_peer: bool = True  # GPU-to-GPU copies over PCIe (GeForce cards have none: NCCL goes through host memory)
    attention_rate: tuple[float, str] = (0.0, "")  # the 16-bit rate attention runs at beside FP8 matmuls; 0: tflops
    cnn_fraction: float = CNN_TENSOR_FRACTION  # of `tflops`, a CNN's convolutions reach (a GeForce's 16-bit: more)
    edge_module: bool = False  # a Jetson-class module: its GPU's clock and its ARM host set a compiled kernel's cost
    llama_cpp_cuda: bool = False  # llama.cpp's CUDA build decodes, not on a Jetson module (LLAMA_CPP_*)

    @property
    def transformer_training_mfu(self) -> float:
        return self.training_mfu or TRANSFORMER_TRAINING_MFU

    @property
    def host_link_gb_per_s(self) -> float:
        """The GPU's link to the host, per direction: the build's, else Gen4 x16."""
        return self.host_pcie_gb_per_s or DEFAULT_HOST_PCIE_GB_PER_S

    @property
    def main_link_gb_per_s(self) -> float:
        """llama.cpp's main device's link to the host: the weights in RAM cross it for a prompt's matmuls."""
        return self.main_pcie_gb_per_s or self.host_link_gb_per_s

    @property
    def working_count(self) -> int:
        """GPUs that work on a token at once: all of them with tensor parallel, one with a layer split."""
        return 1 if self.layer_split else self.count

    def decode_layer_s(self, width: int) -> float:
        """A decode step's fixed time per layer of a model `width` wide (DECODE_LAYER_*); 0 without CUDA cores."""
        if self.fp32_tflops <= 0:
            return 0.0
        return self.layer_launch_s + self.small_kernel_flop(width) / (self.fp32_tflops * 1e12)

    @property
    def layer_launch_s(self) -> float:
        return LLAMA_CPP_LAYER_LAUNCH_S if self.llama_cpp_cuda else DECODE_LAYER_LAUNCH_S

    def small_kernel_flop(self, width: int) -> float:
        """A decode layer's small kernels' work for a model `width` wide on this device (DECODE_LAYER_FITTED_WIDTH;
        0: not given)."""
        work = LLAMA_CPP_LAYER_SMALL_KERNEL_FLOP if self.llama_cpp_cuda else DECODE_LAYER_SMALL_KERNEL_FLOP
        return work * (min(1.0, width / DECODE_LAYER_FITTED_WIDTH) if width > 0 else 1.0)


@dataclass
class Prediction:
    figures: dict[str, float] = field(default_factory=dict)
    formula: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def achieved_bandwidth(device: Device, fraction: float = DECODE_BANDWIDTH_FRACTION,
                       moe: bool = False) -> tuple[float, str]:
    """GB/s decoding reaches on all the GPUs together, and how."""
    dense_llama_cpp = device.llama_cpp_cuda and not moe  # its experts' scattered matmuls keep MoE's fraction
    own = device.decode_bandwidth_fraction or (LLAMA_CPP_DECODE_BANDWIDTH_FRACTION if dense_llama_cpp else 0.0)
    if own:  # the card's own or llama.cpp's (fitted whatever the weights' bits), MoE in proportion
        fraction = own * (MOE_DECODE_SHARE if moe else 1.0)
    share = min(0.95, fraction / BENCH_BANDWIDTH_FRACTION) if device.measured_bandwidth else fraction
    what = "measured" if device.measured_bandwidth else "datasheet"
    if device.decode_bandwidth_fraction:
        what += f"; this card's own decode fraction, {own:g} in gpus.toml" + (
            f", x {MOE_DECODE_SHARE:.2f} for a mixture of experts" if moe else "")
    elif dense_llama_cpp:
        what += "; llama.cpp's CUDA build of 2025-26"
    value = share * device.bandwidth_gb_per_s * device.working_count
    text = f"{share:.2f} x {device.bandwidth_gb_per_s:,.0f} GB/s ({what})"
    if device.layer_split and device.count > 1:
        text += f" of one GPU at a time (a layer split over {device.count} GPUs)"
    elif device.count > 1:
        efficiency = TENSOR_PARALLEL_EFFICIENCY["nvlink" if device.nvlink else "pcie"]
        value *= efficiency
        text += f" x {device.count} GPUs x {efficiency:g} tensor-parallel efficiency ({device.link})"
    return value, text


def achieved_tflops(device: Device, fraction: float, share: float = 1.0) -> tuple[float, str]:
    """TFLOP/s one GPU reaches at `fraction` of its (datasheet) rate, and how; CUDA cores (or a CPU) reach
    CUDA_CORE_FRACTION whatever the kind of job. `share`, the job's part of its kind's rate (an audio model's, a
    mixture's), holds on either."""
    fraction = (fraction if device.tensor else CUDA_CORE_FRACTION) * share
    used = min(0.95, fraction / BENCH_MATMUL_FRACTION) if device.measured_tflops else fraction
    what = "measured" if device.measured_tflops else "datasheet"
    return used * device.tflops, f"{used:.2f} x {tflops_text(device.tflops)} TFLOP/s {device.rate_name} ({what})"


def tflops_text(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def rate_text(per_second: float) -> str:
    """A rate a second: whole above 10 ("1,234"), two figures below ("0.42": a slow job is not "~0"), and "under
    0.01" below that rather than scientific notation."""
    if per_second >= 10:
        return f"{per_second:,.0f}"
    return f"{per_second:.2g}" if per_second >= 0.01 else "under 0.01"


def duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def decode(weight_bytes: float, kv_bytes_per_stream: float, batch: int, forward_flops_per_token: float,
           device: Device, fraction: float = DECODE_BANDWIDTH_FRACTION, layers: int = 0,
           moe: bool = False, eager: bool = False, moe_layer_s: float = 0.0,
           format_layer_s: float = 0.0, no_graphs: bool = False, expert_loop: tuple[float, str] = (0.0, ""),
           width: int = DECODE_LAYER_FITTED_WIDTH, speculative: tuple[int, float] = (0, 0.0)) -> Prediction:
    """Per step every stream's next token: the weights once, each stream's KV cache once, and each layer's small
    kernels (and a mixture of experts' routing, `moe_layer_s` a layer on one GPU, its all-reduces over several, and
    generate()'s eager dispatch where `eager`, with `expert_loop`'s (seconds, text) of Transformers' loop over the
    experts, an engine's launches from Python where `no_graphs`); capped by compute."""
    bandwidth, bandwidth_text = achieved_bandwidth(device, fraction, moe)
    step_bytes = weight_bytes + batch * kv_bytes_per_stream
    split = moe and device.working_count > 1
    split_moe_s = layers * (TENSOR_PARALLEL_MOE_LAYER_S if split else moe_layer_s) if moe else 0.0
    layer_s, cores = device.decode_layer_s(width), device.fp32_tflops > 0
    generate_s = layers * HF_GENERATE_LAYER_S if eager and cores else 0.0
    expert_loop_s = expert_loop[0] if eager and moe and cores else 0.0
    graphless_s = layers * ENGINE_EAGER_LAYER_S if no_graphs and cores else 0.0
    fixed_s = layers * (layer_s + format_layer_s) + split_moe_s + generate_s + expert_loop_s + graphless_s
    step_s = step_bytes / (bandwidth * 1e9) + fixed_s
    drafted, accepted = speculative
    aggregate = batch / step_s * speculative_factor(drafted, accepted)
    compute, compute_text = achieved_tflops(device, PREFILL_COMPUTE_FRACTION)
    compute_cap = compute * 1e12 * device.working_count / forward_flops_per_token
    compute_cap *= accepted / (drafted + 1) if drafted else 1.0  # each step verifies drafted + 1 tokens a stream
    if device.working_count > 1:  # tensor parallel: each layer's all-reduces stall the matmuls too
        compute_text += f" x {TENSOR_PARALLEL_EFFICIENCY['nvlink' if device.nvlink else 'pcie']:g} tensor-parallel"
        compute_cap *= TENSOR_PARALLEL_EFFICIENCY["nvlink" if device.nvlink else "pcie"]
    out = Prediction()
    fixed_text = (f" + {layers} layers x {layer_s * 1e6:,.0f} us of small kernels "
                  f"({device.layer_launch_s * 1e6:g} us + "
                  f"{device.small_kernel_flop(width) / 1e9:.3g} GFLOP at "
                  f"{tflops_text(device.fp32_tflops)} FP32 TFLOP/s)") if fixed_s else ""
    if split_moe_s:
        fixed_text += (f" + {layers} layers x {TENSOR_PARALLEL_MOE_LAYER_S * 1e6:g} us of the experts split over "
                       f"{device.count} GPUs (all-reduces, small slices)" if split else
                       f" + {layers} layers x {moe_layer_s * 1e6:g} us of expert routing (top-k, grouped GEMMs)")
    if generate_s:
        fixed_text += (f" + {layers} layers x {HF_GENERATE_LAYER_S * 1e6:g} us of generate()'s eager dispatch "
                       "(no CUDA graph)")
    if graphless_s:
        fixed_text += (f" + {layers} layers x {ENGINE_EAGER_LAYER_S * 1e6:g} us of kernel launches from Python "
                       "(task.cuda_graphs = false: no CUDA graph)")
    if format_layer_s:
        fixed_text += f" + {layers} layers x {format_layer_s * 1e3:.3g} ms of the weight format's kernels"
    if expert_loop_s:
        fixed_text += f" + {expert_loop[1]}"
    out.formula.append(
        f"decode: {weight_bytes / 1e9:.3g} GB weights + {batch} x {kv_bytes_per_stream / 1e9:.3g} GB KV cache per "
        f"step at {bandwidth_text}{fixed_text} = {1 / step_s:,.1f} tokens/s per stream")
    if drafted:
        out.formula.append(speculative_text(drafted, accepted))
    if aggregate > compute_cap:
        out.formula.append(f"decode capped by compute: {compute_text} x {device.working_count} / "
                           f"{forward_flops_per_token / 1e9:.3g} GFLOP per token = {compute_cap:,.0f} tokens/s")
        aggregate = compute_cap
    out.figures["decode_tokens_per_s_per_stream"] = aggregate / batch
    out.figures["decode_tokens_per_s_aggregate"] = aggregate
    return out


def prefill_seconds(prefill_flops: float, weight_bytes: float, device: Device, attention_flops: float = 0.0
                    ) -> tuple[float, str]:
    """One prompt's prefill: its matmuls at the prefill fraction and its attention core (`attention_flops`, of the
    total) at the attention fraction, never faster than reading the weights once."""
    compute, compute_text = achieved_tflops(device, PREFILL_COMPUTE_FRACTION)
    gpus = f" x {device.count} GPUs" if device.working_count > 1 else ""
    seconds = (prefill_flops - attention_flops) / (compute * 1e12 * device.working_count)
    text = f"{(prefill_flops - attention_flops) / 1e12:.3g} TFLOP / ({compute_text}{gpus})"
    if attention_flops:
        core = replace(device, tflops=device.attention_rate[0], rate_name=device.attention_rate[1]) \
            if device.attention_rate[0] else device
        attention, attention_text = achieved_tflops(core, PREFILL_ATTENTION_FRACTION)
        seconds += attention_flops / (attention * 1e12 * device.working_count)
        text += f" + attention {attention_flops / 1e12:.3g} TFLOP / ({attention_text}{gpus})"
    bandwidth, _ = achieved_bandwidth(device)
    seconds = max(seconds, weight_bytes / (bandwidth * 1e9))
    return seconds, f"first token: {text} = {duration(seconds)}"


def transformer_flops_per_token(parameters: float, layers: int, hidden: int, context: int, method: str,
                                recompute: str) -> tuple[float, str]:
    """Training FLOPs per token: 6N + 12*L*h*s (full), 4N + 12*L*h*s (adapters: no weight gradients of the base,
    as the LoRA paper's frozen weights need none), 2N + 4*L*h*s (frozen backbone: forward only); recompute adds a
    forward (full: 2N + 4*L*h*s; selective: the attention core's 4*L*h*s)."""
    attention = 4.0 * layers * hidden * context  # QK^T and AV, forward, per token
    weights = {"full": 6.0, "frozen": 2.0}.get(method, 4.0)
    passes = 1.0 if method == "frozen" else 3.0
    flops = weights * parameters + passes * attention
    text = f"{weights:g}N + {passes * 4:g}*L*h*s"
    if method != "frozen" and recompute == "full":
        flops += 2.0 * parameters + attention
        text += " + 2N + 4*L*h*s (full recompute)"
    elif method != "frozen" and recompute == "selective":
        flops += attention
        text += " + 4*L*h*s (selective recompute)"
    return flops, text


def sample_flops_per_step(forward_flops: float, method: str, recompute: str) -> tuple[float, str]:
    """A model given by its forward FLOPs: forward x 3 for training (backward ~2x forward), x 2 with adapters
    (backward computes the activations' gradients only), forward only with a frozen backbone; full recompute adds a
    forward."""
    if method == "frozen":
        return forward_flops, "1 x forward (backbone frozen)"
    if method in FROZEN_BACKWARD_METHODS:
        passes = 3 if recompute == "full" else 2
        return passes * forward_flops, f"{passes} x forward (backward's activation gradients; adapters" + (
            "; recomputed forward)" if recompute == "full" else ")")
    if recompute == "full":
        return 4 * forward_flops, "4 x forward (forward, backward 2x, recomputed forward)"
    return 3 * forward_flops, "3 x forward (backward ~2x forward)"


@dataclass(frozen=True, slots=True)
class RateTarget:
    """A rate the buyer can state (a task answer), the predicted figure it is held to, and how to go faster."""

    answer_key: str
    figure: str
    unit: str
    remedy: str

    @property
    def decode(self) -> bool:
        """A language model's decode a stream, not inputs a second."""
        return self.figure == "decode_tokens_per_s_per_stream"


RATE_TARGETS = (
    RateTarget("target_tokens_per_s_per_stream", "decode_tokens_per_s_per_stream", "tokens/s per stream",
               "a card with more memory bandwidth, or smaller weights, decodes faster"),
    RateTarget("target_samples_per_s", "samples_per_s", "inputs/s",
               "a card with more tensor TFLOP/s, a larger batch or a smaller input goes faster"),
)


def stated_target(task: Task) -> tuple[RateTarget, float] | None:
    """The rate target the answers state (task.target_*), and its value; None without one."""
    return next(((target, float(getattr(task, target.answer_key))) for target in RATE_TARGETS
                 if getattr(task, target.answer_key)), None)


def held_under_load(figures: dict[str, float], target: RateTarget) -> bool:
    """Whether a stated target is held to a server's decode under load, its prompts prefilled between the streams'
    steps (configs.speed_server): where the prediction has that rate."""
    return target.decode and "sustained_tokens_per_s_per_stream" in figures


def held_rate(figures: dict[str, float], target: RateTarget) -> float:
    """The rate a stated target is held to: the rate under load where there is one (held_under_load), else the
    target's figure."""
    return figures["sustained_tokens_per_s_per_stream"] if held_under_load(figures, target) else \
        figures.get(target.figure, 0.0)


def below_target(figures: dict[str, float], task: Task, encoder_decoder: bool = False) -> list[str]:
    """The warning for a predicted rate under the stated target; none without a target or that figure. An
    encoder-decoder's cards were ranked by its decoder alone (ranking.job_speed), and the warning says so."""
    stated = stated_target(task)
    rate = held_rate(figures, stated[0]) if stated else 0.0
    if stated is not None and not figures:  # no speed predicted at all: the rate is not checked, and said so
        ranked = " (its cards were ranked by the decoder alone, a bound)" if encoder_decoder else ""
        return [f"task.{stated[0].answer_key} = {stated[1]:g} is not checked on the whole model: this build's speed "
                f"is not predicted (above){ranked}: time the model itself on the machine"]
    if stated is None or not rate or rate >= stated[1]:
        return []
    target, value = stated
    loaded = " under load" if held_under_load(figures, target) else ""
    prefill_bound = figures.get("prefill_share", 0.0) >= PREFILL_SHARE_WARNING
    remedy = ("with each prompt prefilled but for task.prompt_cache_hit_fraction (0: every prompt fresh); a chat's "
              "cached turns, shorter prompts, or more GPUs (tensor parallel) shorten the prefills" if prefill_bound
              else target.remedy)
    return [f"{BELOW_TARGET}~{rate:,.1f} {target.unit}{loaded}, under task.{target.answer_key} = {value:g}: {remedy}"]

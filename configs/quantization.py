"""Quantized weight formats: the bits a format stores per weight of the decoder's linear layers (scales and zeros
included) and per weight of the embedding and LM head, and the format each engine loads when none is answered.

Sources:
- llama.cpp ggml-common.h: block_q4_0 is 18 B and block_q8_0 34 B per 32 weights (4.5 and 8.5 bits); block_q4_K
  144 B and block_q6_K 210 B per 256 (4.5 and 6.5625 bits). llama_tensor_get_type (src/llama-quant.cpp): the LM
  head (output.weight) becomes Q6_K unless the type is Q8_0; Q4_K_M also stores attn_v and ffn_down in Q6_K on
  half the layers (use_more_bits), ~15 % of a Llama layer's weights: 4.5 + 0.15 x 2.0625 = 4.8 bits. Llama 2 7B
  then comes to 4.84 bpw, as tools/quantize/README.md lists it.
- llama-quant.cpp, convert_incompatible_tensor: a k-quant needs rows a multiple of 256 (QK_K); a tensor whose
  rows are not falls back, Q4_K to Q5_0 (5.5 bits) and Q6_K to Q8_0 (8.5). ffn_down's rows are the MLP width, so
  Qwen2.5-72B's 29,568 (115.5 x 256) stores every ffn_down so: its Q4_K_M file is 47.42 GB, not 43.9
  (huggingface.co/bartowski/Qwen2.5-72B-Instruct-GGUF).
- AutoAWQ WQLinear_GEMM and AutoGPTQ QuantLinear, group size 128: int32-packed 4-bit weights, a 4-bit zero
  (packed qzeros) and an fp16 scale per 128 weights of a column: 4 + 20/128 bits; embedding and LM head stay
  16-bit (GPTQ's g_idx, one int32 per input row, is under 0.01 bit).
- bitsandbytes Linear4bit (nf4, blocksize 64, one fp32 absmax per block, no double quantization): 4 + 32/64 bits;
  Linear8bitLt (LLM.int8()): int8 weights and one fp32 scale per row. transformers leaves lm_head unquantized.
- Below 4 bits (llama.cpp tools/quantize/README.md, Llama-3.1-8B): Q3_K_S 3.6429 and Q2_K 3.1593 bits a weight in
  all. Q3_K_S stores the layers in Q3_K (block_q3_K: 110 B per 256, 3.4375 bits), the LM head in Q6_K; Q2_K the
  layers in Q2_K (84 B per 256, 2.625 bits) with attn_v and ffn_down a step up, 2.95 on average, as the file's
  total gives with the LM head in Q6_K. Each step down costs more quality than 4 bits does. Decode: 71.68 tokens/s
  for Q3_K_S, 79.85 for Q2_K, 71.93 for Q4_K_M on one machine: 0.74 and 0.72 of Q4_K_M's bandwidth fraction a byte.
- FP8 (vLLM's fp8, DeepSeek-V3's checkpoint): 8-bit weights; per-tensor or 128 x 128 fp32 block scales add under
  0.01 bit; embedding and LM head 16-bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

# Bits per parameter of each quantized precision in coarse sizing (storage, host RAM): llama.cpp's Q4_0 and Q8_0.
QUANTIZED_BITS_PER_PARAMETER = {"int8": 8.5, "int4": 4.5}

Quantization = Literal[
    "auto", "bnb_nf4", "gptq_g128", "awq_g128", "gguf_q4_0", "gguf_q4_k_m", "gguf_q3_k_s", "gguf_q2_k", "bnb_int8",
    "fp8", "gguf_q8_0",
]
QUANTIZATIONS: tuple[str, ...] = get_args(Quantization)
GGUF_FORMATS = tuple(name for name in QUANTIZATIONS if name.startswith("gguf_"))  # what llama.cpp loads


@dataclass(frozen=True, slots=True)
class QuantFormat:
    precision: str  # the task.precision it stores: "int4" or "int8"
    bits: float  # per weight of the decoder's linear layers, scales and zeros included
    vocabulary_bits: float  # per weight of the embedding and LM head (their mean)
    label: str
    # A k-quant: the extra bits an ffn_down weight costs when the MLP width is not a multiple of K_QUANT_ROW.
    ffn_down_fallback_extra_bits: float = 0.0
    # How many times the 16-bit weights' read a step's kernels take where they, not the bytes, set it (0: the bytes).
    decode_time_vs_16bit: float = 0.0
    # The share of 4-bit's decode bandwidth fraction its kernels reach a byte (under 4 bits, the k-quants' unpacking).
    decode_fraction_scale: float = 1.0
    # A decode step's fixed time a linear layer call beside its bytes (LLM.int8(): its activations quantized and its
    # outliers split out each call, whatever the matrix's size).
    decode_s_per_linear: float = 0.0
    # bitsandbytes swaps nn.Linear only: under transformers v5 a MoE's fused routed experts stay 16-bit
    # (memory_methods.BNB_SKIPS_FUSED_EXPERTS).
    skips_fused_experts: bool = False


K_QUANT_ROW = 256


def experts_left_16_bit(fmt: QuantFormat | None, engine: str) -> bool:
    """Whether a MoE's routed experts stay 16-bit in this format: bitsandbytes under generate() (vLLM's own
    bitsandbytes loader quantizes fused experts, vllm#32013)."""
    return fmt is not None and fmt.skips_fused_experts and engine == "hf_generate"


Q4_K_BITS, Q6_K_BITS = 144 * 8 / 256, 210 * 8 / 256  # block_q4_K, block_q6_K over 256 weights
Q2_K_BITS, Q3_K_BITS = 84 * 8 / 256, 110 * 8 / 256  # block_q2_K, block_q3_K
Q5_0_BITS, Q8_0_BITS = 22 * 8 / 32, 34 * 8 / 32  # block_q5_0, block_q8_0 over 32 weights
FORMATS = {
    # bitsandbytes' kernels are "not efficient for inference" (bitsandbytes#490): LLM.int8() decodes 2.1-5x slower than
    # 16-bit on 7B models (FastChat#1698, bitsandbytes#347, #490), nf4 2.5x faster than it (#490). nf4's multiple is of
    # the 16-bit weights' read, generate()'s per-layer dispatch (speed.HF_GENERATE_LAYER_S) beside it: Llama 7B on an
    # RTX 3090, 18 ms of reads + 14 ms of dispatch; nf4 x 2 = 1.6x the fp16 step.
    "bnb_nf4": QuantFormat("int4", 4.5, 16.0, "bitsandbytes nf4, an fp32 scale per 64", decode_time_vs_16bit=2.0,
                              skips_fused_experts=True),
    "gptq_g128": QuantFormat("int4", 4 + 20 / 128, 16.0, "GPTQ g128, an fp16 scale and 4-bit zero per 128"),
    "awq_g128": QuantFormat("int4", 4 + 20 / 128, 16.0, "AWQ g128, an fp16 scale and 4-bit zero per 128"),
    "gguf_q4_0": QuantFormat("int4", 4.5, (4.5 + Q6_K_BITS) / 2, "GGUF Q4_0, an fp16 scale per 32; LM head Q6_K"),
    # ffn_down is Q6_K on half the layers (use_more_bits) and Q4_K on the rest: falling back to Q8_0 and Q5_0,
    # it averages 7.0 bits instead of 5.53.
    "gguf_q4_k_m": QuantFormat("int4", 4.8, (4.5 + Q6_K_BITS) / 2,
                               "GGUF Q4_K_M, Q4_K with some attn_v/ffn_down and the LM head in Q6_K",
                               ffn_down_fallback_extra_bits=(Q8_0_BITS + Q5_0_BITS) / 2 - (Q6_K_BITS + Q4_K_BITS) / 2),
    "gguf_q3_k_s": QuantFormat("int4", Q3_K_BITS, (Q3_K_BITS + Q6_K_BITS) / 2,
                               "GGUF Q3_K_S, Q3_K with the LM head in Q6_K (3.64 bits a weight on Llama 3.1 8B)",
                               decode_fraction_scale=0.74),
    "gguf_q2_k": QuantFormat("int4", 2.95, (Q2_K_BITS + Q6_K_BITS) / 2,
                             "GGUF Q2_K, Q2_K with attn_v and ffn_down a step up and the LM head in Q6_K (3.16 bits a "
                             "weight on Llama 3.1 8B)", decode_fraction_scale=0.72),
    # LLM.int8()'s cost is a call's, not a byte's (audit ZA): BLOOM-176B on 4 x A100 decodes 1.23x its bf16 time
    # (284 against 230 ms a token, huggingface/blog bloom-inference-pytorch-scripts), Llama 7B 4.7x (bitsandbytes#347);
    # fitted on the second's 7 calls a layer, ~0.58 ms a call beside its 8-bit bytes. A fused QKV (BLOOM, GPT-NeoX)
    # makes fewer, counted as separate: BLOOM's row comes out 1.6x, -28 %.
    "bnb_int8": QuantFormat("int8", 8.0, 16.0, "bitsandbytes LLM.int8(), an fp32 scale per row",
                            decode_s_per_linear=0.58e-3, skips_fused_experts=True),
    "fp8": QuantFormat("int8", 8.0, 16.0, "FP8 weights"),
    "gguf_q8_0": QuantFormat("int8", 8.5, 8.5, "GGUF Q8_0, an fp16 scale per 32"),
}
# What each engine loads for "auto": vLLM and SGLang serve AWQ/GPTQ checkpoints and FP8, llama.cpp GGUF files,
# Hugging Face generate() bitsandbytes.
ENGINE_FORMATS = {
    "vllm": {"int4": "awq_g128", "int8": "fp8"},
    "sglang": {"int4": "awq_g128", "int8": "fp8"},
    "llama_cpp": {"int4": "gguf_q4_k_m", "int8": "gguf_q8_0"},
    "hf_generate": {"int4": "bnb_nf4", "int8": "bnb_int8"},
}


def weight_format_name(quantization: str, precision: str, engine: str) -> str:
    """The FORMATS key the weights are counted in: as answered, else the engine's; "" for unquantized weights."""
    if precision not in QUANTIZED_BITS_PER_PARAMETER:
        return ""
    if quantization == "auto":
        return ENGINE_FORMATS.get(engine, ENGINE_FORMATS["hf_generate"])[precision]
    return quantization


def weight_format(quantization: str, precision: str, engine: str) -> QuantFormat | None:
    """The format the weights are counted in (weight_format_name's); None for unquantized weights."""
    name = weight_format_name(quantization, precision, engine)
    return FORMATS[name] if name else None


# QLoRA's base weights: bitsandbytes nf4 (the method's own, so answering it beside task.method = "qlora" is the same
# job: LLaMA-Factory's quantization_method bnb with quantization_bit 4).
QLORA_FORMAT = "bnb_nf4"

# The GGUF formats under 4 bits, highest first: the lever after 4-bit weights in llama.cpp.
LOW_BIT_GGUF = ("gguf_q3_k_s", "gguf_q2_k")


def formats_of(precision: str) -> tuple[str, ...]:
    """The formats that store `precision`."""
    return tuple(name for name, fmt in FORMATS.items() if fmt.precision == precision)

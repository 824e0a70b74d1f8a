"""What a transformer's decode step reads, on any device: the weights (a MoE's active experts), each stream's KV
cache, and the context it runs at."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.memory_inference import inference_weight_bytes
from pth_top.configs.memory_methods import adapted_matrices
from pth_top.configs.memory_terms import WEIGHT_BYTES_BY_PRECISION, ModelShape, kv_cache_bytes
from pth_top.configs.quantization import experts_left_16_bit, weight_format
from pth_top.configs.vision_encoder import prefill_flops as vision_prefill_flops

# Wider weights decode nearer the bandwidth (fewer dequantizing instructions a byte): llama.cpp's 7B tg128
# (github.com/ggml-org/llama.cpp/pull/4766), net of the per-layer term, RTX 4090 F16 61.03 tokens/s = 0.86 and Q8_0
# (8.5 bits) 98.13 = 0.76, RTX 3090 F16 48.52 = 0.75 and Q4_0 (4.5 bits) 121.82 = 0.60. The fits above are Q4_0's,
# made with the 0.26 GB input table read too: without it these rows read ~2 % less (not refitted, inside their spread).
# Those are a 2024 build's: llama.cpp's CUDA build of 2025-26 (not on a Jetson module) takes speed.LLAMA_CPP_* instead.
DECODE_FRACTION_BY_WEIGHT_BITS = ((4.5, sp.DECODE_BANDWIDTH_FRACTION), (8.5, 0.75), (16.0, 0.80))


def decode_bandwidth_fraction(weight_bits: float, moe: bool = False) -> float:
    """The common decode fraction for weights of this many bits a parameter, linear between the fitted points; a
    mixture of experts' in speed.MOE_DECODE_SHARE's proportion."""
    points = DECODE_FRACTION_BY_WEIGHT_BITS
    bits = min(max(weight_bits, points[0][0]), points[-1][0])
    (low_bits, low), (high_bits, high) = next(
        (lower, upper) for lower, upper in zip(points, points[1:], strict=False) if bits <= upper[0])
    dense = low + (high - low) * (bits - low_bits) / (high_bits - low_bits)
    return dense * (sp.MOE_DECODE_SHARE if moe else 1.0)


@dataclass(frozen=True, slots=True)
class DecodeReads:
    """What one decode step reads: the weights (a MoE's active experts), each stream's KV cache, and the context."""

    read_bytes: float  # the weights a step reads for the whole batch
    kv_bytes: float  # one stream's KV cache at the average context
    weight_bytes: float  # all the weights
    weight_bits: float  # a parameter's on average, as its kernels read them (a slow format's as 16)
    kv_bits: float  # a cached value's
    prompt: int
    average_context: float
    line: str
    format_layer_s: float = 0.0  # a decode step's fixed time a layer for the weight format's kernels

    def bandwidth_fraction(self, kv_bytes: float, moe: bool) -> float:
        """The decode fraction of a step that reads these weights and `kv_bytes` of cache, each at its bits' own."""
        weights = decode_bandwidth_fraction(self.weight_bits, moe)
        cache = decode_bandwidth_fraction(self.kv_bits)
        return (self.read_bytes + kv_bytes) / (self.read_bytes / weights + kv_bytes / cache)


def decode_reads(answers: Answers, shape: ModelShape) -> DecodeReads:
    """The bytes a transformer's decode step reads, on any device."""
    task, batch = answers.task, answers.workload.batch_size
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    weights, _ = inference_weight_bytes(shape, task.precision, task.quantization, engine)
    prompt = shape.sequence_length
    total = prompt + task.generated_tokens
    if shape.max_context_tokens:
        total = min(total, shape.max_context_tokens)
        prompt = min(prompt, total)
    average_context = (prompt + total) / 2
    value_bytes = stacks.kv_value_bytes(task.kv_cache_dtype, engine, 4.0 if task.precision == "fp32" else 2.0)
    kv = kv_cache_bytes(shape, 1, int(average_context), value_bytes)
    fmt = weight_format(task.quantization, task.precision, engine)
    embedding_bytes = fmt.vocabulary_bits / 8 if fmt else WEIGHT_BYTES_BY_PRECISION[task.precision]
    # The input embedding: a row a token is read, not the table (audit ZL); a tied one is read whole as the LM head.
    # At most half the vocabulary's share of the count, as the weights count it (a count without the embeddings).
    table_parameters = min(shape.vocabulary_size * shape.hidden_size,
                           min(shape.parameters, shape.vocabulary_parameters) / 2)
    embedding_table_bytes = 0.0 if shape.tied_embeddings else table_parameters * embedding_bytes
    # Per-layer embedding tables likewise (Gemma 4 E4B on an RTX 5070: 86 tokens/s counted as read, 121-127 published).
    lookup_bytes = min(shape.lookup_parameters * embedding_bytes, (weights - embedding_table_bytes) / 2)
    read, what = weights - embedding_table_bytes - lookup_bytes, "the weights" + (
        f" less the input embedding's table ({embedding_table_bytes / 1e9:.3g} GB: a row a token)"
        if embedding_table_bytes else "") + (
        f" less the per-layer embedding tables ({lookup_bytes / 1e9:.3g} GB, workload.lookup_parameters: a row a "
        "token)" if lookup_bytes else "")
    sixteen_bit_read = 0.0  # routed experts bitsandbytes leaves 16-bit, read at their bytes
    if shape.active < shape.parameters:  # MoE: each token reads its experts; a batch at most all of them
        active_weights, _ = inference_weight_bytes(dataclasses.replace(shape, parameters=shape.active),
                                                       task.precision, task.quantization, engine)
        active_weights -= min(embedding_table_bytes + lookup_bytes, active_weights / 2)  # without the tables too
        if fmt is not None and experts_left_16_bit(fmt, engine):  # as the weights count them
            routed_16 = float(shape.routed_expert_parameters) * 2.0
            active_weights += routed_16 * shape.routed_expert_share * (1 - fmt.bits / 16)
            sixteen_bit_read = routed_union_bytes(routed_16, shape.routed_expert_share, max(1, batch))
        read, union = _moe_batch_reads(weights, active_weights, shape.routed_expert_share, batch)
        what = (f"the active experts' weights ({shape.active / 1e9:.3g}B of {shape.parameters / 1e9:.3g}B "
                f"parameters, {active_weights / 1e9:.3g} GB per stream{union})")
    line = (f"decode reads {what} and each stream's KV cache (average context {average_context:,.0f} tokens) once "
            "per generated token")
    bits = 8.0 * weights / max(1, shape.parameters)
    if fmt is not None and fmt.decode_fraction_scale < 1:  # its kernels reach less of the bandwidth a byte
        read /= fmt.decode_fraction_scale
        line += f"; {fmt.label} reads at {fmt.decode_fraction_scale:g} of 4-bit's bandwidth fraction a byte"
    if fmt is not None and fmt.decode_time_vs_16bit:  # timed as reading the 16-bit weights that many times
        read = (read - sixteen_bit_read) * 16.0 / fmt.bits * fmt.decode_time_vs_16bit + sixteen_bit_read
        bits = 16.0
        line += (f"; {fmt.label}'s kernels, not its bytes, set the time: timed as reading the 16-bit weights "
                 f"{fmt.decode_time_vs_16bit:g} times")
    layer_s = 0.0
    if fmt is not None and fmt.decode_s_per_linear:  # each linear call's own time beside its bytes
        linears = len(adapted_matrices(shape.hidden_size, shape.hidden_size, shape.mlp_width, shape.gated_mlp,
                                       "all_linear"))  # q, k, v, o and the MLP's
        layer_s = linears * fmt.decode_s_per_linear
        line += (f"; {fmt.label}'s kernels add {fmt.decode_s_per_linear * 1e3:g} ms a linear call, {linears} a "
                 "layer")
    return DecodeReads(read, kv, weights, bits, 8.0 * value_bytes, prompt, average_context, line, layer_s)


def routed_union_bytes(routed_bytes: float, share: float, batch: int) -> float:
    """What B streams read of the routed experts under uniform routing: the expected union of their k of n each."""
    return routed_bytes * (1 - (1 - share) ** batch)


def _moe_batch_reads(weights: float, active: float, share: float, batch: int) -> tuple[float, str]:
    """A batch's reads under uniform routing: the always-read part S once, and of the routed experts R the expected
    union of the streams' k of n, R x (1 - (1 - k/n)^B), where active = S + R x k/n. Without k/n, the union of
    whole active sets, 1 - (1 - a/W)^B of W: an upper bound, as it draws the always-read part too."""
    if batch <= 1:
        return active, ""
    if 0 < share < 1 and active < weights:
        routed = min(weights, (weights - active) / (1 - share))
        read = (weights - routed) + routed_union_bytes(routed, share, batch)
        return read, (f"; {batch} streams read the always-used {(weights - routed) / 1e9:.3g} GB once and the expected "
                      f"union of their routed experts, 1 - (1 - {share:.3g})^{batch} of {routed / 1e9:.3g} GB: "
                      f"{read / weights:.0%} of the weights")
    fraction = min(1.0, active / weights)
    read = weights * (1 - (1 - fraction) ** batch)
    return read, (f"; {batch} streams read at most the union of their active sets, 1 - (1 - {fraction:.3g})^{batch} = "
                  f"{read / weights:.0%} of the weights (no expert counts given: an upper bound)")


def prefill_flops(shape: ModelShape, prompt: int, images: bool = True) -> float:
    """One prompt's prefill: 2N per token (N the active parameters, less looked-up embedding tables) + causal
    attention 2*L*h*s^2 (windows less), and a vision-language model's encoder over the request's image patches
    (`images`; not for a cached prefix)."""
    encoder = vision_prefill_flops(shape) if images else 0.0
    matmul = max(0, shape.active - shape.lookup_parameters)
    return 2.0 * matmul * prompt + prefill_attention_flops(shape, prompt) + encoder


def prefill_attention_flops(shape: ModelShape, prompt: int) -> float:
    """The attention core's share of a prompt's prefill: QK^T and AV over the causal pairs, 2*L*h*s^2."""
    return 4.0 * shape.attention_flops_width * shape.attended_pairs(prompt)

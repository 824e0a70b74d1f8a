"""Inference memory: weights in their format's bits, the KV cache, one layer's prefill over the engine's chunk."""

from __future__ import annotations

from dataclasses import replace

from pth_top.configs import stacks
from pth_top.configs.answer_sections import MAX_GPUS
from pth_top.configs.custom_cnn import RESNET50_SAVED_ELEMENTS
from pth_top.configs.memory_methods import BNB_SKIPS_FUSED_EXPERTS
from pth_top.configs.memory_terms import (
    CUDA_CONTEXT_BYTES,
    INFERENCE_OVERHEAD_FRACTION,
    WEIGHT_BYTES_BY_PRECISION,
    MemoryBreakdown,
    ModelShape,
    inference_per_token,
    inference_working_set_text,
    kv_cache_bytes,
    transformer_activation_bytes,
    value_bytes_of,
)
from pth_top.configs.quantization import K_QUANT_ROW, QuantFormat, experts_left_16_bit, weight_format
from pth_top.configs.vision_encoder import vision_encoder
from pth_top.units import GIB


def inference_weight_bytes(shape: ModelShape, precision: str, quantization: str = "auto",
                           engine: str = "hf_generate") -> tuple[float, str]:
    """Weight bytes and their formula line; int8/int4 in the format's bits, its embedding and LM head apart, or at
    the published files' size (workload.weights_file_gb), a part of the model at its share of them."""
    counted, line = _format_weight_bytes(shape, precision, quantization, engine)
    scale = files_scale(shape, precision, quantization, engine)
    if scale == 1.0:
        return counted, line
    bits = 8 * shape.weights_file_bytes / shape.weights_file_parameters
    return counted * scale, (f"{line}; x {scale:.3g}: the published files' {shape.weights_file_bytes / 1e9:,.1f} GB "
                             f"(workload.weights_file_gb), {bits:.3g} bits a weight")


def files_scale(shape: ModelShape, precision: str, quantization: str, engine: str) -> float:
    """The published files' size over the whole model's counted in its format; 1 where none is given."""
    if not shape.weights_file_bytes or weight_format(quantization, precision, engine) is None:
        return 1.0
    whole = replace(shape, parameters=shape.weights_file_parameters, weights_file_bytes=0.0)
    return shape.weights_file_bytes / max(1.0, _format_weight_bytes(whole, precision, quantization, engine)[0])


# torch.autocast caches the 16-bit cast of each leaf weight that requires grad (the default after from_pretrained or
# eval()) while its block runs: an fp32 model sampled in one autocast block holds both (review r74: 546 MB more for a
# 268M-parameter model inside the block, none with its weights frozen).
AUTOCAST_WEIGHT_CACHE_BYTES = 2.0


def _format_weight_bytes(shape: ModelShape, precision: str, quantization: str, engine: str) -> tuple[float, str]:
    p = shape.parameters
    fmt = weight_format(quantization, precision, engine)
    if fmt is None and precision == "amp_fp16":
        weight_bytes = WEIGHT_BYTES_BY_PRECISION[precision] + AUTOCAST_WEIGHT_CACHE_BYTES
        return p * weight_bytes, (f"weights {p / 1e6:,.1f}M params x {weight_bytes:g} B (amp_fp16: fp32 weights + "
                                  f"autocast's cached fp16 copy of each, {AUTOCAST_WEIGHT_CACHE_BYTES:g} B, while its "
                                  "block runs; none for weights frozen with requires_grad_(False))")
    if fmt is None:
        weight_bytes = WEIGHT_BYTES_BY_PRECISION[precision]
        return p * weight_bytes, f"weights {p / 1e6:,.1f}M params x {weight_bytes:g} B ({precision})"
    # The formats quantize the decoder's linear layers; the embedding and LM head keep their own bits.
    apart = min(p, shape.vocabulary_parameters) if shape.kind == "transformer" else 0
    line = f"weights {(p - apart) / 1e6:,.1f}M params x {fmt.bits:.3g} bit ({precision}: {fmt.label})"
    if apart:
        head = " and LM head" if shape.lm_head and not shape.tied_embeddings else \
            " (tied to the LM head)" if shape.lm_head else ""
        line += (f" + embeddings{head} {apart / 1e6:,.1f}M params x "
                 f"{fmt.vocabulary_bits:.3g} bit")
    fallback_bits, fallback_line = _ffn_down_fallback(shape, fmt)
    experts = min(p - apart, shape.routed_expert_parameters) if experts_left_16_bit(fmt, engine) else 0
    if experts:
        line += f"; {BNB_SKIPS_FUSED_EXPERTS.format(experts / 1e9)}"
    return ((p - apart - experts) * fmt.bits + apart * fmt.vocabulary_bits + experts * 16 + fallback_bits) / 8, \
        line + fallback_line


def _ffn_down_fallback(shape: ModelShape, fmt: QuantFormat) -> tuple[float, str]:
    """The bits a k-quant adds where a dense model's MLP width is not a multiple of 256 (quantization.py)."""
    width = shape.mlp_width
    if not fmt.ffn_down_fallback_extra_bits or shape.kind != "transformer" or shape.active_parameters \
            or not shape.layers or width % K_QUANT_ROW == 0:
        return 0.0, ""
    down = shape.layers * shape.hidden_size * width
    extra = down * fmt.ffn_down_fallback_extra_bits
    return extra, (f" + ffn_down's {down / 1e6:,.1f}M params x {fmt.ffn_down_fallback_extra_bits:.3g} bit more "
                   f"(MLP width {width:,} is not a multiple of {K_QUANT_ROW}: Q8_0/Q5_0 instead of Q6_K/Q4_K)")


def expert_bytes(shape: ModelShape, precision: str, quantization: str, engine: str) -> float:
    """All routed experts of a mixture of experts in the weights' format (GGUF keeps them at the quantized bits)."""
    fmt = weight_format(quantization, precision, engine)
    bytes_per_parameter = fmt.bits / 8 if fmt else WEIGHT_BYTES_BY_PRECISION[precision]
    return shape.routed_expert_parameters * bytes_per_parameter * files_scale(shape, precision, quantization, engine)


EXPERTS_IN_RAM_LINE = "llama.cpp --cpu-moe (task.expert_offload)"


def experts_kept_on_gpus(memory: MemoryBreakdown, shape: ModelShape, room_bytes: float, gpus: int
                         ) -> MemoryBreakdown:
    """llama.cpp --n-cpu-moe N (PR 15077): the routed experts of as many layers as the GPUs' free memory holds
    (`room_bytes` a GPU) stay on them, and N, the other layers', run from RAM."""
    experts, layers = memory.host_offload_bytes, shape.layers
    per_layer = experts / layers if layers else 0.0
    kept = min(layers, int(room_bytes * gpus // per_layer)) if per_layer and room_bytes > 0 else 0
    if not kept:
        return memory
    on_gpus = kept * per_layer
    formula = memory.formula
    if kept == layers:  # the card holds the whole model: nothing runs from RAM
        formula = tuple(line for line in formula if not line.startswith(EXPERTS_IN_RAM_LINE))
        line = (f"all {layers} layers' experts ({on_gpus / 1e9:.3g} GB) fit beside the rest: none stay in RAM, "
                "--cpu-moe is not needed on this card")
    else:
        line = (f"llama.cpp --n-cpu-moe {layers - kept}: {kept} of {layers} layers' experts ({on_gpus / 1e9:.3g} GB) "
                f"fill the GPU's free memory, the other {layers - kept} layers' ({(experts - on_gpus) / 1e9:.3g} GB) "
                "stay in RAM")
    return replace(memory, weights_bytes=int(memory.weights_bytes + on_gpus / gpus),
                   host_offload_bytes=int(experts - on_gpus), formula=(*formula, line))


def kv_split(shape: ModelShape, gpus: int, engine: str) -> int:
    """How many ways the GPUs split the KV cache: a layer split (llama.cpp, generate()'s device map) by layers, all
    of them; tensor parallel (vLLM, SGLang) by KV heads, at most their count, and not at all for MLA's latent cache
    (vLLM and SGLang replicate it on every rank); beyond one node's MAX_GPUS, pipeline parallel across the nodes
    divides it by their count too (each holds its layers' cache)."""
    if gpus <= 1 or engine not in stacks.TENSOR_PARALLEL_ENGINES:
        return max(1, gpus)
    stages = -(-gpus // MAX_GPUS)
    node = min(gpus, MAX_GPUS)
    return min(gpus, stages * (1 if shape.latent_kv else min(node, shape.kv_heads or shape.attention_heads)))


# A CNN's no-grad forward keeps about three of its largest activation a sample at once: a block's input for the
# residual, a convolution's output and its normalization's (ReLU in place). The largest is ResNet-50's 802,816 (112 x
# 112 x 64) of the 21.53M it saves for backward. timm's RTX 4090 run of BiT-R152x2 at 384 px (audit ZX) fits a batch
# of 384, not 512: 18.1 and 23.8 GiB of 22.8 here.
CNN_LIVE_LARGEST_ACTIVATIONS = 3
CNN_LARGEST_OF_SAVED = 802_816 / RESNET50_SAVED_ELEMENTS


# An image or audio encoder (a ViT, CLIP's or SigLIP's tower) runs in plain PyTorch whatever task.serving_engine says:
# vLLM and SGLang serve language models, and no engine batches its patches by a token budget.
MEDIA_ENCODER_RUNTIME = ("plain PyTorch (timm, torchvision, transformers' forward): vLLM and SGLang serve no image or "
                         "audio encoder")


def estimate_inference(
    shape: ModelShape, *, precision: str, batch: int, generated_tokens: int = 0, gpu_count: int = 1,
    cuda_context_bytes: int = CUDA_CONTEXT_BYTES, engine: str = "hf_generate", quantization: str = "auto",
    kv_cache_dtype: str = "auto", expert_offload: bool = False, prefill_chunk_tokens: int = 0,
    media_encoder: bool = False, flash_attention: bool = True, cuda_graphs: bool = True, large_card: bool = False,
    engine_memory_fraction: float = 0.0, full_prompt_logits: bool = False,
) -> MemoryBreakdown:
    """Transformers: weights + explicit KV cache + last-position logits + one layer's prefill activations over the
    engine's prefill chunk, + its CUDA graphs.

    Other models: weights x 1.2 (EleutherAI "Transformer Math 101"), the 0.2 shown as activations.
    The two are never added: the 1.2 already covers a KV cache.
    """
    n = max(1, gpu_count)
    media_encoder = media_encoder and forward_only(shape)  # timm's, torchvision's: no LLM engine serves it
    engine = "hf_generate" if media_encoder else engine
    all_weights, weights_line = inference_weight_bytes(shape, precision, quantization, engine)
    experts = expert_bytes(shape, precision, quantization, engine) if expert_offload else 0.0
    weights = (all_weights - experts) / n
    formula = [weights_line]
    if experts:
        formula.append(f"{EXPERTS_IN_RAM_LINE}: the routed experts, "
                       f"{shape.routed_expert_parameters / 1e9:.3g}B params = {experts / 1e9:.3g} GB, stay in "
                       "system RAM, off the GPU")
    fraction = (engine_memory_fraction or stacks.ENGINE_MEMORY_FRACTION.get(engine, 0.0)) \
        if shape.kind == "transformer" else 0.0
    reserving = engine if engine in stacks.ENGINE_RESERVED_GIB and shape.kind == "transformer" else ""
    static = stacks.STATIC_BUFFERS_FRACTION.get(engine, 0.0) if shape.kind == "transformer" else 0.0
    if media_encoder:  # audit ZX: SigLIP at a batch of 768 was held to vLLM's 2,048-token batch, 1.3 of 12.7 GiB
        formula.insert(0, f"runtime: {MEDIA_ENCODER_RUNTIME}, the whole batch at once")
    elif shape.kind == "transformer":
        formula.insert(0, f"engine: {stacks.SERVING_ENGINE_LABELS[engine]} (task.serving_engine)"
                       + (f", which plans to fill {fraction:.0%} of each GPU (gpu_memory_utilization)" if fraction
                          else ""))
    if n > 1:
        formula.append(f"weights and KV cache split over {n} GPUs ("
                       + ("tensor parallel" if engine in stacks.TENSOR_PARALLEL_ENGINES else "a layer split")
                       + ")")
    if shape.kind != "transformer":
        activations = weights * INFERENCE_OVERHEAD_FRACTION
        formula.append(f"activations and buffers: {INFERENCE_OVERHEAD_FRACTION:g} x weights (EleutherAI 1.2x rule)")
        if shape.kind == "cnn" and shape.activation_elements_per_sample:
            per_gpu = -(-batch // n)  # data parallel: each GPU its share of the batch
            largest = shape.activation_elements_per_sample * CNN_LARGEST_OF_SAVED
            value_bytes = value_bytes_of(precision)
            live = CNN_LIVE_LARGEST_ACTIVATIONS * largest * value_bytes * per_gpu
            activations += live
            formula.append(f"live activations of the batch: {CNN_LIVE_LARGEST_ACTIVATIONS} x the largest a sample x "
                           f"b = {CNN_LIVE_LARGEST_ACTIVATIONS} x {largest / 1e6:.3g}M x {value_bytes:g} "
                           f"B x {per_gpu} ({CNN_LARGEST_OF_SAVED:.4f} of the {shape.activation_elements_per_sample:,} "
                           "saved for backward a sample, ResNet-50's share)")
        return MemoryBreakdown(
            weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0,
            activations_bytes=int(activations), kv_cache_bytes=0, cuda_context_bytes=cuda_context_bytes,
            formula=tuple(formula),
        )
    value_bytes = value_bytes_of(precision)
    if shape.encoder_decoder:
        kv_bytes = stacks.kv_value_bytes(kv_cache_dtype, engine, value_bytes)
        breakdown = _encoder_decoder(shape, weights, batch, n, value_bytes, kv_bytes, cuda_context_bytes, formula)
        graphs = _cuda_graph_bytes(engine, formula) if cuda_graphs else 0
        return replace(breakdown, activations_bytes=breakdown.activations_bytes + graphs, formula=tuple(formula),
                       usable_fraction=fraction, reserving_engine=reserving, static_buffers_fraction=static)
    if forward_only(shape):
        return replace(_forward_pass(shape, weights, batch, n, value_bytes, stacks.prefill_chunk(
            engine, prefill_chunk_tokens), cuda_context_bytes, formula, fraction, flash_attention),
            reserving_engine=reserving)
    tokens = shape.sequence_length + generated_tokens
    if shape.max_context_tokens and tokens > shape.max_context_tokens:
        formula.append(
            f"prompt {shape.sequence_length} + generated {generated_tokens} tokens clamped to the model's "
            f"{shape.max_context_tokens}-token context"
        )
        tokens = shape.max_context_tokens
    kv_bytes = stacks.kv_value_bytes(kv_cache_dtype, engine, value_bytes)
    split = kv_split(shape, n, engine)
    # llama.cpp keeps a recurrent layer's state in F32 whatever its KV cache's type (llama-model.cpp's
    # llama_memory_recurrent(..., GGML_TYPE_F32, GGML_TYPE_F32, ...); review r70); vLLM at the model's dtype
    # (mamba_ssm_cache_dtype "auto"), not the KV cache's, and split over every tensor-parallel rank by its heads
    # (MambaStateShapeCalculator), where the KV cache stops at the KV heads (review r76).
    state_bytes = 4.0 if engine == "llama_cpp" else value_bytes
    state = state_bytes * shape.linear_state_values * batch
    kv = (kv_cache_bytes(shape, batch, tokens, kv_bytes, state_bytes) - state) / split + state / max(1, n)
    if split < n:
        stages = -(-n // MAX_GPUS)
        nodes = f"pipeline parallel over {stages} nodes divides it by {stages}, and in each " if stages > 1 else ""
        formula.append(f"the GPUs split the KV cache {split} way(s), not {n}: {nodes}tensor parallel "
                       + ("keeps MLA's latent cache, one vector a token for all heads, whole on every GPU"
                          if shape.latent_kv else f"gives its {shape.kv_heads} KV heads one or more to a GPU, "
                          "copied where GPUs outnumber them"))
    window, full = shape.window_layers, shape.full_attention_layers
    width = "MLA's latent / 2" if shape.kv_latent_width else "h_kv"
    kv_text = (f"KV cache 2 x {kv_bytes:.4g} B x {width} x (full layers x tokens + sliding-window layers x window) x b "
               f"= 2x{kv_bytes:.4g}x{shape.cached_kv_width}x({full}x{tokens} + {window}x"
               f"{min(tokens, shape.sliding_window_tokens)})x{batch}" if window else
               f"KV cache 2 x {kv_bytes:.4g} B x L x {width} x tokens x b = 2x{kv_bytes:.4g}x{full}"
               f"x{shape.cached_kv_width}x{tokens}x{batch}")
    if shape.linear_attention_layers or shape.parallel_ssm_layers:
        ssm = f"{shape.parallel_ssm_layers} state-space blocks beside attention" if shape.parallel_ssm_layers else ""
        linear = f"{shape.linear_attention_layers} linear layers" if shape.linear_attention_layers else ""
        held = " and ".join(part for part in (linear, ssm) if part)
        kv_text += ((" (full-attention layers only)" if linear else "") + f" + the fixed state of {held}, "
                    f"{shape.linear_state_values_per_hidden} x h values a layer"
                    + (", 4 B each (llama.cpp's F32)" if engine == "llama_cpp" else f", {state_bytes:g} B each")
                    + (f", split over all {n} GPUs" if n > 1 else "") + ", x b")
    formula.append(kv_text + (f" ({kv_cache_dtype} KV cache: task.kv_cache_dtype)" if kv_bytes < value_bytes else ""))
    prompt = min(shape.sequence_length, tokens)
    chunk = stacks.prefill_chunk(engine, prefill_chunk_tokens, large_card)
    prefill = min(prompt * batch, chunk) if chunk else prompt * batch
    one_layer = replace(shape, layers=1, sequence_length=prefill)
    activations = transformer_activation_bytes(one_layer, 1, "none", True, 1, value_bytes,
                                               inference_per_token(shape)) / n
    whose = "task.prefill_chunk_tokens" if prefill_chunk_tokens else (
        f"the engine's default on a card of {stacks.LARGE_CARD_GIB} GiB or more other than an A100" if large_card
        and engine in stacks.LARGE_CARD_CHUNK_TOKENS else "the engine's default")
    chunked = f"{prefill:,} tokens: the prefill chunk of {chunk:,}, {whose}" if chunk and prefill < prompt * batch \
        else f"s {prompt} x b {batch}"
    formula.append(f"activations: prefill, {inference_working_set_text(shape, value_bytes)} "
                   f"({chunked})")
    if not flash_attention and engine == "hf_generate":  # the engines' own kernels never hold the scores (audit XC6)
        activations += _eager_scores(shape, value_bytes, batch, formula)
    activations = max(activations, _vision_working_set(shape, value_bytes, n, formula))
    graphs = _cuda_graph_bytes(engine, formula) if cuda_graphs else 0
    # generate() keeps fp32 logits for the last position only (logits_to_keep=1, from 4.45): b x V x 4 B. llama.cpp
    # reserves its compute buffer for the worst-case prompt graph, an output a token of its micro-batch
    # (llama-context.cpp's graph_reserve(n_tokens, n_seqs, n_tokens)), in buffers its allocator reuses from the
    # layers': Llama 3 8B at -ub 512 logs "CUDA0 compute buffer size = 258.50 MiB", 512 x 128,256 x 4 B = 250.5
    # (audit AP45: 0.06 GiB counted).
    graph_buffer = engine == "llama_cpp"  # reserved for min(n_ctx, n_ubatch) tokens, n_ctx every sequence's context
    outputs = min(tokens * batch, chunk or tokens * batch) if graph_buffer else batch
    logits = outputs * shape.logits_vocabulary_size * 4.0
    if full_prompt_logits and not graph_buffer:  # stacks.GENERATE_LAST_LOGITS_SINCE
        value = value_bytes + 4.0 if value_bytes < 4 else 4.0  # an fp32 model's .float() copies nothing
        logits = batch * prompt * shape.logits_vocabulary_size * value
        formula.append(f"logits: b x s x V x {value:g} B, every prompt position in the model's dtype and cast to fp32 "
                       f"(generate() before transformers 4.45) = {batch} x {prompt:,} x "
                       f"{shape.logits_vocabulary_size} x {value:g}")
    elif logits:
        formula.append(f"llama.cpp's compute buffer: the larger of that and the logits it reserves, an fp32 row of V "
                       f"for each of min(context, -ub) = {outputs:,} tokens: {outputs} x "
                       f"{shape.logits_vocabulary_size} x 4"
                       if graph_buffer else
                       f"logits: b x V x 4 B (fp32, last position) = {batch} x {shape.logits_vocabulary_size} x 4")
    working = max(activations, logits) if graph_buffer else activations + logits
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0,
        activations_bytes=int(working + graphs), kv_cache_bytes=int(kv),
        cuda_context_bytes=cuda_context_bytes, formula=tuple(formula), usable_fraction=fraction,
        host_offload_bytes=int(experts), reserving_engine=reserving, static_buffers_fraction=static,
    )


def _vision_working_set(shape: ModelShape, value_bytes: float, gpus: int, formula: list[str]) -> float:
    """A VLM's vision encoder over one request's patches, one layer at a time, before the language model's prefill
    (audit BS55: Cosmos-Reason1-7B's 30,720 video patches, ~0.7 GiB, left out of a tight 24 GB fit)."""
    encoder = vision_encoder(shape)
    if encoder is None:
        return 0.0
    layer = replace(encoder.shape, layers=1)
    working = transformer_activation_bytes(layer, 1, "none", True, 1, value_bytes, inference_per_token(layer)) / gpus
    counted = inference_working_set_text(layer, value_bytes)
    formula.append(f"vision encoder: its {encoder.tokens:,} patches a request, {counted} at h "
                   f"{encoder.hidden_size:,} = {working / GIB:.2f} GiB, before the prefill: the larger of the two "
                   "is held")
    return working


def _cuda_graph_bytes(engine: str, formula: list[str]) -> int:
    """What the engine's captured decode graphs take (stacks.CUDA_GRAPH_BYTES), said in the formula where any."""
    graphs = stacks.CUDA_GRAPH_BYTES.get(engine, 0)
    if graphs:
        formula.append(f"CUDA graphs captured for decoding: {graphs / GIB:g} GiB (the engine's start-up log)")
    return graphs


EAGER_SCORE_COPIES = 3  # an eager encoder layer's a x s^2 values at once: scores, softmax, a bias add or cast


def forward_only(shape: ModelShape) -> bool:
    """One forward pass per input and nothing generated: an encoder (BERT, ViT, bge-m3); an encoder-decoder or a
    diffusion model has its own terms."""
    return shape.kind == "transformer" and shape.encoder_only and not shape.encoder_decoder \
        and not shape.denoising_steps


def takes_inputs(shape: ModelShape) -> bool:
    """A model timed in inputs a second, not a decode: a CNN, a model given by its count, or a forward-only encoder."""
    return shape.kind in ("cnn", "generic") or forward_only(shape)


def _forward_pass(shape: ModelShape, weights: float, batch: int, n: int, value_bytes: float, chunk: int,
                  cuda_context_bytes: int, formula: list[str], fraction: float,
                  flash_attention: bool = True) -> MemoryBreakdown:
    """No KV cache: nothing is generated, so no step reads one back. One layer's working set over the tokens the
    engine batches: whole inputs, as an encoder's attention over both ways cannot be cut into chunks; eager
    attention (task.flash_attention = false) holds its layer's a x s^2 scores for every input at once too."""
    prompt = shape.sequence_length
    tokens = max(prompt, min(prompt * batch, chunk)) if chunk else prompt * batch
    one_layer = replace(shape, layers=1, sequence_length=tokens)
    activations = transformer_activation_bytes(one_layer, 1, "none", True, 1, value_bytes,
                                               inference_per_token(shape)) / n
    formula.append("no KV cache: an encoder's forward pass keeps none (nothing is generated)")
    formula.append(f"activations: {inference_working_set_text(shape, value_bytes)} "
                   f"({tokens:,} tokens of s {prompt:,} x b {batch}" + (f", the engine's batch of {chunk:,}"
                                                                         if chunk and tokens < prompt * batch else "")
                   + ")")
    if not flash_attention:
        activations += _eager_scores(shape, value_bytes, -(-(tokens // max(1, prompt)) // n), formula)
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0,
        activations_bytes=int(activations), kv_cache_bytes=0, cuda_context_bytes=cuda_context_bytes,
        formula=tuple(formula), usable_fraction=fraction,
    )


def _eager_scores(shape: ModelShape, value_bytes: float, inputs: int, formula: list[str]) -> float:
    """Eager attention's widest layer over `inputs` prompts at once: its scores, their softmax and a temporary (a
    position bias added, or a cast). SAM's ViT-H at 1,024 px, 4 global layers of 4,096 tokens, peaks at 14.1 GiB for
    a batch of 8 in bf16 eager (segment-anything-fast's A100 results_bs8_vit_h.csv; 2.5 GiB without them, audit
    YL2); a decoder's prefill masks the s x s scores, it does not skip them."""
    if not shape.attention_heads:
        return 0.0
    prompt = shape.sequence_length
    span = prompt if shape.full_attention_layers else min(prompt, shape.sliding_window_tokens)
    scores = EAGER_SCORE_COPIES * value_bytes * shape.attention_heads * span ** 2 * inputs
    formula.append(f"eager attention (task.flash_attention = false): {EAGER_SCORE_COPIES} x {value_bytes:g} B x "
                   f"a x s^2 x b = {EAGER_SCORE_COPIES}x{value_bytes:g}x{shape.attention_heads}x{span:,}^2x{inputs}"
                   " (the scores, their softmax and a temporary of the widest layer)")
    return scores


def _encoder_decoder(shape: ModelShape, weights: float, batch: int, n: int, value_bytes: float, kv_bytes: float,
                     cuda_context_bytes: int, formula: list[str]) -> MemoryBreakdown:
    """An encoder-decoder (Whisper) generating: each decoder layer caches K and V of its own tokens (up to
    decoder_sequence_length) and of the encoder's output (cross-attention); the encoder runs once over its input."""
    decoder, encoder = shape.decoder_sequence_length, shape.sequence_length
    kv = 2 * kv_bytes * shape.kv_width * shape.decoder_layers * (decoder + encoder) * batch / n
    formula.append(f"KV cache 2 x {kv_bytes:g} B x decoder layers x h_kv x (its {decoder:,} tokens + the encoder's "
                   f"{encoder:,} for cross-attention) x b = 2x{kv_bytes:g}x{shape.decoder_layers}x{shape.kv_width}"
                   f"x({decoder}+{encoder})x{batch}")
    one_layer = replace(shape, layers=1, sequence_length=encoder * batch, decoder_layers=0)
    activations = transformer_activation_bytes(one_layer, 1, "none", True, 1, value_bytes,
                                               inference_per_token(shape)) / n
    formula.append(f"activations: the encoder's {inference_working_set_text(shape, value_bytes)} "
                   f"(s {encoder:,} x b {batch})")
    logits = batch * shape.logits_vocabulary_size * 4.0
    formula.append(f"logits: b x V x 4 B (fp32, last position) = {batch} x {shape.logits_vocabulary_size} x 4")
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0,
        activations_bytes=int(activations + logits), kv_cache_bytes=int(kv), cuda_context_bytes=cuda_context_bytes,
        formula=tuple(formula),
    )

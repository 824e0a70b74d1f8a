"""The memory estimator's types, units and per-term formulas: bytes per parameter, activations, KV cache.

Sources: configs/memory.py's docstring (the estimate the terms add up to).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, get_args

from pth_top.configs.quantization import QUANTIZED_BITS_PER_PARAMETER
from pth_top.units import MIB

# The CUDA context per GPU (driver, lazily loaded kernels, cuBLAS workspace): vLLM's profiler reports its
# "non_torch_memory" as 0.15-0.33 GiB (vllm-project/vllm#14452, #15340); 512 MiB leaves room for NCCL. The
# allocator's slack is not here: it is the usable fraction's (rules.toml [gpu]).
CUDA_CONTEXT_BYTES = 512 * MIB
INFERENCE_OVERHEAD_FRACTION = 0.2
# DeepSpeed estimate_zero2_model_states_mem_needs(additional_buffer_factor=1.5) for offloaded states in host RAM.
OFFLOAD_BUFFER_FACTOR = 1.5

# The choices as Literal types (what the answers' structs accept) and as tuples of their values.
TrainingPrecision = Literal["fp32", "amp_fp16", "bf16"]
InferencePrecision = Literal["fp32", "amp_fp16", "fp16", "bf16", "int8", "int4"]
Optimizer = Literal["adamw", "adam", "sgd", "adam8bit", "adafactor", "rmsprop"]
RecomputeMode = Literal["none", "selective", "full"]
ShardingMode = Literal["none", "zero1", "zero2", "zero3", "fsdp", "zero_offload", "fsdp_offload", "layers"]
# The modes whose optimizer states live in CPU RAM and step there (DeepSpeed's CPU Adam, FSDP's CPUOffload).
OFFLOAD_SHARDINGS = ("zero_offload", "fsdp_offload")
# How the reasoning names each sharding mode.
SHARDING_LABELS = {
    "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "fsdp": "FSDP", "zero_offload": "ZeRO-Offload",
    "fsdp_offload": "ZeRO-3 or FSDP with CPU offload", "layers": "a layer split (one process, the device map)",
}
# How mixed precision lays out bytes per parameter (weights, gradients, optimizer incl. master copy).
MixedLayout = Literal["megatron16", "hf18", "deepspeed20", "bf16_pure"]
TRAINING_PRECISIONS: tuple[str, ...] = get_args(TrainingPrecision)
INFERENCE_PRECISIONS: tuple[str, ...] = get_args(InferencePrecision)
OPTIMIZERS: tuple[str, ...] = get_args(Optimizer)
RECOMPUTE_MODES: tuple[str, ...] = get_args(RecomputeMode)
SHARDING_MODES: tuple[str, ...] = get_args(ShardingMode)
MIXED_LAYOUTS: tuple[str, ...] = get_args(MixedLayout)

# amp_fp16 is an fp32 model under fp16 autocast: its weights and files are fp32 (in training, its fp32 master copy is
# counted with the optimizer: training_bytes_per_parameter), its activations and matmuls fp16.
WEIGHT_BYTES_BY_PRECISION = {
    "fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "amp_fp16": 4.0,
    **{name: bits / 8 for name, bits in QUANTIZED_BITS_PER_PARAMETER.items()},
}


# A linear layer's state a sequence, in values per unit of h: Qwen3-Next's Gated DeltaNet keeps 32 value heads x 128 x
# 128 = 524,288 values at h = 2,048 (config.json linear_num_value_heads, linear_key_head_dim, linear_value_head_dim);
# a Mamba layer 2h channels (expand 2) x state_size, 256 x h for Mamba-2's 128, 32 x h for Falcon Mamba's 16.
LINEAR_STATE_VALUES_PER_HIDDEN = 256
MAMBA_EXPAND = 2


@dataclass(frozen=True, slots=True)
class ModelShape:
    """What the estimator needs to know about a model. Transformer numbers may be 0 for CNNs."""

    kind: str  # "transformer", "cnn" or "generic" (parameter count only)
    parameters: int
    layers: int = 0
    hidden_size: int = 0
    attention_heads: int = 0
    kv_heads: int = 0  # 0 means the same as attention_heads (no grouped-query attention)
    sequence_length: int = 0
    # CNNs: elements autograd saves for backward for one sample (torch.autograd.graph.saved_tensors_hooks).
    activation_elements_per_sample: int = 0
    activation_margin: float = 0.0  # room beside the estimator's margin for a count scaled from FLOPs (custom_cnn)
    forward_kernels: int = 0  # CNNs: kernels eager PyTorch launches a forward pass (configs.speed_forward)
    intermediate_size: int = 0  # MLP width; 0 means 4h (GPT-2, BERT, ViT)
    gated_mlp: bool = False  # SwiGLU (Llama, Mistral): gate, up and down matrices
    vocabulary_size: int = 0
    # Logits over V at every position (a causal LM's head); False: an encoder fine-tuned with a small task head.
    lm_head: bool = True
    tied_embeddings: bool = False  # the LM head is the embedding matrix: one V x h tensor (tie_word_embeddings)
    lookup_parameters: int = 0  # per-layer embedding tables a decode step reads a row of (Gemma 3n's, Gemma 4's)
    max_context_tokens: int = 0  # the model's context window; 0 when not known (no clamp)
    feature_width: int = 0  # CNNs: width of the features a classifier head reads
    largest_activation_elements: int = 0  # CNNs: the largest single layer output for one sample
    # Mixture of experts: the parameters one token passes through (0: dense, all of them). Memory holds every
    # expert; speed reads and multiplies only these per token.
    active_parameters: int = 0
    # The width attention's score and value products run at: heads x (q.k dim + v dim) / 2; 0 means hidden_size
    # (multi-head attention). DeepSeek's MLA runs 128 heads x (192 + 128) / 2 = 20,480 on a 7,168 hidden size.
    attention_width: int = 0
    # A MoE's routed experts a token reads, as a share of them (k / n: DeepSeek-V3 8 of 256); 0 when not known.
    routed_expert_share: float = 0.0
    experts_count: int = 0  # a MoE's routed experts a layer (config.json num_experts); 0 when not known
    shared_expert_width: int = 0  # a MoE's shared experts' MLP width, in intermediate_size (DeepSeek-V3: 2,048)
    # Per-head width when it is not hidden / heads (Gemma 3 27B: 128, not 5,376 / 32 = 168); 0: hidden / heads.
    head_dim: int = 0
    # Multi-head latent attention (DeepSeek-V3's MLA): values cached a token a layer for all heads, kv_lora_rank +
    # qk_rope_head_dim (512 + 64); 0: K and V per KV head.
    kv_latent_width: int = 0
    # Sliding-window attention: this many layers attend to (and cache) only the last sliding_window_tokens; the
    # engines (llama.cpp since PR 13194, vLLM, SGLang, transformers' HybridCache) size their KV cache so.
    sliding_window_tokens: int = 0
    sliding_window_layers: int = 0
    # Hybrid models: layers of linear attention or a state-space block (Gated DeltaNet, Mamba) hold a fixed state a
    # sequence, no KV cache (Qwen3-Next: 36 of 48, config.json full_attention_interval 4).
    linear_attention_layers: int = 0
    parallel_ssm_layers: int = 0  # layers with a state-space block beside their attention (Falcon-H1's every one)
    linear_state_values_per_hidden: int = LINEAR_STATE_VALUES_PER_HIDDEN  # MAMBA_EXPAND x state_size for a Mamba
    # A diffusion model (configs.diffusion): sampling steps per image, each over all the tokens; 0: not one.
    denoising_steps: int = 0
    guidance_passes: int = 1  # 2 with classifier-free guidance (SD3.5); FLUX.1-dev is guidance-distilled: 1
    single_stream_dit: bool = False  # every token through every weight (configs.diffusion), not an MMDiT
    output_pixels: int = 0  # its output's width x height, which sizes the VAE decode; 0: not given
    decoded_frames_at_once: int = 1  # a video's decode micro-batch
    # An encoder-decoder (Whisper, T5): the last decoder_layers of `layers` run over decoder_sequence_length tokens,
    # cross-attending to the encoder's sequence_length; the LM head's logits are over the decoder's tokens only.
    decoder_layers: int = 0
    decoder_sequence_length: int = 0
    # An encoder (BERT, ViT, bge-m3): bidirectional attention, nothing generated; inference is one forward pass.
    encoder_only: bool = False
    # A vision-language model's vision encoder (configs.vision_encoder): its layers, width, patches a sample, and
    # whether it trains; 0: none.
    vision_layers: int = 0
    vision_hidden_size: int = 0
    vision_tokens: int = 0
    vision_trained: bool = False
    vision_checkpointed: bool = True  # its layers recomputed with the language model's (task.recompute)
    # A quantized model's published files (workload.weights_file_gb) and the parameters they hold: 0: from the format.
    weights_file_bytes: float = 0.0
    weights_file_parameters: int = 0

    @property
    def encoder_decoder(self) -> bool:
        return 0 < self.decoder_layers < self.layers and self.decoder_sequence_length > 0

    @property
    def encoder_part(self) -> ModelShape:
        """An encoder-decoder's encoder alone: its share of the layers over the input, and of the parameters."""
        encoder_layers = self.layers - self.decoder_layers
        return replace(self, layers=encoder_layers, decoder_layers=0, decoder_sequence_length=0, active_parameters=0,
                       parameters=int(self.parameters * encoder_layers / self.layers))

    @property
    def loss_tokens(self) -> int:
        """The tokens per sample the LM head's logits (and the loss) are over: the decoder's in an encoder-decoder."""
        return self.decoder_sequence_length if self.encoder_decoder else self.sequence_length

    @property
    def active(self) -> int:
        """Parameters used per token: the active ones of an MoE, all of a dense model."""
        return min(self.active_parameters, self.parameters) if self.active_parameters else self.parameters

    @property
    def attention_flops_width(self) -> int:
        """The width for attention FLOPs (4 x width per query-key pair a layer): MLA's, heads x head_dim, or h."""
        return self.attention_width or (self.attention_heads * self.head_dim if self.head_dim else self.hidden_size)

    @property
    def latent_kv(self) -> bool:
        """MLA: one latent vector a token for all heads (a preset's attention_width stands for it, or the answers'
        kv_latent_width), which tensor parallel keeps whole on every GPU."""
        return bool(self.attention_width or self.kv_latent_width)

    @property
    def split_kv_heads(self) -> int:
        """The KV heads tensor parallel must split or copy evenly (stacks.splits_heads); none for MLA's latent."""
        return 0 if self.latent_kv else self.kv_heads

    @property
    def cached_kv_width(self) -> int:
        """Half the values cached a token a layer (K and V each this wide): MLA's latent over 2, else kv_width."""
        return -(-self.kv_latent_width // 2) if self.kv_latent_width else self.kv_width

    @property
    def kv_width(self) -> int:
        heads = self.kv_heads or self.attention_heads
        if not self.attention_heads:
            return self.hidden_size
        if self.head_dim:
            return heads * self.head_dim
        return self.hidden_size * heads // self.attention_heads

    @property
    def window_layers(self) -> int:
        """Layers that attend to a sliding window only (0 without one)."""
        return min(self.sliding_window_layers, self.layers) if self.sliding_window_tokens else 0

    @property
    def full_attention_layers(self) -> int:
        """Layers that attend to (and cache) the whole context: not window layers, not linear ones."""
        return max(0, self.layers - self.window_layers - self.linear_attention_layers)

    def eager_score_keys(self) -> int:
        """Keys a query's eager (materialized) scores span, summed over the layers: the sequence in a full layer, the
        window in a window layer over patches or frames (Swin's, ViTDet's and SAM's partitioned windows; a language
        model's eager attention masks the whole s x s), none in a linear one (audit BE50: ViTDet-B +71 %)."""
        s = self.sequence_length
        window = min(s, self.sliding_window_tokens) if self.window_layers and not self.vocabulary_size else s
        return self.full_attention_layers * s + self.window_layers * window

    def widest_eager_keys(self) -> int:
        """The keys a query's eager scores span in the widest layer (eager_score_keys' largest term)."""
        return self.sequence_length if self.full_attention_layers or not self.window_layers \
            else self.eager_score_keys() // self.window_layers

    def cached_layer_tokens(self, context_tokens: int) -> int:
        """Tokens the KV cache holds summed over layers: full layers keep the context, window layers the window,
        linear layers none."""
        window = min(context_tokens, self.sliding_window_tokens) if self.window_layers else 0
        return self.full_attention_layers * context_tokens + self.window_layers * window

    def attended_pairs(self, prompt_tokens: int) -> float:
        """Query-key pairs of one causal prompt summed over layers: s^2/2 a full layer, s x w - w^2/2 a window one,
        none a linear one (its state update is counted with its parameters)."""
        full = prompt_tokens * prompt_tokens / 2
        window = min(prompt_tokens, self.sliding_window_tokens)
        windowed = prompt_tokens * window - window * window / 2 if self.window_layers else 0.0
        return self.full_attention_layers * full + self.window_layers * windowed

    @property
    def decoded_pixels(self) -> int:
        """What its VAE decodes at once for one output: the output's pixels x its decode micro-batch."""
        return self.output_pixels * self.decoded_frames_at_once

    def bidirectional_pairs(self, tokens: int) -> float:
        """Query-key pairs of one bidirectional pass summed over layers: s^2 a full layer, s x w a window one (a
        frame's own tokens), none a linear one."""
        window = min(tokens, self.sliding_window_tokens) if self.window_layers else 0
        return float(self.full_attention_layers * tokens * tokens + self.window_layers * tokens * window)

    @property
    def linear_state_values(self) -> int:
        """A sequence's fixed state over the linear layers and the parallel hybrid's: h x linear_state_values_per_hidden
        each."""
        return (self.linear_attention_layers + self.parallel_ssm_layers) * self.hidden_size \
            * self.linear_state_values_per_hidden

    @property
    def routed_expert_parameters(self) -> int:
        """All routed experts' parameters, from total N, active A and the share k/n a token reads: A = N - E + E x
        k/n, so E = (N - A) / (1 - k/n) (gpt-oss-120b: 115.3B of 116.8B); 0 for a dense model or an unknown share."""
        if not self.routed_expert_share or self.active >= self.parameters:
            return 0
        return round((self.parameters - self.active) / (1.0 - self.routed_expert_share))

    @property
    def mlp_width(self) -> int:
        return self.intermediate_size or 4 * self.hidden_size

    @property
    def expert_width(self) -> float:
        """One routed expert's MLP width: a mixture's mlp_width is the width a token reads, k experts' (k = share x
        n) and the shared experts'; the MLP's own width for a dense model or an unknown share."""
        per_token = round(self.routed_expert_share * self.experts_count)
        routed = self.mlp_width - self.shared_expert_width
        return routed / per_token if per_token > 1 else float(routed)

    @property
    def logits_vocabulary_size(self) -> int:
        """V of the logits the model computes: 0 without an LM head."""
        return self.vocabulary_size if self.lm_head else 0

    @property
    def vocabulary_parameters(self) -> int:
        """The embedding, and the LM head when there is one of its own: V x h each (left 16-bit by quantizers)."""
        return (2 if self.lm_head and not self.tied_embeddings else 1) * self.vocabulary_size * self.hidden_size


@dataclass(frozen=True, slots=True)
class BytesPerParameter:
    weights: float
    gradients: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Per-GPU memory in bytes; `formula` names what each term came from."""

    weights_bytes: int
    gradients_bytes: int
    optimizer_states_bytes: int
    activations_bytes: int
    kv_cache_bytes: int
    cuda_context_bytes: int
    formula: tuple[str, ...] = ()
    # Host RAM the job keeps per machine: ZeRO-Offload's optimizer states and fp32 master weights in training; in
    # inference the weights staged there, llama.cpp's experts (--cpu-moe) or a pipeline's models (model offload).
    host_offload_bytes: int = 0
    offloaded_layers: int = 0  # llama.cpp -ngl: the layers kept in RAM, run by the CPU (configs.layer_offload)
    # The share of a card the stack plans to fill (vLLM's gpu_memory_utilization); 0: the rules' usable fraction.
    usable_fraction: float = 0.0
    # The share of a dedicated card an engine that allocates its buffers once may fill (stacks.STATIC_BUFFERS_FRACTION;
    # its estimator margin stays on the whole need); 0: none.
    static_buffers_fraction: float = 0.0
    # An engine that keeps back a reserve by the card's size for activations and graphs (SGLang; stacks.py).
    reserving_engine: str = ""
    # Room kept beside the estimator's margin for activations scaled, not counted (custom_cnn.SCALED_ACTIVATION_MARGIN).
    extra_margin_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return (
            self.weights_bytes + self.gradients_bytes + self.optimizer_states_bytes
            + self.activations_bytes + self.kv_cache_bytes + self.cuda_context_bytes
        )

    def terms(self) -> tuple[tuple[str, int], ...]:
        return (
            ("weights", self.weights_bytes),
            ("gradients", self.gradients_bytes),
            ("optimizer states", self.optimizer_states_bytes),
            ("activations", self.activations_bytes),
            ("KV cache", self.kv_cache_bytes),
            ("CUDA context", self.cuda_context_bytes),
        )


# The optimizer's own state per trained parameter, in fp32 (Adam's two moments; SGD's momentum; bitsandbytes' 8-bit;
# Adafactor's factored second moment, a row and a column a matrix, 4(m + n) B, under 0.2 % of SDXL's 1,280-wide
# matrices' 4mn, and no first moment at beta1=None, transformers' default and kohya's 24 GB SDXL fine-tune's). Not
# counted: a conv kernel's, factored over its last two axes, ~2/3 of its size in fp32 (SDXL's ~0.3B: ~0.8 GB).
# torch.optim.RMSprop keeps its square average, and no momentum buffer at its default momentum=0 (argilla's Notux and
# Notus DPO runs, audit AR45).
OPTIMIZER_STATE_BYTES = {"adamw": 8.0, "adam": 8.0, "sgd": 4.0, "adam8bit": 2.0, "adafactor": 0.0, "rmsprop": 4.0}


def training_bytes_per_parameter(precision: str, optimizer: str, mixed_layout: str = "megatron16") -> BytesPerParameter:
    """Bytes per parameter for weights, gradients and optimizer states (fp32 master copy counted there)."""
    optimizer_state_fp32 = OPTIMIZER_STATE_BYTES[optimizer]
    if precision == "fp32":
        return BytesPerParameter(4.0, 4.0, optimizer_state_fp32)
    if precision not in ("amp_fp16", "bf16"):
        raise ValueError(f"unknown training precision {precision!r}")
    if mixed_layout == "megatron16":
        # 16-bit weights and grads; fp32 master weights + states live with the optimizer.
        return BytesPerParameter(2.0, 2.0, 4.0 + optimizer_state_fp32)
    if mixed_layout == "hf18":
        # HF "model memory anatomy": fp32 + 16-bit weight copies, fp32 grads, fp32 states.
        return BytesPerParameter(6.0, 4.0, optimizer_state_fp32)
    if mixed_layout == "deepspeed20":
        # DeepSpeed's estimator: 16-bit weights, 16-bit + fp32 grads, fp32 master + states.
        return BytesPerParameter(2.0, 6.0, 4.0 + optimizer_state_fp32)
    if mixed_layout == "bf16_pure":
        # torchtune: "bfloat16 ... uses 2 bytes per model and optimizer parameter"; no fp32 master copy
        # (docs/source/tutorials/memory_optimizations.rst: "we don't support mixed-precision training").
        states = optimizer_state_fp32 if optimizer == "adam8bit" else optimizer_state_fp32 / 2
        return BytesPerParameter(2.0, 2.0, states)
    raise ValueError(f"unknown mixed-precision layout {mixed_layout!r}")


# PyTorch autocast (AMP over an fp32 model) runs layer_norm and softmax in fp32 and saves their fp32 tensors: each of a
# layer's two LayerNorm inputs 4 B, not 2 (+4 of Korthikanti's 34), and the scores' softmax 4 B beside the fp16 copy
# its AV matmul saves (+1 of the 5 a*s/h) (audit LL: timm's ViT-H/14 and ViT-L/16@384 on an RTX 3090 ran out).
AUTOCAST_NORM_BYTES = 4.0
AUTOCAST_SOFTMAX_BYTES = 1.0
# Eager attention in bf16 (Transformers' eager_attention_forward: softmax(..., dtype=float32).to(bf16)) saves the
# fp32 softmax output, 4 B where Korthikanti's 5 a*s^2*b counts 2.
EAGER_SOFTMAX_FP32_BYTES = 2.0


def transformer_activation_bytes(
    shape: ModelShape, micro_batch: int, recompute: str, flash_attention: bool,
    tensor_parallel: int = 1, bytes_per_value: float = 2.0, per_token: float = 34.0, dropout_masks: float = 0.0,
    autocast: bool = False,
) -> int:
    """Korthikanti et al.: s*b*h*L*(10 + 24/t + 5*a*s/(h*t)) at 16-bit; the a*s term vanishes with flash.

    `per_token` is the 34 (10 + 24/t at t=1) for full training; a frozen MLP keeps less (memory_methods).
    `dropout_masks`: how many of its s*b*h terms are dropout masks (training: 2, 1 with a gated MLP), and then the
    scores' a*s^2*b too; a mask is one byte a value at any precision.
    """
    if shape.encoder_decoder:  # each side over its own tokens; a decoder layer also keeps the encoder's K and V
        encoder = shape.encoder_part
        decoder = replace(shape, layers=shape.decoder_layers, sequence_length=shape.decoder_sequence_length,
                          decoder_layers=0)
        cross = 0 if recompute == "full" else 2 * shape.sequence_length * shape.kv_width * micro_batch \
            * shape.decoder_layers * bytes_per_value / tensor_parallel
        return (transformer_activation_bytes(encoder, micro_batch, recompute, flash_attention, tensor_parallel,
                                             bytes_per_value, per_token, dropout_masks, autocast)
                + transformer_activation_bytes(decoder, micro_batch, recompute, flash_attention, tensor_parallel,
                                               bytes_per_value, per_token, dropout_masks, autocast) + int(cross))
    s, b, h, n_layers, a, t = (
        shape.sequence_length, micro_batch, shape.hidden_size, shape.layers, shape.attention_heads, tensor_parallel,
    )
    base = s * b * h * n_layers
    scale = bytes_per_value / 2.0
    if recompute == "full":
        return int(2 * base * scale)
    count = per_token - 24 + 24 / t + (AUTOCAST_NORM_BYTES if autocast else 0.0)
    # Korthikanti's s*b*h after attention and after the MLP, and a*s^2*b on the scores: bool masks (torch's
    # native_dropout), so an fp32 step keeps 66 s*b*h + 9 a*s^2*b bytes a layer, not 2 x (34 + 5).
    masks = dropout_masks
    if recompute == "none" and not flash_attention and a:  # the scores of the layers that attend: none in a linear one
        keys = shape.eager_score_keys() / n_layers  # a query's keys, the layers' mean (a partitioned window's fewer)
        count += (5 + (AUTOCAST_SOFTMAX_BYTES if autocast else 0.0)) * a * keys / (h * t)
        masks += a * keys / (h * t) if dropout_masks else 0.0
    return int(base * ((count - masks) * scale + masks))


def inference_per_token(shape: ModelShape) -> float:
    """Bytes a token a unit of h one layer holds at once without autograd, at 16 bit: its input and normed input
    (2 + 2) and the MLP's peak, a GELU MLP's fc1 and GELU outputs (2 x 2m) or a SwiGLU's gate-and-up and product
    (3 x 2m), m the width a token passes (its experts' for a MoE). Korthikanti's 34 is what training saves."""
    return 4.0 + (6.0 if shape.gated_mlp else 4.0) * shape.mlp_width / max(1, shape.hidden_size)


def inference_working_set_text(shape: ModelShape, bytes_per_value: float) -> str:
    """How inference_per_token counts, for a formula line."""
    mlp = "gate-and-up and product 6" if shape.gated_mlp else "fc1 and GELU outputs 4"
    return (f"one layer's working set without autograd, (input and normed input 4 + MLP {mlp} x m/h "
            f"{shape.mlp_width:,}/{shape.hidden_size:,}) = {inference_per_token(shape):.3g} B x tokens x h x "
            f"{bytes_per_value / 2:g}")


def cnn_activation_bytes(shape: ModelShape, micro_batch: int, bytes_per_value: float, recompute: str) -> int:
    """What autograd saves for backward (each layer's input or output once) x bytes.

    With checkpointing about a third is assumed to stay resident (segment boundaries plus the segment
    being recomputed); that fraction is an estimate, not a published figure.
    """
    stored = shape.activation_elements_per_sample * micro_batch * bytes_per_value
    if recompute in ("selective", "full"):
        stored /= 3.0
    return int(stored)


def value_bytes_of(precision: str) -> float:
    """An activation's bytes: fp32's 4, else 2 (fp16/bf16, and int8/int4 weights' 16-bit compute)."""
    return 4.0 if precision == "fp32" else 2.0


def kv_cache_bytes(shape: ModelShape, batch: int, context_tokens: int, bytes_per_value: float,
                   state_bytes_per_value: float = 0.0) -> int:
    """2 (K and V) x bytes x kv width x tokens per layer summed (window layers hold the window) x batch, plus the
    linear layers' fixed state a sequence (at the KV cache's bytes, or the engine's own: `state_bytes_per_value`)."""
    kv = 2 * bytes_per_value * shape.cached_kv_width * shape.cached_layer_tokens(context_tokens)
    return int((kv + (state_bytes_per_value or bytes_per_value) * shape.linear_state_values) * batch)


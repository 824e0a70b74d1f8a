"""Training methods beyond full fine-tuning: LoRA, QLoRA and a frozen backbone (bytes per GPU, term by term).

Sources (cited again in tests/configs/published_figures.py):
- LoRA: Hu et al. 2021, arXiv:2106.09685: an adapted d_in x d_out matrix gains r x (d_in + d_out) parameters.
- QLoRA: Dettmers et al. 2023, arXiv:2305.14314: 4-bit NF4 base weights, double quantization brings the
  quantization constants to 0.127 bit per parameter, bf16 adapters, paged optimizer states.
- LoRA on an int8 base: LLM.int8() (Dettmers et al. 2022, arXiv:2208.07339) stores the attention and MLP
  projections in Int8, half their 16-bit memory, with one absmax scale per row (vector-wise quantization).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from pth_top.units import GIB

if TYPE_CHECKING:
    from pth_top.configs.answers import Answers

TrainingMethod = Literal["full", "lora", "lora_int8", "qlora", "frozen", "projector"]
# Methods that train a small part beside a frozen model: a head on its output (frozen) or a projector at its input,
# whose gradient runs back through every frozen layer (MiniGPT-4's projection, LLaVA's stage-1 projector).
HEAD_METHODS = ("frozen", "projector")
# A frozen transformer's values a token a layer that its backward needs without weight gradients: Korthikanti's 34 less
# every linear layer's input (QKV 2, out 2, fc1 2, fc2 8): its norms, Q, K, V, the GELU's input and the dropout masks.
PROJECTOR_ACTIVATION_PER_TOKEN = 20.0
# Frozen models a job keeps on each GPU beside the one it trains or serves (a diffusion model's text encoders).
FrozenPrecision = Literal["bf16", "fp16", "fp32", "int8", "int4"]
LoraTargets = Literal["attention", "all_linear"]
TRAINING_METHODS: tuple[str, ...] = get_args(TrainingMethod)
# Methods that train LoRA adapters on a frozen transformer (they take a rank and targets).
ADAPTER_METHODS = ("lora", "lora_int8", "qlora")
# Methods whose backward runs through a frozen transformer's layers for their activations' gradients alone.
FROZEN_BACKWARD_METHODS = (*ADAPTER_METHODS, "projector")
LORA_TARGETS: tuple[str, ...] = get_args(LoraTargets)

NF4_BITS_PER_PARAMETER = 4.0
# QLoRA §3 "Double Quantization": constants cost 0.127 bit per parameter after quantizing them to 8 bits.
DOUBLE_QUANT_BITS_PER_PARAMETER = 0.127
# LLM.int8() base: 1 B per projection weight; each row's absmax scale is fp32 (bitsandbytes int8_mm_dequant
# checks "row_stats must be float32", bitsandbytes/backends/default/ops.py).
INT8_WEIGHT_BYTES = 1.0
INT8_ROW_SCALE_BYTES = 4.0
# QLoRA keeps its adapters in bf16, weights and gradients 2 bytes each, with no fp32 master copy (qlora.py casts the
# LoRA layers to bfloat16); the optimizer's states are as answered (qlora.py: paged 32-bit AdamW, 8 B; Hugging Face's
# QLoRA notebooks and Unsloth's: 8-bit AdamW, 2 B). PEFT's fp32 adapters (autocast_adapter_dtype) add 4 B more.
QLORA_ADAPTER_BYTES = 2.0
# The frozen models' bytes per parameter; int8 is optimum-quanto's qint8/qfloat8 (ai-toolkit's quantize_te) or
# bitsandbytes int8, one scale per output channel; int4 bitsandbytes nf4, an fp32 scale per 64 (4.5 bits).
FROZEN_MODEL_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 4.5 / 8}
# Classes a trained head predicts when nothing else is known (ImageNet-1k).
DEFAULT_HEAD_CLASSES = 1000


# Bytes per trained parameter: (weights, gradients, optimizer states with the master copy).
PerParameter = tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class AdaptedMatrix:
    name: str
    d_in: int
    d_out: int


@dataclass(frozen=True, slots=True)
class StateBytes:
    """Weights, gradients and optimizer states (master copy included) in bytes, before any sharding."""

    weights: float
    gradients: float
    optimizer: float
    trainable_parameters: int
    formula: tuple[str, ...]


def adapted_matrices(
    hidden_size: int, kv_width: int, intermediate_size: int, gated_mlp: bool, targets: str
) -> tuple[AdaptedMatrix, ...]:
    """The matrices of one layer LoRA adapts: q, k, v, o; all_linear adds the MLP (gate, up, down)."""
    h = hidden_size
    matrices = [AdaptedMatrix("q", h, h), AdaptedMatrix("k", h, kv_width), AdaptedMatrix("v", h, kv_width),
                AdaptedMatrix("o", h, h)]
    if targets == "all_linear":
        if gated_mlp:
            matrices.append(AdaptedMatrix("gate", h, intermediate_size))
        matrices += [AdaptedMatrix("up", h, intermediate_size), AdaptedMatrix("down", intermediate_size, h)]
    elif targets != "attention":
        raise ValueError(f"unknown LoRA targets {targets!r}")
    return tuple(matrices)


def lora_parameters(matrices: tuple[AdaptedMatrix, ...], rank: int, layers: int) -> int:
    """r x (d_in + d_out) per adapted matrix, per layer (LoRA §4.1)."""
    return rank * layers * sum(matrix.d_in + matrix.d_out for matrix in matrices)


def lora_states(
    base_parameters: int, adapter_parameters: int, base_weight_bytes: float, adapter_bytes: PerParameter,
    matrices_line: str,
) -> StateBytes:
    """Frozen base at its precision; adapters trained with the answers' bytes per parameter."""
    weights, gradients, optimizer = adapter_bytes
    return StateBytes(
        weights=base_parameters * base_weight_bytes + adapter_parameters * weights,
        gradients=adapter_parameters * gradients,
        optimizer=adapter_parameters * optimizer,
        trainable_parameters=adapter_parameters,
        formula=(
            f"LoRA: frozen base {base_parameters / 1e9:.3g}B params x {base_weight_bytes:g} B (no grads, no states)",
            f"LoRA adapters {matrices_line} = {adapter_parameters / 1e6:.3g}M params x "
            f"{sum(adapter_bytes):g} B (weights {weights:g} + grads {gradients:g} + optimizer {optimizer:g})",
        ),
    )


def with_trained_embeddings(states: StateBytes, vocabulary_parameters: int) -> StateBytes:
    """PEFT's modules_to_save: the embeddings and LM head trained whole beside the adapters, a trained copy of each
    beside the frozen original, at the adapters' bytes a parameter (audit BO53: Chinese-Alpaca-2-7B's 453M of them,
    its vocabulary extended to 55,296, run out of a 24 GB card, its FAQ Q7, where 18.2 GiB was counted)."""
    adapters = max(1, states.trainable_parameters)
    gradient_bytes, optimizer_bytes = states.gradients / adapters, states.optimizer / adapters
    return StateBytes(  # the adapters' weights are as wide as their gradients in every layout counted here
        weights=states.weights + vocabulary_parameters * gradient_bytes,
        gradients=states.gradients + vocabulary_parameters * gradient_bytes,
        optimizer=states.optimizer + vocabulary_parameters * optimizer_bytes,
        trainable_parameters=states.trainable_parameters + vocabulary_parameters,
        formula=(*states.formula, (
            f"embeddings and LM head trained whole (task.lora_trains_embeddings, PEFT's modules_to_save): a trained "
            f"copy of their {vocabulary_parameters / 1e6:,.1f}M params beside the frozen original, x "
            f"{2 * gradient_bytes + optimizer_bytes:g} B (weights {gradient_bytes:g} + grads {gradient_bytes:g} + "
            f"optimizer {optimizer_bytes:g}, as the adapters')")),
    )


# transformers v5 stores a MoE's routed experts as fused 3-D parameters, and bitsandbytes' 4- and 8-bit loading swaps
# only nn.Linear, so they stay 16-bit (bitsandbytes#1849; unsloth#5344: Gemma-4-26B-A4B ~46 GB with load_in_4bit).
# Unsloth quantizes them (unsloth-zoo#527). axolotl's Kimi-Linear 48B 8-bit LoRA: "about 98.7GiB VRAM".
BNB_SKIPS_FUSED_EXPERTS = ("routed experts {:.3g}B params stay 16-bit (2 B): transformers v5 fuses them into 3-D "
                           "parameters, which bitsandbytes does not quantize (bitsandbytes#1849; Unsloth does, and "
                           "Axolotl with quantize_moe_experts: task.quantize_moe_experts)")


def int8_lora_states(
    base_parameters: int, unquantized_parameters: int, row_count: int, adapter_parameters: int,
    adapter_bytes: PerParameter, matrices_line: str, expert_parameters: int = 0,
) -> StateBytes:
    """LLM.int8() base (1 B/param + an fp32 scale per row), 16-bit embeddings (and `expert_parameters`), adapters as
    the answers train them."""
    quantized = max(0, base_parameters - unquantized_parameters - expert_parameters)
    base_bytes = quantized * INT8_WEIGHT_BYTES + row_count * INT8_ROW_SCALE_BYTES \
        + (base_parameters - quantized) * 2.0
    weights, gradients, optimizer = adapter_bytes
    lines = [f"int8 LoRA base: {quantized / 1e9:.3g}B params x {INT8_WEIGHT_BYTES:g} B + {row_count:,} rows x "
             f"{INT8_ROW_SCALE_BYTES:g} B absmax scales (LLM.int8(), arXiv:2208.07339)"]
    if unquantized_parameters:
        lines.append(f"embeddings (and LM head) {unquantized_parameters / 1e6:.4g}M params stay 16-bit (2 B)")
    if expert_parameters:
        lines.append(BNB_SKIPS_FUSED_EXPERTS.format(expert_parameters / 1e9))
    lines.append(f"LoRA adapters {matrices_line} = {adapter_parameters / 1e6:.3g}M params x {sum(adapter_bytes):g} B "
                 f"(weights {weights:g} + grads {gradients:g} + optimizer {optimizer:g})")
    return StateBytes(
        weights=base_bytes + adapter_parameters * weights, gradients=adapter_parameters * gradients,
        optimizer=adapter_parameters * optimizer, trainable_parameters=adapter_parameters, formula=tuple(lines),
    )


def qlora_base_bytes(base_parameters: int, unquantized_parameters: int) -> float:
    """A QLoRA base as the GPU (and Unsloth's pre-quantized file) holds it: NF4 with its double-quant constants, the
    embeddings and LM head (and any unquantized experts) in 16 bits."""
    quantized = max(0, base_parameters - unquantized_parameters)
    return quantized * (NF4_BITS_PER_PARAMETER + DOUBLE_QUANT_BITS_PER_PARAMETER) / 8 \
        + (base_parameters - quantized) * 2.0


def qlora_states(
    base_parameters: int, unquantized_parameters: int, adapter_parameters: int, optimizer_state_bytes: float,
    optimizer: str, matrices_line: str, expert_parameters: int = 0,
) -> StateBytes:
    """NF4 base + double-quant constants, 16-bit embeddings (and `expert_parameters`), bf16 adapters, the answered
    optimizer's states."""
    quantized = max(0, base_parameters - unquantized_parameters - expert_parameters)
    lines = [
        f"QLoRA base: {quantized / 1e9:.3g}B params x ({NF4_BITS_PER_PARAMETER:g} bit NF4 + "
        f"{DOUBLE_QUANT_BITS_PER_PARAMETER} bit double-quant constants) / 8 (QLoRA paper §3, arXiv:2305.14314)",
    ]
    if unquantized_parameters:
        lines.append(f"embeddings and LM head {unquantized_parameters / 1e6:.4g}M params stay 16-bit (2 B)")
    if expert_parameters:
        lines.append(BNB_SKIPS_FUSED_EXPERTS.format(expert_parameters / 1e9))
    lines.append(
        f"QLoRA adapters {matrices_line} = {adapter_parameters / 1e6:.3g}M params: bf16 weights "
        f"{QLORA_ADAPTER_BYTES:g} B + grads {QLORA_ADAPTER_BYTES:g} B + {optimizer} states {optimizer_state_bytes:g} B "
        "(task.optimizer; no fp32 master copy)"
    )
    return StateBytes(
        weights=qlora_base_bytes(base_parameters, unquantized_parameters + expert_parameters)
        + adapter_parameters * QLORA_ADAPTER_BYTES,
        gradients=adapter_parameters * QLORA_ADAPTER_BYTES, optimizer=adapter_parameters * optimizer_state_bytes,
        trainable_parameters=adapter_parameters, formula=tuple(lines),
    )


def frozen_states(
    base_parameters: int, base_weight_bytes: float, head_parameters: int, head_bytes: PerParameter,
    head_origin: str, projector: bool = False,
) -> StateBytes:
    """A frozen backbone (weights only) and a trained head or input projector (weights, grads, optimizer)."""
    weights, gradients, optimizer = head_bytes
    base, kept, part = ("frozen model", "; its backward runs through every layer to the projector at its input",
                        "projector") if projector else ("frozen backbone", ", no activations kept for backward", "head")
    return StateBytes(
        weights=base_parameters * base_weight_bytes + head_parameters * weights,
        gradients=head_parameters * gradients,
        optimizer=head_parameters * optimizer,
        trainable_parameters=head_parameters,
        formula=(
            f"{base} {base_parameters / 1e6:,.1f}M params x {base_weight_bytes:g} B (weights only{kept})",
            f"trained {part} {head_parameters:,} params ({head_origin}) x {sum(head_bytes):g} B "
            "(weights, grads, optimizer)",
        ),
    )


def lora_activation_per_token(targets: str) -> float:
    """Korthikanti's 34 values/token/layer less what a frozen MLP need not keep (attention-only LoRA).

    A frozen linear layer's backward needs its weight, not its input: with the MLP frozen, the fc1 input
    (2sbh) and the fc2 input (8sbh) are not saved, leaving 24; all_linear adapters need them again.
    """
    return 24.0 if targets == "attention" else 34.0


def lora_dropout_per_token(targets: str, hidden_size: int, mlp_width: int, *, gated_mlp: bool) -> float:
    """What LoRA dropout keeps a token a layer, in bytes per h: PEFT puts each adapted matrix behind its own dropout
    (q, k and v each on the same x), which saves the dropped input (2 B) and its mask (1 B) for lora_A's backward:
    q, k, v, o (12), and with all_linear the MLP's too: gate and up on h and down on m, or a GELU MLP's fc1 on h and
    fc2 on m (audit LL: LitGPT's Phi-3 LoRA, 19.75 GB published, 15.2 GiB without it; audit ZH: Phi-2's two)."""
    inputs = sum(matrix.d_in for matrix in adapted_matrices(hidden_size, hidden_size, mlp_width, gated_mlp, targets))
    return 3.0 * inputs / max(1, hidden_size)


# Korthikanti's MLP share of the 34 (a 4h GELU MLP): fc1 input 2, fc1 output 8, GELU output 8, dropout mask 1.
KORTHIKANTI_MLP_PER_TOKEN = 19.0


def gated_mlp_per_token(per_token: float, hidden_size: int, mlp_width: int, frozen_mlp: bool) -> float:
    """A SwiGLU MLP of width m in place of Korthikanti's 4h one, in bytes per token per h at 16 bit: the gate and
    up outputs, SiLU's output and the product each 2m, plus the 2h input when the MLP trains; a frozen MLP keeps
    what SiLU's and the product's backward read (gate output, SiLU output, up output: 6m)."""
    ratio = mlp_width / max(1, hidden_size)
    if frozen_mlp:
        return per_token - (KORTHIKANTI_MLP_PER_TOKEN - 10.0) + 6.0 * ratio
    return per_token - KORTHIKANTI_MLP_PER_TOKEN + 2.0 + 8.0 * ratio


def frozen_models(parameters: int, precision: str) -> tuple[int, str]:
    """The frozen models held beside the model on each GPU: bytes, and the line saying so (0, "" for none)."""
    if not parameters:
        return 0, ""
    size = FROZEN_MODEL_BYTES[precision]
    return int(parameters * size), (f"frozen models on each GPU (workload.frozen_parameters): {parameters / 1e6:,.1f}M "
                                    f"params x {size:g} B ({precision}), in weights, not trained")


# Tokens a parameter from which a full training run is a pretraining, not a fine-tune: Chinchilla's compute-optimal
# 20 (Hoffmann et al. 2022, arXiv:2203.15556); or a pretraining-sized corpus of 10B tokens or more, whatever the model:
# continued pretraining on 14.7-20B tokens, where LoRA falls well short of full training (arXiv:2405.09673), and
# Meditron-70B's 48.1B (0.7 a parameter; audit BZ57: LoRA offered for it). A fine-tuning set is ~1B tokens or less
# (Tulu 3's SFT mix), whatever the model.
PRETRAINING_TOKENS_PER_PARAMETER = 20
CONTINUED_PRETRAINING_MIN_TOKENS = 10e9


def pretraining(answers: Answers, parameters: float) -> bool:
    """Whether the answered tokens an epoch (data.tokens_count; not the default data size) are a pretraining corpus
    for the model: LoRA and QLoRA adapt a pretrained model and are no way to train one from scratch."""
    tokens = answers.data.tokens_count
    continued = tokens >= CONTINUED_PRETRAINING_MIN_TOKENS
    corpus = tokens >= PRETRAINING_TOKENS_PER_PARAMETER * parameters or continued  # MT-NLG 530B's 270B (audit ZY)
    return answers.task.method == "full" and parameters > 0 and corpus


ZERO3_SUB_GROUP_ELEMENTS = 1e9  # DeepSpeed's zero_optimization.sub_group_size default


def deepspeed_fp32_gradient_bytes(sharding: str, trainable: int, gpus: int, precision: str, mixed_layout: str
                                  ) -> tuple[float, str]:
    """The fp32 copy of a rank's gradient partition that DeepSpeed ZeRO-1/2's optimizer step makes beside 16-bit
    gradients, all of it at once (stage_1_and_2's single_partition_of_fp32_groups grads: Baichuan2-13B on 4 x 80 GB
    OOMs allocating its 12.94 GiB, hiyouga/LlamaFactory #1158): mixed precision with an fp32 master (megatron16;
    hf18 and deepspeed20 count fp32 gradients already, torchtune's bf16_pure keeps none). ZeRO-3 casts a sub-group of
    its partition at a time, sub_group_size 1e9 elements (audit ZF: deepseek-coder-33B on 8 x 80 GB failed allocating
    its 3.50 GiB)."""
    if sharding not in ("zero1", "zero2", "zero3") or precision == "fp32" or mixed_layout != "megatron16":
        return 0.0, ""
    partition = trainable / max(1, gpus)
    if sharding == "zero3":
        group = min(partition, ZERO3_SUB_GROUP_ELEMENTS)
        return 4.0 * group, (f"fp32 gradients of one sub-group of this rank's partition for the optimizer step: "
                             f"min(N/{gpus}, {ZERO3_SUB_GROUP_ELEMENTS:.0e}) x 4 B = {4.0 * group / GIB:.3g} GiB "
                             "(DeepSpeed ZeRO-3's sub_group_size)")
    return 4.0 * partition, (f"fp32 gradients of this rank's partition for the optimizer step: N/{gpus} x 4 B = "
                             f"{4.0 * partition / GIB:.3g} GiB (DeepSpeed stage 1/2 casts the whole partition at once)")


DEEPSPEED_REDUCE_BUCKET_ELEMENTS = 5e8  # zero_optimization.reduce_bucket_size's default (deepspeed.ai/docs/config-json)


def deepspeed_bucket_bytes(sharding: str, reduce_bucket_elements: float, overlap_comm: bool, value_bytes: float
                           ) -> tuple[float, str]:
    """The gradient buckets DeepSpeed ZeRO-1/2 allocate in each backward (stage_1_and_2.py, contiguous_gradients, its
    default): reduce_bucket_size elements in the model's dtype, a second with overlap_comm, whatever the trained
    parameters: InternVL's config (1e9, overlap) holds 3.7 GiB a GPU for InternVL2-4B's 30M LoRA parameters."""
    if sharding not in ("zero1", "zero2", "zero_offload") or not reduce_bucket_elements:
        return 0.0, ""
    buckets = 2 if overlap_comm else 1
    held = buckets * reduce_bucket_elements * value_bytes
    return held, (f"DeepSpeed's gradient bucket{'s' if buckets > 1 else ''} in backward: {buckets} x "
                  f"{reduce_bucket_elements:.3g} elements (scale.reduce_bucket_elements"
                  + (", scale.overlap_comm" if overlap_comm else "") + f") x {value_bytes:g} B = {held / GIB:.3g} GiB")


def foreach_step_bytes(trained_parameters: float, value_bytes: float, activations_bytes: float) -> tuple[float, str]:
    """What torch.optim's foreach step adds at its peak: an intermediate the size of each trained parameter ("~
    sizeof(params) more peak memory", its docs), over the activations backward has freed by then."""
    step = trained_parameters * value_bytes
    excess = max(0.0, step - activations_bytes)
    return excess, (
        f"optimizer step (torch.optim's foreach, task.optimizer_kernel): intermediates the size of the trained "
        f"parameters, {trained_parameters / 1e6:,.1f}M x {value_bytes:g} B = {step / GIB:.3g} GiB, "
        + (f"{excess / GIB:.3g} GiB over the activations freed by then (in optimizer states)" if excess
           else "within the activations freed by then"))

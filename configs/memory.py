"""GPU memory estimate for training or inference, one term at a time (bytes, per GPU).

Formulas (sources cited in tests/configs/test_memory.py):
- bytes per parameter by precision and optimizer (HF accelerate, HF "model memory anatomy",
  DeepSpeed ZeRO estimators, Megatron);
- transformer activations: Korthikanti et al. 2022 ("Reducing Activation Recomputation"), as quoted
  in EleutherAI's "Transformer Math 101";
- CNN activations: sum of layer output sizes x bytes, x2 for backward (CS231n; torchsummary);
- KV cache: 2 x bytes x layers x kv width x tokens x batch;
- inference: weights x ~1.2 (EleutherAI), the 0.2 shown as the activations term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from pth_top.units import MIB

if TYPE_CHECKING:  # answers import this module's choices
    from pth_top.configs.answers import Answers

# CUDA context + allocator overhead per GPU: estimates range 650 MB (gpu_poor) to 1000 MiB.
CUDA_CONTEXT_BYTES = 1000 * MIB
INFERENCE_OVERHEAD_FRACTION = 0.2

# The choices as Literal types (what the answers' structs accept) and as tuples of their values.
TrainingPrecision = Literal["fp32", "amp_fp16", "bf16"]
InferencePrecision = Literal["fp32", "fp16", "bf16", "int8", "int4"]
Optimizer = Literal["adamw", "adam", "sgd", "adam8bit"]
RecomputeMode = Literal["none", "selective", "full"]
ShardingMode = Literal["none", "zero1", "zero2", "zero3", "fsdp"]
# How mixed precision lays out bytes per parameter (weights, gradients, optimizer incl. master copy).
MixedLayout = Literal["megatron16", "hf18", "deepspeed20"]
TRAINING_PRECISIONS: tuple[str, ...] = get_args(TrainingPrecision)
INFERENCE_PRECISIONS: tuple[str, ...] = get_args(InferencePrecision)
OPTIMIZERS: tuple[str, ...] = get_args(Optimizer)
RECOMPUTE_MODES: tuple[str, ...] = get_args(RecomputeMode)
SHARDING_MODES: tuple[str, ...] = get_args(ShardingMode)
MIXED_LAYOUTS: tuple[str, ...] = get_args(MixedLayout)

WEIGHT_BYTES_BY_PRECISION = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "amp_fp16": 2.0, "int8": 1.0, "int4": 0.5}


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
    # CNNs: sum of every layer's output elements for one sample (torchsummary's count).
    activation_elements_per_sample: int = 0

    @property
    def kv_width(self) -> int:
        heads = self.kv_heads or self.attention_heads
        if not self.attention_heads:
            return self.hidden_size
        return self.hidden_size * heads // self.attention_heads


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


def training_bytes_per_parameter(precision: str, optimizer: str, mixed_layout: str = "megatron16") -> BytesPerParameter:
    """Bytes per parameter for weights, gradients and optimizer states (fp32 master copy counted there)."""
    optimizer_state_fp32 = {"adamw": 8.0, "adam": 8.0, "sgd": 4.0, "adam8bit": 2.0}[optimizer]
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
    raise ValueError(f"unknown mixed-precision layout {mixed_layout!r}")


def transformer_activation_bytes(
    shape: ModelShape, micro_batch: int, recompute: str, flash_attention: bool,
    tensor_parallel: int = 1, bytes_per_value: float = 2.0,
) -> int:
    """Korthikanti et al.: s*b*h*L*(10 + 24/t + 5*a*s/(h*t)) at 16-bit; the a*s term vanishes with flash."""
    s, b, h, n_layers, a, t = (
        shape.sequence_length, micro_batch, shape.hidden_size, shape.layers, shape.attention_heads, tensor_parallel,
    )
    base = s * b * h * n_layers
    scale = bytes_per_value / 2.0
    if recompute == "full":
        return int(2 * base * scale)
    per_token = 10 + 24 / t
    if recompute == "none" and not flash_attention and a:
        per_token += 5 * a * s / (h * t)
    return int(base * per_token * scale)


def cnn_activation_bytes(shape: ModelShape, micro_batch: int, bytes_per_value: float, recompute: str) -> int:
    """Layer outputs x bytes x2 (stored for backward).

    With checkpointing about a third is assumed to stay resident (segment boundaries plus the segment
    being recomputed); that fraction is an estimate, not a published figure.
    """
    stored = shape.activation_elements_per_sample * micro_batch * bytes_per_value * 2
    if recompute in ("selective", "full"):
        stored /= 3.0
    return int(stored)


def kv_cache_bytes(shape: ModelShape, batch: int, context_tokens: int, bytes_per_value: float) -> int:
    """2 (K and V) x bytes x layers x kv width x tokens x batch."""
    return int(2 * bytes_per_value * shape.layers * shape.kv_width * context_tokens * batch)


def estimate_training(
    shape: ModelShape, *, precision: str, optimizer: str, global_batch: int, accumulation_steps: int = 1,
    gpu_count: int = 1, sharding: str = "none", recompute: str = "none", flash_attention: bool = True,
    mixed_layout: str = "megatron16", cuda_context_bytes: int = CUDA_CONTEXT_BYTES,
) -> MemoryBreakdown:
    """Per-GPU training memory with data parallelism over `gpu_count` GPUs and optional ZeRO sharding."""
    per_param = training_bytes_per_parameter(precision, optimizer, mixed_layout)
    p = shape.parameters
    stage = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3}[sharding]
    n = max(1, gpu_count)
    weights = p * per_param.weights / (n if stage >= 3 else 1)
    gradients = p * per_param.gradients / (n if stage >= 2 else 1)
    optimizer_states = p * per_param.optimizer / (n if stage >= 1 else 1)
    micro_batch = micro_batch_per_gpu(global_batch, accumulation_steps, n)
    value_bytes = 4.0 if precision == "fp32" else 2.0
    formula = [
        f"{per_param.total:g} B/param ({precision}, {optimizer}"
        + (f", {mixed_layout} layout" if precision != "fp32" else "") + ")",
    ]
    if stage:
        formula.append(f"{sharding.upper()} divides " + ("optimizer states" if stage == 1 else
                       "optimizer states and gradients" if stage == 2 else "weights, gradients, optimizer states")
                       + f" by {n} GPUs")
    if shape.kind == "transformer":
        activations = transformer_activation_bytes(shape, micro_batch, recompute, flash_attention, 1, value_bytes)
        if recompute == "full":
            factor = "2"
        else:
            factor = "34 + 5as/h" if recompute == "none" and not flash_attention else "34"
        formula.append(f"activations: Korthikanti s*b*h*L*({factor}), micro-batch {micro_batch}, recompute {recompute}")
    elif shape.kind == "cnn":
        activations = cnn_activation_bytes(shape, micro_batch, value_bytes, recompute)
        formula.append(f"activations: layer outputs x {value_bytes:g} B x2 for backward, micro-batch {micro_batch}")
    else:
        activations = 0
        formula.append("activations: unknown for a parameter count alone (give the architecture)")
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=int(gradients), optimizer_states_bytes=int(optimizer_states),
        activations_bytes=activations, kv_cache_bytes=0, cuda_context_bytes=cuda_context_bytes,
        formula=tuple(formula),
    )


def estimate_inference(
    shape: ModelShape, *, precision: str, batch: int, generated_tokens: int = 0, gpu_count: int = 1,
    cuda_context_bytes: int = CUDA_CONTEXT_BYTES,
) -> MemoryBreakdown:
    """Weights x 1.2 (the 0.2 as activations), plus a KV cache for transformers; weights split over GPUs."""
    n = max(1, gpu_count)
    weights = shape.parameters * WEIGHT_BYTES_BY_PRECISION[precision] / n
    activations = weights * INFERENCE_OVERHEAD_FRACTION
    kv = 0.0
    formula = [f"weights {WEIGHT_BYTES_BY_PRECISION[precision]:g} B/param ({precision}) x 1.2 (EleutherAI)"]
    if n > 1:
        formula.append(f"weights and KV cache split over {n} GPUs (tensor/pipeline parallel)")
    if shape.kind == "transformer":
        kv_value_bytes = 4.0 if precision == "fp32" else 2.0
        kv = kv_cache_bytes(shape, batch, shape.sequence_length + generated_tokens, kv_value_bytes) / n
        formula.append(
            f"KV cache 2 x {kv_value_bytes:g} B x L x h_kv x (s + generated) x b = 2x{kv_value_bytes:g}x{shape.layers}"
            f"x{shape.kv_width}x{shape.sequence_length + generated_tokens}x{batch}"
        )
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0, activations_bytes=int(activations),
        kv_cache_bytes=int(kv), cuda_context_bytes=cuda_context_bytes, formula=tuple(formula),
    )


def micro_batch_per_gpu(global_batch: int, accumulation_steps: int, gpu_count: int) -> int:
    return max(1, math.ceil(global_batch / (max(1, accumulation_steps) * max(1, gpu_count))))


def estimate_memory(answers: Answers, shape: ModelShape) -> MemoryBreakdown:
    """Per-GPU memory for the wizard's answers (training or inference) on the model `shape`."""
    task, scale = answers.task, answers.scale
    if task.mode == "training":
        return estimate_training(
            shape, precision=task.precision, optimizer=task.optimizer, global_batch=answers.workload.batch_size,
            accumulation_steps=task.accumulation_steps, gpu_count=scale.gpu_count, sharding=scale.sharding,
            recompute=task.recompute, flash_attention=task.flash_attention, mixed_layout=task.mixed_layout,
        )
    return estimate_inference(
        shape, precision=task.precision, batch=answers.workload.batch_size,
        generated_tokens=task.generated_tokens, gpu_count=scale.gpu_count,
    )

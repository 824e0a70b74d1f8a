"""A vision-language model's vision encoder (a ViT: SigLIP, Qwen2.5-VL's): its FLOPs over the image patches and,
when it is trained, the activations its backward keeps.

Its patches are not the language model's image tokens: a merge or resampler sends it fewer (SmolVLM's pixel shuffle
9 to 1, Qwen2.5-VL's 2x2 merge 4 to 1, MiniCPM-V's resampler 1,024 to 96), so the encoder runs several times the
tokens the language model sees (workload.vision_tokens), each through ~12 h^2 weights a layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pth_top.configs import memory_methods as methods
from pth_top.configs import stacks
from pth_top.configs.memory_terms import ModelShape, transformer_activation_bytes
from pth_top.configs.quantization import FORMATS, weight_format_name

if TYPE_CHECKING:
    from pth_top.configs.answer_types import Workload
    from pth_top.configs.answers import Answers

# generate()'s bitsandbytes formats: from_pretrained's quantization_config swaps every nn.Linear but the LM head, a
# VLM's vision tower's too (THUDM's GLM-4V-9B in 4 bits: 10,267 MiB at 1,000 tokens, GLM-4 basic_demo/README_en.md).
BNB_TOWER_PRECISION = {"bnb_nf4": "int4", "bnb_int8": "int8"}


@dataclass(frozen=True, slots=True)
class VisionEncoder:
    """The encoder's layers L_v, width h_v, patches a sample, and whether its weights (or adapters on them) train."""

    layers: int
    hidden_size: int
    tokens: int
    trained: bool
    checkpointed: bool = True  # recomputed with the language model's layers

    @property
    def parameters(self) -> int:
        """12 h^2 a layer: attention's 4 h^2 and an MLP of ~4h (SigLIP-so400m's 4,304 at 1,152: 27 layers, 430M
        against its 400M; Qwen2.5-VL's gated 3 x 1,280 x 3,420 is 2 x 1,280 x 5,120 too)."""
        return 12 * self.layers * self.hidden_size ** 2

    @property
    def shape(self) -> ModelShape:
        """The encoder as a transformer over its patches a sample, attention by SDPA or flash (no a*s^2 kept)."""
        return ModelShape(kind="transformer", parameters=self.parameters, layers=self.layers,
                          hidden_size=self.hidden_size, sequence_length=self.tokens, encoder_only=True, lm_head=False)


def vision_encoder(shape: ModelShape) -> VisionEncoder | None:
    """The model's vision encoder, None without one."""
    if not (shape.vision_layers and shape.vision_hidden_size and shape.vision_tokens):
        return None
    return VisionEncoder(shape.vision_layers, shape.vision_hidden_size, shape.vision_tokens, shape.vision_trained,
                         shape.vision_checkpointed)


def frozen_precision(answers: Answers, shape: ModelShape) -> tuple[str, str]:
    """The frozen models' precision, and why where it is not as answered: a VLM's frozen vision tower served by
    generate() in bitsandbytes' weights is loaded in them (BNB_TOWER_PRECISION)."""
    task, answered = answers.task, answers.workload.frozen_precision
    if task.mode != "inference" or vision_encoder(shape) is None:
        return answered, ""
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    key = weight_format_name(task.quantization, task.precision, engine) if engine == "hf_generate" else ""
    tower = BNB_TOWER_PRECISION.get(key, "")
    if not tower or methods.FROZEN_MODEL_BYTES[tower] >= methods.FROZEN_MODEL_BYTES[answered]:
        return answered, ""
    return tower, (f"; the vision tower in {FORMATS[key].label}: generate()'s bitsandbytes quantization_config "
                   "swaps its nn.Linear layers with the language model's")


def language_parameters(shape: ModelShape) -> int:
    """The active parameters the language model's tokens pass: a trained encoder's are in workload.parameters with
    the language model's, and run over its own patches instead (a frozen one's are workload.frozen_parameters);
    per-layer embedding tables (workload.lookup_parameters) are looked up, not multiplied."""
    encoder = vision_encoder(shape)
    active = max(0, shape.active - shape.lookup_parameters)
    return max(0, active - encoder.parameters) if encoder is not None and encoder.trained else active


def training_flops_per_sample(shape: ModelShape, method: str, recompute: str) -> tuple[float, str]:
    """The encoder's FLOPs a training sample: as the language model's per token over its patches when it trains
    (6N full, 4N adapters, + 2N recomputed), a forward (2N) when frozen; its attention over a crop's patches is not
    counted (~10 % more at SigLIP's 729 a crop and h = 1,152)."""
    encoder = vision_encoder(shape)
    if encoder is None:
        return 0.0, ""
    if not encoder.trained or method == "frozen":
        per_token, rule = 2.0 * encoder.parameters, "2N (frozen: forward only)"
    else:
        recompute = recompute if encoder.checkpointed else "none"
        weights = 6.0 if method == "full" else 4.0
        rounds = weights + (2.0 if recompute == "full" else 0.0)
        per_token = rounds * encoder.parameters
        rule = f"{rounds:g}N ({'trained' if method == 'full' else 'adapters on its layers'}" + (
            ", recomputed" if recompute == "full" else "") + ")"
    flops = per_token * encoder.tokens
    return flops, (f" + the vision encoder's {rule}, N = 12*L*h^2 = {encoder.parameters / 1e6:,.0f}M over "
                   f"{encoder.tokens:,} patches = {flops / 1e9:,.0f} GFLOP a sample")


def prefill_flops(shape: ModelShape) -> float:
    """The encoder's forward over one request's patches, before its prompt's prefill (2N a patch)."""
    encoder = vision_encoder(shape)
    return 2.0 * encoder.parameters * encoder.tokens if encoder is not None else 0.0


def training_activations(shape: ModelShape, method: str, lora_targets: str, micro_batch: int, recompute: str,
                         value_bytes: float) -> tuple[int, int, str]:
    """What a trained encoder keeps for its backward over the micro-batch's patches (Korthikanti's s*b*h*L terms at
    the method's per-token count; with full recompute its layer inputs), and the one layer its backward runs at once
    (recomputed whole under full recompute, else its MLP's gradients); (0, 0, "") when frozen or absent."""
    encoder = vision_encoder(shape)
    if encoder is None or not encoder.trained or method == "frozen":
        return 0, 0, ""
    per_token = methods.lora_activation_per_token(lora_targets) if method in methods.ADAPTER_METHODS else 34.0
    recompute = recompute if encoder.checkpointed else "none"
    kept = transformer_activation_bytes(encoder.shape, micro_batch, recompute, True, 1, value_bytes, per_token)
    one_layer = ModelShape(kind="transformer", parameters=0, layers=1, hidden_size=encoder.hidden_size,
                           sequence_length=encoder.tokens, encoder_only=True)
    working = transformer_activation_bytes(one_layer, micro_batch, "none", True, 1, value_bytes, per_token) \
        if recompute == "full" else int(2 * encoder.tokens * 4 * encoder.hidden_size * micro_batch * value_bytes)
    factor = "2" if recompute == "full" else f"{per_token:g}"
    return kept, working, (f"; + the vision encoder's s*b*h*L*({factor}) x {value_bytes / 2:g} over {encoder.tokens:,} "
                           f"patches a sample, L = {encoder.layers}, h = {encoder.hidden_size:,}")


def answer_problems(workload: Workload, mode: str, model_kind: str) -> list[tuple[str, str, str]]:
    """The encoder's three shape answers given together, on a custom transformer that generates text; trained only
    in training."""
    given = {"vision_layers": workload.vision_layers, "vision_hidden_size": workload.vision_hidden_size,
             "vision_tokens": workload.vision_tokens}
    if not any(given.values()):
        return [("workload", "vision_trained", "a vision encoder that trains needs its shape: give vision_layers, "
                 "vision_hidden_size and vision_tokens")] if workload.vision_trained else []
    key = next(name for name, value in given.items() if value)
    if workload.preset != "custom" or model_kind != "transformer" or workload.encoder_only \
            or workload.denoising_steps or workload.decoder_layers:
        return [("workload", key, "a vision encoder belongs to a vision-language model, given as a custom "
                 "transformer that generates text (preset = 'custom', not an encoder, encoder-decoder or diffusion)")]
    if missing := [name for name, value in given.items() if not value]:
        return [("workload", missing[0], f"a vision encoder needs {', '.join(given)} together: give "
                 f"{' and '.join(missing)} too")]
    if workload.vision_trained and mode != "training":
        return [("workload", "vision_trained", "the encoder trains only in training (task.mode = 'training')")]
    return []

"""GPU memory estimate for training or inference, one term at a time (bytes, per GPU).

Formulas (sources cited in tests/configs/test_memory.py and tests/configs/published_figures.py):
- bytes per parameter by precision and optimizer (HF accelerate, HF "model memory anatomy",
  DeepSpeed ZeRO estimators, Megatron);
- transformer activations: Korthikanti et al. 2022 ("Reducing Activation Recomputation"), as quoted
  in EleutherAI's "Transformer Math 101";
- CNN activations: the values autograd saves for backward, once, x bytes (the presets' counts were taken
  with torch.autograd.graph.saved_tensors_hooks; torchsummary's "forward/backward pass size" is ~2x that);
- training methods (LoRA, QLoRA, frozen backbone): configs/memory_methods.py;
- a language model's loss, by the training stack (configs/stacks.py): Hugging Face Trainer 3 fp32 copies of the
  s x b x V logits at its peak (measured on CPU), chunked or fused losses one chunk;
- int8/int4 weights: in the answered format's bits, or the engine's usual one (configs/quantization.py);
- inference: transformers get weights + an explicit KV cache + last-position logits + one layer's prefill over
  the engine's prefill chunk (+ its CUDA graphs); other models weights x ~1.2 (EleutherAI), the 0.2 shown as the
  activations term. Never both.
- per GPU, counted once: the CUDA context here; the allocator's slack and the driver's reserve in the usable
  fraction (rules.toml, or the engine's own, e.g. vLLM's 0.9, instead of it, never both); the estimator's margin
  only ranks cards (roomy before tight), it never makes a fitting card "not feasible".
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from pth_top.configs import memory_methods as methods
from pth_top.configs import stacks
from pth_top.configs.diffusion import estimate_denoising, with_validation
from pth_top.configs.memory_inference import estimate_inference
from pth_top.configs.memory_pipeline import block_offload_memory, pipeline_memory, split_with_the_model
from pth_top.configs.memory_terms import (
    AUTOCAST_NORM_BYTES,
    AUTOCAST_SOFTMAX_BYTES,
    CUDA_CONTEXT_BYTES,
    EAGER_SOFTMAX_FP32_BYTES,
    OFFLOAD_BUFFER_FACTOR,
    OPTIMIZER_STATE_BYTES,
    SHARDING_LABELS,
    BytesPerParameter,
    MemoryBreakdown,
    ModelShape,
    cnn_activation_bytes,
    training_bytes_per_parameter,
    transformer_activation_bytes,
    value_bytes_of,
)
from pth_top.configs.sequence_split import layers_on_one_gpu, split_shape, training_split
from pth_top.configs.vision_encoder import frozen_precision
from pth_top.configs.vision_encoder import training_activations as vision_activations
from pth_top.units import GIB

if TYPE_CHECKING:  # answers import this module's choices
    from pth_top.configs.answers import Answers


def estimate_training(
    shape: ModelShape, *, precision: str, optimizer: str, global_batch: int, accumulation_steps: int = 1,
    gpu_count: int = 1, sharding: str = "none", recompute: str = "none", flash_attention: bool = True,
    mixed_layout: str = "megatron16", cuda_context_bytes: int = CUDA_CONTEXT_BYTES, method: str = "full",
    lora_rank: int = 16, lora_targets: str = "attention", head_parameters: int = 0, stack: str = "hf_trainer",
    sync_each_batch: bool = False, lora_dropout: float = 0.0, ema_weights: bool = False, foreach_step: bool = False,
    quantize_moe_experts: bool = False, reduce_bucket_elements: float = methods.DEEPSPEED_REDUCE_BUCKET_ELEMENTS,
    overlap_comm: bool = False, sequence_split: int = 1, trained_embeddings: bool = False, base_fp32: bool = False,
    optimizer_in_backward: bool = False,
) -> MemoryBreakdown:
    """Per-GPU training memory with data parallelism over `gpu_count` GPUs and optional ZeRO sharding/offload; each
    sequence split over `sequence_split` of them (task.sequence_parallel: ring attention)."""
    mixed_layout = stacks.mixed_layout_of(stack, precision, mixed_layout)
    per_param = training_bytes_per_parameter(precision, optimizer, mixed_layout)
    value_bytes = value_bytes_of(precision)
    base_bytes = 4.0 if base_fp32 and method == "lora" else value_bytes  # held fp32, cast by autocast as it runs
    states = model_states(shape, method, per_param, base_bytes, lora_rank, lora_targets, head_parameters, optimizer,
                          mixed_layout, experts_at_16_bits=stacks.experts_left_16_bit(stack, quantize_moe_experts))
    if trained_embeddings and method in methods.ADAPTER_METHODS:  # each wrapped whole, a tied pair as two copies
        states = methods.with_trained_embeddings(
            states, (2 if shape.lm_head else 1) * shape.vocabulary_size * shape.hidden_size)
    stage = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3, "fsdp": 3, "zero_offload": 2, "fsdp_offload": 3,
             "layers": 0}[sharding]
    n = max(1, gpu_count)
    split_layers = n if sharding == "layers" else 1  # each GPU its 1/n of the layers and all of their states
    weights = states.weights / (n if stage >= 3 else split_layers)
    ema = EMA_BYTES_PER_PARAMETER * states.trainable_parameters / split_layers if ema_weights else 0.0
    gradients = states.gradients / (n if stage >= 2 else split_layers)
    optimizer_states = states.optimizer / (n if stage >= 1 else split_layers)
    data_parallel = 1 if split_layers > 1 else max(1, n // sequence_split)
    micro_batch = micro_batch_per_gpu(global_batch, accumulation_steps, data_parallel)
    sliced = split_shape(shape, sequence_split)  # the tokens of each sequence this GPU holds
    held = layers_on_one_gpu(sliced, split_layers)  # and the layers whose activations it keeps
    formula = list(states.formula)
    if shape.logits_vocabulary_size or offloaded_checkpoint_bytes(shape, 1, recompute, value_bytes, stack):
        formula.insert(0, f"stack: {stacks.TRAINING_STACK_LABELS[stack]} (task.training_stack)")
    host_offload = 0.0
    if sharding == "zero_offload":
        # ZeRO-Offload (arXiv:2101.06840) as DeepSpeed's estimate_zero2_model_states_mem_needs sizes it: the GPU
        # keeps 16-bit weights (gradients go to the host in buckets); the host holds fp32 master, optimizer
        # states and fp32 grads, at least 4 B/param per GPU process, x 1.5 buffer factor.
        trainable = max(1, states.trainable_parameters)
        host_per_parameter = max(4.0 * n, states.optimizer / trainable + 4.0)
        host_offload = states.trainable_parameters * host_per_parameter * OFFLOAD_BUFFER_FACTOR
        gradients = optimizer_states = 0.0
        formula.append(
            f"ZeRO-Offload: gradients and optimizer states in host RAM: {trainable / 1e6:,.1f}M trained params x "
            f"{host_per_parameter:g} B x {OFFLOAD_BUFFER_FACTOR:g} = {host_offload / GIB:.3g} GiB per machine "
            "(DeepSpeed's estimator); the GPU keeps 16-bit weights"
        )
    elif sharding == "fsdp_offload":
        # FSDP's CPUOffload(offload_params=True), as Answer.AI's FSDP-QLoRA runs 70B on two 24 GB cards: weights,
        # gradients and optimizer states live in host RAM; the GPU holds the layer it runs and the one it prefetches,
        # and the root unit (embeddings, LM head), which FSDP keeps gathered from forward to backward.
        root, layer = root_and_layer_bytes(shape, states, value_bytes)
        host_offload = states.weights + states.gradients + states.optimizer
        weights, gradients, optimizer_states = root + 2 * layer, 0.0, 0.0
        formula.append(f"ZeRO-3 or FSDP with CPU offload: weights, gradients and optimizer states in host RAM "
                       f"({host_offload / GIB:.3g} GiB per machine); the GPU holds the root unit (embeddings and LM "
                       f"head) {root / GIB:.3g} GiB + 2 x a layer {layer / GIB:.3g} GiB, the one running and the one "
                       f"prefetched = {weights / GIB:.3g} GiB")
    elif stage:
        formula.append(f"{SHARDING_LABELS[sharding]} divides " + ("optimizer states" if stage == 1 else
                       "optimizer states and gradients" if stage == 2 else "weights, gradients, optimizer states")
                       + f" by {n} GPUs")
        fp32_gradients, line = methods.deepspeed_fp32_gradient_bytes(sharding, states.trainable_parameters, n,
                                                                     precision, mixed_layout)
        if fp32_gradients:
            gradients += fp32_gradients
            formula.append(line)
        whole_gradients = stacks.unsharded_between_syncs(sharding, stack, accumulation_steps, n, sync_each_batch)
        if stage >= 3 and n > 1 and shape.layers:
            gathered, line = gathered_units(shape, states, value_bytes, sharding, stack, whole_gradients,
                                            reduce_bucket_elements)
            weights += gathered
            formula.append(line)
        if whole_gradients:
            gradients = states.gradients
            formula.append(f"gradient accumulation under FSDP's no_sync: the whole model's gradients on each GPU "
                           f"until the step's last micro-batch, {states.gradients / GIB:.3g} GiB (accelerate's "
                           "default, task.sync_each_batch = false; Lightning Fabric's no_backward_sync; Composer's "
                           "llm-foundry, torchtitan and Megatron reduce-scatter each micro-batch: true for them)")
    if split_layers > 1:
        formula.append(f"{SHARDING_LABELS[sharding]} over {n} GPUs (accelerate's device_map=\"auto\", as QLoRA "
                       f"scripts run a base too large for one card): each holds {held.layers} of the "
                       f"{shape.layers} layers with their weights, gradients and optimizer states (1/{n}) and their "
                       f"activations for the whole micro-batch {micro_batch}, the last the loss's logits too")
    if optimizer_in_backward and method == "full":  # audit DN70: Forgather's Mistral-7B on one 24 GB card
        largest = max(shape.vocabulary_size * shape.hidden_size, shape.hidden_size * shape.mlp_width)
        held_gradients = largest * per_param.gradients
        formula.append(f"optimizer stepped in backward (task.optimizer_in_backward): each gradient freed as its "
                       f"parameter is stepped, the largest tensor's held, {held_gradients / GIB:.3g} GiB, not the "
                       f"whole model's {gradients / GIB:.3g}")
        gradients = held_gradients
    buckets, bucket_line = methods.deepspeed_bucket_bytes(sharding, reduce_bucket_elements, overlap_comm, value_bytes)
    if buckets:  # ZeRO-1/2 and ZeRO-Offload's (ZeRO-3's is with what it gathers)
        gradients += buckets
        formula.append(bucket_line)
    activations, activation_line = training_activations(
        held, method, lora_targets, micro_batch, recompute, flash_attention, value_bytes, stack,
        autocast=stacks.autocast(precision, sharding), lora_dropout=lora_dropout,
    )
    formula.append(activation_line)
    if sequence_split > 1:
        formula.append(f"sequence parallel (task.sequence_parallel, ring attention): each GPU holds "
                       f"{sliced.sequence_length:,} of each sequence's {shape.sequence_length:,} tokens, their "
                       f"activations and logits; micro-batch {micro_batch}, every sample on "
                       + (f"all {n} GPUs" if sequence_split >= n else f"a group of {sequence_split} of the {n}"))
    if foreach_step:
        shard = n if stage >= 1 else split_layers
        excess, line = methods.foreach_step_bytes(states.trainable_parameters / shard,
                                                  2.0 if mixed_layout == "bf16_pure" else 4.0, activations)
        optimizer_states += excess
        formula.append(line)
    offloaded = offloaded_checkpoint_bytes(sliced, micro_batch, recompute, value_bytes, stack)
    if offloaded:
        host_offload += offloaded
        formula.append(f"checkpoints in host RAM: 2 x s*b*h*L x {value_bytes / 2:g} = {offloaded / GIB:.3g} GiB "
                       "(Unsloth's offloaded gradient checkpointing)")
    if ema:  # a whole copy on each GPU, beside the (sharded) weights (fast-DiT: ema = deepcopy(model).to(device))
        formula.append(f"EMA of the trained weights (task.ema_weights): 4 B x {states.trainable_parameters / 1e6:,.0f}"
                       f"M trained parameters = {ema / GIB:.3g} GiB on each GPU")
    return MemoryBreakdown(
        weights_bytes=int(weights + ema), gradients_bytes=int(gradients), optimizer_states_bytes=int(optimizer_states),
        activations_bytes=activations, kv_cache_bytes=0, cuda_context_bytes=cuda_context_bytes,
        formula=tuple(formula), host_offload_bytes=int(host_offload),
        extra_margin_bytes=int(activations * shape.activation_margin),
    )


EMA_BYTES_PER_PARAMETER = 4.0  # an EMA copy is fp32 (timm's ModelEmaV2, diffusers' EMAModel)
# DeepSpeed ZeRO-3's defaults (deepspeed.ai/docs/config-json): caps on what it gathers, in elements.
ZERO3_MAX_LIVE_PARAMETERS_COUNT = 1e9  # stage3_max_live_parameters


def root_and_layer_bytes(shape: ModelShape, states: methods.StateBytes, value_bytes: float) -> tuple[float, float]:
    """The 16-bit embeddings and LM head (FSDP's root unit), and one decoder layer's share of the rest."""
    root = min(states.weights, shape.vocabulary_parameters * value_bytes)
    return root, (states.weights - root) / max(1, shape.layers)


def gathered_units(shape: ModelShape, states: methods.StateBytes, value_bytes: float, sharding: str, stack: str,
                   whole_gradients: bool = False,
                   reduce_bucket_elements: float = methods.DEEPSPEED_REDUCE_BUCKET_ELEMENTS) -> tuple[float, str]:
    """What FSDP / ZeRO-3 hold whole beside their shards. FSDP, a unit a decoder layer: the layer running and the
    one prefetched, the running layer's gradients before their reduce-scatter, and the root unit (embeddings, LM
    head) kept gathered from forward to backward, its gradients whole until the embeddings' come last; torchtune
    shards those two as units of their own (custom_sharded_layers), gathered in turn. ZeRO-3: two layers'
    parameters up to DeepSpeed's live cap (an embedding whole), and its reduce bucket, reduce_bucket_size elements
    whatever the trained parameters. `whole_gradients`: no_sync holds them all already (counted as the gradients)."""
    root, layer = root_and_layer_bytes(shape, states, value_bytes)
    embedding = min(root, shape.vocabulary_size * shape.hidden_size * value_bytes)  # one tensor: gathered whole
    layer_gradients = 0.0 if whole_gradients else states.gradients / shape.layers
    root_gradients = 0.0 if whole_gradients else states.gradients * root / max(1.0, states.weights)
    if sharding == "zero3":
        live = max(min(ZERO3_MAX_LIVE_PARAMETERS_COUNT * value_bytes, 2 * layer), embedding)
        bucket = reduce_bucket_elements * value_bytes  # stage3.py allocates it whole, in the model's dtype
        return live + bucket, (f"gathered on each GPU: ZeRO-3's live parameters {live / GIB:.3g} GiB (two layers, at "
                               f"most DeepSpeed's 1e9) + its reduce bucket {bucket / GIB:.3g} GiB")
    if stack == "torchtune":
        unit = max(layer, embedding)  # the embeddings or the LM head, each a unit, or a layer
        gathered = 2 * unit + layer_gradients
        return gathered, (f"gathered whole on each GPU: 2 x the largest unit {unit / GIB:.3g} GiB (running, "
                          f"prefetched; torchtune shards the embeddings and LM head as units of their own) + a layer's "
                          f"gradients {layer_gradients / GIB:.3g} GiB before the reduce-scatter = {gathered / GIB:.3g} "
                          "GiB")
    gathered = root + 2 * layer + layer_gradients + root_gradients
    gradients = f" + its gradients {layer_gradients / GIB:.3g} GiB before the reduce-scatter + the root unit's " \
        f"{root_gradients / GIB:.3g} GiB, whole until the embeddings' come last in backward" if layer_gradients else ""
    return gathered, (f"gathered whole on each GPU: the root unit (embeddings and LM head) {root / GIB:.3g} GiB + 2 x "
                      f"a layer {layer / GIB:.3g} GiB (running, prefetched){gradients} = {gathered / GIB:.3g} GiB")


def model_states(
    shape: ModelShape, method: str, per_param: BytesPerParameter, value_bytes: float, lora_rank: int,
    lora_targets: str, head_parameters: int, optimizer: str, mixed_layout: str, experts_at_16_bits: bool = False,
) -> methods.StateBytes:
    """Weights, gradients and optimizer bytes for the training method, before sharding. `experts_at_16_bits`: a MoE's
    routed experts stay 16-bit under bitsandbytes' 4- and 8-bit loading (BNB_SKIPS_FUSED_EXPERTS)."""
    p = shape.parameters
    trained = (per_param.weights, per_param.gradients, per_param.optimizer)
    if method == "full":
        # The fp32 master copy mixed precision keeps with the optimizer is said apart from its states (audit CR63:
        # Adafactor's "optimizer 4", no state of its own, read as states).
        master = per_param.optimizer - OPTIMIZER_STATE_BYTES[optimizer]
        master_text = f": fp32 master weights {master:g} + states {OPTIMIZER_STATE_BYTES[optimizer]:g}" \
            if master > 0 else ""
        layout = f"{per_param.total:g} B/param (weights {per_param.weights:g} + grads {per_param.gradients:g} + " \
            f"optimizer {per_param.optimizer:g}{master_text})"
        return methods.StateBytes(p * per_param.weights, p * per_param.gradients, p * per_param.optimizer, p,
                                  (f"full training: {p / 1e6:,.1f}M params x {layout}",))
    if method in methods.HEAD_METHODS:
        head, origin = head_size(shape, head_parameters, projector=method == "projector")
        return methods.frozen_states(p, value_bytes, head, trained, origin, projector=method == "projector")
    if method not in methods.ADAPTER_METHODS:
        raise ValueError(f"unknown training method {method!r}")
    if shape.kind != "transformer":
        raise ValueError("LoRA needs a transformer's architecture (layers, hidden size)")
    matrices = methods.adapted_matrices(shape.hidden_size, shape.kv_width, shape.mlp_width, shape.gated_mlp,
                                        lora_targets)
    adapters = methods.lora_parameters(matrices, lora_rank, shape.layers)
    line = f"r {lora_rank} x ({' + '.join(f'{m.d_in}+{m.d_out}' for m in matrices)}) x {shape.layers} layers"
    if method == "lora":
        return methods.lora_states(p, adapters, value_bytes, trained, line)
    experts = shape.routed_expert_parameters if experts_at_16_bits else 0
    if method == "lora_int8":  # every projection is int8, whatever the adapters target
        projections = methods.adapted_matrices(shape.hidden_size, shape.kv_width, shape.mlp_width, shape.gated_mlp,
                                               "all_linear")
        rows = shape.layers * sum(matrix.d_out for matrix in projections)
        return methods.int8_lora_states(p, shape.vocabulary_parameters, rows, adapters, trained, line, experts)
    # Embedding and (untied) LM head stay 16-bit in bitsandbytes' 4-bit loading. A bf16-through stack (torchtune)
    # keeps the states in bf16 too: its layout's states, which have no master copy.
    states = per_param.optimizer if mixed_layout == "bf16_pure" else OPTIMIZER_STATE_BYTES[optimizer]
    return methods.qlora_states(p, shape.vocabulary_parameters, adapters, states, optimizer, line, experts)


def head_size(shape: ModelShape, head_parameters: int, projector: bool = False) -> tuple[int, str]:
    """The trained part beside a frozen model: given, else a classifier's head or one linear at a transformer's
    input."""
    if head_parameters:
        return head_parameters, "given"
    if projector:
        h = shape.hidden_size
        return h * h + h, f"one {h} x {h} linear at the model's input; give task.head_parameters"
    width = shape.hidden_size if shape.kind == "transformer" else shape.feature_width
    if not width:
        return 0, "unknown without the feature width: give head_parameters"
    classes = methods.DEFAULT_HEAD_CLASSES
    return (width + 1) * classes, f"({width} + 1) x {classes} classes"


def offloaded_checkpoint_bytes(shape: ModelShape, micro_batch: int, recompute: str, value_bytes: float,
                               stack: str) -> int:
    """The layer inputs Unsloth's checkpointing moves to CPU RAM (0 for other stacks, or without recompute)."""
    if stack != "unsloth" or recompute == "none" or shape.kind != "transformer":
        return 0
    return transformer_activation_bytes(shape, micro_batch, "full", True, 1, value_bytes)


def training_activations(
    shape: ModelShape, method: str, lora_targets: str, micro_batch: int, recompute: str, flash_attention: bool,
    value_bytes: float, stack: str = "hf_trainer", autocast: bool = False, lora_dropout: float = 0.0,
) -> tuple[int, str]:
    """Activation bytes and their formula line for the kind of model and the training method."""
    if shape.kind == "transformer":
        if method == "frozen":
            one_layer = replace(shape, layers=1)
            size = transformer_activation_bytes(one_layer, micro_batch, "none", flash_attention, 1, value_bytes)
            return size, f"activations: one layer's forward (backbone frozen, nothing kept), micro-batch {micro_batch}"
        per_token = methods.lora_activation_per_token(lora_targets) if method in methods.ADAPTER_METHODS else \
            methods.PROJECTOR_ACTIVATION_PER_TOKEN if method == "projector" else 34.0
        masks = 1.0 if shape.gated_mlp else 2.0  # after attention, and a 4h MLP's (a gated one's per_token has none)
        if shape.gated_mlp:
            frozen_mlp = method == "projector" or method in methods.ADAPTER_METHODS and lora_targets == "attention"
            per_token = methods.gated_mlp_per_token(per_token, shape.hidden_size, shape.mlp_width, frozen_mlp)
        if lora_dropout and method in methods.ADAPTER_METHODS:
            per_token += methods.lora_dropout_per_token(lora_targets, shape.hidden_size, shape.mlp_width,
                                                         gated_mlp=shape.gated_mlp)
        size = transformer_activation_bytes(shape, micro_batch, recompute, flash_attention, 1, value_bytes, per_token,
                                            dropout_masks=masks, autocast=autocast)
        if recompute == "full":
            factor = "2"
        elif autocast:  # AMP's fp32 LayerNorm inputs and softmax (memory_terms.AUTOCAST_*)
            factor = f"{per_token + AUTOCAST_NORM_BYTES:.3g}" + (
                f" + {5 + AUTOCAST_SOFTMAX_BYTES:g}as/h" if recompute == "none" and not flash_attention else ""
            ) + ", AMP's fp32 norms"
        else:
            factor = f"{per_token:.3g}" + (" + 5as/h" if recompute == "none" and not flash_attention else "")
        offloaded = bool(offloaded_checkpoint_bytes(shape, micro_batch, recompute, value_bytes, stack))
        scores, scores_text = 0, ""
        if recompute == "full" and not offloaded and not flash_attention and shape.attention_heads:
            # Backward recomputes one layer, whose eager softmax saves its fp32 output beside the 16-bit copy and
            # the dropout: Korthikanti's 5 a*s^2*b + 2 (audit VV: StarCoder 15.5B LoRA at 8k ran out on an A100 80GB).
            upcast = value_bytes < 4  # a 16-bit step's softmax is saved in fp32; an fp32 step's is anyway
            per_score = 4 * value_bytes / 2 + 1 + (EAGER_SOFTMAX_FP32_BYTES if upcast else 0.0)  # the mask 1 B
            scores = int(per_score * shape.attention_heads * shape.sequence_length * shape.widest_eager_keys()
                         * micro_batch)
            size += scores
            scores_text = (f" + the recomputed layer's eager scores {per_score:.3g} B x a*s^2*b"
                           + (" (its softmax saved in fp32)" if upcast else ""))
        if offloaded:
            # The checkpoints are in host RAM: the GPU holds the one layer being recomputed, in full.
            size = transformer_activation_bytes(replace(shape, layers=1), micro_batch, "none", flash_attention, 1,
                                                value_bytes, per_token, dropout_masks=masks)
            factor = f"{per_token:.3g}, one layer (the others' checkpoints in host RAM)"
        # Backward holds the gradient into and out of the largest intermediate at once (measured by `memory`).
        tokens = max(shape.sequence_length, shape.loss_tokens)  # an encoder-decoder's longer side
        keys = tokens if shape.encoder_decoder else shape.widest_eager_keys()
        widest = max(tokens * shape.mlp_width, 0 if flash_attention else shape.attention_heads * tokens * keys)
        # The recomputed layer's fp32 softmax (above) runs its backward in fp32: its scores' gradients are 4 B a value.
        eager_scores = bool(scores) and widest != tokens * shape.mlp_width
        working = int(2 * widest * micro_batch * (4.0 if eager_scores else value_bytes))
        sides = ""
        if shape.encoder_decoder:
            cross = "" if recompute == "full" else ", + the encoder's K and V in each decoder layer"
            sides = (f" (encoder {shape.layers - shape.decoder_layers} layers x s = {shape.sequence_length:,}, "
                     f"decoder {shape.decoder_layers} x {shape.loss_tokens:,}{cross})")
        mask_text = ", dropout masks 1 B" if value_bytes != 2 and (recompute != "full" or offloaded) else ""
        vision, vision_working, vision_text = vision_activations(shape, method, lora_targets, micro_batch, recompute,
                                                                 value_bytes)
        size += vision
        line = (f"activations: Korthikanti s*b*h*L*({factor}) x {value_bytes / 2:g}{mask_text}{scores_text}, "
                f"micro-batch {micro_batch}, recompute {recompute}{sides}{vision_text}; + ")
        widest_name = "s*mlp" if widest == tokens * shape.mlp_width else "a*s^2"
        working_line = f"backward working set 2 x {widest_name} x b" + (" in fp32 (softmax's)" if eager_scores else "")
        if vision_working > working:  # one working set at a time, beside every activation kept: an upper bound
            working, working_line = vision_working, "vision encoder's backward working set (one layer)"
        logits, logits_line = stacks.loss_logits_bytes(
            stack, shape.loss_tokens * micro_batch, shape.logits_vocabulary_size, shape.hidden_size, value_bytes)
        if logits <= working:
            return size + working, line + working_line
        # The loss's logits are freed before the layers' backward starts: the larger of the two is the peak.
        return size + logits, line + f"{logits_line}; larger than the {working_line}"
    if shape.kind == "cnn":
        if method == "frozen" and shape.largest_activation_elements:
            size = int(3 * shape.largest_activation_elements * micro_batch * value_bytes)
            return size, (f"activations: 3 x the largest layer output (in, out, shortcut) x {value_bytes:g} B "
                          f"(backbone frozen, nothing kept), micro-batch {micro_batch}")
        size = cnn_activation_bytes(shape, micro_batch, value_bytes, recompute)
        bound = " (an upper bound: backbone frozen)" if method == "frozen" else ""
        line = (f"activations: {shape.activation_elements_per_sample:,} values saved for backward per sample "
                f"x {value_bytes:g} B, micro-batch {micro_batch}{bound}")
        if method != "frozen" and shape.largest_activation_elements:
            # Backward holds the gradient into and out of the largest layer at once (measured by `memory`).
            size += int(2 * shape.largest_activation_elements * micro_batch * value_bytes)
            line += f"; + backward working set 2 x {shape.largest_activation_elements:,} (largest layer output)"
        return size, line
    return 0, "activations: unknown for a parameter count alone (give the architecture)"


def loss_logits_bytes(shape: ModelShape, micro_batch: int, stack: str = "hf_trainer", value_bytes: float = 2.0) -> int:
    """What a language-model loss over V holds at its peak in backward (0 without a vocabulary)."""
    return stacks.loss_logits_bytes(stack, shape.loss_tokens * micro_batch, shape.logits_vocabulary_size,
                                    shape.hidden_size, value_bytes)[0]


def micro_batch_per_gpu(global_batch: int, accumulation_steps: int, gpu_count: int) -> int:
    return max(1, math.ceil(global_batch / (max(1, accumulation_steps) * max(1, gpu_count))))


def estimate_memory(
    answers: Answers, shape: ModelShape, *, cuda_context_bytes: int = CUDA_CONTEXT_BYTES, large_card: bool = False
) -> MemoryBreakdown:
    """Per-GPU memory for the wizard's answers on the model `shape` and the frozen models beside it; a device
    without CUDA passes 0 context; `large_card`: one whose engine batches more tokens a prefill step
    (stacks.large_card_chunk)."""
    precision, why = frozen_precision(answers, shape)
    frozen, frozen_line = methods.frozen_models(answers.workload.frozen_parameters, precision)
    frozen_line += why if frozen else ""
    breakdown = model_memory(answers, shape, cuda_context_bytes, large_card)
    if answers.task.mode == "training" and shape.output_pixels:  # a diffusion trainer's validation images
        breakdown = with_validation(shape, breakdown, answers.task.precision, tiled=answers.task.vae_tiling,
                                    vae_returns=answers.task.cache_embeddings)
    if answers.task.block_offload and shape.denoising_steps and answers.task.mode == "inference":
        return block_offload_memory(answers, shape, breakdown, frozen)
    if not frozen:
        return breakdown
    if answers.task.mode != "inference" and answers.task.cache_embeddings:
        # The frozen models run alone first, to cache their outputs; the GPU then holds the larger of the two passes.
        training = breakdown.total_bytes - breakdown.cuda_context_bytes
        line = (f"frozen models' outputs cached before training (task.cache_embeddings): their {frozen / 1e9:.3g} GB "
                "are on the GPU only for that pass, then leave it" + (
                    f"; that pass is the peak: less the CUDA context the total is its {frozen / GIB:.3g} GiB, not "
                    f"training's {training / GIB:.3g} GiB (the difference is in the weights line)" if frozen > training
                    else ""))
        return replace(breakdown, weights_bytes=breakdown.weights_bytes + max(0, frozen - training),
                       formula=(*breakdown.formula, line))
    if answers.task.mode != "inference" and answers.data.kind == "text" and shape.layers \
            and answers.scale.sharding == "fsdp_offload":
        # A reference or teacher offloaded as the model is (TRL prepares it with the trainer's config; audit AR45): a
        # copy keeps its root unit and two layers on the GPU, another size 2 x its size / the model's layers.
        bytes_per_parameter = frozen / max(1, answers.workload.frozen_parameters)
        root = min(frozen, shape.vocabulary_parameters * bytes_per_parameter) \
            if abs(answers.workload.frozen_parameters - shape.parameters) <= 0.1 * shape.parameters else 0.0
        on_gpu = int(root + 2 * (frozen - root) / shape.layers)
        held = f"its embeddings and LM head and 2 of its {shape.layers} layers" if root else (
            f"2 x its size / the model's {shape.layers} layers (an upper bound for a teacher larger than the model)")
        line = (f"{frozen_line.replace('frozen models on each GPU', 'frozen models')}; offloaded to host RAM as the "
                f"model is ({SHARDING_LABELS['fsdp_offload']}: TRL's DPOTrainer and GKDTrainer prepare it with the "
                f"trainer's config), on the GPU at once {held}, {on_gpu / 1e9:.3g} GB")
        return replace(breakdown, weights_bytes=breakdown.weights_bytes + on_gpu, formula=(*breakdown.formula, line),
                       host_offload_bytes=breakdown.host_offload_bytes + frozen)
    split, note = split_with_the_model(answers, shape)
    if split:
        gpus = answers.scale.gpu_count
        line = f"{frozen_line}; {split}: {frozen / gpus / 1e9:.3g} GB a GPU{note}"
        return replace(breakdown, weights_bytes=breakdown.weights_bytes + frozen // gpus,
                       formula=(*breakdown.formula, line))
    if answers.task.mode != "inference":
        return replace(breakdown, weights_bytes=breakdown.weights_bytes + frozen,
                       formula=(*breakdown.formula, frozen_line))
    return pipeline_memory(answers, shape, breakdown, frozen, frozen_line)


def model_memory(answers: Answers, shape: ModelShape, cuda_context_bytes: int, large_card: bool = False
                 ) -> MemoryBreakdown:
    """Per-GPU memory for the model `shape` itself."""
    task, scale = answers.task, answers.scale
    if task.mode == "training":
        return estimate_training(
            shape, precision=task.precision, optimizer=task.optimizer, global_batch=answers.workload.batch_size,
            accumulation_steps=task.accumulation_steps, gpu_count=scale.gpu_count, sharding=scale.sharding,
            recompute=stacks.recompute_of(task.training_stack, task.recompute), flash_attention=task.flash_attention,
            mixed_layout=task.mixed_layout,
            cuda_context_bytes=cuda_context_bytes, method=task.method, lora_rank=task.lora_rank,
            lora_targets=task.lora_targets, head_parameters=task.head_parameters, stack=task.training_stack,
            sync_each_batch=task.sync_each_batch, lora_dropout=task.lora_dropout, ema_weights=task.ema_weights,
            quantize_moe_experts=task.quantize_moe_experts, reduce_bucket_elements=scale.reduce_bucket_elements,
            overlap_comm=scale.overlap_comm, sequence_split=training_split(answers),
            trained_embeddings=task.lora_trains_embeddings, base_fp32=task.lora_base_fp32,
            foreach_step=stacks.foreach_optimizer(task.optimizer_kernel, task.optimizer, scale.sharding,
                                                  answers.data.kind) and not task.optimizer_in_backward,
            optimizer_in_backward=task.optimizer_in_backward,
        )
    if shape.denoising_steps:
        return estimate_denoising(shape, precision=task.precision, batch=answers.workload.batch_size,
                                  gpu_count=scale.gpu_count, cuda_context_bytes=cuda_context_bytes,
                                  quantization=task.quantization, vae_tiling=task.vae_tiling,
                                  vae_slicing=task.vae_slicing, sequence_parallel=task.sequence_parallel)
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    return estimate_inference(
        shape, precision=task.precision, batch=answers.workload.batch_size,
        generated_tokens=task.generated_tokens, gpu_count=scale.gpu_count, cuda_context_bytes=cuda_context_bytes,
        engine=engine,
        quantization=task.quantization, kv_cache_dtype=task.kv_cache_dtype, expert_offload=task.expert_offload,
        prefill_chunk_tokens=task.prefill_chunk_tokens, media_encoder=not shape.vocabulary_size and (
            answers.workload.preset != "custom" or answers.data.kind != "text"),  # review AA: a text encoder left V out
        flash_attention=task.flash_attention, cuda_graphs=task.cuda_graphs, large_card=large_card,
        engine_memory_fraction=task.engine_memory_fraction,
        full_prompt_logits=stacks.generate_full_prompt_logits(engine, task.transformers_version),
    )

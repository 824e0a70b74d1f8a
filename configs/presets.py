"""Shipped presets: model architectures (presets/models.toml) and example builds (presets/builds/*.toml)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping

from pth_top.configs import memory_methods as methods
from pth_top.configs import stacks
from pth_top.configs.answer_types import Workload
from pth_top.configs.custom_cnn import (
    CNN_SCALED_BY_FLOPS,
    CNN_SCALED_BY_PIXELS,
    custom_cnn_shape,
    dense_prediction,
    heavy_segmentation,
)
from pth_top.configs.derived_shape import DERIVED_PARAMETERS_TEXT, derived_parameters
from pth_top.configs.memory_terms import LINEAR_STATE_VALUES_PER_HIDDEN, MAMBA_EXPAND, ModelShape
from pth_top.configs.quantization import GGUF_FORMATS
from pth_top.configs.sequence_split import data_parallel_gpus
from pth_top.configs.tomlsource import read_toml
from pth_top.configs.unet import denoiser_gflops_per_pass

if TYPE_CHECKING:  # answers import this module's presets
    from pth_top.configs.answers import Answers

PRESETS_DIR = Path(__file__).with_name("presets")


@dataclass(frozen=True, slots=True)
class ModelPreset:
    id: str
    name: str
    kind: str
    parameters: int
    layers: int
    hidden_size: int
    attention_heads: int
    kv_heads: int
    sequence_length: int
    vocabulary_size: int
    input_size_px: int
    activation_elements_per_sample: int
    default_batch_size: int
    source: str
    intermediate_size: int = 0
    gated_mlp: bool = False
    feature_width: int = 0
    largest_activation_elements: int = 0
    lm_head: bool = True
    tied_embeddings: bool = False  # the LM head is the embedding matrix (config.json tie_word_embeddings)
    encoder_only: bool = False  # BERT, ViT: bidirectional, nothing generated (configs.memory_terms)
    forward_gflops_per_sample: float = 0.0  # CNNs: FLOPs of one input's forward pass (configs.speed); 0: unknown
    forward_kernels: int = 0  # CNNs: kernels eager PyTorch launches a forward pass; 0: unknown
    active_parameters: int = 0  # mixture of experts: parameters used per token (model card); 0: dense
    attention_width: int = 0  # attention's FLOP width when not hidden_size (DeepSeek's MLA; configs.memory_terms)
    experts_per_token: int = 0  # mixture of experts: routed experts a token reads, of experts_count (config.json)
    experts_count: int = 0
    shared_expert_width: int = 0  # mixture of experts: the shared experts' MLP width, in intermediate_size
    head_dim: int = 0  # per-head width when not hidden / heads (configs.memory_terms)
    sliding_window_tokens: int = 0  # sliding-window attention: window tokens, on sliding_window_layers layers
    sliding_window_layers: int = 0
    scaled_context_tokens: int = 0  # the context RoPE scaling (YaRN) reaches, where the model card documents it
    # A detector's run peak over its one measured batch (the COCO run's largest images and most boxes): its
    # activations are scaled to it, as a buyer must provision the peak, not a typical batch.
    run_peak_ratio: float = 1.0
    # A detector's mean training image against the canvas it is counted at: what its speed is timed at (models.toml).
    training_mean_pixels_share: float = 1.0


@functools.cache
def model_presets() -> Mapping[str, ModelPreset]:
    data, _ = read_toml(PRESETS_DIR / "models.toml")
    presets = {}
    for entry in data["model"]:
        presets[entry["id"]] = ModelPreset(
            id=entry["id"], name=entry["name"], kind=entry["kind"], parameters=entry["parameters"],
            layers=entry.get("layers", 0), hidden_size=entry.get("hidden_size", 0),
            attention_heads=entry.get("attention_heads", 0), kv_heads=entry.get("kv_heads", 0),
            sequence_length=entry.get("sequence_length", 0), vocabulary_size=entry.get("vocabulary_size", 0),
            input_size_px=entry.get("input_size_px", 0),
            activation_elements_per_sample=entry.get("activation_elements_per_sample", 0),
            default_batch_size=entry["default_batch_size"], source=entry["source"],
            intermediate_size=entry.get("intermediate_size", 0), gated_mlp=entry.get("gated_mlp", False),
            feature_width=entry.get("feature_width", 0),
            largest_activation_elements=entry.get("largest_activation_elements", 0),
            lm_head=entry.get("lm_head", True), encoder_only=entry.get("encoder_only", False),
            tied_embeddings=entry.get("tied_embeddings", False),
            forward_gflops_per_sample=entry.get("forward_gflops_per_sample", 0.0),
            forward_kernels=entry.get("forward_kernels", 0),
            active_parameters=entry.get("active_parameters", 0),
            attention_width=entry.get("attention_width", 0),
            experts_per_token=entry.get("experts_per_token", 0), experts_count=entry.get("experts_count", 0),
            shared_expert_width=entry.get("shared_expert_width", 0),
            scaled_context_tokens=entry.get("scaled_context_tokens", 0),
            head_dim=entry.get("head_dim", 0), sliding_window_tokens=entry.get("sliding_window_tokens", 0),
            sliding_window_layers=entry.get("sliding_window_layers", 0),
            run_peak_ratio=entry.get("run_peak_ratio", 1.0),
            training_mean_pixels_share=entry.get("training_mean_pixels_share", 1.0),
        )
    return MappingProxyType(presets)


def context_tokens(preset: ModelPreset) -> int:
    """The longest context the model runs at: with RoPE scaling where its card documents it, else its own."""
    return preset.scaled_context_tokens or preset.sequence_length


def resized_context_warning(answers: Answers) -> list[str]:
    """A sequence past a preset's context sized at it (and how to go further): first among the build's warnings (after
    a note on cards set aside), as it is not the job asked (audit AD40: Llama-3-8B's 80k context extension said so
    last, under a build for 8k)."""
    preset = model_presets().get(answers.workload.preset)
    limit = context_tokens(preset) if preset is not None else 0
    if preset is None or preset.kind != "transformer" or answers.workload.sequence_length <= limit:
        return []
    return [f"{answers.workload.sequence_length:,} tokens is beyond {preset.name}'s {limit:,}-token context: sized "
            f"at {limit:,}; for a longer one (a context extension, or if the model runs it) describe it as preset = "
            "'custom'"]


def context_warnings(answers: Answers, sized_tokens: int) -> list[str]:
    """A prompt plus generation past a preset's native context run with YaRN scaling where the model card documents
    it."""
    preset = model_presets().get(answers.workload.preset)
    if preset is None or preset.kind != "transformer":
        return []
    lines, limit = [], context_tokens(preset)
    tokens = sized_tokens + (answers.task.generated_tokens if answers.task.mode == "inference" else 0)
    if preset.scaled_context_tokens and tokens > preset.sequence_length:
        lines.append(f"{tokens:,} tokens is beyond {preset.name}'s native {preset.sequence_length:,}-token context: "
                     f"it runs with YaRN RoPE scaling, as its model card documents up to {limit:,} (set "
                     "rope_scaling in the engine; quality at that length is the card's to check)")
    return lines


def counted_denoiser(answers: Answers, shape: ModelShape) -> bool:
    """A diffusion denoiser trained from its counted forward FLOPs: a custom transformer on images or video that
    generates them (not an encoder) and gives workload.forward_gflops_per_sample, or a UNet's estimate (configs.unet:
    most of its weights at 1/4-1/8 of the resolution, several times fewer FLOPs than 2N a latent token)."""
    workload = answers.workload
    return bool(denoiser_gflops_per_pass(workload, shape.parameters)[0]) and workload.preset == "custom" \
        and shape.kind == "transformer" and not shape.encoder_only and not shape.vocabulary_size \
        and answers.data.kind in ("images", "video")


def ignored_answer_warnings(answers: Answers, shape: ModelShape) -> list[str]:
    """Answers the estimate does not read as the user may mean them: a forward FLOP count (only a custom CNN or a
    denoiser is timed by it), a mixed-precision layout torchtune overrides, no generated tokens for a decoder (it
    still generates: an encoder is workload.encoder_only), and a custom CNN trained with no activation count."""
    lines, kind, given = [], shape.kind, answers.workload.forward_gflops_per_sample
    if answers.task.mode == "inference" and not answers.task.generated_tokens and kind == "transformer" \
            and not shape.encoder_only and not shape.encoder_decoder and not shape.denoising_steps:
        lines.append("generated_tokens = 0: sized and timed as a decoder with its prompt's KV cache; a bidirectional "
                     "encoder that generates nothing (BERT, XLM-RoBERTa, bge-m3) is workload.encoder_only = true "
                     "(a decoder-based embedder, e5-mistral or Qwen3-Embedding, stays a decoder)")
    if answers.workload.preset == "custom" and shape.encoder_only and not shape.vocabulary_size \
            and answers.data.kind == "text" and answers.scenario == "inference_server":  # review AB: a ViT left so
        lines.append("an encoder with no vocabulary on text data is sized as a text encoder an engine batches by "
                     "tokens: give workload.vocabulary_size for one, or data.kind = \"images\" (or \"audio\") for an "
                     "image or audio encoder, which runs its whole batch at once in plain PyTorch")
    task, gpus = answers.task, data_parallel_gpus(answers)  # those that take their own samples
    if task.mode == "training" and answers.workload.batch_size < task.accumulation_steps * gpus:  # audit YB2
        steps = task.accumulation_steps
        split = ", or split each sequence over the GPUs (task.sequence_parallel)" if kind == "transformer" \
            and gpus > 1 else ""  # audit AL43: EasyContext's 2 sequences of 512K on 8 GPUs
        lines.append(f"workload.batch_size = {answers.workload.batch_size} is the global batch a step, under one "
                     f"sample a micro-batch on each of {gpus} GPU(s) over {steps} accumulation steps: each step runs "
                     f"{steps * gpus}; answer fewer task.accumulation_steps, or the batch{split}")
    if task.target_tokens_per_s_per_stream and (kind != "transformer" or shape.encoder_only or shape.denoising_steps):
        lines.append("task.target_tokens_per_s_per_stream is not used: it is a language model's decode rate, and this "
                     "model generates no tokens")
    if task.layer_offload and (kind != "transformer" or shape.encoder_only or shape.denoising_steps
                               or shape.encoder_decoder):
        lines.append("task.layer_offload is not used: llama.cpp's -ngl splits a language model's decoder layers, and "
                     "this model is not one")
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    if task.mode == "inference" and engine == "llama_cpp" and task.quantization not in ("auto", *GGUF_FORMATS):
        # Audit ZG: AWQ weights at the edge were sized for llama.cpp, which cannot load them.
        how = "answered" if task.serving_engine == "llama_cpp" else "assumed here"
        lines.append(f"task.quantization = \"{task.quantization}\" is not a GGUF file, and llama.cpp (the engine "
                     f"{how}) loads only those: answer task.serving_engine = \"vllm\" for the checkpoint, or a "
                     "GGUF format (gguf_q4_k_m, ~4.8 bits a weight; gguf_q8_0)")
    if task.target_samples_per_s and kind == "transformer" and not shape.encoder_only:
        lines.append("task.target_samples_per_s is not used: it is the inputs a second of a model that generates "
                     "nothing, and this one generates tokens (task.target_tokens_per_s_per_stream is its rate)")
    if task.mode == "training" and kind == "transformer" and not shape.encoder_only and not shape.denoising_steps \
            and (answers.data.kind in ("images", "video", "mixed") or shape.vision_layers):
        lines.append(VISION_ENCODER_COUNTED if shape.vision_layers else VISION_LANGUAGE_MODEL if shape.vocabulary_size
                     else DIFFUSION_TRANSFORMER_TRAINED)
    if task.mode == "training" and kind == "transformer" and answers.data.kind == "audio" and shape.vocabulary_size \
            and not shape.encoder_only and not shape.encoder_decoder:  # review r71: a CTC encoder left so, 2.3x fast
        lines.append("an audio transformer with a vocabulary and no encoder stack is timed as a decoder over audio "
                     "codes (Parler-TTS), at 0.4 of a language model's utilisation: a CTC encoder (wav2vec 2.0, a "
                     "CTC Conformer) is workload.encoder_only = true, 0.18")
    if task.mode == "inference" and kind == "transformer" and answers.data.kind == "audio" and shape.vocabulary_size \
            and not shape.encoder_only and not shape.encoder_decoder:  # audit BP54: Spark-TTS at 4 streams, 2.6x fast
        lines.append("estimate: a model that decodes audio tokens (a TTS or speech LM) is timed and sized as its "
                     "language model alone: its codec's decoder or vocoder (BiCodec, SNAC, a HiFi-GAN) and any audio "
                     "encoder run beside it per request and are not counted, and they limit a server's rate as "
                     "requests grow (Spark-TTS on an L20: 4 requests ran ~2x one's rate, not the ~4x counted)")
    data = answers.data
    if task.mode == "training" and kind == "transformer" and data.tokens_count and data.images_count \
            and data.kind != "images" and not shape.encoder_decoder \
            and data.tokens_count < data.images_count * shape.sequence_length / 2:  # audit BF50: MobileVLM's 2M samples
        lines.append(f"the epoch is timed by data.tokens_count ({data.tokens_count:,} tokens), where "
                     f"{data.images_count:,} samples (data.images_count) of workload.sequence_length "
                     f"{shape.sequence_length:,} are {data.images_count * shape.sequence_length:,} and each step is "
                     "timed at that length: answer as sequence_length the length a step's samples are padded to, "
                     "or as tokens_count the tokens the steps run")
    if kind == "generic":  # audit YE15: HiFi-GAN's 84.6M parameters "fit" 8 GPUs at 0 GiB of activations
        lines.append("estimate: a model given by its parameter count alone has its weights, gradients and optimizer "
                     "states counted but no activations (a floor: a GAN vocoder's or a U-Net's are most of its "
                     "memory) and is timed at 2N FLOPs a sample (an image's; over text or audio not at all); give "
                     "it as a transformer (its layers and widths) or a CNN (its input size, "
                     "forward_gflops_per_sample and activation_elements_per_sample)")
    if task.mode == "training" and kind == "cnn" and answers.workload.preset == "custom" \
            and not answers.workload.activation_elements_per_sample:
        lines.append(CNN_SCALED_BY_FLOPS if given and not dense_prediction(answers.workload) else CNN_SCALED_BY_PIXELS)
    custom_cnn_without_flops = kind == "cnn" and answers.workload.preset == "custom" and not given
    if custom_cnn_without_flops and answers.workload.dense_head == "realtime_segmentation":
        lines.append("estimate: a real-time segmenter's FLOPs are mmseg's STDC1's a pixel (126 G operations at "
                     "1024x1920, Hailo's model zoo), as BiSeNetV2's; a lighter one, Fast-SCNN or PP-LiteSeg's decoder, "
                     "runs fewer, a wider one, STDC2 or DDRNet-23, more: give workload.forward_gflops_per_sample")
    elif custom_cnn_without_flops and not heavy_segmentation(answers.workload):
        lines.append("estimate: a custom CNN's FLOPs are ResNet-50's per saved activation, which a dilated "
                     "segmentation backbone exceeds ~9x (DeepLabV3+ R50-D8 at 512x1024: 743 GFLOP an image counted "
                     "with torch.utils.flop_counter, 85 scaled): count yours and give "
                     "workload.forward_gflops_per_sample")
    elif custom_cnn_without_flops and answers.workload.dense_head == "auto":
        # Audit ZY27: RTMO-l's pose model at 640 px came out 580 GFLOP and ~4x slow against mmpose's 19.1 ms on a V100.
        lines.append("estimate: at 512 px or more without workload.forward_gflops_per_sample, dense_head \"auto\" "
                     "sizes and times a custom CNN as a dilated segmentation net (DeepLabV3+ R50-D8's FLOPs a pixel, "
                     "8.7x ResNet-50's); a one-stage detector or pose model (YOLO, RTMDet, RTMO) runs several times "
                     "fewer: give its model card's forward_gflops_per_sample, or dense_head = \"detection\"")
    if task.vae_slicing and answers.workload.decoded_frames_at_once > 1:
        lines.append("task.vae_slicing splits a batch of videos, not a clip's frames (CogVideoX's and "
                     "HunyuanVideo's 3D VAEs): a pipeline whose 2D VAE decodes a clip's frames as one batch "
                     "(zeroscope, ModelScope T2V) decodes them one at a time with it, so answer "
                     "workload.decoded_frames_at_once = 1 (zeroscope's 30 frames at 576x320: a 33 GiB decode at "
                     "once; 7.0 GiB in all one at a time, where its model card runs it in 7.9 GB)")
    if task.prompt_cache_hit_fraction and not (task.mode == "inference" and answers.scenario == "inference_server"
                                               and answers.workload.batch_size > 1):
        lines.append("task.prompt_cache_hit_fraction is not used: it is a server's, whose many streams' prompts are "
                     "prefilled between their decode steps")
    if task.sync_each_batch and not (task.mode == "training" and stacks.unsharded_between_syncs(
            answers.scale.sharding, task.training_stack, task.accumulation_steps, answers.scale.gpu_count)):
        lines.append("task.sync_each_batch is not used: it is FSDP's under the Hugging Face Trainer with gradient "
                     "accumulation over several GPUs, where no_sync would hold the gradients whole")
    deepspeed = ("zero1", "zero2", "zero3", "zero_offload") if task.mode == "training" else ()
    if answers.scale.sharding not in deepspeed and (answers.scale.overlap_comm or answers.scale.reduce_bucket_elements
                                                    != methods.DEEPSPEED_REDUCE_BUCKET_ELEMENTS):
        lines.append("scale.reduce_bucket_elements and scale.overlap_comm are not used: they are DeepSpeed ZeRO's, in "
                     "training with scale.sharding zero1, zero2, zero3 or zero_offload; fsdp_offload is sized as "
                     "FSDP's CPUOffload, and DeepSpeed's ZeRO-3 offload holds its reduce bucket beside it "
                     "(reduce_bucket_size x 2 B: ~0.9 GiB at its default 5e8)")
    if task.mode == "training" and task.recompute not in ("none", stacks.recompute_of(task.training_stack,
                                                                                      task.recompute)):
        lines.append(f"task.recompute ({task.recompute}) is not used: Unsloth checkpoints every layer to CPU RAM by "
                     "default (get_peft_model's use_gradient_checkpointing=\"unsloth\"), counted as full recompute")
    used = stacks.mixed_layout_of(task.training_stack, task.precision, task.mixed_layout)
    if task.mode == "training" and used != task.mixed_layout and task.mixed_layout != "megatron16":
        lines.append(f"task.mixed_layout ({task.mixed_layout}) is not used: torchtune trains in bf16 with no fp32 "
                     "master copy (bf16_pure), whatever the layout answered")
    preset = model_presets().get(answers.workload.preset)
    if given and kind != "cnn" and not shape.denoising_steps and not (
            answers.task.mode == "training" and counted_denoiser(answers, shape)):
        lines.append(f"workload.forward_gflops_per_sample ({given:g}) is not used: a {kind}'s speed is timed from its "
                     "parameters and shape; it applies to a custom CNN or a diffusion model's denoiser")
    elif given and preset is not None and preset.forward_gflops_per_sample:
        lines.append(f"workload.forward_gflops_per_sample ({given:g}) is not used: {preset.name} keeps its published "
                     f"{preset.forward_gflops_per_sample:g} GFLOPs (preset = 'custom' to give your own)")
    return lines


# Audit T: OpenBMB's MiniCPM-V finetune README (full fine-tune, ZeRO-2, 8 x A100: 51.2 GiB a GPU); Qwen2-VL-7B's LoRA
# with ms-swift (20 GiB, examples/train/multimodal/grounding.sh): 20.1 estimated.
VISION_LANGUAGE_MODEL = (
    "estimate: a vision-language model is sized as its language model over workload.sequence_length (give the image "
    "tokens in it, and the vision encoder in workload.parameters if trained, workload.frozen_parameters if frozen); "
    "give its encoder's shape (workload.vision_layers, vision_hidden_size, vision_tokens: the patches it runs, "
    "several times the image tokens) to count its FLOPs and, trained, its activations (MiniCPM-Llama3-V 2.5's full "
    "fine-tune: 51.2 GiB a GPU published on 8 A100s, 37.7 estimated without them; Qwen2-VL-7B's LoRA with it frozen: "
    "20 GiB published, 20.1 estimated)")
# A model with no vocabulary trained on images or video is a diffusion transformer (audit ZV37: Chroma's LoRA was told
# it is "a vision-language model").
DIFFUSION_TRANSFORMER_TRAINED = (
    "estimate: a diffusion transformer trained on images or video (AuraFlow, FLUX, Chroma) is sized as a transformer "
    "over its latent patches and text tokens (workload.sequence_length), its text encoders and VAE as "
    "workload.frozen_parameters, the validation images its trainer samples between steps by their size "
    "(workload.output_width_px, output_height_px: a 1024 px decode holds ~6.2 GiB; SimpleTuner's Lumina 2 LoRA, 12-14 "
    "GB published, counts 6.0 GiB without them)")
VISION_ENCODER_COUNTED = (
    "estimate: the vision encoder is counted as a ViT of ~12 h^2 a layer over its patches, its attention by SDPA or "
    "flash (none of its a*s^2 scores kept, nor their FLOPs: ~10 % at SigLIP's 729 patches a crop). SmolVLM's QLoRA "
    "notebook peaks at 16.4 GB on an L4 where this counts ~7 GiB, a gap not explained: check the real peak "
    "(pth-top bench) before buying to the margin")


def ssm_state_values_per_hidden(workload: Workload, hidden: int) -> int:
    """A Mamba layer's state a sequence over h: its inner width (2h, or workload.ssm_inner_width) x its state size
    (workload.ssm_state_size, else Mamba-2's 128), over h; the default where neither is given."""
    if not (workload.ssm_state_size or workload.ssm_inner_width):
        return LINEAR_STATE_VALUES_PER_HIDDEN
    expand = workload.ssm_inner_width / hidden if workload.ssm_inner_width and hidden else MAMBA_EXPAND
    return round(expand * (workload.ssm_state_size or LINEAR_STATE_VALUES_PER_HIDDEN // MAMBA_EXPAND))


def model_shape(workload: Workload) -> tuple[ModelShape, str]:
    """The estimator's view of a workload answer, and a line saying where the numbers came from."""
    shape, origin = _model_shape(workload)
    if not workload.weights_file_gb:
        return shape, origin
    return replace(shape, weights_file_bytes=workload.weights_file_gb * 1e9,
                   weights_file_parameters=shape.parameters), origin


def _model_shape(workload: Workload) -> tuple[ModelShape, str]:
    preset_id = workload.preset
    if preset_id != "custom":
        preset = model_presets()[preset_id]
        scale, scale_text = resolution_scale(preset, workload.input_size_px)
        return ModelShape(
            kind=preset.kind, parameters=preset.parameters, layers=preset.layers, hidden_size=preset.hidden_size,
            attention_heads=preset.attention_heads, kv_heads=preset.kv_heads,
            sequence_length=min(workload.sequence_length, context_tokens(preset) or workload.sequence_length)
            or preset.sequence_length,
            activation_elements_per_sample=round(preset.activation_elements_per_sample * scale * preset.run_peak_ratio),
            forward_kernels=preset.forward_kernels,
            intermediate_size=preset.intermediate_size, gated_mlp=preset.gated_mlp,
            vocabulary_size=preset.vocabulary_size, max_context_tokens=context_tokens(preset),
            feature_width=preset.feature_width,
            largest_activation_elements=round(preset.largest_activation_elements * scale),
            lm_head=preset.lm_head, encoder_only=preset.encoder_only, active_parameters=preset.active_parameters,
            tied_embeddings=preset.tied_embeddings,
            attention_width=preset.attention_width,
            routed_expert_share=preset.experts_per_token / preset.experts_count if preset.experts_count else 0.0,
            experts_count=preset.experts_count, shared_expert_width=preset.shared_expert_width,
            head_dim=preset.head_dim,
            sliding_window_tokens=preset.sliding_window_tokens,
            sliding_window_layers=preset.sliding_window_layers,
        ), f"{preset.name}: {preset.parameters / 1e6:,.1f}M parameters{_active_text(preset.active_parameters)} " \
            f"({preset.source}){scale_text}{_peak_text(preset)}"
    kind = workload.kind
    if kind == "transformer":
        layers, hidden, vocab = workload.layers, workload.hidden_size, workload.vocabulary_size
        parameters = workload.parameters or derived_parameters(workload)
        origin = "given" if workload.parameters else DERIVED_PARAMETERS_TEXT
        active = workload.active_parameters or (derived_parameters(workload, active=True) if not workload.parameters
                                                and workload.experts_count and workload.experts_per_token else 0)
        return ModelShape(
            kind="transformer", parameters=parameters, layers=layers, hidden_size=hidden,
            attention_heads=workload.attention_heads, kv_heads=workload.kv_heads,
            sequence_length=workload.sequence_length, intermediate_size=workload.intermediate_size,
            gated_mlp=workload.gated_mlp, vocabulary_size=vocab, active_parameters=active,
            head_dim=workload.head_dim, kv_latent_width=workload.kv_latent_width,
            sliding_window_tokens=workload.sliding_window_tokens,
            sliding_window_layers=workload.sliding_window_layers, denoising_steps=workload.denoising_steps,
            linear_attention_layers=workload.linear_attention_layers,
            parallel_ssm_layers=workload.parallel_ssm_layers,
            linear_state_values_per_hidden=ssm_state_values_per_hidden(workload, hidden),
            guidance_passes=2 if workload.classifier_free_guidance else 1, decoder_layers=workload.decoder_layers,
            single_stream_dit=workload.single_stream_dit,
            output_pixels=workload.output_width_px * workload.output_height_px,
            decoded_frames_at_once=workload.decoded_frames_at_once,
            decoder_sequence_length=workload.decoder_sequence_length, encoder_only=workload.encoder_only,
            routed_expert_share=workload.experts_per_token / workload.experts_count if workload.experts_count else 0.0,
            experts_count=workload.experts_count, shared_expert_width=workload.shared_expert_width,
            lm_head=not workload.encoder_only,
            tied_embeddings=workload.tied_embeddings, lookup_parameters=workload.lookup_parameters,
            vision_layers=workload.vision_layers,
            vision_hidden_size=workload.vision_hidden_size, vision_tokens=workload.vision_tokens,
            vision_trained=workload.vision_trained, vision_checkpointed=workload.vision_checkpointed,
        ), f"custom transformer: {parameters / 1e6:,.1f}M parameters{_active_text(active)} " \
            f"({origin})"
    if kind == "cnn":
        return custom_cnn_shape(workload)
    return ModelShape(kind="generic", parameters=workload.parameters), (
        f"custom model: {workload.parameters / 1e6:,.1f}M parameters (no architecture: activations unknown)"
    )


def resolution_scale(preset: ModelPreset, input_size_px: int) -> tuple[float, str]:
    """A CNN preset at another input size: every feature map, so every saved activation and every conv's FLOPs,
    grows with the pixel count; (1.0, "") at the preset's own size or for other kinds."""
    if preset.kind != "cnn" or input_size_px <= 0 or not preset.input_size_px or input_size_px == preset.input_size_px:
        return 1.0, ""
    scale = (input_size_px / preset.input_size_px) ** 2
    return scale, (f"; at {input_size_px} px, activations and FLOPs x {scale:.3g} of its {preset.input_size_px} px "
                   "(feature maps grow with the pixel count)")


def _peak_text(preset: ModelPreset) -> str:
    if preset.run_peak_ratio == 1.0:
        return ""
    return (f"; its {preset.activation_elements_per_sample:,} values saved for backward (autograd, one typical batch) "
            f"x {preset.run_peak_ratio:g} for the run's peak (largest images, most boxes: detectron2's train mem)")


def _active_text(active: int) -> str:
    return f", {active / 1e6:,.1f}M active per token (mixture of experts: all experts held)" if active else ""


def build_preset_paths() -> dict[str, Path]:
    return {path.stem: path for path in sorted((PRESETS_DIR / "builds").glob("*.toml"))}


@dataclass(frozen=True, slots=True)
class BuildPreset:
    id: str
    title: str
    answers: Any
    pins: dict[str, tuple[str, int]]
    comments: tuple[str, ...]
    guide_price_cny: float


def load_build_preset(preset_id: str) -> BuildPreset:
    """One of the guide's example builds: its answers, the pinned parts and the wizard's comments."""
    from pth_top.configs.answers import answers_from_dict

    path = build_preset_paths()[preset_id]
    data, text = read_toml(path)
    answers = answers_from_dict(data["answers"], path=path, text=text, table_prefix="answers.")
    pins = {role: (pin["id"], pin["quantity"]) for role, pin in data.get("pins", {}).items()}
    return BuildPreset(
        id=preset_id, title=data["title"], answers=answers, pins=pins, comments=tuple(data["comments"]),
        guide_price_cny=data["guide_price_cny"],
    )

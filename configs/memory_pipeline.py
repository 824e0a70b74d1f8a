"""Frozen models beside the model: a diffusion pipeline's (text encoders, VAE) at inference on the GPU, on the CPU
(Wan's --t5_cpu), or taking turns with its denoiser (Diffusers model offload), or every model streamed from RAM a
block at a time (block offload); a reference model or an encoder split over the GPUs with the model."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pth_top.configs import stacks
from pth_top.configs.diffusion import decode_bytes, denoising_bytes, per_gpu_batch
from pth_top.configs.memory_terms import SHARDING_LABELS, MemoryBreakdown, ModelShape

if TYPE_CHECKING:  # answers import the memory modules' choices
    from pth_top.configs.answers import Answers


def pipeline_memory(answers: Answers, shape: ModelShape, breakdown: MemoryBreakdown, frozen: int, frozen_line: str
                    ) -> MemoryBreakdown:
    """The denoiser's breakdown with the pipeline's frozen models (`frozen` bytes) where the answers put them; the
    whole pipeline is staged in RAM."""
    # With model offload only its largest model is on the GPU.
    pipeline = breakdown.weights_bytes + frozen
    task = answers.task
    on_cpu = (f"the frozen models, {frozen / 1e9:.3g} GB, run on the CPU (task.frozen_on_cpu, Wan's --t5_cpu): the "
              "GPU holds the denoiser")
    if task.frozen_on_cpu and not task.pipeline_offload:
        return replace(breakdown, formula=(*breakdown.formula, on_cpu),
                       host_offload_bytes=max(breakdown.host_offload_bytes, pipeline))
    if not task.pipeline_offload:
        return replace(breakdown, weights_bytes=pipeline, formula=(*breakdown.formula, frozen_line),
                       host_offload_bytes=max(breakdown.host_offload_bytes, pipeline))
    largest = answers.workload.frozen_largest_parameters
    turn = frozen * largest // answers.workload.frozen_parameters if largest else frozen  # the largest frozen one
    if task.frozen_on_cpu:  # Wan's --offload_model --t5_cpu: the denoiser leaves the GPU for the VAE's decode
        line = f"{on_cpu}; model offload (task.pipeline_offload) moves it off for the VAE's decode"
    else:
        models = (f"the frozen models, {frozen / 1e9:.3g} GB, one at a time, the largest {turn / 1e9:.3g} GB "
                  "(workload.frozen_largest_parameters)") if largest else f"the frozen models, {frozen / 1e9:.3g} GB"
        line = (f"Diffusers enable_model_cpu_offload (task.pipeline_offload): {models}, and the model, "
                f"{breakdown.weights_bytes / 1e9:.3g} GB, take turns on the GPU: the larger is held; the VAE decodes "
                "alone, the denoiser gone")
    held = max(breakdown.weights_bytes, 0 if task.frozen_on_cpu else turn)
    batch = per_gpu_batch(answers.workload.batch_size, answers.scale.gpu_count)
    # The peak is one model at a time: the denoiser with its working set, a frozen model alone, or the VAE's decode;
    # never a text encoder larger than the denoiser beside the denoiser's activations (audit XX: Allegro's T5).
    peak = max(breakdown.weights_bytes + denoising_bytes(shape, task.precision, batch), held,
               decode_bytes(shape, batch, task.vae_tiling, task.vae_slicing))
    if held > breakdown.weights_bytes:
        line += (f"; the denoiser runs without them, {breakdown.weights_bytes / 1e9:.3g} GB with its working set, "
                 "so the activations are what that needs beyond the larger model held")
    return replace(breakdown, weights_bytes=held, activations_bytes=max(0, peak - held),
                   formula=(*breakdown.formula, line), host_offload_bytes=max(breakdown.host_offload_bytes, pipeline))


def block_offload_memory(answers: Answers, shape: ModelShape, breakdown: MemoryBreakdown, frozen: int
                         ) -> MemoryBreakdown:
    """The GPU's share where every model streams from RAM a block at a time (task.block_offload): two of the
    denoiser's blocks (the one running, the next being copied) and the step's working set, or the VAE's decode."""
    task = answers.task
    blocks = 2 * breakdown.weights_bytes // max(1, shape.layers)
    batch = per_gpu_batch(answers.workload.batch_size, answers.scale.gpu_count)
    peak = max(blocks + denoising_bytes(shape, task.precision, batch),
               decode_bytes(shape, batch, task.vae_tiling, task.vae_slicing))
    frozen_text = (f"; the frozen models, {frozen / 1e9:.3g} GB, " + (
        "run on the CPU (task.frozen_on_cpu)" if task.frozen_on_cpu else "stream the same way, once a batch")
                   ) if frozen else ""
    line = (f"block offload (task.block_offload: Diffusers group offload with streams, FramePack's DynamicSwap): the "
            f"denoiser's {breakdown.weights_bytes / 1e9:.3g} GB wait in RAM and 2 of its {shape.layers} blocks are on "
            f"the GPU at once, {blocks / 1e9:.3g} GB{frozen_text}")
    return replace(breakdown, weights_bytes=blocks, activations_bytes=max(0, peak - blocks),
                   formula=(*breakdown.formula, line),
                   host_offload_bytes=max(breakdown.host_offload_bytes, breakdown.weights_bytes + frozen))


def split_with_the_model(answers: Answers, shape: ModelShape) -> tuple[str, str]:
    """How the frozen models are split over the GPUs as the model is, and a note; ("", "") where each GPU holds them
    whole."""
    gpus = answers.scale.gpu_count
    if gpus <= 1:
        return "", ""
    if answers.task.mode != "inference":
        if answers.data.kind != "text" or answers.scale.sharding not in ("zero3", "fsdp"):
            return "", ""
        # TRL prepares a reference model or a teacher with the trained model's ZeRO-3 or FSDP: sharded as it is.
        return (f"sharded over the {gpus} GPUs as the model is ({SHARDING_LABELS[answers.scale.sharding]}, TRL's "
                "DPOTrainer and GKDTrainer)"), ""
    engine = stacks.serving_engine(answers.task.serving_engine, answers.scenario, answers.task.precision)
    if shape.denoising_steps or engine not in stacks.TENSOR_PARALLEL_ENGINES:
        return "", ""
    # vLLM and SGLang build a VLM's or speech model's encoder from their parallel linear layers (vLLM's
    # mm_encoder_tp_mode "weights", its default; audit XF7: Intern-S1's 6B InternViT whole on each of 8 GPUs).
    return (f"split over the {gpus} GPUs with the model ({engine}'s tensor-parallel encoder layers)",
            " (a port that replicates its encoder keeps it whole)")

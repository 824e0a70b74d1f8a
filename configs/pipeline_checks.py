"""Cross-field checks of the answers that describe a pipeline: an encoder-decoder's two fields, a diffusion model's
output and VAE, the offloads, a mixture's experts, sequence parallel and the speed targets, each with what it needs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pth_top.configs import stacks
from pth_top.configs.derived_shape import expert_width_problems
from pth_top.configs.offload_checks import SHARED_MEMORY_GAINS_NOTHING, llama_cpp_offload_problems
from pth_top.configs.sequence_split import training_split_problem

if TYPE_CHECKING:
    from pth_top.configs.answers import Answers


def encoder_decoder_problems(answers: Answers, model_kind: str) -> list[tuple[str, str, str]]:
    """An encoder-decoder's two fields: given together, on a custom transformer, decoder below L."""
    workload = answers.workload
    layers, tokens = workload.decoder_layers, workload.decoder_sequence_length
    if not layers and not tokens:
        return []
    key = "decoder_layers" if layers else "decoder_sequence_length"
    if workload.preset != "custom" or model_kind != "transformer":
        return [("workload", key, "an encoder-decoder is given as a custom transformer (preset = 'custom')")]
    if not layers or not tokens:
        missing = "decoder_sequence_length" if layers else "decoder_layers"
        return [("workload", key, f"an encoder-decoder needs both its decoder layers and tokens: give {missing} too")]
    if layers >= workload.layers:
        return [("workload", "decoder_layers", "must be below layers, which count the encoder's too (Whisper "
                 "large: 32 of 64)")]
    if workload.denoising_steps or workload.active_parameters or workload.sliding_window_tokens \
            or workload.linear_attention_layers or workload.parallel_ssm_layers:
        return [("workload", "decoder_layers", "an encoder-decoder is modelled dense, without a sliding window, "
                 "linear layers or state-space blocks, and not as a diffusion model")]
    return []


def diffusion_and_offload_problems(answers: Answers, model_kind: str) -> list[tuple[str, str, str]]:
    """A diffusion model's fields and the two offloads, where they apply: each with what it needs."""
    workload, task = answers.workload, answers.task
    problems: list[tuple[str, str, str]] = []
    if workload.denoising_steps and (workload.preset != "custom" or model_kind != "transformer"):
        problems.append(("workload", "denoising_steps", "a diffusion model is given as a custom transformer "
                         "(preset = 'custom', kind = 'transformer': its denoiser's layers, width and tokens)"))
    elif workload.denoising_steps and task.mode != "inference":
        problems.append(("workload", "denoising_steps", "sampling steps are inference's: training runs one step a "
                         "sample (set 0, or task.mode = 'inference')"))
    elif workload.denoising_steps and (task.serving_engine != "auto" or task.kv_cache_dtype != "auto"):
        key = "serving_engine" if task.serving_engine != "auto" else "kv_cache_dtype"
        problems.append(("task", key, "a diffusion model runs in its own pipeline (Diffusers), with no KV cache: "
                         "leave it auto"))
    if task.mode == "training" and (workload.output_width_px or workload.output_height_px):  # audit YK17
        if not (workload.output_width_px and workload.output_height_px) or answers.data.kind not in ("images", "video"):
            missing_height = workload.output_width_px and not workload.output_height_px
            key = "output_height_px" if missing_height else "output_width_px"
            problems.append(("workload", key, "in training, the size of the validation images a diffusion trainer "
                             "samples between steps: give output_width_px and output_height_px together, with "
                             "data.kind = 'images' or 'video' (the denoiser's tokens a sample are "
                             "workload.sequence_length)"))
    elif (workload.output_width_px or workload.output_height_px or workload.decoded_frames_at_once > 1) and not (
            workload.denoising_steps and workload.output_width_px and workload.output_height_px):
        key = "output_height_px" if workload.output_width_px else "output_width_px"
        problems.append(("workload", key, "a diffusion model's output size sizes its VAE decode: give "
                         "denoising_steps, output_width_px and output_height_px together"))
    elif workload.decoded_frames_at_once > 1 and answers.data.kind != "video":
        problems.append(("workload", "decoded_frames_at_once", "frames are a video's: give data.kind = 'video'"))
    if workload.unet and not (workload.forward_gflops_per_sample or workload.output_width_px
                              and workload.output_height_px):
        problems.append(("workload", "unet", "a UNet's FLOPs a pass follow its output's pixels: give "
                         "output_width_px and output_height_px (in training, its images' size), or its counted "
                         "forward_gflops_per_sample"))
    if task.vae_slicing and not (workload.denoising_steps and workload.output_width_px):
        problems.append(("task", "vae_slicing", "slices a diffusion model's VAE decode: give denoising_steps and its "
                         "output size (workload.output_width_px, output_height_px)"))
    if task.vae_tiling and not ((workload.denoising_steps or task.mode == "training") and workload.output_width_px):
        problems.append(("task", "vae_tiling", "tiles a diffusion model's VAE decode: give its output size "
                         "(workload.output_width_px, output_height_px) and denoising_steps, or in training the "
                         "validation images' size"))
    if workload.classifier_free_guidance and not workload.denoising_steps:
        problems.append(("workload", "classifier_free_guidance", "guidance is a diffusion model's: give "
                         "denoising_steps too"))
    problems.extend(llama_cpp_offload_problems(answers.scenario, workload, task))
    shared = SHARED_MEMORY_GAINS_NOTHING
    if (workload.experts_count or workload.experts_per_token) and not (
            workload.preset == "custom" and workload.active_parameters
            and 0 < workload.experts_per_token < workload.experts_count):
        key = "experts_per_token" if workload.experts_count else "experts_count"
        problems.append(("workload", key, "a custom mixture of experts gives active_parameters, experts_count and "
                         "experts_per_token (fewer than experts_count) together"))
    else:
        problems.extend(expert_width_problems(workload))
    if task.experts_loop_hit_only and not stacks.experts_looped(task):
        problems.append(("task", "experts_loop_hit_only", "says which experts transformers' Python loop runs: give "
                         "task.experts_loop = true"))
    if task.cache_embeddings and not (task.mode == "training" and workload.frozen_parameters):
        problems.append(("task", "cache_embeddings", "caches the frozen models' outputs for training: give the frozen "
                         "models (workload.frozen_parameters) and task.mode = 'training'"))
    if workload.frozen_largest_parameters > workload.frozen_parameters:
        problems.append(("workload", "frozen_largest_parameters", "the largest frozen model is one of "
                         "workload.frozen_parameters: at most their sum"))
    if task.pipeline_offload and not (workload.denoising_steps and workload.frozen_parameters):
        problems.append(("task", "pipeline_offload", "model offload moves a diffusion pipeline's models in turn: "
                         "give denoising_steps and the frozen models beside it (workload.frozen_parameters)"))
    elif task.pipeline_offload and answers.scenario == "edge_deployment":
        problems.append(("task", "pipeline_offload", f"not at the edge: {shared}"))
    if task.block_offload and not (workload.denoising_steps and task.mode == "inference"):
        problems.append(("task", "block_offload", "streams a diffusion model's blocks from RAM at inference: give "
                         "workload.denoising_steps and task.mode = 'inference'"))
    elif task.block_offload and answers.scenario == "edge_deployment":
        problems.append(("task", "block_offload", f"not at the edge: {shared}"))
    if task.sequence_parallel_gpus and not (task.sequence_parallel and task.mode == "training"):
        problems.append(("task", "sequence_parallel_gpus", "is the split of task.sequence_parallel in training"))
    if task.sequence_parallel and task.mode == "training":
        split_problem = training_split_problem(answers, model_kind)
        problems.extend([("task", "sequence_parallel", split_problem)] if split_problem else [])
    elif task.sequence_parallel and not (workload.denoising_steps and task.mode == "inference"
                                         and answers.scale.gpu_count > 1 and not task.block_offload):
        problems.append(("task", "sequence_parallel", "splits a diffusion model's tokens over GPUs at inference: "
                         "give workload.denoising_steps, task.mode = 'inference' and scale.gpu_count of 2 or more, "
                         "without task.block_offload"))
    decoder = not workload.denoising_steps and not workload.encoder_only and (
        workload.preset != "custom" or workload.kind == "transformer")
    if task.target_tokens_per_s_per_stream and not (task.mode == "inference" and decoder):
        problems.append(("task", "target_tokens_per_s_per_stream", "is the decode rate of a language model in "
                         "inference: give task.mode = 'inference' and a transformer that generates tokens"))
    if task.target_samples_per_s and (task.mode != "inference" or workload.denoising_steps or (
            workload.preset == "custom" and workload.kind == "transformer" and not workload.encoder_only)):
        problems.append(("task", "target_samples_per_s", "is the inputs a second of a model that generates nothing in "
                         "inference (a CNN, an encoder): a language model's is target_tokens_per_s_per_stream"))
    if task.target_samples_per_s and task.target_tokens_per_s_per_stream:
        problems.append(("task", "target_samples_per_s", "one target: a decode a stream or inputs a second"))
    if task.frozen_on_cpu and not (task.mode == "inference" and workload.denoising_steps
                                   and workload.frozen_parameters):
        problems.append(("task", "frozen_on_cpu", "runs a diffusion pipeline's frozen models (text encoders) on the "
                         "CPU in inference: give denoising_steps, workload.frozen_parameters and task.mode = "
                         "'inference'"))
    elif task.frozen_on_cpu and answers.scenario == "edge_deployment":
        problems.append(("task", "frozen_on_cpu", f"not at the edge: {shared}"))
    return problems

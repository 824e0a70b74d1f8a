"""A language model's inference speed on a build's GPUs: decode a stream and under load, its first token, and the
paths a step takes beside it (experts or layers in RAM, a denoiser, a CNN or an encoder's forward pass)."""

from __future__ import annotations

import dataclasses

import msgspec

from pth_top.configs import memory_methods as methods
from pth_top.configs import speed as sp
from pth_top.configs import speed_notes as notes
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.diffusion import denoising_speed
from pth_top.configs.expert_offload import offloaded_speed
from pth_top.configs.layer_offload import partial_offload_speed
from pth_top.configs.memory_inference import forward_only, inference_weight_bytes, kv_split
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.speed_comm import tensor_parallel_prefill_seconds
from pth_top.configs.speed_forward import cnn_speed, forward_speed
from pth_top.configs.speed_moe import decode_expert_loop, mixture
from pth_top.configs.speed_reads import decode_reads, prefill_attention_flops, prefill_flops
from pth_top.configs.speed_server import decode_summary, fresh_prompts
from pth_top.configs.unet import denoiser_gflops_per_pass
from pth_top.configs.vision_encoder import prefill_flops as vision_prefill_flops


def inference(answers: Answers, shape: ModelShape, device: sp.Device) -> sp.Prediction:
    task, batch = answers.task, answers.workload.batch_size
    if notes.work_a_sample_unknown(answers, shape):
        return sp.Prediction(summary=[notes.GENERIC_NOT_PREDICTED])
    if shape.kind != "transformer":
        return cnn_speed(answers, shape, device)
    if shape.denoising_steps:
        weights, _ = inference_weight_bytes(shape, task.precision, task.quantization)
        frozen, _ = methods.frozen_models(answers.workload.frozen_parameters, answers.workload.frozen_precision)
        # Model offload moves the pipeline each image, only the denoiser when the frozen models run on the CPU.
        # Block offload streams the denoiser each step (denoising_speed) and the frozen models once a batch.
        swapped = (0.0 if task.block_offload else weights) + (0.0 if task.frozen_on_cpu else frozen) \
            if task.pipeline_offload or task.block_offload else 0.0
        runtime = stacks.forward_runtime(task.forward_runtime, answers.scenario)
        counted = denoiser_gflops_per_pass(answers.workload, shape.parameters)
        return denoising_speed(shape, batch, weights, device, swapped, counted,
                               "clip" if answers.data.kind in ("video", "audio") else "image", runtime == "eager",
                               streamed=task.block_offload, sequence_parallel=task.sequence_parallel,
                               compiled=runtime == "compiled")
    if shape.encoder_decoder:
        return sp.Prediction(summary=[notes.ENCODER_DECODER_NOT_PREDICTED])
    if forward_only(shape):
        return forward_speed(answers, shape, device)
    reads = decode_reads(answers, shape)
    # A step split between the GPU and the CPU keeps the generic decode constants: the RTX 2080's llmfit rows with
    # experts or layers in RAM run 12-62 % under its GPU part at llama.cpp's full-GPU ones (published_speeds.py).
    split_step = dataclasses.replace(device, llama_cpp_cuda=False)
    if task.expert_offload and device.experts_in_ram_share:  # none where the card (or shared memory) holds them all
        return offloaded_speed(answers, shape, split_step, reads)
    if device.layers_in_ram:
        return partial_offload_speed(answers, shape, split_step, reads)
    prompt, average_context, weights = reads.prompt, reads.average_context, reads.weight_bytes
    attention = 4.0 * shape.attention_flops_width * shape.cached_layer_tokens(int(average_context))
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    copies = 1.0 if device.layer_split else device.count / kv_split(shape, device.count, engine)
    moe = mixture(shape)
    # transformers' Python loop over the experts, as answered or by its release (decode_expert_loop reads it answered)
    looped = moe and engine == "hf_generate" and stacks.experts_looped(task)
    loop_task = msgspec.structs.replace(task, experts_loop=True)
    step_tokens = task.speculative_draft_tokens + 1  # a stream's tokens a step verifies (1 without a draft)
    passes, passes_text = stacks.generate_kv_passes(engine, task.transformers_version, task.flash_attention,
                                                    shape.attention_heads / shape.kv_heads
                                                    if shape.kv_heads and not shape.latent_kv else 1.0,
                                                    compiled=task.forward_runtime == "compiled")
    def decode_at(batch: int, looped: bool = looped) -> sp.Prediction:
        fraction = reads.bandwidth_fraction(batch * reads.kv_bytes * copies, moe=moe)
        return sp.decode(reads.read_bytes, reads.kv_bytes * copies * passes, batch, 2.0 * shape.active + attention,
                         device, fraction, shape.layers, moe=moe,
                         eager=engine == "hf_generate" and task.forward_runtime != "compiled",
                         moe_layer_s=sp.MOE_LAYER_S if moe and not looped and engine in (
                             *stacks.TENSOR_PARALLEL_ENGINES, "hf_generate") else 0.0,
                         format_layer_s=reads.format_layer_s,
                         no_graphs=not task.cuda_graphs and engine in stacks.TENSOR_PARALLEL_ENGINES,
                         expert_loop=decode_expert_loop(shape, loop_task, batch * step_tokens) if looped else (0.0, ""),
                         width=shape.hidden_size,
                         speculative=(task.speculative_draft_tokens, task.speculative_accept_length))
    out = decode_at(batch)
    if moe and engine == "hf_generate" and not looped and shape.experts_count:  # audit DP71: Yuan2.0-M32, 7.4x fast
        one_loop = decode_at(batch, looped=True).figures["decode_tokens_per_s_per_stream"]
        out.warnings.append(notes.grouped_experts_assumed(one_loop))
    if engine == "llama_cpp" and batch > 1:
        one = decode_at(1).figures["decode_tokens_per_s_per_stream"]
        out.warnings.append(notes.ollama_queue(batch, one))
    if engine == "hf_generate" and task.forward_runtime == "compiled" and device.layer_split and device.count > 1:
        out.formula.append(f"a compiled generate() on {device.count} GPUs is timed as generate()'s layer split, one "
                           "GPU at a time; gpt-fast's tensor parallel (torchrun) runs each layer on all of them: "
                           "answer task.serving_engine = \"vllm\" for that rate")
    if passes > 1:
        out.formula.append(f"generate() moves each stream's KV cache x {passes:g} a step: {passes_text}")
    if copies > 1:  # tensor parallel keeps a copied cache on several GPUs, and each reads its copy
        out.formula.append(f"each stream's KV cache read x {copies:g} (split {device.count / copies:g} ways)")
    prefill = prefill_flops(shape, prompt)
    first_s, first_line = _prefill_seconds(shape, device, prefill, weights, prefill_attention_flops(shape, prompt),
                                           prompt)
    out.formula.insert(0, reads.line)
    attention_notes = f", h attention's width {shape.attention_flops_width:,}" + (
        " (MLA)" if shape.attention_width else "") if shape.attention_flops_width != shape.hidden_size else ""
    if shape.window_layers:
        attention_notes += (f"; {shape.window_layers} window layers attend to s x w - w^2/2 pairs, w = "
                            f"{shape.sliding_window_tokens:,}")
    if shape.linear_attention_layers:
        attention_notes += f"; {shape.linear_attention_layers} linear-attention layers attend to no pairs"
    active = ", N the active parameters" if shape.active < shape.parameters else ""
    encoder = vision_prefill_flops(shape)
    images = f" + the vision encoder's 2N over {shape.vision_tokens:,} patches, {encoder / 1e12:.3g} TFLOP" \
        if encoder else ""
    out.formula.append(first_line + f" (2N x {prompt:,} prompt tokens + causal attention 2*L*h*s^2{images}; one "
                       f"prompt alone{active}{attention_notes})")
    prompt_loop_s, prompt_loop_text = decode_expert_loop(shape, loop_task, prompt) if looped else (0.0, "")
    if prompt_loop_s:  # the prompt's pass loops over the experts its tokens hit too
        first_s += prompt_loop_s
        out.formula.append(f"the first token also waits on the prompt's {prompt_loop_text} = "
                           f"{sp.duration(prompt_loop_s)}")
    per_stream = decode_summary(out, batch, prompt, first_s)
    # Many prompts share one read of the weights: their compute counts, on a server or an edge module's batch of
    # streams (audit ZL: 8 streams of 2k prompts on an Orin NX, ~20 tokens/s published, 58 predicted without it).
    if answers.scenario in ("inference_server", "edge_deployment"):
        cached = int(task.prompt_cache_hit_fraction * prompt)  # the rest attends to the cached prefix too
        attention = prefill_attention_flops(shape, prompt) - prefill_attention_flops(shape, cached)
        fresh = prefill - prefill_flops(shape, cached, images=False)  # a request's image is its own
        compute_s, _ = _prefill_seconds(shape, device, fresh, 0.0, attention, prompt - cached)
        fresh_prompts(out, batch, prompt, task.generated_tokens, first_s, compute_s, task.prompt_cache_hit_fraction)
    if answers.scenario == "edge_deployment" and device.tensor and engine == "llama_cpp":  # a Jetson module
        out.formula.append(notes.JETSON_RUNTIMES_NOTE)
    looped_s, looped_text = decode_expert_loop(shape, loop_task, batch * step_tokens) if looped else (0.0, "")
    steps_per_s = per_stream / (task.speculative_accept_length if task.speculative_draft_tokens else 1.0)
    loop_share = looped_s * steps_per_s  # of each decode step
    if per_stream < sp.SLOW_DECODE_TOKENS_PER_S:
        out.warnings.append(notes.slow_decode(per_stream, device, engine, task.precision, loop_share,
                                              shape.attention_heads))
    elif notes.loop_is_most(loop_share):  # not slow, but the loop is most of each step
        out.warnings.append(notes.expert_loop_share(looped_s, steps_per_s, looped_text, task.experts_loop_hit_only))
    if first_s > sp.SLOW_FIRST_TOKEN_S:
        out.warnings.append(f"slow: the first token takes ~{sp.duration(first_s)} on {device.name} (over "
                            f"{sp.SLOW_FIRST_TOKEN_S:g} s): the prompt's prefill is compute-bound")
    out.warnings.extend(notes.fp8_expert_blocks(answers, shape, device, engine))
    return out


def _prefill_seconds(shape: ModelShape, device: sp.Device, flops: float, weight_bytes: float, attention_flops: float,
                     tokens: int) -> tuple[float, str]:
    """A prefill of `tokens`: its compute (speed.prefill_seconds) and, under tensor parallel, its all-reduces."""
    seconds, line = sp.prefill_seconds(flops, weight_bytes, device, attention_flops)
    split_s, split_text = tensor_parallel_prefill_seconds(shape.layers, shape.hidden_size, tokens, device)
    if not split_s:
        return seconds, line
    return seconds + split_s, f"{line}{split_text}, {sp.duration(seconds + split_s)} in all"

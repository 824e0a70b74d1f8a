"""A build's speed: its GPUs as configs.speed reads them (datasheet, or a bench run's measured ceilings), the
job from its answers, the prediction as a Speed and the warnings when the job would take unreasonably long."""

from __future__ import annotations

import dataclasses
from typing import Any

from pth_top.configs import memory_methods as methods
from pth_top.configs import speed as sp
from pth_top.configs import speed_notes as notes
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.build import Build, Speed
from pth_top.configs.diffusion import DENOISER_COUNTED_FRACTION
from pth_top.configs.host_link import host_generation, lanes_per_gpu, main_link
from pth_top.configs.layer_offload import with_host_ram
from pth_top.configs.measured_ceilings import MeasuredCeilings
from pth_top.configs.memory import micro_batch_per_gpu
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.memory_terms import ModelShape, value_bytes_of
from pth_top.configs.presets import counted_denoiser, model_shape
from pth_top.configs.ranking import INFERENCE_RATE_BY_PRECISION, RATE_NAMES, TRAINING_RATE_BY_PRECISION
from pth_top.configs.sequence_split import ring_seconds, training_split
from pth_top.configs.speed_cnn import activation_seconds, cnn_tensor_fraction, compiled_forward, mean_training_image
from pth_top.configs.speed_comm import (
    allreduce_gb_per_s,
    exposed_seconds,
    step_communication,
)
from pth_top.configs.speed_cpu import cpu_inference
from pth_top.configs.speed_dequant import dequant_seconds
from pth_top.configs.speed_epoch import epoch_seconds
from pth_top.configs.speed_forward import forward_flops_per_sample
from pth_top.configs.speed_inference import inference
from pth_top.configs.speed_moe import MOE_TRAINING_MFU_SHARE, expert_loop_seconds, mixture
from pth_top.configs.unet import denoiser_gflops_per_pass
from pth_top.configs.vision_encoder import language_parameters
from pth_top.configs.vision_encoder import training_flops_per_sample as vision_training_flops

# Eager attention (task.flash_attention = false) writes and reads its s x s scores through memory: ~29 B an element a
# forward pass in 16 bits (the scores 2, mask add 4, clamp 4, softmax to fp32 6, back 6, dropout 5, AV read 2), twice
# that back: OPT-350m on an L40S, 8 x 1,024 tokens, 0.526 s a step eager, 0.122 with SDPA (transformers' OPT docs).
EAGER_SCORES_BYTES_PER_PASS = 29.0


def device_for(spec: dict[str, Any], name: str, count: int, answers: Answers, shape: ModelShape,
               measured: MeasuredCeilings | None, host_generation: int = 0, lanes: int = 16) -> sp.Device:
    """The GPUs' figures for this job: the matmul rate at its precision, bandwidth, the link between them (PCIe at
    the lower of the card's and the host's generation, `host_generation`; 0: the card's; `lanes` wide)."""
    precision, kind = answers.task.precision, shape.kind
    if answers.task.mode == "training":
        rate = TRAINING_RATE_BY_PRECISION.get(precision, TRAINING_RATE_BY_PRECISION["bf16"])[0]
        if rate == "fp32_tflops" and kind == "cnn" and spec.get("tf32_dense_tflops", 0) > 0 \
                and spec.get("software") == "cuda":
            # cuDNN convolutions run TF32 by default (torch.backends.cudnn.allow_tf32) on tensor cores, at a
            # tensor core's CNN fraction, also on a GeForce whose TF32 peak is its FP32 one.
            rate = "tf32_dense_tflops"
    else:
        rate = INFERENCE_RATE_BY_PRECISION.get(precision, "bf16_dense_tflops")
        if rate == "bf16_dense_tflops" and not spec.get(rate) and spec.get("fp16_dense_tflops"):
            rate = "fp16_dense_tflops"  # engines serve bf16 weights in fp16 before Ampere (vLLM's dtype "auto")
    if rate == "fp32_tflops" and answers.task.tf32 and spec.get("tf32_dense_tflops", 0) > 0 \
            and spec.get("software") == "cuda":
        rate = "tf32_dense_tflops"  # fp32 matmuls on TF32 tensor cores, as the answers say the stack runs them
    if not spec.get(rate):
        rate = "fp32_tflops"  # no such tensor unit (bf16 on a V100 or T4, a CPU board): the FP32 rate
    attention_rate = (0.0, "")  # FP8 weights in vLLM/SGLang: FP8 GEMMs, the attention core (FlashAttention) 16-bit
    decoder = kind == "transformer" and not forward_only(shape) and not shape.denoising_steps
    if spec.get("fp8_dense_tflops") and decoder and stacks.fp8_matmuls(answers.task, answers.scenario):
        attention_rate, rate = (float(spec.get(rate, 0.0)), RATE_NAMES[rate]), "fp8_dense_tflops"
    link, link_gb_per_s, nvlink = _link(spec, count, host_generation, lanes)
    tflops, bandwidth = float(spec.get(rate, 0.0)), float(spec.get("bandwidth_gb_per_s", 0.0))
    measured_tflops, measured_bandwidth, busbw = False, False, 0.0
    if measured is not None:
        if measured.tflops.get(rate):
            tflops, measured_tflops = measured.tflops[rate], True
        if measured.bandwidth_gb_per_s:
            bandwidth, measured_bandwidth = measured.bandwidth_gb_per_s, True
        if measured.busbw_gpus == count > 1:
            busbw = measured.busbw_gb_per_s
    layer_split = stacks.takes_turns(answers.task.mode, answers.task.serving_engine, answers.scenario, precision)
    return sp.Device(name=name, count=count, bandwidth_gb_per_s=bandwidth, tflops=tflops, rate_name=RATE_NAMES[rate],
                     layer_split=layer_split,
                     tensor=rate != "fp32_tflops" and spec.get("software") != "cpu", link=link,
                     link_gb_per_s=link_gb_per_s, nvlink=nvlink, measured_bandwidth=measured_bandwidth,
                     measured_tflops=measured_tflops, busbw_gb_per_s=busbw,
                     fp32_tflops=0.0 if spec.get("software") == "cpu" else float(spec.get("fp32_tflops", 0.0)),
                     decode_bandwidth_fraction=float(spec.get("decode_bandwidth_fraction", 0.0)),
                     training_mfu=float(spec.get("training_mfu", 0.0)), attention_rate=attention_rate,
                     peer_to_peer=spec.get("form") != "consumer", edge_module=spec.get("form") == "edge",
                     llama_cpp_cuda=spec.get("software") == "cuda" and spec.get("form") != "edge" and decoder
                     and answers.task.mode == "inference" and stacks.serving_engine(
                         answers.task.serving_engine, answers.scenario, precision) == "llama_cpp",
                     cnn_fraction=cnn_tensor_fraction(spec.get("form") == "consumer" and rate in (
                         "bf16_dense_tflops", "fp16_dense_tflops", "tf32_dense_tflops"), answers.task.channels_last,
                         compiled_forward(answers)))


def _link(spec: dict[str, Any], count: int, host_generation: int = 0, lanes: int = 16) -> tuple[str, float, bool]:
    if count < 2:
        return "", 0.0, False
    generation = int(spec.get("pcie_generation", 3) or 3)
    if spec.get("nvlink") == "sxm" or spec.get("form") == "oam":
        fabric = "Infinity Fabric" if spec.get("form") == "oam" else "NVLink"
        return fabric, float(spec.get("nvlink_gb_per_s") or sp.NVLINK_SXM_GB_PER_S.get(generation, 150.0)), True
    pcie = pcie_generation(spec, host_generation)
    return f"PCIe Gen{pcie} x{lanes}", sp.pcie_gb_per_s(pcie, lanes), False


def pcie_generation(spec: dict[str, Any], host_generation: int = 0) -> int:
    """A slot runs at the older of the card's and the CPU's PCIe (a Gen5 card on an EPYC 7003 server: Gen4)."""
    card = int(spec.get("pcie_generation", 3) or 3)
    return min(card, host_generation) if host_generation else card


def training_method(answers: Answers, shape: ModelShape) -> str:
    """The method a step is timed as: LoRA and its kin only on a transformer; a frozen backbone on any model."""
    method = answers.task.method
    return method if shape.kind == "transformer" or method == "frozen" else "full"


def training_work(answers: Answers, shape: ModelShape) -> tuple[float, str, str, int]:
    """One sample's training FLOPs, the formula's text, what the rate counts (tokens or samples) and a sample's
    tokens (1 where samples are counted): what any device's step is timed from."""
    task = answers.task
    recompute = stacks.recompute_of(task.training_stack, task.recompute)
    method = training_method(answers, shape)
    if shape.encoder_decoder:  # each side over its own tokens: timed a sample at a time
        per_sample, text = _encoder_decoder_flops(shape, method, recompute)
        return per_sample, text, "samples", 1
    if counted_denoiser(answers, shape):  # audit XM9: SD2's UNet timed at 6N a latent token was 5x slow
        given, source = denoiser_gflops_per_pass(answers.workload, shape.parameters)
        per_sample, passes = sp.sample_flops_per_step(given * 1e9, method, recompute)
        return per_sample, (f"{passes} of the denoiser's {given:.3g} GFLOP forward ({source}) = "
                            f"{per_sample / 1e9:.3g} GFLOP per sample"), "samples", 1
    if shape.kind == "transformer":
        context, causal = attended_keys(shape, over_text=answers.data.kind == "text")
        tokens = shape.sequence_length
        per_token, text = sp.transformer_flops_per_token(language_parameters(shape), shape.layers,
                                                         shape.attention_flops_width, context, method, recompute)
        if shape.full_attention_layers < shape.layers:
            window = f", {shape.window_layers} at the {shape.sliding_window_tokens:,}-token window" \
                if shape.window_layers else ""
            linear = f", {shape.linear_attention_layers} linear ones at none" if shape.linear_attention_layers else ""
            text += (f" (s = {context:,} keys a query attends, the layers' mean: {shape.full_attention_layers} layers "
                     f"at {tokens:,}{' causal' if causal else ''}{window}{linear})")
        elif causal:
            text += f" (s = {context:,}: causal attention over {tokens:,} tokens, half the scores)"
        frozen = answers.workload.frozen_parameters if answers.data.kind == "text" else 0
        if frozen:  # a teacher or a reference model (DPO) runs its forward over the same tokens each step
            per_token += 2.0 * frozen
            text += f" + 2 x {frozen / 1e9:.3g}B frozen (a teacher's or reference model's forward)"
        if answers.task.reference_without_adapters:  # audit BL52: NeuralHermes' DPO, TRL's peft reference
            base = language_parameters(shape)
            per_token += 2.0 * base
            text += f" + 2 x {base / 1e9:.3g}B (the reference: the base's forward with its adapters off)"
        moe = f", N = {shape.active / 1e9:.3g}B active of {shape.parameters / 1e9:.3g}B" \
            if shape.active < shape.parameters else ""
        vision, vision_text = vision_training_flops(shape, method, recompute)
        return (per_token * shape.sequence_length + vision,
                f"{text}{moe} = {per_token / 1e9:.3g} GFLOP per token{vision_text}", "tokens", shape.sequence_length)
    forward, origin = forward_flops_per_sample(answers, shape)
    if shape.kind == "generic":
        forward, origin = 2.0 * shape.parameters, "2N per sample (no architecture)"
    per_sample, passes = sp.sample_flops_per_step(forward, method, recompute)
    text = f"{passes} of {origin}"
    frozen = answers.workload.frozen_parameters
    if shape.kind == "cnn" and frozen and shape.parameters and not answers.task.cache_embeddings:
        # A momentum encoder or a teacher runs its forward on each sample (audit YE15: MoCo v2's key encoder, 1.55x
        # fast as a supervised ResNet-50), at the trained net's FLOPs a parameter.
        extra = forward * frozen / shape.parameters
        per_sample += extra
        text += (f" + the frozen {frozen / 1e6:,.1f}M parameters' forward, {extra / 1e9:.3g} GFLOP (a momentum "
                 "encoder's or a teacher's: MoCo, BYOL, DINO; at the trained net's FLOPs a parameter)")
    return per_sample, f"{text} = {per_sample / 1e9:.3g} GFLOP per sample", "samples", 1


def attended_keys(shape: ModelShape, over_text: bool = True) -> tuple[int, bool]:
    """The keys a query attends in training, the layers' mean, and whether causally: a decoder's causal kernel
    (FlashAttention's, SDPA's) skips the masked half of a full layer's scores; an encoder, a denoiser (a DiT) or a
    transformer over any data but text without a vocabulary (patches, latents, frames) attends all (audit AQ45:
    Hunyuan-DiT's fine-tune, data.kind "images")."""
    causal = bool(shape.vocabulary_size or over_text) and not (shape.encoder_only or shape.denoising_steps
                                                          or shape.single_stream_dit)
    tokens = shape.sequence_length
    pairs = shape.attended_pairs(tokens) if causal else shape.bidirectional_pairs(tokens)
    return round(pairs / max(1, tokens) / max(1, shape.layers)), causal


def _attention_share(shape: ModelShape, method: str, recompute: str, over_text: bool) -> float:
    """The share of a transformer's training FLOPs in attention's scores (what ring attention's transfers overlap)."""
    keys, _ = attended_keys(shape, over_text)
    args = (language_parameters(shape), shape.layers, shape.attention_flops_width)
    whole = sp.transformer_flops_per_token(*args, keys, method, recompute)[0]
    return 1.0 - sp.transformer_flops_per_token(*args, 0, method, recompute)[0] / whole if whole else 0.0


def training(answers: Answers, shape: ModelShape, device: sp.Device, host_gb_per_s: float) -> sp.Prediction:
    if notes.work_a_sample_unknown(answers, shape):
        return sp.Prediction(summary=[notes.GENERIC_NOT_PREDICTED])
    task, n = answers.task, device.count
    recompute = stacks.recompute_of(task.training_stack, task.recompute)
    split = training_split(answers)  # task.sequence_parallel: every sample on all n GPUs, 1/n of its tokens each
    layer_split = answers.scale.sharding == "layers" and n > 1  # every sample through all n GPUs, one at a time
    data_parallel = 1 if layer_split else max(1, n // split)
    micro = micro_batch_per_gpu(answers.workload.batch_size, task.accumulation_steps, data_parallel)
    samples_per_gpu = micro * task.accumulation_steps
    method = training_method(answers, shape)
    audio_share, audio_note = notes.audio_training_share(shape) if answers.data.kind == "audio" else (1.0, "")
    per_sample, text, unit, tokens = training_work(answers, shape)
    moe = mixture(shape)
    fraction = device.cnn_fraction if shape.kind == "cnn" else DENOISER_COUNTED_FRACTION \
        if counted_denoiser(answers, shape) else device.transformer_training_mfu
    share = (audio_share if shape.kind == "transformer" else 1.0) * (MOE_TRAINING_MFU_SHARE if moe else 1.0)
    compute, compute_text = sp.achieved_tflops(device, fraction, share)
    if moe:
        compute_text += f" (x {MOE_TRAINING_MFU_SHARE:g} for a mixture of experts: its routing and small GEMMs)"
    mean_share, peak_ratio, mean_text = mean_training_image(answers)
    compute_s = samples_per_gpu * per_sample * mean_share / split / (compute * 1e12)
    out = sp.Prediction()
    share_text = f", 1/{split} of each (sequence parallel)," if split > 1 else ""
    out.formula.append(f"training: {text}{mean_text}; {samples_per_gpu} samples{share_text} per GPU per step / "
                       f"({compute_text}) = {sp.duration(compute_s)} of compute per step")
    dequant_s, dequant_text = dequant_seconds(shape, device, recompute, task.accumulation_steps,
                                              int8_base=method == "lora_int8") \
        if method in ("qlora", "lora_int8") and shape.kind == "transformer" else (0.0, "")  # audit ZV: Gemma-7B
    compute_s += dequant_s
    out.formula.extend([dequant_text] if dequant_text else [])
    if method == "lora_int8":  # QLoRA's step, LLM.int8()'s measured share more
        compute_s *= sp.LLM_INT8_OVER_QLORA
        out.formula.append(f"an 8-bit base (LLM.int8()): QLoRA's step so far x {sp.LLM_INT8_OVER_QLORA:.2f} "
                           f"(FinGPT's int8 and 4-bit LoRA on one RTX 3090, 6h28min against 4h9min) = "
                           f"{sp.duration(compute_s)}")
    loop_s, loop_text = expert_loop_seconds(answers, shape, recompute)
    compute_s += loop_s
    out.formula.extend([loop_text] if loop_text else [])
    memory_s, memory_text = activation_seconds(answers, shape, device, samples_per_gpu, training=True)
    memory_s *= mean_share / peak_ratio  # the mean image's, not the run's peak that memory is sized at
    if memory_s:  # a CNN's step waits on the slower of its FLOPs and its activations' trips (speed_cnn)
        out.formula.append(f"{memory_text} per step")
        compute_s = max(compute_s, memory_s)
    if shape.kind == "transformer" and shape.layers:  # a small model's short micro-batches wait on their dispatch
        passes = 1 if method == "frozen" else 3 + (recompute == "full")  # forward, backward twice, the re-forward
        micro_batches = max(1, task.accumulation_steps)
        # A vision encoder's layers launch too: a frozen one's forward, a trained one's passes (audit AU46: Qwen-VL's
        # 48 frozen ViT layers beside its 32, a step at 384 tokens 1.4 s against 2.2 published).
        vision = shape.vision_layers * (passes if shape.vision_trained and method != "frozen" else 1)
        dispatch_s = micro_batches * (shape.layers * passes + vision) * sp.TRAINING_DISPATCH_S_PER_LAYER_PASS
        if dispatch_s > compute_s:
            compute_s = dispatch_s
            encoder = f" + the vision encoder's {shape.vision_layers} layers x {vision // shape.vision_layers}" \
                if vision else ""
            out.formula.append(f"eager dispatch: ({shape.layers} layers x {passes} passes{encoder}) x "
                               f"{sp.TRAINING_DISPATCH_S_PER_LAYER_PASS * 1e3:g} ms x {micro_batches} "
                               f"micro-batches = {sp.duration(dispatch_s)} per step, more than the compute (Qwen's "
                               "LoRA rows: ~1.0 s a step from 256 to 1,024 tokens)")
    if shape.kind == "transformer" and not task.flash_attention and shape.attention_heads:
        score_passes = 4 if recompute == "full" else 3  # forward, backward twice its bytes; recompute: forward again
        scores = samples_per_gpu * shape.attention_heads * shape.sequence_length * shape.eager_score_keys()
        bandwidth, bandwidth_text = sp.achieved_bandwidth(dataclasses.replace(device, count=1))
        eager_s = scores * EAGER_SCORES_BYTES_PER_PASS * score_passes / (bandwidth * 1e9)
        compute_s += eager_s
        out.formula.append(f"eager attention (task.flash_attention = false): {scores:,.0f} score elements x "
                           f"{EAGER_SCORES_BYTES_PER_PASS:g} B x {score_passes} passes through memory at "
                           f"{bandwidth_text} = {sp.duration(eager_s)} more per step")
    exposed = 0.0
    offloaded = answers.scale.sharding == "fsdp_offload" or (
        task.method == "full" and answers.scale.sharding == "zero_offload")
    if layer_split:
        out.formula.append(f"a layer split over {n} GPUs (scale.sharding = \"layers\"): one GPU runs at a time, its "
                           "share of the layers, so a step takes one GPU's time for the whole model, and only "
                           "activations cross between cards (Megatron's and DeepSpeed's pipeline schedules overlap "
                           "micro-batches instead)")
    elif n > 1 or offloaded:
        comm = step_communication(answers, shape, n, answers.scale.sharding)
        exposed = exposed_seconds(comm, compute_s, device, host_gb_per_s)
        busbw, where = allreduce_gb_per_s(device)
        over = f"over {n} GPUs, {busbw:,.0f} GB/s ({where})" if n > 1 else f"with the host, {host_gb_per_s:g} GB/s"
        out.formula.append(f"communication {over}: {comm.text}; {sp.duration(exposed)} per step not hidden")
    if split > 1:
        ring_s, ring_text = ring_seconds(shape, samples_per_gpu, split, 3 + (recompute == "full"),
                                         value_bytes_of(task.precision), allreduce_gb_per_s(device)[0])
        attention_s = compute_s * _attention_share(shape, method, recompute, answers.data.kind == "text")
        ring_exposed = max(0.0, ring_s - attention_s)  # each block's transfer runs beside the attention before it
        exposed += ring_exposed
        out.formula.append(f"{ring_text}, beside {sp.duration(attention_s)} of attention it overlaps: "
                           f"{sp.duration(ring_exposed)} per step not hidden")
    scaling = sp.cnn_data_parallel_scaling(data_parallel) if shape.kind == "cnn" else 1.0
    if scaling < 1:
        out.formula.append(f"data-parallel scaling over {data_parallel} GPUs: x {scaling:.2f} (stragglers and input "
                           "pipelines; NVIDIA's CNN tables: 6.3-6.9x on 8)")
    step_s = compute_s / scaling + exposed
    bound_s = samples_per_gpu / notes.ASR_UTTERANCES_PER_S_PER_GPU if answers.data.kind == "audio" \
        and shape.encoder_decoder else 0.0
    if bound_s > step_s:
        step_s = bound_s
        out.formula.append(f"a speech recogniser's bound: {samples_per_gpu:g} utterances a GPU a step / "
                           f"{notes.ASR_UTTERANCES_PER_S_PER_GPU} a second = {sp.duration(bound_s)} per step, more "
                           "than its counted work (ESPnet's LibriSpeech recipes: 35-44 utterances a second a GPU on "
                           "V100, A6000 and A100 alike)")
    rate = samples_per_gpu * data_parallel * tokens / step_s
    out.figures.update({f"training_{unit}_per_s": rate, "step_s": step_s, "communication_exposed_s": exposed})
    label = "images" if (shape.kind == "cnn" or counted_denoiser(answers, shape)) and answers.data.kind == "images" \
        else unit
    line = f"~{sp.rate_text(rate)} {label}/s training ({sp.duration(step_s)} per step)"
    if unit == "tokens" and answers.data.kind == "images":  # a vision transformer: its tokens are one image's patches
        out.figures["training_images_per_s"] = rate / tokens
        line = (f"~{sp.rate_text(rate / tokens)} images/s training ({rate:,.0f} tokens/s, {tokens:,} per image; "
                f"{sp.duration(step_s)} per step)")
    run_s, basis, counted = epoch_seconds(answers, shape, rate)
    if run_s:
        out.figures["epoch_hours"] = run_s / 3600
        what = f"one epoch of {answers.data.dataset_size_gb:g} GB" if answers.data.dataset_size_gb and not counted \
            else "one epoch"
        line += f"; {what} ({basis}) in ~{sp.duration(run_s)}"
    else:
        run_s = (1e9 if unit == "tokens" else 1e6) / rate
        key = "hours_per_billion_tokens" if unit == "tokens" else "hours_per_million_samples"
        out.figures[key] = run_s / 3600
        what = "1B tokens" if unit == "tokens" else "1M samples"
        line += f"; {what} in ~{sp.duration(run_s)}"
    out.summary.extend([line, audio_note] if audio_note and shape.kind == "transformer" else [line])
    if run_s > sp.SLOW_RUN_DAYS * 86400:
        out.warnings.append(f"slow: {what} takes ~{sp.duration(run_s)} on {n} x {device.name} (over "
                            f"{sp.SLOW_RUN_DAYS:g} days): "
                            + ("faster GPUs, or ZeRO-3 or FSDP over these, where a layer split runs one at a time"
                               if layer_split else "more or faster GPUs (more nodes)")
                            + (", or for a fine-tune LoRA instead of full training" if method == "full"
                               and not methods.pretraining(answers, shape.parameters) else ""))
    return out


def _encoder_decoder_flops(shape: ModelShape, method: str, recompute: str) -> tuple[float, str]:
    """A sample's training FLOPs: the encoder's layers over its tokens, the decoder's over its own, the parameters
    split between them by layer count (cross-attention counted as the decoder's self-attention)."""
    total, parts, rule = 0.0, [], ""
    sides = (("encoder", shape.layers - shape.decoder_layers, shape.sequence_length),
             ("decoder", shape.decoder_layers, shape.decoder_sequence_length))
    for name, layers, tokens in sides:
        per_token, rule = sp.transformer_flops_per_token(shape.active * layers / shape.layers, layers,
                                                         shape.attention_flops_width, tokens, method, recompute)
        total += per_token * tokens
        parts.append(f"{name} {layers} layers x {tokens:,} tokens at {per_token / 1e9:.3g} GFLOP a token")
    return total, (f"encoder-decoder, {rule} a side (N split by layers): {'; '.join(parts)} = "
                   f"{total / 1e9:.3g} GFLOP per sample")


def training_rate(figures: dict[str, float]) -> float:
    """A training prediction's headline rate: tokens a second, or samples where the job has no tokens."""
    return figures.get("training_tokens_per_s") or figures.get("training_samples_per_s", 0.0)


def job_prediction(answers: Answers, shape: ModelShape, spec: dict[str, Any], name: str, count: int,
                   generation: int = 0, lanes: int = 16) -> sp.Prediction | None:
    """The job's prediction on these GPUs from their datasheet, at the host's PCIe `generation` (0: the card's) and
    `lanes`; None where their rates are not known."""
    device = device_for(spec, name, count, answers, shape, None, generation, lanes)
    if not shape.parameters or not device.tflops or not device.bandwidth_gb_per_s:
        return None
    if answers.task.mode == "training":
        return training(answers, shape, device, sp.pcie_gb_per_s(pcie_generation(spec, generation), lanes))
    return inference(answers, shape, device)


def job_figures(answers: Answers, shape: ModelShape, spec: dict[str, Any], name: str, count: int,
                generation: int = 0, lanes: int = 16) -> dict[str, float]:
    """The job's predicted figures on these GPUs from their datasheet; none where they are not known."""
    prediction = job_prediction(answers, shape, spec, name, count, generation, lanes)
    return prediction.figures if prediction is not None else {}


def job_rate(answers: Answers, shape: ModelShape, spec: dict[str, Any], name: str, count: int,
             generation: int = 0, lanes: int = 16) -> float:
    """The job's headline rate on these GPUs from their datasheet (what edge modules are ranked by); 0 if unknown."""
    figures = job_figures(answers, shape, spec, name, count, generation, lanes)
    if answers.task.mode == "training":
        return training_rate(figures)
    stated = sp.stated_target(answers.task)
    if stated is not None and stated[0].decode and figures.get("decode_tokens_per_s_per_stream"):
        return sp.held_rate(figures, stated[0])  # a server's target is held to its rate under load
    return (figures.get("decode_tokens_per_s_per_stream") or figures.get("samples_per_s")
            or figures.get("images_per_min", 0.0) / 60.0)


def predict(build: Build, measured: MeasuredCeilings | None = None) -> tuple[Speed, list[str]]:
    """The build's Speed and its slow-job warnings; measured ceilings apply only to the GPU model they measured."""
    gpu = build.component("gpu")
    answers = build.answers
    shape, _ = model_shape(answers.workload)
    if gpu is None:
        cpu, kit = build.component("cpu"), build.component("memory_kit")
        if cpu is None or kit is None:
            return Speed(summary=("not predicted: the build has no CPU and RAM to run on",)), []
        cpu_out, cpu_inputs = cpu_inference(answers, shape, cpu, kit)
        return _speed(cpu_out, cpu_inputs, "datasheet" if cpu_out.figures else ""), cpu_out.warnings
    mine = measured if measured is not None and measured.part_id == gpu.part_id else None
    generation = host_generation(build)
    lanes = lanes_per_gpu(build)
    device = device_for(gpu.spec, gpu.name, gpu.quantity, answers, shape, mine, generation, lanes)
    if not shape.parameters or not device.tflops or not device.bandwidth_gb_per_s:
        return Speed(summary=("not predicted: the model's size or the GPU's rate is unknown",)), []
    host = sp.pcie_gb_per_s(pcie_generation(gpu.spec, generation), lanes)
    main_lanes, main_generation = main_link(build)
    main = sp.pcie_gb_per_s(pcie_generation(gpu.spec, main_generation), main_lanes)
    device = with_host_ram(dataclasses.replace(device, host_pcie_gb_per_s=host, main_pcie_gb_per_s=main), build, shape)
    out = training(answers, shape, device, host) if answers.task.mode == "training" else inference(
        answers, shape, device)
    ceilings = "datasheet" if not (device.measured_tflops or device.measured_bandwidth or device.busbw_gb_per_s) \
        else f"measured by the bench run {mine.run if mine else ''}"
    gpus = f", {device.count} GPUs over {device.link}" if device.count > 1 else ""
    rate = f"{sp.tflops_text(device.tflops)} TFLOP/s {device.rate_name}"
    out.summary.append(f"{ceilings} ceilings: {device.bandwidth_gb_per_s:,.0f} GB/s, {rate}{gpus}")
    inputs: dict[str, float | str] = {
        "gpu": gpu.part_id, "gpus": float(device.count), "bandwidth_gb_per_s": float(device.bandwidth_gb_per_s),
        "tflops": float(device.tflops), "rate": device.rate_name, "tensor_cores": "yes" if device.tensor else "no",
        "parameters": float(shape.parameters), "precision": answers.task.precision,
    }
    if device.link:
        inputs.update(link=device.link, link_gb_per_s=float(device.link_gb_per_s))
    return _speed(out, inputs, ceilings), out.warnings


def _speed(out: sp.Prediction, inputs: dict[str, float | str], ceilings: str) -> Speed:
    """The prediction as the build keeps it: figures rounded to what the build file stores."""
    return Speed(summary=tuple(out.summary), formula=tuple(out.formula),
                 figures={key: round(float(value), 6) for key, value in out.figures.items()}, inputs=inputs,
                 ceilings=ceilings)


def with_speed(build: Build, measured: MeasuredCeilings | None = None) -> Build:
    speed, warnings = predict(build, measured)
    encoder_decoder = model_shape(build.answers.workload)[0].encoder_decoder
    warnings = [*warnings, *sp.below_target(speed.figures, build.answers.task, encoder_decoder)]
    return dataclasses.replace(build, speed=speed, warnings=(*build.warnings, *warnings), measured=measured)

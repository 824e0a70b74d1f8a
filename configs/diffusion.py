"""Diffusion inference: a denoiser run once per sampling step over the whole latent sequence, with no KV cache.

A diffusion transformer (FLUX.1, SD3.5) makes an image by running every layer over all its tokens (latent patches
plus text) at each of `denoising_steps` steps, with classifier-free guidance twice (conditional and unconditional,
batched). So an image costs steps x passes x (2N x s + 4 x L x h x s^2) FLOPs: compute-bound, unlike decoding.
2N counts every parameter for every token, though an MMDiT's dual-stream blocks pass image and text tokens through
their own halves (FLUX.1-dev: ~1.7x fewer, counted); the 0.6 of peak, checked on FLUX.1-dev's published timings
(tests/configs/published_speeds.py), absorbs that for FLUX-shaped models, not for other splits (SD3.5: unchecked).
A UNet (SDXL, SD 1.5) runs most of its parameters on a quarter or a sixteenth of the latent tokens, so 2N x s is ~3x
its count (SDXL at 1024 px: 6.76 TFLOP a pass, counted): a denoiser's counted GFLOPs a pass, or a UNet's estimate
from its parameters and pixels (configs.unet), replace the formula.
"""

from __future__ import annotations

import math
from dataclasses import replace

from pth_top.configs import speed as sp
from pth_top.configs.memory_inference import inference_weight_bytes
from pth_top.configs.memory_terms import (
    CUDA_CONTEXT_BYTES,
    MemoryBreakdown,
    ModelShape,
    inference_per_token,
    inference_working_set_text,
    transformer_activation_bytes,
    value_bytes_of,
)
from pth_top.units import GIB

# FLUX.1-dev's dual-stream blocks pass its text and image tokens through their own halves: its counted FLOPs are ~1/1.7
# of 2N x s, which the 0.6 fitted on its rows absorbs (a single-stream DiT's 2N x s is its count: Sana 1.6B at 1.2 s
# on an A100 and Allegro's 20 min on an H100, NVlabs/Sana and rhymes-ai/Allegro READMEs, were -38 and -36 % at 0.6).
MMDIT_FLOP_SHARE = 1.7
# The VAE decode's working set a pixel, fp16: SD 2.1's AutoencoderKL takes 15 GB for 4 x 768 px (diffusers#10350);
# Qwen-Image's VAE reserves 19.9 GiB at 2560 x 1440 (InvokeAI#9427). Tiled, one 512 px tile at a time.
VAE_DECODE_BYTES_PER_PIXEL = 6360
VAE_TILE_PX = 512
# Diffusers' video VAEs tile smaller: CogVideoX 240 x 360 px, Mochi, Wan and HunyuanVideo 256 px. CogVideoX's 49 frames
# at 720 x 480, 8 frames a decode batch, took 12.45 GB whole and 3.59 GB tiled (diffusers#9333).
VIDEO_VAE_TILE_PX = 256
# FLOPs a pixel of SD's and FLUX.1's AutoencoderKL decoder (128-512 channels, 3 ResNet blocks an up block), counted
# from its convolutions: 2.5 TFLOP for a 512 px image. It runs at about the card's FP32 CUDA-core rate, whatever its
# dtype: FLUX.1 at 1024 px on a B200 117 ms (unslothai/unsloth#10889; 134 at 75 TFLOP/s), SDXL-Turbo's 512 px on an
# A100 207 ms with 67 for the UNet (Stability AI; 129 at 19.5), SD's 512 px on a 24 GB card 84.5 ms (diffusers#1150).
VAE_DECODE_FLOP_PER_PIXEL = 9.6e6
# A generated image that takes longer than this is flagged as slow (an interactive user waits for it).
SLOW_IMAGE_S = 60.0
# Fraction of the tensor rate eager Diffusers reaches on a denoiser's counted FLOPs (torch.utils.flop_counter): SDXL,
# 30 steps at 1024 px in 3.70 s on an A100 = 0.35 (fitted before the VAE decode was counted: now +14 %, its A10 and
# H100 rows +2 and +4 %); FLUX.1-dev's 74.4 TFLOP a pass in 15.65 s = 0.43 (0.30 on an H100).
DENOISER_COUNTED_FRACTION = 0.35
# A UNet in a TensorRT engine (StreamDiffusion's) runs at a compiled encoder's share, fitted on its two RTX 4090 rows:
# SD-Turbo's 803 GFLOP pass, one step at batch 1, 106.16 images/s (0.57 with its tiny decoder's share in it), and
# LCM-LoRA on KohakuV2 (SD 1.5), four steps batched across frames, 38.02 (0.77). Not on a Jetson (speed.py's encoders).
COMPILED_DENOISER_FRACTION = sp.COMPILED_ENCODER_FORWARD_FRACTION
# Eager Diffusers runs a denoiser's ops one at a time from the CPU, classifier-free guidance batched into one pass:
# ATen ops a pass (views not counted, a TorchDispatchMode over diffusers 0.42's UNet2DConditionModel) are SD 1.5's
# 727 with 16 transformer blocks and SDXL's 1,863 with 70, so 391 + 21 a block.
DENOISER_OPS_FIXED, DENOISER_OPS_PER_LAYER = 391, 21
# Host time an op: SD 1.5 at 31.44 it/s on an A100 SXM (fal-ai/stable-diffusion-benchmarks, fp16 SDPA) is 44 us
# for each of its 727; SDXL's 30 steps on an H100 then take 2.46 s, where its TensorRT card's baseline is 2.496.
DIFFUSERS_OP_S = 44e-6
# Sequence parallel (xDiT's Ulysses attention): one clip's tokens split over n GPUs, which all-to-all each layer's
# heads. xDiT's HunyuanVideo table (docs/performance/hunyuanvideo.md, 720p, 129 frames, 50 steps): 8 H100s 5.64x one
# (0.705, 0.89 a doubling), 4 3.70x; 4 L20s over PCIe 2.91x (0.73, 0.85 a doubling).
SEQUENCE_PARALLEL_SCALING_PER_DOUBLING = {"nvlink": 0.89, "pcie": 0.85}


def passes_text(shape: ModelShape) -> str:
    return " x 2 (classifier-free guidance)" if shape.guidance_passes == 2 else ""


def vae_tile_px(shape: ModelShape) -> int:
    """A tile's side: a video pipeline's (a decode micro-batch of frames) or an image VAE's."""
    return VIDEO_VAE_TILE_PX if shape.decoded_frames_at_once > 1 else VAE_TILE_PX


def decoded_pixels(shape: ModelShape, tiled: bool) -> int:
    """What the VAE decodes at once: the output's pixels, or one tile's, x a video's decode micro-batch."""
    pixels = min(shape.output_pixels, vae_tile_px(shape) ** 2) if tiled else shape.output_pixels
    return pixels * shape.decoded_frames_at_once


def decode_bytes(shape: ModelShape, batch: int, tiled: bool, sliced: bool = False) -> int:
    """The VAE decode's working set: an image batch is decoded whole, or an image at a time (`sliced`), a video by its
    decode micro-batch."""
    outputs = 1 if shape.decoded_frames_at_once > 1 or sliced else batch
    return VAE_DECODE_BYTES_PER_PIXEL * decoded_pixels(shape, tiled) * outputs


def denoising_bytes(shape: ModelShape, precision: str, batch: int) -> int:
    """One layer's forward working set over a GPU's batch x passes x s tokens (without autograd)."""
    value_bytes = value_bytes_of(precision)
    one_layer = replace(shape, layers=1, sequence_length=shape.sequence_length * batch * shape.guidance_passes)
    return int(transformer_activation_bytes(one_layer, 1, "none", True, 1, value_bytes, inference_per_token(shape)))


def estimate_denoising(
    shape: ModelShape, *, precision: str, batch: int, gpu_count: int = 1,
    cuda_context_bytes: int = CUDA_CONTEXT_BYTES, quantization: str = "auto", vae_tiling: bool = False,
    vae_slicing: bool = False, sequence_parallel: bool = False,
) -> MemoryBreakdown:
    """Weights + the larger of one layer's forward working set over its share of the batch x passes x s tokens (its
    1/n of the tokens under sequence parallel) and the VAE decode of its outputs (after the last step, the denoiser's
    activations are gone); every GPU holds the whole model."""
    weights, weights_line = inference_weight_bytes(shape, precision, quantization)
    value_bytes = value_bytes_of(precision)
    split = max(1, gpu_count) if sequence_parallel else 1
    batch = per_gpu_batch(batch, gpu_count, sequence_parallel)
    denoising = denoising_bytes(shape, precision, batch) // split
    decode = decode_bytes(shape, batch, vae_tiling, vae_slicing)
    activations = max(denoising, decode)
    formula = [
        f"pipeline: a diffusion model, {shape.denoising_steps} denoising steps per image (workload.denoising_steps); "
        "no KV cache and no logits",
        weights_line,
        f"activations: {inference_working_set_text(shape, value_bytes)} "
        f"(s {shape.sequence_length:,}{f' / {split} GPUs' if split > 1 else ''} x b {batch}{passes_text(shape)}) = "
        f"{denoising / GIB:.2f} GiB while denoising",
        (f"VAE decode: {VAE_DECODE_BYTES_PER_PIXEL:,} B a pixel (AutoencoderKL, fp16) x "
         f"{decoded_pixels(shape, vae_tiling):,} pixels at once"
         + (f" ({vae_tile_px(shape)} px tiles, task.vae_tiling)" if vae_tiling else "")
         + (f" x b {batch}" if shape.decoded_frames_at_once == 1 and not vae_slicing else "")
         + (" (an image at a time, task.vae_slicing)" if vae_slicing and batch > 1 else "")
         + f" = {decode / GIB:.2f} GiB; the larger of the two is held"
         + (" (task.vae_tiling decodes in tiles, holding less)" if decode > denoising and not vae_tiling else ""))
        if shape.decoded_pixels else
        "VAE decode: not counted (give workload.output_width_px and output_height_px: a 1024 x 1024 image decodes "
        f"in ~{VAE_DECODE_BYTES_PER_PIXEL * 1024 * 1024 / GIB:.1f} GiB, a video's frames in its decode micro-batch)",
    ]
    if split > 1:
        formula.append(f"sequence parallel (task.sequence_parallel, xDiT's Ulysses): each of the {gpu_count} GPUs "
                       "holds the whole pipeline and 1/n of each image's tokens; the VAE decodes on one")
    elif gpu_count > 1:
        formula.append(f"each of the {gpu_count} GPUs holds the whole pipeline and makes its own images "
                       "(data parallel: Diffusers splits no model across GPUs; task.sequence_parallel splits each "
                       "image's tokens instead)")
    return MemoryBreakdown(
        weights_bytes=int(weights), gradients_bytes=0, optimizer_states_bytes=0, activations_bytes=int(activations),
        kv_cache_bytes=0, cuda_context_bytes=cuda_context_bytes, formula=tuple(formula),
    )


# SD's and FLUX.1's AutoencoderKL (83.7M parameters, 16-bit), back on the GPU to decode validation images when the
# latents were cached and the frozen models left it.
VAE_PARAMETERS = 83_700_000


def with_validation(shape: ModelShape, training: MemoryBreakdown, precision: str, *, tiled: bool,
                    vae_returns: bool) -> MemoryBreakdown:
    """A diffusion trainer samples validation images between steps (SimpleTuner's validation_resolution, ai-toolkit's
    sample, diffusers' --validation_prompt): the step's activations and gradients are freed, the weights and optimizer
    states stay, and the image is denoised then decoded at its size. The GPU holds the larger of the two phases."""
    decode = decode_bytes(shape, 1, tiled)
    denoising = denoising_bytes(shape, precision, 1)
    vae = int(VAE_PARAMETERS * 2) if vae_returns else 0
    kept = training.weights_bytes + training.optimizer_states_bytes + training.cuda_context_bytes
    validation = kept + vae + max(decode, denoising)
    width = math.isqrt(shape.output_pixels)
    tiles = f", {vae_tile_px(shape)} px tiles, task.vae_tiling" if tiled else ""
    line = (f"validation images (workload.output_width_px x output_height_px, ~{width:,} px a side), sampled between "
            f"steps: weights and optimizer states + the VAE decode's {decode / GIB:.2f} GiB "
            f"({VAE_DECODE_BYTES_PER_PIXEL:,} B a pixel{tiles})"
            + (f" + the VAE's {vae / 1e9:.2g} GB back on the GPU" if vae else "")
            + f" = {validation / GIB:.2f} GiB")
    if validation <= training.total_bytes:
        under = f"{line}, under training's {training.total_bytes / GIB:.2f} GiB"
        return replace(training, formula=(*training.formula, under))
    more = validation - training.total_bytes
    return replace(training, activations_bytes=training.activations_bytes + more, formula=(
        *training.formula, f"{line}: the peak, {more / GIB:.2f} GiB over training's step (in the activations line; "
        "task.vae_tiling or a smaller validation size holds less)"))


def decode_time(shape: ModelShape, images: int, device: sp.Device) -> tuple[float, str]:
    """The VAE decode of a GPU's images at the card's FP32 rate (VAE_DECODE_FLOP_PER_PIXEL); a video's frames and a
    size not given are not counted."""
    if shape.decoded_frames_at_once > 1:
        return 0.0, "; a video's VAE decode not counted"
    if not shape.output_pixels or device.fp32_tflops <= 0:
        why = "no FP32 rate for this device" if shape.output_pixels else \
            "give workload.output_width_px, output_height_px"
        return 0.0, f"; the VAE decode not counted ({why})"
    flops = VAE_DECODE_FLOP_PER_PIXEL * shape.output_pixels * images
    seconds = flops / (device.fp32_tflops * 1e12)
    return seconds, (f" + the VAE decode of {images} image(s), {VAE_DECODE_FLOP_PER_PIXEL / 1e6:.1f} MFLOP a pixel "
                     f"(AutoencoderKL's decoder) = {flops / 1e12:.3g} TFLOP at the card's FP32 rate, "
                     f"{device.fp32_tflops:g} TFLOP/s ({sp.duration(seconds)})")


def rate_text(per_min: float, unit: str) -> str:
    """Images (or clips) a minute, or an hour where fewer than one a minute (a video job's 0.03 read as 0.0)."""
    return f"{per_min:,.1f} {unit}s/min" if per_min >= 1 else f"{per_min * 60:,.1f} {unit}s/hour"


def per_gpu_batch(batch: int, gpu_count: int, sequence_parallel: bool = False) -> int:
    """Each GPU makes its own share of the (global) batch; under sequence parallel all of it, a share of each one's
    tokens."""
    return batch if sequence_parallel else -(-batch // max(1, gpu_count))


def step_flops(shape: ModelShape, batch: int, counted_gflops_per_pass: float = 0.0) -> float:
    """One denoising step: the denoiser's counted FLOPs a pass, else 2N per token and bidirectional attention, 4 x h
    x s^2 a full layer (twice a causal prompt's pairs), 4 x h x s x w a window layer (a frame's own tokens)."""
    s = shape.sequence_length
    per_pass = counted_gflops_per_pass * 1e9 or \
        2.0 * shape.active * s + 4.0 * shape.attention_flops_width * shape.bidirectional_pairs(s)
    return batch * shape.guidance_passes * per_pass


def step_flops_text(shape: ModelShape, counted: tuple[float, str], compiled: bool = False) -> tuple[str, float]:
    """How a pass is counted, and the fraction of the tensor rate that count is timed at (a counted one `compiled` in
    an engine: COMPILED_DENOISER_FRACTION)."""
    counted_gflops_per_pass, source = counted
    if counted_gflops_per_pass:
        count = f"{counted_gflops_per_pass:,.4g} GFLOP a pass ({source})"
        if compiled:
            return (f"{count}, in a compiled engine (task.forward_runtime: TensorRT, StreamDiffusion's)",
                    COMPILED_DENOISER_FRACTION)
        return count, DENOISER_COUNTED_FRACTION
    window = (f", {shape.window_layers} of them over a {shape.sliding_window_tokens:,}-token window"
              if shape.window_layers else "")
    if shape.single_stream_dit:
        return (f"(2N x {shape.sequence_length:,} tokens + full attention 4*L*h*s^2{window}, a single-stream DiT "
                f"(workload.single_stream_dit) at FLUX.1's fitted fraction / {MMDIT_FLOP_SHARE:g}: every token "
                "passes every weight, where an MMDiT's dual-stream blocks do ~1.7x fewer FLOPs than 2N x s)",
                sp.PREFILL_COMPUTE_FRACTION / MMDIT_FLOP_SHARE)
    return (f"(2N x {shape.sequence_length:,} tokens + full attention 4*L*h*s^2{window}, at FLUX.1's fitted "
            "fraction: an MMDiT's dual-stream blocks do ~1.7x fewer FLOPs than 2N x s; a single-stream DiT (DiT, "
            "PixArt, Sana, Wan, Allegro) runs ~1.7x slower than this (workload.single_stream_dit) and a UNet's count "
            "is several times less: workload.unet with its output's pixels, or its counted "
            "workload.forward_gflops_per_sample)",
            sp.PREFILL_COMPUTE_FRACTION)  # fitted whole, attention in it, on FLUX.1-dev's rows (not a prompt's 0.4)


# SkyReels-V1 (HunyuanVideo's 13B DiT, 97 frames at 544 x 960, 30 steps) takes 889 s a clip on one RTX 4090 in
# SkyReelsInfer (github.com/SkyworkAI/SkyReels-V1 README), 219 TFLOP/s of its counted FLOPs, over the card's 165 dense
# BF16: SageAttention's 8-bit attention and torch.compile, which the answers cannot state.
VIDEO_RUNTIME_NOTE = (
    "timed for Diffusers' PyTorch attention (SDPA, bf16); a quantized-attention runtime (SageAttention with "
    "torch.compile: SkyReelsInfer, xDiT) runs a video DiT up to ~2x faster on Ada and Blackwell cards (SkyReels-V1's "
    "97 frames at 544 x 960 in 889 s on an RTX 4090)")


def denoising_speed(shape: ModelShape, batch: int, weight_bytes: float, device: sp.Device,
                    swapped_bytes: float = 0.0, counted: tuple[float, str] = (0.0, ""),
                    unit: str = "image", eager: bool = False, streamed: bool = False,
                    sequence_parallel: bool = False, compiled: bool = False) -> sp.Prediction:
    """Seconds for the batch (each GPU making its share at once) and images a minute; with model offload each GPU's
    batch also moves `swapped_bytes` (every model of the pipeline, once) from RAM over PCIe. `eager`: a step takes at
    least its ops' host time (eager Diffusers). `streamed` (block offload): each step also moves the denoiser's
    weights over PCIe, beside its compute (the next block copies while one runs). `sequence_parallel`: all the
    GPUs make each image together, each its 1/n of the tokens, at SEQUENCE_PARALLEL_SCALING_PER_DOUBLING. `compiled`:
    a counted denoiser in an engine (TensorRT) runs at COMPILED_DENOISER_FRACTION on a discrete GPU."""
    split = device.count if sequence_parallel and device.count > 1 else 1
    share = per_gpu_batch(batch, device.count, split > 1)
    link = "nvlink" if device.nvlink else "pcie"
    scaling = SEQUENCE_PARALLEL_SCALING_PER_DOUBLING[link] ** math.log2(split)
    flops = step_flops(shape, share, counted[0]) / (split * scaling)
    pass_text, fraction = step_flops_text(shape, counted, compiled and not device.edge_module)
    if split > 1:
        pass_text += (f" / ({split} GPUs x {scaling:.2f}, sequence parallel over {link}: "
                      f"{SEQUENCE_PARALLEL_SCALING_PER_DOUBLING[link]:g} a doubling)")
    compute, compute_text = sp.achieved_tflops(device, fraction)
    bandwidth, bandwidth_text = sp.achieved_bandwidth(replace(device, count=1))
    step_s = max(flops / (compute * 1e12), weight_bytes / (bandwidth * 1e9))
    ops = DENOISER_OPS_FIXED + DENOISER_OPS_PER_LAYER * shape.layers if eager else 0
    gpu_step_s, step_s = step_s, max(step_s, ops * DIFFUSERS_OP_S)
    link_gb_per_s = device.host_link_gb_per_s * sp.HOST_COPY_FRACTION
    copy_s = weight_bytes / (link_gb_per_s * 1e9) if streamed else 0.0
    before_copy_s, step_s = step_s, max(step_s, copy_s)
    swap_s = swapped_bytes / (link_gb_per_s * 1e9)
    decode_s, decode_text = decode_time(shape, share, device)
    batch_s = shape.denoising_steps * step_s + swap_s + decode_s
    images_per_min = 60.0 * batch / batch_s
    out = sp.Prediction(figures={"image_batch_s": batch_s, "images_per_min": images_per_min})
    out.formula.append(
        f"a step: {share} {unit}(s){passes_text(shape)} x {pass_text} = {flops / 1e12:.3g} TFLOP at {compute_text} = "
        f"{sp.duration(gpu_step_s)} (never under reading the weights once at {bandwidth_text})"
        + (f"; eager Diffusers runs its ~{ops:,} ops ({DENOISER_OPS_FIXED} + {DENOISER_OPS_PER_LAYER} a layer) one "
           f"at a time from the CPU, {DIFFUSERS_OP_S * 1e6:.0f} us each: {sp.duration(step_s)} a step (compiled, "
           "task.forward_runtime, it runs at the card's rate)" if before_copy_s > gpu_step_s else "")
        + (f"; block offload copies the denoiser's {weight_bytes / 1e9:.3g} GB from RAM each step at "
           f"{link_gb_per_s:,.1f} GB/s, {sp.duration(copy_s)}, beside it: {sp.duration(step_s)} a step"
           if streamed else ""))
    swap = (f" + the pipeline's {swapped_bytes / 1e9:.3g} GB moved from RAM to the GPU at {link_gb_per_s:,.1f} "
            f"GB/s ({'the frozen models, once' if streamed else 'model offload'}) = {sp.duration(swap_s)}"
            ) if swap_s else ""
    out.formula.append(f"a batch of {unit}s: {shape.denoising_steps} steps x {sp.duration(step_s)}{swap}{decode_text} "
                       f"= {sp.duration(batch_s)}; the text encoders run once a batch, against the denoiser's "
                       f"{shape.denoising_steps}: not counted")
    gpus = f" on {device.count} GPUs ({share} {unit}(s) each at once)" if device.count > 1 else ""
    if split > 1:
        gpus = f" on {device.count} GPUs together (sequence parallel)"
    out.summary.append(f"~{sp.duration(batch_s)} per batch of {batch} {unit}(s) ({shape.denoising_steps} steps over "
                       f"{shape.sequence_length:,} tokens); ~{rate_text(images_per_min, unit)}{gpus}")
    if unit == "clip":  # a video DiT's long attention, where the runtime decides most (audit ZZ27)
        out.formula.append(VIDEO_RUNTIME_NOTE)
    if batch_s > SLOW_IMAGE_S:
        out.warnings.append(f"slow: a batch of {unit}s takes ~{sp.duration(batch_s)} on {device.name} (over "
                            f"{SLOW_IMAGE_S:g} s): denoising is compute-bound, so a card with more tensor TFLOP/s "
                            "or fewer steps (a distilled model such as FLUX.1-schnell, 4 steps) is faster"
                            + (", as is a quantized-attention runtime (above)" if unit == "clip" else ""))
    return out

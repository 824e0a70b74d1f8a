"""The speed of a model that generates nothing: a CNN or an encoder (BERT, ViT, bge-m3) runs one forward pass per
input, compute-bound, and is timed in inputs a second."""

from __future__ import annotations

import functools

from pth_top.configs import speed as sp
from pth_top.configs import speed_notes as notes
from pth_top.configs import stacks
from pth_top.configs.answer_types import Workload
from pth_top.configs.answers import Answers
from pth_top.configs.custom_cnn import (
    CNN_KERNELS_PER_LAYER,
    REALTIME_SEGMENTATION_FORWARD_FLOPS_PER_PIXEL,
    RESNET50_FORWARD_FLOPS,
    RESNET50_SAVED_ELEMENTS,
    detection_forward_flops,
    heavy_segmentation,
    segmentation_forward_flops,
)
from pth_top.configs.memory_inference import inference_weight_bytes
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.presets import model_presets, model_shape, resolution_scale
from pth_top.configs.speed_cnn import activation_seconds, activations_warning, compiled_forward


def forward_flops(shape: ModelShape, tokens: int) -> tuple[float, str]:
    """One input's forward FLOPs: 2N a token, N without the embedding (a lookup, no multiply: Kaplan et al. 2020's
    non-embedding count), and attention over every query-key pair (both ways: s^2 a layer, twice a causal prompt's)."""
    matmul_parameters = max(0, shape.active - shape.vocabulary_size * shape.hidden_size)
    flops = 2.0 * matmul_parameters * tokens + 4.0 * shape.attention_flops_width * 2.0 * shape.attended_pairs(tokens)
    return flops, f"2N x {tokens:,} tokens (N {matmul_parameters / 1e6:,.0f}M without the embedding) + bidirectional " \
        "attention 4*L*h*s^2"


def _batch_seconds(answers: Answers, shape: ModelShape, device: sp.Device, flops_per_input: float, batch: int,
                   fraction: float) -> tuple[float, str]:
    """A batch's forward passes on the GPUs, each whole inputs of its own (a GPU past the batch idles: one stream's
    frames run one after another), at `fraction` of a GPU's tensor rate, never faster than reading the weights once;
    and the rate as the formula names it."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    weight_bytes, _ = inference_weight_bytes(shape, task.precision, task.quantization, engine)
    compute, compute_text = sp.achieved_tflops(device, fraction)
    bandwidth, _ = sp.achieved_bandwidth(device)
    per_gpu = inputs_a_gpu(batch, device.count)
    seconds = max(per_gpu * flops_per_input / (compute * 1e12), weight_bytes / (bandwidth * 1e9))
    return seconds, compute_text + (f", {per_gpu} of the batch a GPU on {device.count}" if device.count > 1 else "")


def inputs_a_gpu(batch: int, gpus: int) -> int:
    """The inputs the busiest GPU runs: a batch is split by whole inputs, never one input across GPUs (audit ZR35:
    SAM 2's one 30 FPS stream was sold 4 x RTX 4090 at ~36 frames/s, four streams' worth)."""
    return max(1, -(-batch // max(1, gpus)))


def idle_gpus_warning(batch: int, gpus: int, unit: str) -> list[str]:
    """Where the inputs at once are fewer than the GPUs: the idle ones, and the batch that keeps each busy (audit ZX38:
    EfficientNet-B4 at batch 1 on 4 GPUs was read as one GPU's ~50 images/s, where 4 replicas serve ~200)."""
    if batch >= gpus:
        return []
    inputs = f"{batch} input{'s' if batch > 1 else ''}"
    return [f"{gpus - batch} of the {gpus} GPUs sit idle: {inputs} at once (workload.batch_size) run on {batch}, one "
            f"input never split across GPUs; replicas serving their own requests are {gpus} inputs at once, one a GPU "
            f"(answer workload.batch_size = {gpus}), {gpus / batch:.3g}x the {unit}/s"]


@functools.cache
def _large_batch_flops() -> float:
    """A GPU's batch that reaches the large-batch rate: ViT-B/16's forward FLOPs at IMAGE_ENCODER_LARGE_BATCH_IMAGES."""
    shape = model_shape(Workload(preset="vit-b16"))[0]
    return sp.IMAGE_ENCODER_LARGE_BATCH_IMAGES * forward_flops(shape, shape.sequence_length)[0]


def forward_speed(answers: Answers, shape: ModelShape, device: sp.Device) -> sp.Prediction:
    """Inputs (images) a second for a batch: its FLOPs at the fraction of the GPUs' tensor rate an eager encoder
    reaches, never faster than reading the weights once a batch."""
    batch, tokens = answers.workload.batch_size, shape.sequence_length
    unit = "images" if answers.data.kind == "images" else "inputs"
    flops, origin = forward_flops(shape, tokens)
    # A windowed ViT (SAM's: 28 of 32 blocks in 14 x 14 windows) keeps the eager share: timm's samvit_huge 0.36.
    large = answers.data.kind == "images" and not shape.sliding_window_layers \
        and inputs_a_gpu(batch, device.count) * flops >= _large_batch_flops()
    fraction = sp.IMAGE_ENCODER_FORWARD_FRACTION if large else sp.ENCODER_FORWARD_FRACTION
    if compiled_forward(answers) and not device.edge_module:  # fused kernels (TensorRT) on a discrete GPU
        fraction = max(fraction, sp.COMPILED_ENCODER_FORWARD_FRACTION)
    gpu_s, compute_text = _batch_seconds(answers, shape, device, flops, batch, fraction)
    floor_s, floor_text, warnings = eager_floor(answers, shape.layers * ENCODER_KERNELS_PER_LAYER, batch,
                                                device.count, gpu_s, unit)
    warnings = warnings + idle_gpus_warning(batch, device.count, unit)
    batch_s = max(gpu_s, floor_s)
    rate = batch / batch_s
    out = sp.Prediction(figures={"samples_per_s": rate, "batch_latency_s": batch_s}, warnings=warnings)
    out.formula.append(f"forward pass: batch {batch} x {flops / 1e12:.3g} TFLOP ({origin}) / ({compute_text}) "
                       f"= {sp.duration(gpu_s)} a batch{floor_text}; nothing is generated, so no decode")
    out.summary.append(f"~{sp.rate_text(rate)} {unit}/s ({rate * tokens:,.0f} tokens/s), a batch of {batch} in "
                       f"{sp.duration(batch_s)}")
    if answers.data.kind == "audio":
        out.summary.append(notes.AUDIO_ENCODER_UPPER_BOUND)
    return out


# Eager PyTorch's host time a kernel launch: <= ~25 us on a 2020s CPU (xhiroga/til: an RTX 4090's ResNet-50 at batch 8
# in 4.4 ms), ~60 on DGX-1 hosts (DeepLearningExamples' ConvNets tables: ResNet-50 10.4 ms at batch 1 on a V100).
EAGER_KERNEL_S = (20e-6, 60e-6)
EAGER_KERNEL_FIGURE_S = 35e-6  # the figure's: Ultralytics' YOLOv10n on an RTX 3090, 107 FPS (trtutils), is ~32 us
# An encoder layer's eager kernels, HF BertLayer's: 3 QKV, 2 score matmuls, softmax, dense, 2 adds, 2 LayerNorms, 2
# MLP matmuls and GELU (dropout is a no-op in eval).
ENCODER_KERNELS_PER_LAYER = 14
EAGER_FLOOR = "eager launch floor: "  # how the warning starts (speed_target offers the compiled runtime)
# A compiled engine (TensorRT) fuses a weight layer's kernels into one, and at a small batch each still costs a fixed
# time beside its work: mmdeploy's RTMPose t to l in TRT-FP16 at batch 1 (mmpose's benchmark, ~45-85 fused layers) run
# ~0.9 ms on an RTX 3090 whatever their FLOPs (0.72-8.3 GFLOP: 0.98-1.37 ms), ~20 us a layer beside their FLOPs at
# speed_cnn's compiled GeForce share; on a Jetson AGX Orin 1.6-3.7 ms, ~40 us. Fitted there (their rows), checked on an
# Orin NX (-29 % to +50 %).
COMPILED_KERNEL_S = 20e-6
COMPILED_EDGE_KERNEL_S = 40e-6


def eager_floor(answers: Answers, kernels: int, batch: int, gpus: int, gpu_s: float, unit: str
                ) -> tuple[float, str, list[str]]:
    """In eager PyTorch (task.forward_runtime), a batch takes at least its kernels' launches from the CPU
    (EAGER_KERNEL_FIGURE_S each, each GPU its share at once) where that outlasts the GPUs' time: the floor, its
    formula text, and the warning with the hosts' range, which the compiled runtime's offer keys on (audit SS:
    ResNeXt101 at batch 1 on a T4, 19.5 ms published, 1.3 ms from the GPU's rate; audit YB: YOLOv10n on an RTX 3090,
    107 FPS, not ~2,900)."""
    if not kernels or stacks.forward_runtime(answers.task.forward_runtime, answers.scenario) != "eager":
        return 0.0, "", []
    floor_s, low, high = (kernels * each for each in (EAGER_KERNEL_FIGURE_S, *EAGER_KERNEL_S))
    if floor_s <= gpu_s:
        return 0.0, "", []
    text = (f"; eager PyTorch launches its ~{kernels:,} kernels from the CPU, {EAGER_KERNEL_FIGURE_S * 1e6:.0f} us "
            f"each: {sp.duration(floor_s)} a batch (task.forward_runtime)")
    per_gpu = inputs_a_gpu(batch, gpus)
    slowest, fastest = batch / max(high, gpu_s), batch / max(low, gpu_s)
    return floor_s, text, [
        f"{EAGER_FLOOR}in eager PyTorch a forward pass launches its ~{kernels:,} kernels one at a time from "
        f"the CPU, ~{EAGER_KERNEL_S[0] * 1e6:.0f}-{EAGER_KERNEL_S[1] * 1e6:.0f} us each by the host, so a batch "
        f"of {per_gpu} a GPU takes ~{low * 1e3:.1f}-{high * 1e3:.1f} ms whatever the card, ~{slowest:,.0f}-"
        f"{fastest:,.0f} {unit}/s against the ~{batch / gpu_s:,.0f} its GPU time gives: compiled (a TensorRT engine, "
        "torch.compile(mode=\"reduce-overhead\"); task.forward_runtime = \"compiled\") it runs at the card's "
        "rate, as do larger batches"]


def compiled_kernels_seconds(answers: Answers, shape: ModelShape, device: sp.Device) -> tuple[float, str]:
    """A compiled engine's fixed cost a batch: one fused kernel a weight layer (a CNN's eager kernels over
    CNN_KERNELS_PER_LAYER), each COMPILED_KERNEL_S on a discrete GPU or COMPILED_EDGE_KERNEL_S on an edge module;
    nothing in eager PyTorch (its launches are eager_floor's) or on a CPU."""
    if not compiled_forward(answers) or not device.fp32_tflops or not shape.forward_kernels:
        return 0.0, ""
    layers = round(shape.forward_kernels / CNN_KERNELS_PER_LAYER)
    each = COMPILED_EDGE_KERNEL_S if device.edge_module else COMPILED_KERNEL_S
    where = "an edge module's" if device.edge_module else "a discrete GPU's"
    return layers * each, (f" + {layers} fused kernels x {each * 1e6:.0f} us ({where} fixed cost a kernel in a "
                           f"compiled engine, mmpose's RTMPose in TensorRT at batch 1) = {sp.duration(layers * each)} "
                           "a batch")


def forward_flops_per_sample(answers: Answers, shape: ModelShape) -> tuple[float, str]:
    """A CNN preset's published count; a custom CNN's own (or scaled from ResNet-50 by saved activations); else 2N."""
    preset = model_presets().get(answers.workload.preset)
    if shape.kind == "cnn":
        if preset is not None and preset.forward_gflops_per_sample:
            scale, _ = resolution_scale(preset, answers.workload.input_size_px)
            gflops = preset.forward_gflops_per_sample * scale
            at = f" x {scale:.3g} for {answers.workload.input_size_px} px" if scale != 1.0 else ""
            return gflops * 1e9, f"{gflops:.3g} GFLOP forward (the preset's published count{at})"
        given = answers.workload.forward_gflops_per_sample
        if given:
            return given * 1e9, f"{given:.3g} GFLOP forward (workload.forward_gflops_per_sample)"
        workload = answers.workload
        if workload.dense_head in ("detection", "instance") and not workload.activation_elements_per_sample:
            flops = detection_forward_flops(workload)
            return flops, (f"{flops / 1e9:.3g} GFLOP forward (Faster R-CNN R50-FPN's counted FLOPs a pixel, 2.5x "
                           "ResNet-50's, its backbone's at its depth, workload.layers; a cascade's three heads and "
                           "mask branches, Cascade R-CNN's or HTC's, run 2-3x more: give "
                           "workload.forward_gflops_per_sample)")
        if workload.dense_head == "realtime_segmentation":
            flops = REALTIME_SEGMENTATION_FORWARD_FLOPS_PER_PIXEL * workload.input_size_px ** 2
            return flops, (f"{flops / 1e9:.3g} GFLOP forward (a real-time segmenter's FLOPs a pixel, mmseg's STDC1 "
                           "as Hailo's model zoo counts it, 0.39x ResNet-50's; BiSeNetV2's are as many, Fast-SCNN's "
                           "an eighth: give workload.forward_gflops_per_sample)")
        if heavy_segmentation(workload):
            flops = segmentation_forward_flops(workload)
            return flops, (f"{flops / 1e9:.3g} GFLOP forward (DeepLabV3+ R50-D8's counted FLOPs a pixel, 8.7x "
                           "ResNet-50's, grown with its backbone's depth, workload.layers; a head without dilation, "
                           "UPerNet's, runs fewer: give workload.forward_gflops_per_sample)")
        flops = RESNET50_FORWARD_FLOPS / RESNET50_SAVED_ELEMENTS * shape.activation_elements_per_sample
        return flops, f"{flops / 1e9:.3g} GFLOP forward (ResNet-50's FLOPs per saved activation, scaled)"
    return 2.0 * shape.parameters, "2N FLOP forward (no architecture: one multiply-add per parameter)"


def cnn_speed(answers: Answers, shape: ModelShape, device: sp.Device) -> sp.Prediction:
    """A CNN's (or a generic model's) batch at the CNN tensor fraction, never faster than reading its weights."""
    batch = answers.workload.batch_size
    flops, origin = forward_flops_per_sample(answers, shape)
    gpu_s, compute_text = _batch_seconds(answers, shape, device, flops, batch, device.cnn_fraction)
    compute_rate = batch / gpu_s
    memory_s, memory_text = activation_seconds(answers, shape, device, inputs_a_gpu(batch, device.count),
                                                training=False)
    bound = activations_warning(memory_s, gpu_s, batch, answers)
    gpu_s = max(gpu_s, memory_s)
    floor_s, floor_text, warnings = eager_floor(answers, shape.forward_kernels, batch, device.count, gpu_s, "samples")
    warnings = (warnings or bound) + idle_gpus_warning(batch, device.count, "samples")  # the floor before the bound
    batch_s = max(gpu_s, floor_s)
    fused_s, fused_text = compiled_kernels_seconds(answers, shape, device)
    batch_s, floor_text = batch_s + fused_s, floor_text + fused_text
    out = sp.Prediction(figures={"samples_per_s": batch / batch_s, "batch_latency_s": batch_s}, warnings=warnings)
    out.formula.append(f"inference: batch {batch} x {origin} / ({compute_text}) = "
                       f"{sp.rate_text(compute_rate)} samples/s" + (f"; {memory_text} a batch, "
                                                                    f"{sp.rate_text(batch / memory_s)} samples/s"
                                                                    if memory_s else "") + floor_text)
    out.summary.append(f"~{sp.rate_text(batch / batch_s)} samples/s, a batch of {batch} in {sp.duration(batch_s)}")
    return out

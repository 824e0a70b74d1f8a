"""A CNN's speed beyond its FLOPs: its activations through memory (in eager PyTorch most nets wait on them, not on
their FLOPs), and a detector preset's mean training image.

timm's tables (pytorch-image-models results/, AMP, NCHW) divide out to a nearly constant time per activation written
forward (its `infer_macts`) at the card's datasheet bandwidth, whatever the net: ResNets, MobileNets, EfficientNets,
ConvNeXt and RegNet alike. Depthwise and inverted-residual nets have few FLOPs for their activations, so a rate from
FLOPs alone timed them 2-8x too fast (audits ZB, ZC, ZD).
"""

from __future__ import annotations

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.custom_cnn import (
    CNN_FORWARD_FLOPS_PER_PIXEL,
    QUERY_HEAD_ACTIVATION_FACTOR,
    RESNET50_SAVED_ELEMENTS,
)
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.presets import model_presets

# Bytes a forward activation costs at the datasheet bandwidth, 16-bit values (fp32: twice), timm's AMP NCHW rows:
# inference on an RTX 5090 (pt2.9.1) MobileNetV4-M 20.4, MobileNetV3-L 18.4, EfficientNet-B0 20.0, EfficientNetV2-S
# 24.2, MobileNetV2 16.0; on an RTX 3090 (pt1.12) 16.8-21.1 for the same nets (ResNets there are compute-bound).
CNN_INFERENCE_BYTES_PER_ACTIVATION = 20.0
# Channels-last on the RTX 3090: MobileNetV3-L 16.4, EfficientNet-B0 17.3, EfficientNetV2-S 21.4, MobileNetV2 14.6,
# EfficientNet-B3 19.3 (benchmark-infer-amp-nhwc-pt112-cu113-rtx3090.csv).
CNN_INFERENCE_BYTES_PER_ACTIVATION_CHANNELS_LAST = 17.0
# A training step's on an RTX 3090 (pt1.12, NCHW): ResNet-50 102, -101 101, -152 112, MobileNetV3-L 98, EfficientNet-B0
# 95, -B3 95, EfficientNetV2-S 107, MobileNetV2 77, ConvNeXt-T 86, RegNetY-4GF 119.
CNN_TRAINING_BYTES_PER_ACTIVATION = 100.0
# Channels-last (NHWC) on the same card: ResNet-50 69, -101 77, -152 83, MobileNetV3-L 78, EfficientNet-B0 79,
# EfficientNetV2-S 83, MobileNetV2 61, EfficientNet-B3 76, ConvNeXt-T 85 (NVIDIA's DeepLearningExamples train NHWC).
CNN_TRAINING_BYTES_PER_ACTIVATION_CHANNELS_LAST = 77.0
# A compiled engine (TensorRT) fuses each convolution with its normalization and activation: an activation is written
# once and read once, 4 B in 16 bits (a bound from its passes, not fitted).
CNN_COMPILED_BYTES_PER_ACTIVATION = 4.0
# Channels-last convolutions keep a GeForce card's tensor cores busier than NCHW's (GEFORCE_CNN_TENSOR_FRACTION,
# timm's NCHW rows): its NHWC training table on an RTX 3090 gives ResNet-101 0.49 and -152 0.49 of the figure.
GEFORCE_CNN_TENSOR_FRACTION_CHANNELS_LAST = 0.46
# A TensorRT engine's forward pass in FP16: EfficientViT's A100 rows at batch 64 (TensorRT, data transfer included)
# reach 0.21-0.38 of 312 TFLOP/s (L1 r224 0.21, L2 r384 0.23, L3 r384 0.38), the Jetson Orin Nano rows of YOLOv8m,
# YOLOX-S and YOLO11m at batch 1 0.23-0.29 (its dense FP16 figure); training's 0.19 timed them 10-49 % slow.
CNN_COMPILED_TENSOR_FRACTION = 0.25
# On a GeForce card TensorRT's FP16 convolutions run past its FP32-accumulate tensor figure, which only FP16
# accumulation (twice that figure) can: YOLOv9-C at batch 8 on an RTX 4090, 1,224 images/s x 102.1 GFLOP = 0.76 of 165
# (levipereira/yolov9-qat README, trtexec; fitted there), RTMDet-l on an RTX 3090, 410 x 160.5 = 0.93 of 71
# (mmdetection's table; -36 % with each fused kernel's fixed cost on top).
GEFORCE_CNN_COMPILED_TENSOR_FRACTION = 0.8
# ResNet-50 at 224 px writes 11.11M activations forward (timm's infer_macts) and saves 21.53M for backward.
RESNET50_FORWARD_ACTIVATIONS = 11.11e6
SAVED_PER_FORWARD_ACTIVATION = RESNET50_SAVED_ELEMENTS / RESNET50_FORWARD_ACTIVATIONS
# A custom CNN with no count: activations grow with its FLOPs against ResNet-50's at its size, to the 0.3 below it
# (timm: MobileNetV3-L 4.41M for 0.056 of ResNet-50's FLOPs, MobileNetV4-M 5.8M for 0.20) and the 0.5 above.
FEWER_FLOPS_EXPONENT, MORE_FLOPS_EXPONENT = 0.3, 0.5
ACTIVATIONS_BOUND = "activations-bound: "  # how the warning starts


def compiled_forward(answers: Answers) -> bool:
    """Whether the forward passes run in a compiled engine (inference; task.forward_runtime, at the edge by default)."""
    return answers.task.mode == "inference" and stacks.forward_runtime(answers.task.forward_runtime,
                                                                       answers.scenario) == "compiled"


def cnn_tensor_fraction(geforce_tensor: bool, channels_last: bool, compiled: bool = False) -> float:
    """The share of the tensor rate a CNN's convolutions reach: a GeForce card's FP32-accumulate figure more of it,
    and more again channels-last; a data-centre card's is NVIDIA's channels-last tables' (speed.CNN_TENSOR_FRACTION).
    A compiled engine's forward pass (TensorRT, which runs channels-last) reaches CNN_COMPILED_TENSOR_FRACTION, and on
    a GeForce card GEFORCE_CNN_COMPILED_TENSOR_FRACTION of its FP32-accumulate figure."""
    if compiled:
        return GEFORCE_CNN_COMPILED_TENSOR_FRACTION if geforce_tensor else CNN_COMPILED_TENSOR_FRACTION
    if not geforce_tensor:
        return sp.CNN_TENSOR_FRACTION
    return GEFORCE_CNN_TENSOR_FRACTION_CHANNELS_LAST if channels_last else sp.GEFORCE_CNN_TENSOR_FRACTION


def forward_activations(answers: Answers, shape: ModelShape) -> tuple[float, str]:
    """The activations one input writes forward: the saved count (given, or a preset's) over ResNet-50's ratio of
    saved to written; a custom CNN given its FLOPs alone, scaled from ResNet-50 by them."""
    workload = answers.workload
    if workload.preset != "custom" or workload.activation_elements_per_sample \
            or not workload.forward_gflops_per_sample:  # neither: the saved count model_shape scaled (audit YS2)
        count = shape.activation_elements_per_sample / SAVED_PER_FORWARD_ACTIVATION
        return count, (f"{count / 1e6:.3g}M activations written forward (the {shape.activation_elements_per_sample:,}"
                       f" saved for backward / {SAVED_PER_FORWARD_ACTIVATION:.2f}, ResNet-50's ratio)")
    # A clip's frames each write a frame's (audit XQ10: SlowFast's clip was one image as wide as its FLOPs, 33M
    # written against the 172M its memory saved).
    pixels, frames = workload.input_size_px ** 2, workload.frames_per_sample
    ratio = workload.forward_gflops_per_sample * 1e9 / frames / (CNN_FORWARD_FLOPS_PER_PIXEL * pixels) \
        if pixels else 1.0
    exponent = FEWER_FLOPS_EXPONENT if ratio < 1 else MORE_FLOPS_EXPONENT
    # A DETR-family head's queries through 6 decoder layers write what its memory keeps, 2.1x a detector's (audit
    # DF67: Conditional DETR R-50's 50 epochs, ~30 h on 8 V100s, were timed at ~11 h as a plain CNN of its FLOPs).
    query = QUERY_HEAD_ACTIVATION_FACTOR if workload.dense_head == "query" else 1.0
    count = RESNET50_FORWARD_ACTIVATIONS * pixels / 224 ** 2 * ratio ** exponent * frames * query
    clip = f" x {frames} frames" if frames > 1 else ""
    head = f" x {query:g} for its DETR-family head" if query > 1 else ""
    return count, (f"{count / 1e6:.3g}M activations written forward (ResNet-50's at {workload.input_size_px} px x "
                   f"its FLOPs' ratio {ratio:.3g}^{exponent:g}{clip}{head}; workload.activation_elements_per_sample, "
                   "~2x timm's infer_macts for a ResNet, ~4-5x for a DenseNet, gives yours)")


def activation_seconds(answers: Answers, shape: ModelShape, device: sp.Device, samples_per_gpu: float,
                       training: bool) -> tuple[float, str]:
    """A device's time for its inputs' activations through memory, and the formula's text: a GPU's, or a CPU board's
    through its RAM (a Raspberry Pi's 1 MB of L2 holds none of them: torchvision's ShuffleNetV2 runs at 4 GB/s x its
    activations, not its FLOPs, audit XN9). A frozen backbone's step is a forward pass; full recompute writes the
    forward's activations again."""
    if shape.kind != "cnn" or device.bandwidth_gb_per_s <= 0:
        return 0.0, ""
    task = answers.task
    channels_last = task.channels_last
    backward = training and task.method != "frozen"
    # No TensorRT on a CPU board: its compiled pass (TorchScript, inductor) is timed as eager, no figure found for it.
    compiled = not training and compiled_forward(answers) and device.fp32_tflops > 0
    forward = CNN_INFERENCE_BYTES_PER_ACTIVATION_CHANNELS_LAST if channels_last else CNN_INFERENCE_BYTES_PER_ACTIVATION
    per_activation = CNN_COMPILED_BYTES_PER_ACTIVATION if compiled else forward if not backward else (
        CNN_TRAINING_BYTES_PER_ACTIVATION_CHANNELS_LAST if channels_last else CNN_TRAINING_BYTES_PER_ACTIVATION)
    if backward and stacks.recompute_of(task.training_stack, task.recompute) == "full":
        per_activation += forward
    # A value's bytes against 16 bits: fp32 twice; a TensorRT INT8 engine's activations are 8-bit (review ZR).
    value_bytes = 2.0 if task.precision in ("fp32", "tf32") else 0.5 if task.precision == "int8" and compiled else 1.0
    count, origin = forward_activations(answers, shape)
    # The constants are at the datasheet bandwidth: a bench run's measured figure is its share of it.
    bandwidth = device.bandwidth_gb_per_s / sp.BENCH_BANDWIDTH_FRACTION if device.measured_bandwidth \
        else device.bandwidth_gb_per_s
    seconds = samples_per_gpu * count * per_activation * value_bytes / (bandwidth * 1e9)
    layout = "a compiled engine: written once, read once" if compiled else \
        f"eager {'channels-last' if channels_last else 'NCHW'}, timm's tables"
    what = (f"measured {device.bandwidth_gb_per_s:,.0f} / {sp.BENCH_BANDWIDTH_FRACTION:g}, the datasheet's share a "
            "bench reaches") if device.measured_bandwidth else "datasheet"
    step = "a training step" if backward else "a forward pass"
    text = (f"activations through memory: {samples_per_gpu:g} samples per GPU x {origin} x "
            f"{per_activation * value_bytes:g} B ({step}, {layout}) / {bandwidth:,.0f} GB/s ({what}) = "
            f"{sp.duration(seconds)}")
    return seconds, text


def activations_warning(memory_s: float, compute_s: float, samples: int, answers: Answers) -> list[str]:
    """Where an eager forward pass waits on its activations, not its FLOPs: the warning, with the levers."""
    if memory_s <= compute_s or stacks.forward_runtime(answers.task.forward_runtime, answers.scenario) != "eager":
        return []
    layout = "" if answers.task.channels_last else \
        "; channels-last (task.channels_last) moves ~0.85 of the bytes"
    return [f"{ACTIVATIONS_BOUND}in eager PyTorch this CNN waits on its activations' trips through memory, "
            f"~{samples / memory_s:,.0f} samples/s where its FLOPs give ~{samples / compute_s:,.0f}{layout}; a "
            "compiled engine (TensorRT; task.forward_runtime = \"compiled\") fuses each convolution with its "
            "normalization and activation and moves ~1/5 of them"]


# COCO's 800 x 1333 canvas as a square of as many pixels: a custom detector answered at it trains on COCO's images.
COCO_CANVAS_PX = 1033


def mean_training_image(answers: Answers) -> tuple[float, float, str]:
    """A detector preset trained at its own canvas, or a custom detector answered at COCO's: its mean COCO image's
    share of the pixels, the peak ratio its activations carry, and the formula's words; (1, 1, "") otherwise (audit
    ZV26: detectron2's Faster R-CNN R50-FPN, 0.210 s an iteration on 8 V100s, timed at 800 x 1333 every image: 0.36
    s)."""
    workload = answers.workload
    preset = model_presets().get(workload.preset)
    if preset is None and workload.kind == "cnn" and workload.input_size_px == COCO_CANVAS_PX \
            and workload.dense_head in ("detection", "instance", "query"):  # audit BU55: Sparse R-CNN 38 % slow
        share, peak = model_presets()["faster-rcnn-r50-fpn"].training_mean_pixels_share, 1.0
    elif preset is None or preset.training_mean_pixels_share == 1.0 or workload.input_size_px not in (
            0, preset.input_size_px):
        return 1.0, 1.0, ""
    else:
        share, peak = preset.training_mean_pixels_share, preset.run_peak_ratio
    return share, peak, (f", x {share:g} for COCO's mean training image (short side 640-800 by detectron2's scale "
                         "jitter, 4:3 images: 720 x 960 of the 800 x 1333 canvas; mmdetection's one-scale 1x: 0.8)")

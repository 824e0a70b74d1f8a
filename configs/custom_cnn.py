"""A custom CNN's saved activations and kernels, scaled from ResNet-50's where the answers do not count them."""

from __future__ import annotations

from pth_top.configs.answer_types import Workload
from pth_top.configs.memory_terms import ModelShape

# ResNet-50 at 224 px: 21.53M values saved for backward and 8.18 GFLOP forward, the reference for a custom CNN.
RESNET50_SAVED_ELEMENTS = 21_530_496
RESNET50_FORWARD_FLOPS = 8.18e9
CNN_ACTIVATION_ELEMENTS_PER_PIXEL = RESNET50_SAVED_ELEMENTS / (224 * 224)
# A custom CNN at 512 px or more with neither count nor FLOPs is a dense-prediction net, per pixel x ResNet-50's as
# mmseg's and mmdet's tables give (max_memory_allocated less weights and SGD state, fp32): UPerNet R-50 3.1, OCRNet
# HRNet-W48 4.0, DeepLabV3+ R50-D8 3.8 (counted), YOLACT R-101 2.7, FCOS X-101 2.45. 3.5 keeps a segmentation net
# off a card it fills; a detector on a ResNet-50 FPN keeps ~1 (Faster R-CNN, RetinaNet: presets) and gives its count.
DENSE_PREDICTION_PX = 512
DENSE_PREDICTION_ACTIVATION_FACTOR = 3.5
# A real-time segmenter under 5M parameters keeps narrow maps: mmseg's Cityscapes tables (Mem GiB, fp32) give
# per pixel x ResNet-50's Fast-SCNN (1.1M) 0.98, CGNet (0.5M) 1.24, BiSeNetV2 (3.4M) 1.14, ERFNet (2.1M) 1.80.
LIGHT_SEGMENTATION_PARAMETERS = 5_000_000
LIGHT_SEGMENTATION_ACTIVATION_FACTOR = 1.8
# A real-time segmenter said so (workload.dense_head = "realtime_segmentation") at any size: mmseg's Cityscapes tables
# (Mem GiB, fp32, less weights) give STDC1 (8.4M, 12 images of 512x1024) 0.71, STDC2 0.82, BiSeNetV1 R-18 (13M) 0.85,
# Fast-SCNN 0.98, BiSeNetV2 1.14, CGNet 1.24; at 3.5x STDC1 was 35.8 GiB against 7.15 (audit XN9). Parameters cannot
# tell it from a dilated net of its size (DeepLabV3+ M-V2-D8, ~15M: 2.8x), so it is said, not guessed. ERFNet (1.8x)
# keeps its 1/8 maps through 16 blocks: a "segmentation" net under 5M parameters.
REALTIME_SEGMENTATION_ACTIVATION_FACTOR = 1.25
# A deeper dilated backbone keeps its extra blocks at 1/8 of the input: mmseg's Cityscapes 512x1024 tables (Mem GiB, 2
# images, fp32, less weights and SGD state) give R-101-D8 1.6x R-50-D8's (PSPNet 6.1 and 9.6, CCNet 6.0 and 9.5), so
# a segmentation net's factor grows 0.6 for each 51 weight layers past ResNet-50's 50 (audit XE6: CCNet R-101 -30 %).
RESNET50_WEIGHT_LAYERS = 50
SEGMENTATION_GROWTH_PER_LAYER = 0.6 / 51
# A ResNet-18 or -34 backbone (basic blocks: workload.layers 18 or 34) keeps fewer values a pixel than ResNet-50's
# bottlenecks (fp32 Mem less weights and SGD state): mmseg's PSPNet R-18-D8 at 2 images of 512x1024 1.7 GB against
# R-50-D8's 6.1 (0.28); mmdet's RetinaNet R-18-FPN at 2 of 1333x800 1.7 GB against R-50's 3.8 (0.42), its CenterNet R-18
# at 16 of 512 px 3.45 GB (0.46 of ResNet-50's a pixel; audit BK52: 7.36 GiB as a detector). ResNet-34: halfway to 1.
BASIC_BLOCK_RESNET_LAYERS = (18, 34)
BASIC_BLOCK_SEGMENTATION_SHARE = 0.28
BASIC_BLOCK_DETECTOR_SHARE = 0.42
# A detector's deeper backbone keeps its extra blocks at 1/16 of the input (stage 4): mmdet's 1x COCO tables (Mem GB,
# 2 images of 1333x800, fp32, less weights and SGD state) give R-101-FPN 1.5x R-50-FPN's, Faster R-CNN 6.0 against 4.0
# and RetinaNet 5.7 against 3.8, so a detector's values grow 0.5 for each 51 weight layers past ResNet-50's 50.
DETECTOR_GROWTH_PER_LAYER = 0.5 / 51
# A classifier's values grow as much with its depth, and with its FLOPs at that depth as their 0.3 power, not their
# square root (a wide net widens its inner layers, whose FLOPs grow as their width squared): timm's RTX 3090 AMP sweep
# (results/benchmark-train-amp-nchw-pt112-cu113-rtx3090.csv, 512 -> 384 -> 256 -> 192 on out-of-memory) fits ResNet-101
# at 256 not 384, ResNet-152 at 192 not 256, Wide ResNet-50-2 at 384 not 512 (27.0 GiB at 384 on the square root;
# audit CA57) and Wide ResNet-101-2 at 192 not 256 only with both; depth alone, 0.07-0.32 the power's range.
CLASSIFIER_WIDTH_EXPONENT = 0.3
# A one-stage instance segmenter's mask branch writes a mask for each grid cell at 1/4 scale: mmdet's SOLO R-50 at 2
# images of 1333x800 in fp32, Mem 8.0 GB (decoupled SOLO 7.8-7.9), 2.1x ResNet-50's values a pixel (audit XH7: 4.3 GiB
# as a detector, an 8 GB card called a fit); SOLOv2's dynamic kernels keep 5.1 GB, a detector's ~1x.
INSTANCE_SEGMENTATION_ACTIVATION_FACTOR = 2.1
# A DETR-family head (deformable attention over the backbone's scales, hundreds of queries through 6 decoder layers)
# keeps 2.1x what a detector of its FLOPs keeps: mmdet's Mask2Former R-50 at 2 images of 1024 px in fp32, Mem 13.7 GB
# (2.2x), and DINO-4scale R-50 at 2 of 1333x800 ~15 GB (its maintainer, IDEA-Research/DINO#76: 2.0-2.1x).
QUERY_HEAD_ACTIVATION_FACTOR = 2.1
# A detector trains its backbone from the second stage (mmdet's frozen_stages=1, detectron2's FREEZE_AT=2, torchvision's
# trainable_backbone_layers=3), so ResNet-50 saves 11.9M of its 21.3M values at 224 px (saved_tensors_hooks, norm_eval):
# given its FLOPs, 0.56 x their square root, as YOLOF R-50-C5 0.56 (mmdet 0.53) and RetinaNet 0.96 (0.87-0.95) keep.
DETECTOR_TRAINED_BACKBONE_SHARE = 0.56
CNN_FORWARD_FLOPS_PER_PIXEL = RESNET50_FORWARD_FLOPS / (224 * 224)
# An FPN detector's heads (RPN, RoI box head over P2-P6) run ~2.5x ResNet-50's FLOPs a pixel: Faster R-CNN R50-FPN's
# 432 GFLOP counted on one 800 x 1333 image (presets/models.toml), where the backbone's rate gave HTC 174 (audit XB5).
DETECTION_FORWARD_FLOPS_PER_PIXEL = 432.0e9 / 1_066_400
# A detector's backbone at another depth adds or drops its own FLOPs a pixel, the head's unchanged: torchvision's
# ResNet table at 224 px, 1.81, 3.66, 4.09, 7.80 and 11.51 GMACs for ResNet-18, -34, -50, -101 and -152 (2 FLOPs each);
# R-101-FPN then runs 1.37x R-50-FPN's, as mmdet's Faster R-CNN 1x times them, 21.4 and 15.6 images/s (audit CP62).
RESNET_FORWARD_GMACS_AT_224 = {18: 1.81, 34: 3.66, 50: 4.09, 101: 7.80, 152: 11.51}
RESNET_BOTTLENECK_GMACS_PER_LAYER = (RESNET_FORWARD_GMACS_AT_224[152] - RESNET_FORWARD_GMACS_AT_224[50]) / (152 - 50)
# A dilated segmentation net runs its last stages at 1/8 of the input: DeepLabV3+ R50-D8's 743 GFLOP counted on one
# 512x1024 image (torch.utils.flop_counter), 8.7x ResNet-50's a pixel, grown with its backbone as its activations are
# (audit XQ10: DANet R-101-D8 at ResNet-50's FLOPs a saved value ran 4.0 images/s on a V100 against mmseg's 1.99).
SEGMENTATION_FORWARD_FLOPS_PER_PIXEL = 743.0e9 / (512 * 1024)
# A real-time segmenter runs narrow maps: mmseg's STDC1 (8.27M) compiled by Hailo's model zoo, 126.47 G operations (2 a
# multiply-add, as its FCN8 ResNet-18's 142.82 are) at 1024x1920, 64k a pixel, 0.39x ResNet-50's; PaddleSeg's zoo counts
# BiSeNetV2 at 62k and Fast-SCNN at 8k (16.14 and 2.04 G multiply-adds at 1024x512). ResNet-50's made it 3.2x (ZO34).
REALTIME_SEGMENTATION_FORWARD_FLOPS_PER_PIXEL = 126.47e9 / (1024 * 1920)


# Saved values a sample counted with saved_tensors_hooks on the meta device (YOLOv5s from yolov5s.yaml v6.0: 7,235,389
# parameters as Ultralytics prints; EfficientNet-B0 in torchvision's layout; a classic U-Net) against model_shape's.
CNN_SCALED_BY_PIXELS = (
    "estimate: a custom CNN's activations are scaled from ResNet-50's per pixel, which counted ones miss by up to ~3x "
    "either way (saved values a sample, counted with saved_tensors_hooks: ConvNeXt-B at 384 px 171M against 63M "
    "scaled, YOLOv5s at 640 px 83M against 176M), and ~4x for a dilated (output-stride 8) segmentation backbone, "
    "which keeps its last stages at 1/8 of the input (DeepLabV3+ R50-D8 at 512x1024: 860M against 225M), so at "
    "512 px or more it is sized as a segmentation net, 3.5x, or 1.8x under 5M parameters (a real-time segmenter: "
    "Fast-SCNN to ERFNet 1.0-1.8x; an FPN detector keeps ~1x: workload.dense_head = \"detection\"); a transformer "
    "backbone given as a CNN takes 2.2-4.3x a ResNet-50's memory (mmdetection's RetinaNet at 2 images of 1333x800 "
    "in fp32: PVT-Tiny 8.5 GB, PVTv2-B2 16.2 GB, ResNet-50 3.8; audit CY65): give "
    "workload.forward_gflops_per_sample with dense_head \"auto\" (the activations then follow the square root of "
    "the FLOPs), or count yours "
    "and give workload.activation_elements_per_sample")
CNN_SCALED_BY_FLOPS = (
    "estimate: a custom CNN's activations are scaled from ResNet-50's per pixel by the square root of its FLOPs "
    "against ResNet-50's at that size where it has more, which counted ones (saved_tensors_hooks) miss by up to ~30 %: "
    "a U-Net at 512 px 343M against 338M, YOLOv8m at 640 px 162M against 191M, DeepLabV3+ R50-D8 at 512x1024 860M "
    "against 663M, ConvNeXt-B at 384 px 171M against 122M; with fewer, never below ResNet-50's density, as a "
    "depthwise net keeps as many values for few FLOPs (EfficientNet-B0: 22.1M on 0.77 GFLOP, ResNet-50's 21.5M), so a "
    "narrow dense one is up to ~2x high (YOLOv5s at 640 px: 83M against 176M), and a transformer head on a CNN "
    "backbone about 2x low (Mask2Former R-50 at 1024 px, 2 images in fp32: 13.7 GB in mmdetection's table, 7.1 "
    "estimated: workload.dense_head = \"query\"), and a hierarchical vision transformer given as a CNN 2-3x low "
    "(Swin-B at 384 px: timm runs out of 24 GB at a batch of 48, where this counts 9 GiB at 32), and mmdetection's and "
    "mmsegmentation's tables run higher for a VGG detector and an iterative head (SSD300 at 8 images: 9.9 GB, 3.4 GiB "
    "here; K-Net R-50 at 2 images of 512 px: 7.34 GB, 4.4 GiB): count yours and give "
    "workload.activation_elements_per_sample")


# The FLOPs-scaled count has come out up to ~30 % below counted and measured ones (ConvNeXt-B at 384 px -29 %,
# DeepLabV3+ R50-D8 -23 %; mmyolo's Mem for YOLOv7-l and -x at 16 images, 10.3 and 13.7 GB, -27 % and -26 %, where
# YOLOv5-l and -x are -4 % and -11 %: audit AQ45), so a card is chosen with room for 20 % more of them beside the
# estimator's margin.
SCALED_ACTIVATION_MARGIN = 0.2


# A CNN's weight layer launches its conv, norm and activation in eager PyTorch, and a residual add comes every ~3
# (torchvision's ResNet-50: 53 convs, 53 batch norms, 49 ReLUs, 16 adds, 2 pools and a linear, 174 for 50 layers).
CNN_KERNELS_PER_LAYER = 3.5
# A custom CNN whose layers are not given launches ResNet-50's: at none, RTMPose-m (CSPNeXt-m, ~100 weight layers) ran
# at batch 1 in eager PyTorch on an RTX 5060 at ~1,279 FPS, past TensorRT's 847 on an RTX 3090 (audit XZ13).
DEFAULT_CNN_LAYERS = 50


def dense_prediction(workload: Workload) -> bool:
    """Sized as a segmentation net: said so, or at 512 px or more with neither FLOPs nor a count (dense_head auto)."""
    return workload.dense_head in ("segmentation", "realtime_segmentation") or (
        workload.dense_head == "auto" and not workload.forward_gflops_per_sample
        and workload.input_size_px >= DENSE_PREDICTION_PX)


def light_segmentation(parameters: int) -> bool:
    """A real-time segmenter: under LIGHT_SEGMENTATION_PARAMETERS, its maps narrow."""
    return 0 < parameters < LIGHT_SEGMENTATION_PARAMETERS


def basic_block_share(workload: Workload, share_at_18: float) -> float:
    """What a ResNet-18's (or -34's, halfway to ResNet-50's) backbone keeps of a ResNet-50's head and backbone."""
    if workload.layers not in BASIC_BLOCK_RESNET_LAYERS:
        return 1.0
    return share_at_18 + (1.0 - share_at_18) * (workload.layers - 18) / (RESNET50_WEIGHT_LAYERS - 18)


def dense_prediction_factor(workload: Workload) -> float:
    """Per pixel x ResNet-50's for a segmentation net: a real-time one's (said so, or under 5M parameters), or a heavy
    head's, grown with a backbone deeper than ResNet-50 and shrunk with a ResNet-18's or -34's (its weight layers)."""
    if workload.dense_head == "realtime_segmentation":
        return REALTIME_SEGMENTATION_ACTIVATION_FACTOR
    if light_segmentation(workload.parameters):
        return LIGHT_SEGMENTATION_ACTIVATION_FACTOR
    deeper = max(0, workload.layers - RESNET50_WEIGHT_LAYERS)
    return DENSE_PREDICTION_ACTIVATION_FACTOR * (1.0 + SEGMENTATION_GROWTH_PER_LAYER * deeper) * basic_block_share(
        workload, BASIC_BLOCK_SEGMENTATION_SHARE)


def backbone_depth(workload: Workload) -> float:
    """A detector's or a classifier's values grown with a backbone deeper than ResNet-50 (its weight layers)."""
    if workload.dense_head != "detection" and not classifier(workload):
        return 1.0
    return 1.0 + DETECTOR_GROWTH_PER_LAYER * max(0, workload.layers - RESNET50_WEIGHT_LAYERS)


def classifier(workload: Workload) -> bool:
    """A CNN with no head answered under 512 px: an image or clip classifier; a YOLO or U-Net answered "dense", or
    "auto" at 512 px or more with its FLOPs, keeps the square root (audit AQ45: YOLOv7-x; review r73: YOLOv7-x at 511
    px was 19 % under its 512 px count)."""
    return workload.dense_head == "auto" and workload.input_size_px < DENSE_PREDICTION_PX


def heavy_segmentation(workload: Workload) -> bool:
    """A segmentation net sized at a heavy head's factor (its count not given): not a real-time one, said or under 5M
    parameters."""
    return dense_prediction(workload) and not workload.activation_elements_per_sample \
        and workload.dense_head != "realtime_segmentation" and not light_segmentation(workload.parameters)


def detection_forward_flops(workload: Workload) -> float:
    """An FPN detector's forward FLOPs an image: Faster R-CNN R50-FPN's a pixel, its backbone's at its depth."""
    layers = workload.layers or RESNET50_WEIGHT_LAYERS
    gmacs = RESNET_FORWARD_GMACS_AT_224.get(layers) or RESNET_FORWARD_GMACS_AT_224[RESNET50_WEIGHT_LAYERS] + \
        RESNET_BOTTLENECK_GMACS_PER_LAYER * max(0, layers - RESNET50_WEIGHT_LAYERS)
    backbone = 2e9 * (gmacs - RESNET_FORWARD_GMACS_AT_224[RESNET50_WEIGHT_LAYERS]) / (224 * 224)
    return (DETECTION_FORWARD_FLOPS_PER_PIXEL + backbone) * workload.input_size_px ** 2


def segmentation_forward_flops(workload: Workload) -> float:
    """A heavy segmentation net's forward FLOPs an image: DeepLabV3+ R50-D8's a pixel, grown with its depth."""
    depth = dense_prediction_factor(workload) / DENSE_PREDICTION_ACTIVATION_FACTOR
    return SEGMENTATION_FORWARD_FLOPS_PER_PIXEL * workload.input_size_px ** 2 * depth


def _segmentation_origin(workload: Workload, width: float) -> str:
    """How a segmentation net's per-pixel factor was chosen: a real-time one's, or a heavy head's and its depth."""
    at = "" if workload.dense_head != "auto" else f" at {DENSE_PREDICTION_PX} px or more"
    if workload.dense_head == "realtime_segmentation":
        kind, why = "real-time segmentation net's", (
            " (said so: mmseg's STDC, BiSeNet, Fast-SCNN and CGNet 0.7-1.24x")
    elif light_segmentation(workload.parameters):
        kind, why = "real-time segmentation net's", (
            f" under {LIGHT_SEGMENTATION_PARAMETERS / 1e6:g}M parameters (its maps are narrow: Fast-SCNN, CGNet, "
            "BiSeNetV2 and ERFNet 1.0-1.8x in mmseg's tables")
    else:
        depth = f", {workload.layers} here" if workload.layers else ", not given here"
        kind, why = "segmentation net's", (
            " (its head keeps high-resolution maps: UPerNet, OCRNet and DeepLabV3+ 3.1-4.0x, YOLACT and FCOS "
            "2.5-2.7x; a backbone deeper than ResNet-50 grows it by its weight layers, workload.layers: a "
            f"dilated R-101 1.6x, an R-18 {BASIC_BLOCK_SEGMENTATION_SHARE:g}x{depth}; a real-time one, STDC, BiSeNet, "
            "DDRNet, PIDNet, 1.25x: workload.dense_head = \"realtime_segmentation\"")
    return (f" x {width:.3g}, a {kind}{at}{why}; an FPN detector, Faster R-CNN to Panoptic FPN, ~1x: "
            "workload.dense_head = \"detection\"; or give workload.activation_elements_per_sample)")


def custom_cnn_shape(workload: Workload) -> tuple[ModelShape, str]:
    """A custom CNN's shape: its saved values (given, or scaled from ResNet-50's per pixel) and eager kernels."""
    elements = workload.activation_elements_per_sample
    origin, margin = "given", 0.0
    if not elements:
        # A clip's frames each keep a frame's activations: its FLOPs a frame set the width (mmaction2's TSM-R50, 8
        # frames of 224 px: 7,079 MB at 8 clips a GPU; 2.6 GiB as one image as wide as its 65.8 GFLOP, audit XN9).
        frames, pixels = workload.frames_per_sample, workload.input_size_px ** 2
        # Never below ResNet-50's density: a depthwise net's few FLOPs keep as many values (EfficientNet-B0).
        ratio = workload.forward_gflops_per_sample * 1e9 / frames / (CNN_FORWARD_FLOPS_PER_PIXEL * pixels) \
            if pixels else 0.0
        dense, instance = dense_prediction(workload), workload.dense_head == "instance"
        query = QUERY_HEAD_ACTIVATION_FACTOR if workload.dense_head == "query" else 1.0
        detector = workload.dense_head == "detection" and workload.forward_gflops_per_sample > 0
        share = DETECTOR_TRAINED_BACKBONE_SHARE if detector else 1.0
        deeper = backbone_depth(workload)
        classified = classifier(workload)
        power = CLASSIFIER_WIDTH_EXPONENT if classified else 0.5
        flops = max(1.0, (ratio / deeper) ** power)  # the FLOPs of a deeper backbone's extra blocks are not width
        # Not with its FLOPs given: the density floor and the frozen stem's share hold (RetinaNet R-18-FPN at 160
        # GFLOP, 2.3 GB against mmdet's 1.7: high, where the share on top made CenterNet R-18 half its 3.45).
        basic = basic_block_share(workload, BASIC_BLOCK_DETECTOR_SHARE) if workload.dense_head == "detection" \
            and not detector else 1.0
        width = dense_prediction_factor(workload) if dense else \
            INSTANCE_SEGMENTATION_ACTIVATION_FACTOR if instance else flops * query * share * deeper * basic
        elements = int(CNN_ACTIVATION_ELEMENTS_PER_PIXEL * pixels * width * frames)
        margin = SCALED_ACTIVATION_MARGIN if not (dense or instance) and round(flops, 2) > 1.0 else 0.0
        origin = "activations scaled from ResNet-50's per-pixel count" + (
            _segmentation_origin(workload, width) if dense else
            f" x {width:g}, a one-stage instance segmenter's (its mask branch at 1/4 scale: mmdet's SOLO R-50 8.0 GB "
            "at 2 images of 1333x800; SOLOv2's dynamic kernels keep a detector's ~1x: workload.dense_head = "
            "\"detection\")" if instance else
            (f" x {flops:.3g}, " + ("the 0.3 power of its FLOPs against ResNet-50's at that size (timm's RTX 3090 "
                                     "sweep: a wide net widens its inner layers)" if classified else
                                     "the square root of its FLOPs against ResNet-50's at that size (a conv's outputs "
                                     "grow with its width, its FLOPs with the width squared)")
             if round(flops, 2) != 1.0 else "")
            + (f" x {share:g}, a detector's backbone trained from its second stage (mmdet's frozen_stages=1, "
               "detectron2's FREEZE_AT=2: its stem and first stage save nothing; a YOLO trains every layer: "
               "workload.dense_head = \"auto\")" if detector else "")
            + (f" x {query:g} for its DETR-family head (mmdet's Mask2Former R-50 13.7 GB at 2 images of 1024 px, "
               "DINO-4scale ~15 GB at 2 of 1333x800)" if query != 1.0 else "")
            + (f" x {deeper:.3g} for its {workload.layers} weight layers, a ResNet-family backbone's depth (a "
               "detector's R-101-FPN keeps 1.5x R-50-FPN's in mmdet's Faster R-CNN and RetinaNet tables; timm's "
               "ResNet-101 and -152 as much)" if deeper != 1.0 else "")
            + (f" x {basic:.2g} for its ResNet-{workload.layers} backbone's basic blocks (mmdet's RetinaNet R-18-FPN "
               "1.7 GB against R-50's 3.8, CenterNet R-18 3.45 GB at 16 images of 512 px)" if basic != 1.0 else ""))
        origin += f" x {frames} frames a clip (workload.frames_per_sample)" if frames > 1 else ""
    layers = workload.layers or DEFAULT_CNN_LAYERS
    kernels = "" if workload.layers else (
        f"; its kernels as ResNet-50's {DEFAULT_CNN_LAYERS} weight layers: workload.layers not given")
    return ModelShape(
        kind="cnn", parameters=workload.parameters, activation_elements_per_sample=elements,
        forward_kernels=round(CNN_KERNELS_PER_LAYER * layers), activation_margin=margin,
    ), f"custom CNN: {workload.parameters / 1e6:,.1f}M parameters ({origin}{kernels})"

"""A CNN preset at another input size: activations and forward FLOPs scale with the pixel count; a custom CNN's
activations with the square root of its FLOPs."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.answer_types import Task, Workload
from pth_top.configs.answers import Answers
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.recommend import recommend
from pth_top.configs.speed_forward import forward_flops_per_sample
from tests.configs.builders import answers


def test_a_cnn_preset_at_448_px_saves_four_times_its_224_px_activations():
    base, _ = model_shape(Workload(preset="resnet50"))
    shape, origin = model_shape(Workload(preset="resnet50", input_size_px=448))
    assert shape.activation_elements_per_sample == 4 * base.activation_elements_per_sample
    assert shape.largest_activation_elements == 4 * base.largest_activation_elements
    assert "at 448 px" in origin and shape.parameters == base.parameters
    same, same_origin = model_shape(Workload(preset="resnet50", input_size_px=224))
    assert same == base and "px" not in same_origin.split(")")[-1]


def test_the_forward_flops_scale_too_and_transformers_ignore_the_pixel_size():
    answers = Answers(workload=Workload(preset="resnet50", input_size_px=896), task=Task(mode="training"))
    flops, text = forward_flops_per_sample(answers, model_shape(answers.workload)[0])
    assert flops == pytest.approx(16 * model_presets()["resnet50"].forward_gflops_per_sample * 1e9)
    assert "x 16 for 896 px" in text
    assert model_shape(Workload(preset="bert-base", input_size_px=896)) == model_shape(Workload(preset="bert-base"))


def test_the_scaling_is_what_autograd_saves_at_each_size():
    # ResNet-18's layout (benches' resnet18_like) counted on the meta device: what autograd saves for backward at
    # 448, 640 and 1024 px, against 224, is the pixel ratio within 1 % (odd feature-map sizes round).
    torch = pytest.importorskip("torch")
    from pth_top.benches.child.kernels._models import resnet18_like

    with torch.device("meta"):
        model = resnet18_like()

    def saved_elements(px: int) -> int:
        saved = [0]

        def pack(tensor):
            saved[0] += tensor.numel()
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            model(torch.empty(1, 3, px, px, device="meta", requires_grad=True))
        return saved[0] - sum(parameter.numel() for parameter in model.parameters())

    at_224 = saved_elements(224)
    base = model_shape(Workload(preset="resnet18"))[0].activation_elements_per_sample
    for px in (448, 640, 1024):
        estimated = model_shape(Workload(preset="resnet18", input_size_px=px))[0].activation_elements_per_sample
        assert estimated / base == pytest.approx(saved_elements(px) / at_224, rel=0.01), px


# YOLOv5s (yolov5s.yaml v6.0: 7,235,389 parameters, 16.4 GFLOP at 640 px, as Ultralytics prints) built layer by
# layer on the meta device: autograd saves 82,971,747 values a sample beside its parameters (saved_tensors_hooks).
YOLOV5S = Workload(preset="custom", kind="cnn", parameters=7_235_389, input_size_px=640,
                   forward_gflops_per_sample=16.5, batch_size=64)
YOLOV5S_SAVED_ELEMENTS = 82_971_747


def test_a_custom_cnn_given_its_flops_saves_what_a_narrow_network_saves():
    # A conv's outputs grow with its width and its FLOPs with the width squared: YOLOv5s, a quarter of ResNet-50's
    # FLOPs at 640 px, saves about half its values, not all of them (176M, which ruled out a 16 GB card).
    elements = model_shape(YOLOV5S)[0].activation_elements_per_sample
    assert elements == pytest.approx(YOLOV5S_SAVED_ELEMENTS, rel=0.1)
    unknown = model_shape(Workload(preset="custom", kind="cnn", parameters=7_235_389, input_size_px=640))[0]
    assert unknown.activation_elements_per_sample > 2 * YOLOV5S_SAVED_ELEMENTS  # no FLOPs: ResNet-50's density


def test_yolov5s_trains_its_batch_of_64_on_a_16_gb_card(catalog):
    # Ultralytics' YOLOv5 README trains yolov5s with --batch-size 64, "batch sizes shown for 16 GB devices", in AMP.
    build = recommend(answers(**{f"workload__{key}": getattr(YOLOV5S, key) for key in (
        "preset", "kind", "parameters", "input_size_px", "forward_gflops_per_sample", "batch_size")},
        task__precision="amp_fp16", task__optimizer="sgd", data__kind="images", budget__currency="USD",
        budget__amount=3000.0), catalog, pins={"gpu": ("rtx-5060-ti-16gb", 1)}, today=dt.date(2026, 12, 4))
    assert build.memory.total_bytes < 15.2 * 2**30 and build.feasible, build.blockers

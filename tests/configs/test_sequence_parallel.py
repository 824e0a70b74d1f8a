"""Sequence parallel for diffusion inference (task.sequence_parallel, xDiT's Ulysses): the GPUs make each clip
together, each holding the whole model and its share of the tokens."""

from __future__ import annotations

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.diffusion import rate_text
from pth_top.configs.memory import model_memory
from pth_top.configs.presets import model_shape
from pth_top.configs.speed_build import inference
from tests.configs.builders import answers
from tests.configs.published_speeds import HUNYUAN_VIDEO_720P, catalog_gpu


def _clip(gpus: int, split: bool):
    job = answers(**HUNYUAN_VIDEO_720P, scale__gpu_count=gpus, task__sequence_parallel=split)
    shape = model_shape(job.workload)[0]
    return model_memory(job, shape, 0), inference(job, shape, catalog_gpu("h100-80gb-sxm", job, gpus))


def test_each_gpu_holds_the_model_and_its_share_of_the_tokens():
    one, _ = _clip(1, False)
    split, _ = _clip(4, True)
    assert split.weights_bytes == one.weights_bytes  # replicated, not sharded
    assert split.activations_bytes < one.activations_bytes / 3  # a quarter of the tokens (the VAE's decode aside)
    assert any("sequence parallel" in line for line in split.formula)


def test_one_clip_on_eight_gpus_is_several_times_faster_than_on_one():
    _, alone = _clip(8, False)  # data parallel: one clip runs on one GPU, the other seven idle
    _, together = _clip(8, True)
    ratio = alone.figures["image_batch_s"] / together.figures["image_batch_s"]
    assert 5.0 < ratio < 7.0  # xDiT's table: 5.64x on 8 H100s
    assert "sequence parallel" in together.summary[0]


def test_sequence_parallel_needs_several_gpus_and_a_diffusion_model():
    single = answers(**HUNYUAN_VIDEO_720P, task__sequence_parallel=True)
    assert [key for _, key, _ in cross_field_problems(single)] == ["sequence_parallel"]
    language = answers(workload__preset="llama-7b", task__mode="inference", scale__gpu_count=2,
                       task__sequence_parallel=True)
    assert "sequence_parallel" in [key for _, key, _ in cross_field_problems(language)]
    assert not cross_field_problems(answers(**HUNYUAN_VIDEO_720P, scale__gpu_count=2, task__sequence_parallel=True))


def test_a_video_rate_under_one_a_minute_reads_per_hour():
    assert rate_text(0.03, "clip") == "1.8 clips/hour"
    assert rate_text(2.5, "image") == "2.5 images/min"

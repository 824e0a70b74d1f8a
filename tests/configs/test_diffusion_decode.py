"""The VAE decode's time: once an image, at the card's FP32 rate (configs.diffusion.decode_time)."""

from __future__ import annotations

import dataclasses

import pytest

from pth_top.configs import speed_build
from pth_top.configs.diffusion import decode_time
from pth_top.configs.presets import model_shape
from tests.configs.builders import answers
from tests.configs.published_speeds import catalog_gpu
from tests.configs.published_workloads import FLUX1_DEV, inference_custom

FLUX_1024 = {**inference_custom(FLUX1_DEV), "workload__denoising_steps": 28, "workload__output_width_px": 1024,
             "workload__output_height_px": 1024, "data__kind": "images"}


def test_flux_decodes_a_1024_px_image_in_the_time_unsloth_measured_on_a_b200():
    # unslothai/unsloth#10889: "On flux.1 at 1024px it was 117 of 353 ms of GPU busy" (the VAE decode, one B200).
    job = answers(**FLUX_1024)
    seconds, text = decode_time(model_shape(job.workload)[0], 1, catalog_gpu("b200-180gb-sxm", job))
    assert seconds == pytest.approx(0.117, rel=0.35)
    assert "at the card's FP32 rate, 75 TFLOP/s" in text


def test_each_gpu_decodes_its_own_images_and_a_videos_frames_are_not_counted():
    job = answers(**{**FLUX_1024, "workload__batch_size": 4})
    shape = model_shape(job.workload)[0]
    one, _ = decode_time(shape, 1, catalog_gpu("h100-80gb-sxm", job))
    assert decode_time(shape, 4, catalog_gpu("h100-80gb-sxm", job))[0] == pytest.approx(4 * one)
    pair = speed_build.inference(job, shape, catalog_gpu("h100-80gb-sxm", job, 2))
    assert "the VAE decode of 2 image(s)" in " ".join(pair.formula)
    clip = dataclasses.replace(shape, decoded_frames_at_once=4)
    assert decode_time(clip, 1, catalog_gpu("h100-80gb-sxm", job)) == (0.0, "; a video's VAE decode not counted")

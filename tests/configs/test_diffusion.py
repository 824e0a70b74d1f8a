"""Diffusion inference (configs.diffusion): a denoiser over all its tokens each step, no KV cache, compute-bound."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pth_top.configs import speed as sp
from pth_top.configs import speed_build
from pth_top.configs.answers import answers_from_dict, cross_field_problems
from pth_top.configs.diffusion import COMPILED_DENOISER_FRACTION
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.levers import answer_changes
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import ignored_answer_warnings, model_shape
from pth_top.configs.recommend import _context, recommend
from pth_top.configs.render import memory_lines
from pth_top.configs.rules import load_rules
from pth_top.units import GIB
from tests.configs.builders import answers
from tests.configs.published_workloads import (
    FLUX1_DEV,
    FRAMEPACK_SECTION,
    OPEN_SORA_720P_4S,
    SDXL_BASE,
    inference_custom,
)

TODAY = dt.date(2026, 11, 1)
DIFFUSION_TABLE = {"preset": "custom", "kind": "transformer", "layers": 57, "hidden_size": 3072, "attention_heads": 24,
                   "sequence_length": 4608, "denoising_steps": 28}
H100 = sp.Device("H100 SXM", 1, 3350, 989.4, "dense BF16 tensor", tensor=True, fp32_tflops=67.0)


def flux(steps: int = 28, **more):
    return answers(**{**inference_custom({**FLUX1_DEV, "workload__frozen_precision": "bf16",
                                          "workload__denoising_steps": steps}), **more})


def test_a_diffusion_model_holds_no_kv_cache_and_every_gpu_holds_all_of_it():
    one, two = flux(), flux(scale__gpu_count=2)
    memory = estimate_memory(one, model_shape(one.workload)[0])
    assert memory.kv_cache_bytes == 0
    # The 11.9B denoiser and 5.2B of text encoders and VAE in bf16: 31.8 GiB, on each of two GPUs too.
    assert memory.weights_bytes / GIB == pytest.approx(31.8, abs=0.05)
    assert estimate_memory(two, model_shape(two.workload)[0]).weights_bytes == memory.weights_bytes
    as_language_model = flux(steps=0)
    assert estimate_memory(as_language_model, model_shape(as_language_model.workload)[0]).kv_cache_bytes > 0


def test_a_unets_counted_flops_a_pass_replace_2n_per_latent_token():
    """SDXL's UNet runs most of its parameters below full resolution: 6,761 GFLOP a pass counted, where 2N x s gives
    ~3x that, so its image time follows the count (at 0.6 of the tensor rate compiled) and the count is not said
    unused."""
    counted = answers(**{**inference_custom(SDXL_BASE), "workload__denoising_steps": 30, "workload__batch_size": 1,
                         "task__forward_runtime": "compiled"})  # eager, an H100's step waits on the host's ops
    uncounted = answers(**{**inference_custom(SDXL_BASE), "workload__denoising_steps": 30,
                           "workload__batch_size": 1, "workload__forward_gflops_per_sample": 0.0,
                           "task__forward_runtime": "compiled"})
    shape = model_shape(counted.workload)[0]
    with_count = speed_build.inference(counted, shape, H100)
    assert with_count.figures["image_batch_s"] == pytest.approx(30 * 2 * 6761e9 / (COMPILED_DENOISER_FRACTION
                                                                                  * 989.4e12), rel=0.01)
    assert speed_build.inference(uncounted, shape, H100).figures["image_batch_s"] > 1.9 * \
        with_count.figures["image_batch_s"]
    assert any("6,761 GFLOP a pass" in line for line in with_count.formula)
    assert not [line for line in ignored_answer_warnings(counted, shape) if "forward_gflops" in line]


@pytest.mark.parametrize(("latent_tokens", "gflops", "published"), [(1101, 200.0, 1100.0), (4173, 805.0, 290.0)])
def test_a_denoiser_trains_from_its_counted_flops(catalog, latent_tokens, gflops, published):
    """Audit XM9: SD2-base's UNet (866M) trained from scratch on 8 A100s with its latents precomputed, 1,100 images/s
    at 256 px and 290 at 512 (github.com/mosaicml/diffusion README), was timed at 6N a latent token, 5x slow."""
    unet = {"workload__preset": "custom", "workload__kind": "transformer", "workload__parameters": 865_910_724,
            "workload__layers": 16, "workload__hidden_size": 640, "workload__attention_heads": 10,
            "workload__vocabulary_size": 0, "workload__intermediate_size": 2560, "workload__gated_mlp": False,
            "workload__sequence_length": latent_tokens, "workload__forward_gflops_per_sample": gflops,
            "workload__batch_size": 2048, "workload__frozen_parameters": 437_700_000,
            "workload__frozen_precision": "fp16", "task__mode": "training", "task__precision": "amp_fp16",
            "task__accumulation_steps": 16, "task__cache_embeddings": True, "data__kind": "images",
            "data__images_count": 1_000_000, "scale__gpu_count": 8, "scale__sharding": "zero2", "budget__amount": 5e6}
    build = recommend(answers(**unet), catalog, pins={"gpu": ("a100-40gb-sxm", 8)}, today=TODAY)
    rate = build.speed.figures["training_samples_per_s"]
    assert rate == pytest.approx(published, rel=0.35)
    assert build.speed.figures["epoch_hours"] == pytest.approx(1e6 / rate / 3600, rel=0.01)  # images at that rate
    assert "images/s training" in build.speed.summary[0]
    assert not [line for line in ignored_answer_warnings(answers(**unet), model_shape(answers(**unet).workload)[0])
                if "forward_gflops" in line]


def test_guidance_runs_each_step_twice_and_a_second_gpu_makes_half_the_batch():
    def figures(**more):
        chosen = flux(**more)
        shape = model_shape(chosen.workload)[0]
        return speed_build.inference(chosen, shape, dataclasses.replace(H100, count=chosen.scale.gpu_count)).figures

    base = figures()
    # 28 x (2 x 11.9e9 x 4,608 + 4 x 57 x 3,072 x 4,608^2) FLOP at 0.6 x 989.4 TFLOP/s.
    assert base["image_batch_s"] == pytest.approx(28 * 124.58e12 / (0.6 * 989.4e12), rel=0.01)
    assert figures(workload__classifier_free_guidance=True)["image_batch_s"] == pytest.approx(
        2 * base["image_batch_s"])
    assert figures(workload__denoising_steps=4)["image_batch_s"] == pytest.approx(base["image_batch_s"] * 4 / 28)
    # The batch is global: two images on two GPUs take one image's time, twice the images a minute of one GPU.
    pair, pair_on_two = figures(workload__batch_size=2), figures(workload__batch_size=2, scale__gpu_count=2)
    assert pair_on_two["image_batch_s"] == pytest.approx(base["image_batch_s"])
    assert pair_on_two["images_per_min"] == pytest.approx(2 * pair["images_per_min"])
    assert figures(scale__gpu_count=2)["images_per_min"] == pytest.approx(base["images_per_min"])  # one image: idle


def test_the_build_says_seconds_an_image_ranks_cards_by_compute_and_offers_8_bit_weights_on_24_gb(catalog):
    build = recommend(flux(budget__amount=3000.0, budget__currency="USD"), catalog, today=TODAY)
    assert not build.feasible  # 32.8 GiB in bf16: no card within $3,000 holds it
    # The bf16 output first, its blocks streamed from RAM on a 24 GB card (copy-bound: 23.8 GB a step over PCIe 4),
    # then int8 weights, which change it.
    first, second = build.feasible_alternatives[:2]
    assert first.startswith("block offload") and "24GB" in first, first
    assert second.startswith("int8 weights") and "24GB" in second, second
    assert "image" in build.speed.summary[0] and "tokens/s" not in " ".join(build.speed.summary)
    assert set(build.speed.figures) == {"image_batch_s", "images_per_min"}
    assert any("TFLOPS per dollar" in line for line in build.component("gpu").reasoning)


def test_a_slow_image_is_warned_about(catalog):
    build = recommend(flux(steps=50, task__precision="int4", workload__frozen_precision="int8", budget__amount=900.0,
                           budget__currency="USD"), catalog,
                      pins={"gpu": ("rtx-4060-ti-16gb", 1)}, today=TODAY)
    assert build.memory_fits and build.speed.figures["image_batch_s"] > 60
    assert any(warning.startswith("slow: a batch of images takes") for warning in build.warnings)


@pytest.mark.parametrize(("table", "key", "reason"), [
    ({"workload": {"preset": "llama3-8b", "denoising_steps": 28}}, "denoising_steps", "custom transformer"),
    ({"workload": {"classifier_free_guidance": True}}, "classifier_free_guidance", "give denoising_steps too"),
    ({"task": {"mode": "inference", "pipeline_offload": True}}, "pipeline_offload", "frozen models beside it"),
    # A language model with frozen models beside it is no diffusion pipeline: nothing takes turns.
    ({"workload": {"preset": "llama3-8b", "frozen_parameters": 10**9}, "task": {"mode": "inference",
     "pipeline_offload": True}}, "pipeline_offload", "diffusion pipeline"),
    ({"workload": {**DIFFUSION_TABLE}, "task": {"mode": "training"}}, "denoising_steps", "training runs one step"),
    ({"task": {"mode": "inference", "frozen_on_cpu": True}}, "frozen_on_cpu", "give denoising_steps"),
    ({"scenario": "edge_deployment", "workload": {**DIFFUSION_TABLE, "frozen_parameters": 10**9},
      "task": {"mode": "inference", "frozen_on_cpu": True}}, "frozen_on_cpu", "not at the edge"),
    ({"workload": {**DIFFUSION_TABLE}, "task": {"mode": "inference", "serving_engine": "vllm"}}, "serving_engine",
     "its own pipeline"),
    ({"task": {"mode": "inference", "block_offload": True}}, "block_offload", "give workload.denoising_steps"),
    ({"workload": {"preset": "llama3-8b", "dense_head": "detection"}}, "dense_head", "a custom CNN's head"),
    ({"scenario": "edge_deployment", "workload": {**DIFFUSION_TABLE}, "task": {"mode": "inference",
     "block_offload": True}}, "block_offload", "not at the edge"),
])
def test_diffusion_fields_out_of_place_are_one_clear_error(table, key, reason):
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict({"scenario": "personal_research", **table}, path="a.toml")
    assert caught.value.key.endswith(f".{key}") and reason in str(caught.value)


def test_model_offload_holds_the_larger_model_on_the_gpu_and_pays_a_copy_an_image():
    kept, offloaded = flux(task__precision="int8"), flux(task__precision="int8", task__pipeline_offload=True)
    shape = model_shape(kept.workload)[0]
    on_gpu, turns = estimate_memory(kept, shape), estimate_memory(offloaded, shape)
    # int8 denoiser 11.9 GB and 5.2B bf16 encoders/VAE 10.4 GB: 20.7 GiB together, 11.1 GiB (the denoiser) in turns.
    assert on_gpu.weights_bytes / GIB == pytest.approx(20.7, abs=0.05)
    assert turns.weights_bytes / GIB == pytest.approx(11.1, abs=0.05)
    assert turns.host_offload_bytes == on_gpu.host_offload_bytes == on_gpu.weights_bytes  # all of it in RAM
    device = dataclasses.replace(H100, host_pcie_gb_per_s=63.0)
    seconds = [speed_build.inference(job, shape, device).figures["image_batch_s"] for job in (kept, offloaded)]
    # The pipeline over PCIe 5, at pinned copies' ~25 of 31.5 GB/s per Gen4 x16.
    assert seconds[1] - seconds[0] == pytest.approx(22.3e9 / (25 / 31.5 * 63e9), rel=0.02)


def test_model_offload_moves_the_frozen_models_one_at_a_time_where_the_largest_is_given():
    # HiDream-I1 (17B denoiser in FP8; Llama-3.1-8B, T5-XXL and two CLIPs, 13.7B in bf16): diffusers' model offload
    # places "one of the main pipeline models" on the GPU at a time (its memory docs), so the GPU holds the denoiser,
    # not the four encoders' 27.4 GB together (audit XK8: an owned 4090 refused at 26.0 GiB).
    hidream = {"workload__preset": "custom", "workload__kind": "transformer", "workload__parameters": 17_000_000_000,
               "workload__layers": 48, "workload__hidden_size": 2560, "workload__attention_heads": 20,
               "workload__sequence_length": 4352, "workload__denoising_steps": 50,
               "workload__frozen_parameters": 13_700_000_000, "workload__output_width_px": 1024,
               "workload__output_height_px": 1024, "workload__batch_size": 1, "task__mode": "inference",
               "task__precision": "int8", "task__quantization": "fp8", "task__pipeline_offload": True,
               "data__kind": "images"}
    together, one_at_a_time = answers(**hidream), answers(**hidream, workload__frozen_largest_parameters=8_030_000_000)
    shape = model_shape(together.workload)[0]
    assert estimate_memory(together, shape).weights_bytes == 13_700_000_000 * 2  # the encoders held as one
    assert estimate_memory(one_at_a_time, shape).weights_bytes == 17_000_000_000  # the FP8 denoiser, the largest
    assert estimate_memory(one_at_a_time, shape).total_bytes < 22 * GIB < estimate_memory(together, shape).total_bytes
    too_large = answers(**hidream, workload__frozen_largest_parameters=14_000_000_000)
    assert [key for _, key, _ in cross_field_problems(too_large)] == ["frozen_largest_parameters"]


def test_a_16_gb_card_is_offered_with_model_offload_and_the_ram_holds_the_pipeline(catalog):
    build = recommend(flux(task__precision="int8", budget__amount=1500.0, budget__currency="USD"), catalog,
                      today=TODAY)
    assert not build.feasible and build.feasible_alternatives[0].startswith("Diffusers model offload")
    assert "16GB" in build.feasible_alternatives[0] and "within $1,500" in build.feasible_alternatives[0]
    kept = recommend(flux(budget__amount=9000.0, budget__currency="USD"), catalog, today=TODAY)
    kit = kept.component("memory_kit")
    assert kit.quantity * kit.spec["capacity_gib"] >= kept.memory.weights_bytes / GIB + 4  # 31.8 GiB staged


def test_cards_are_ranked_by_the_rate_of_the_answered_precision(catalog):
    # In fp16 a V100 or T4 computes at its FP16 rate; ranking by BF16 would score them 0.
    build = recommend(flux(task__precision="fp16", budget__amount=9000.0, budget__currency="USD"), catalog,
                      today=TODAY)
    assert any("dense FP16 tensor TFLOPS per dollar" in line for line in build.component("gpu").reasoning)


# Stable Diffusion 3 Medium: a 2.0B MMDiT (24 blocks of 1,536, 24 heads) over 4,096 latent tokens at 1024 px and 333
# text tokens; its three text encoders and VAE are 5.66B parameters (CLIP-L 123M, CLIP-G 695M, T5-XXL 4.76B, VAE 84M).
SD3_MEDIUM_LORA = dict(workload__preset="custom", workload__kind="transformer", workload__parameters=2_028_328_000,
                       workload__layers=24, workload__hidden_size=1536, workload__attention_heads=24,
                       workload__sequence_length=4429, workload__batch_size=1,
                       workload__frozen_parameters=5_660_000_000, workload__frozen_precision="fp16",
                       task__method="lora", task__lora_rank=4,
                       task__precision="amp_fp16", task__optimizer="adam8bit", task__recompute="full",
                       data__kind="images", budget__currency="USD", budget__amount=5000.0)


def test_cached_text_embeddings_take_the_frozen_models_off_the_gpu_while_it_trains(catalog):
    # diffusers examples/research_projects/sd3_lora_colab/README.md: SD3 DreamBooth LoRA "under 16GB GPU VRAM" by
    # computing the prompt's embeddings first and serializing them (that pass alone: ~12 GB with the encoders in FP16).
    cached = estimate_memory(answers(task__cache_embeddings=True, **SD3_MEDIUM_LORA),
                             model_shape(answers(**SD3_MEDIUM_LORA).workload)[0])
    kept = estimate_memory(answers(**SD3_MEDIUM_LORA), model_shape(answers(**SD3_MEDIUM_LORA).workload)[0])
    assert cached.total_bytes < 15 * GIB < kept.total_bytes
    assert cached.total_bytes >= 5.66e9 * 2  # the pre-compute pass holds the encoders
    # The line says that pass is the peak, where the weights line alone did not add up (audit EE: LTX-Video).
    assert "that pass is the peak: less the CUDA context the total is its 10.5 GiB" in cached.formula[-1], \
        cached.formula
    # The lever comes before any that costs quality, and keeps the job as asked.
    big = answers(**{**SD3_MEDIUM_LORA, "workload__parameters": 8_050_000_000, "workload__layers": 38,
                     "workload__hidden_size": 2432, "workload__attention_heads": 38, "budget__amount": 4000.0})
    said = recommend(big, catalog, today=TODAY).feasible_alternatives
    assert said and said[0].startswith("the frozen models' outputs cached before training"), said


def test_caching_frozen_outputs_is_offered_for_image_encoders_not_a_text_teacher(catalog):
    # A distillation teacher beside Llama 3 8B LoRA produces per-step logits: nothing to cache once.
    teacher = answers(workload__preset="llama3-8b", workload__frozen_parameters=8_000_000_000, task__method="lora",
                      data__kind="text", budget__currency="USD", budget__amount=1500.0)
    labels = [label for label, _ in answer_changes(_context(teacher, catalog, load_rules(), {}))]
    assert labels and not any("cached before training" in label for label in labels), labels
    images = teacher.with_value("data", "kind", "images")
    labels = [label for label, _ in answer_changes(_context(images, catalog, load_rules(), {}))]
    assert labels[0].startswith("the frozen models' outputs cached before training")


def test_a_pipeline_a_pc_card_holds_with_model_offload_passes_the_desktop_system_over(catalog):
    # CogView4-6B serving (THUDM config: 28 layers of 4096, 6B; GLM-4-9B text encoder and VAE, 9.08B frozen, bf16),
    # 4 images of 50 steps with guidance, CNY 40,000: a DGX Spark holds it whole at ~5.4 min a batch; the README's own
    # enable_model_cpu_offload() on a 32 GB card makes it faster, for less.
    job = answers("inference_server", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=6_000_000_000, workload__layers=28, workload__hidden_size=4096,
                  workload__attention_heads=32, workload__intermediate_size=16384, workload__sequence_length=4352,
                  workload__batch_size=4, workload__denoising_steps=50, workload__classifier_free_guidance=True,
                  workload__frozen_parameters=9_080_000_000, workload__frozen_precision="bf16",
                  task__mode="inference", task__precision="bf16", data__kind="images", budget__amount=40_000.0)
    build = recommend(job, catalog, today=TODAY)
    assert build.component("gpu").spec["form"] == "desktop_system" and not build.feasible
    line, changed, _ = build.applicable_alternatives[0]
    assert changed.task.pipeline_offload and line.startswith("Diffusers model offload")
    other = recommend(changed, catalog, today=TODAY)
    assert other.feasible and other.speed.figures["image_batch_s"] < build.speed.figures["image_batch_s"]


def wan_video_job(parameters: int, layers: int, hidden: int, heads: int, mlp: int, tokens: int, frozen: int,
                  **changes):
    """A Wan video DiT's clip answered for inference: 50 steps with classifier-free guidance, one clip at a time."""
    return answers(workload__preset="custom", workload__kind="transformer", workload__parameters=parameters,
                   workload__layers=layers, workload__hidden_size=hidden, workload__attention_heads=heads,
                   workload__intermediate_size=mlp, workload__sequence_length=tokens, workload__denoising_steps=50,
                   workload__classifier_free_guidance=True, workload__frozen_parameters=frozen, workload__batch_size=1,
                   task__mode="inference", data__kind="video", **changes)


def test_text_encoders_on_the_cpu_leave_a_small_video_denoiser_alone_on_a_12_gb_card(catalog):
    # Wan2.1 T2V-1.3B at 480p, 81 frames: with --offload_model --t5_cpu it "requires only 8.19 GB VRAM" (Wan2.1
    # README); model offload alone holds umT5-XXL (5.7B, 11.4 GB in bf16), the pipeline's largest model.
    job = wan_video_job(1_300_000_000, 30, 1536, 12, 8960, 32760, 5_830_000_000)
    shape = model_shape(job.workload)[0]
    offloaded = estimate_memory(job.with_value("task", "pipeline_offload", True), shape)
    on_cpu = estimate_memory(job.with_value("task", "frozen_on_cpu", True), shape)
    # Model offload alone holds umT5-XXL (11.7 GB) for the prompt, the denoiser run without it: a 12 GB card's 11.4 GiB
    # usable leaves none of the estimator's margin.
    assert offloaded.weights_bytes == 11_660_000_000 and offloaded.total_bytes * 1.1 > 0.95 * 12 * GIB
    assert on_cpu.total_bytes < 8.19e9
    assert on_cpu.host_offload_bytes >= 5.83e9 * 2  # the encoders wait in RAM, sized for them
    assert not job.with_value("task", "frozen_on_cpu", True).resident().task.frozen_on_cpu  # one memory: all in it
    # With model offload too (Wan's --offload_model), the denoiser leaves the GPU for the VAE's decode: without an
    # output size the decode is not counted, so the memory is the same; each clip moves the denoiser (2.6 GB) over PCIe.
    both = job.with_value("task", "frozen_on_cpu", True).with_value("task", "pipeline_offload", True)
    assert estimate_memory(both, shape).total_bytes == on_cpu.total_bytes
    seconds = [speed_build.inference(each, shape, H100).figures["image_batch_s"]
               for each in (both, job.with_value("task", "frozen_on_cpu", True))]
    assert seconds[1] < seconds[0] < seconds[1] + 1.0
    video = speed_build.inference(job.with_value("task", "frozen_on_cpu", True), shape, H100).summary[0]
    assert "per batch of 1 clip(s)" in video and "clips/min" in video, video  # a video model makes clips
    audio = speed_build.inference(job.with_value("data", "kind", "audio"), shape, H100).summary[0]
    assert "clips/min" in audio and "image" not in audio, audio  # audit T: F5-TTS's speech was said in images
    levers = [label for label, _ in answer_changes(_context(job, catalog, load_rules(), {}))]
    assert any(label.startswith("the frozen models (text encoders) on the CPU") for label in levers), levers


def test_wans_own_flags_together_hold_less_than_either_alone(catalog):
    # Audit R: Wan2.2-TI2V-5B at 1280x704, 121 frames, with --offload_model --t5_cpu "can run on a GPU with at least
    # 24GB VRAM (e.g, RTX 4090 GPU)" (Wan-Video/Wan2.2 README); the two flags together came to 31.2 GiB, more than
    # model offload alone (21.9), as the frozen-on-CPU path kept the denoiser beside the decode.
    # Shape: 30 layers, dim 3072, 24 heads, FFN 14336; Wan2.2-VAE 16x16x4 + patch 1x2x2: 31 x 40 x 22 = 27,280 tokens.
    job = wan_video_job(5_000_000_000, 30, 3072, 24, 14336, 27280, 6_400_000_000, workload__output_width_px=1280,
                        workload__output_height_px=704, workload__decoded_frames_at_once=4, budget__currency="EUR",
                        budget__amount=3500.0)
    shape = model_shape(job.workload)[0]
    both = job.with_value("task", "frozen_on_cpu", True).with_value("task", "pipeline_offload", True)
    totals = [estimate_memory(each, shape).total_bytes for each in
              (both, job.with_value("task", "pipeline_offload", True), job.with_value("task", "frozen_on_cpu", True))]
    assert totals[0] <= min(totals[1:]) and totals[0] < 23 * GIB, [t / GIB for t in totals]
    build = recommend(both, catalog, today=TODAY)
    assert build.feasible and build.component("gpu").spec["memory_gib"] <= 24, build.component("gpu").name


def test_a_video_denoisers_per_frame_attention_is_a_window_on_every_layer():
    # Open-Sora 1.2 (STDiT3, 1.1B) at 720p for 4 s: 30 latent frames x 3,600 tokens = 108,000, each spatial attention
    # over one frame's 3,600 (hpcaitech/Open-Sora README v1.2). A window on every layer was refused; full attention
    # over 108k tokens on every layer counted its step ~5x too dear.
    from pth_top.configs.answers import cross_field_problems
    from pth_top.configs.diffusion import step_flops
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=1_120_000_000,
                  workload__layers=28, workload__hidden_size=1152, workload__attention_heads=16,
                  workload__intermediate_size=4608, workload__sequence_length=108_000,
                  workload__sliding_window_tokens=3600, workload__sliding_window_layers=28,
                  workload__denoising_steps=30, workload__classifier_free_guidance=True, workload__batch_size=1,
                  task__mode="inference", data__kind="video")
    assert not cross_field_problems(job)
    shape = model_shape(job.workload)[0]
    s = 108_000  # each frame's 3,600 tokens attend to one another: 30 frames x 3,600^2 pairs a layer
    windowed = 2 * (2 * shape.active * s + 4 * 1152 * 28 * 30 * 3600 * 3600)
    assert step_flops(shape, 1) == pytest.approx(windowed, rel=1e-6)
    full = dataclasses.replace(shape, sliding_window_tokens=0, sliding_window_layers=0)
    assert step_flops(full, 1) > 5 * step_flops(shape, 1)


def test_the_vae_decode_of_an_edit_at_1024_px_is_counted_and_a_48_gb_card_is_tight(catalog):
    # Step1X-Edit (a 12.3B MMDiT over 2 x 4,096 image tokens + text, with CFG; Qwen2.5-VL-7B and the FLUX VAE frozen)
    # at 1024 px peaks at 49.8 GB on an H800 (stepfun-ai/Step1X-Edit README, 'Requirements'): its decode is the peak.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=12_300_000_000,
                  workload__layers=57, workload__hidden_size=3072, workload__attention_heads=24,
                  workload__intermediate_size=12288, workload__sequence_length=8832, workload__denoising_steps=28,
                  workload__classifier_free_guidance=True, workload__frozen_parameters=8_370_000_000,
                  workload__output_width_px=1024, workload__output_height_px=1024, workload__batch_size=1,
                  task__mode="inference", budget__amount=2e5)
    memory = estimate_memory(job, model_shape(job.workload)[0])
    assert memory.total_bytes / 1e9 == pytest.approx(49.8, rel=0.05)
    assert any(line.startswith("VAE decode: 6,360 B a pixel") for line in memory.formula)
    build = recommend(job, catalog, pins={"gpu": ("rtx-pro-5000-blackwell-48gb", 1)}, today=TODAY)
    assert build.memory_fits and build.warnings[0].startswith("tight fit: 45.2 of 45.6 GiB")  # was 40.0: roomy
    # The memory table says so too, as the remedy lines do (audit EE: it said a bare "fits").
    assert "45.6 GiB usable (48 GiB card): fits TIGHT (short of the estimator's margin)" in memory_lines(build)[-1]
    unsized = job.with_value("workload", "output_width_px", 0).with_value("workload", "output_height_px", 0)
    assert any("VAE decode: not counted" in line
               for line in estimate_memory(unsized, model_shape(unsized.workload)[0]).formula)


def test_with_model_offload_the_vae_decodes_alone_and_tiling_is_offered(catalog):
    # FLUX.1-dev in 8 bits with model offload fits a 16 GB card (README); at 1024 px its decode, 6.2 GiB, runs after
    # the denoiser has left the GPU, so it is not added to the 12 GB transformer held while denoising.
    job = flux(task__pipeline_offload=True, task__precision="int8", task__quantization="bnb_int8",
               workload__output_width_px=1024, workload__output_height_px=1024)
    shape = model_shape(job.workload)[0]
    sized = estimate_memory(job, shape)
    unsized = estimate_memory(job.with_value("workload", "output_width_px", 0)
                              .with_value("workload", "output_height_px", 0), shape)
    assert sized.total_bytes == unsized.total_bytes < 15.2 * GIB
    # At 2048 px without offload the decode, 24.8 GiB, is the peak; tiled in 512 px tiles it is 1.6 GiB.
    big = flux(workload__output_width_px=2048, workload__output_height_px=2048)
    whole = estimate_memory(big, model_shape(big.workload)[0])
    tiled = estimate_memory(big.with_value("task", "vae_tiling", True), model_shape(big.workload)[0])
    assert whole.activations_bytes / GIB == pytest.approx(24.8, abs=0.1)
    assert tiled.activations_bytes / GIB == pytest.approx(1.55, abs=0.05)
    levers = [label for label, _ in answer_changes(_context(big, catalog, load_rules(), {}))]
    assert levers[0].startswith("VAE tiling (Diffusers enable_vae_tiling): the output decodes in 512 px"), levers


def test_a_videos_decode_micro_batch_is_not_multiplied_by_its_clips():
    clips = answers(**{**inference_custom(OPEN_SORA_720P_4S), "workload__batch_size": 2})
    one = answers(**inference_custom(OPEN_SORA_720P_4S))
    assert estimate_memory(clips, model_shape(clips.workload)[0]).activations_bytes \
        == estimate_memory(one, model_shape(one.workload)[0]).activations_bytes  # 4 frames at once, either way


def test_a_video_vae_decodes_its_own_smaller_tiles(catalog):
    # Audit W: CogVideoX-5B (42 layers of 3072, 48 heads, MLP 12288; 13 latent frames x 30 x 45 + 226 text tokens)
    # at 720 x 480, T5-XXL beside it, VAE tiled, 8 frames a decode batch: "SAT BF16: 26GB" (THUDM/CogVideoX-5b model
    # card). Counted at an image VAE's 512 px tile, the decode took 12.4 GiB and a 32 GB card was refused.
    job = wan_video_job(5_570_000_000, 42, 3072, 48, 12288, 17776, 4_970_000_000, workload__output_width_px=720,
                        workload__output_height_px=480, workload__decoded_frames_at_once=8, task__precision="bf16",
                        task__vae_tiling=True, budget__currency="EUR", budget__amount=12000.0)
    memory = estimate_memory(job, model_shape(job.workload)[0])
    assert abs(memory.total_bytes / (26e9) - 1) <= 0.15, memory.total_bytes / GIB
    assert any("256 px tiles" in line for line in memory.formula), memory.formula
    untiled = job.with_value("task", "vae_tiling", False)  # the lever names the tile the video VAE decodes
    levers = [label for label, _ in answer_changes(_context(untiled, catalog, load_rules(), {}))]
    assert any(label.startswith("VAE tiling") and "256 px tiles" in label for label in levers), levers
    build = recommend(job, catalog, today=TODAY, pins={"gpu": ("rtx-5090-32gb", 1)})
    assert build.feasible, build.blockers


COGVIEW3_PLUS = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=3_000_000_000, workload__layers=30,
    workload__hidden_size=2560, workload__attention_heads=64, workload__intermediate_size=10240,
    workload__sequence_length=4320, workload__denoising_steps=50, workload__classifier_free_guidance=True,
    workload__single_stream_dit=True, workload__frozen_parameters=4_844_000_000, workload__frozen_precision="bf16",
    workload__output_width_px=1024, workload__output_height_px=1024, workload__batch_size=4, task__mode="inference",
    task__precision="bf16", data__kind="images", budget__amount=4000.0, budget__currency="USD")


def test_a_batch_decoded_an_image_at_a_time_is_the_first_way_out(catalog):
    # Audit ZJ: CogView3-Plus-3B (30 layers of 2,560, T5-XXL and its VAE frozen) at a batch of 4 and 1024 px needs
    # 20 GB on an A100 (its README); decoding the 4 images at once counted ~25 GiB of VAE working set, 40 GiB in all,
    # and the first way out was a used 48 GB card. Diffusers' enable_vae_slicing decodes them one at a time.
    job = answers(**COGVIEW3_PLUS)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and build.memory.total_bytes > 35 * GIB
    line, changed, _ = build.applicable_alternatives[0]
    assert line.startswith("VAE slicing (Diffusers enable_vae_slicing)") and changed.task.vae_slicing, line
    sliced = recommend(changed, catalog, today=TODAY)
    assert sliced.feasible and sliced.memory.total_bytes == pytest.approx(20e9, rel=0.2)
    assert any("an image at a time, task.vae_slicing" in line for line in sliced.memory.formula)
    bare = job.with_value("workload", "output_width_px", 0).with_value("workload", "output_height_px", 0)
    assert ("task", "vae_slicing") in [(section, key) for section, key, _ in
                                       cross_field_problems(bare.with_value("task", "vae_slicing", True))]


def test_eager_diffusers_steps_wait_on_the_hosts_ops_where_the_gpu_is_faster():
    """SDXL's ~1,861 ATen ops a pass (391 + 21 x 70 blocks; 1,863 counted) at 44 us each are 82 ms a step: an
    H100's 39 ms of counted FLOPs wait on them (its TensorRT card's eager baseline, 2,496 ms for 30 steps, was
    predicted -53 %); compiled, it runs at its rate."""
    eager = answers(**{**inference_custom(SDXL_BASE), "workload__denoising_steps": 30, "workload__batch_size": 1})
    shape = model_shape(eager.workload)[0]
    h100 = speed_build.inference(eager, shape, H100)
    assert h100.figures["image_batch_s"] == pytest.approx(30 * (391 + 21 * 70) * 44e-6, rel=0.01)
    assert any("eager Diffusers runs its ~1,861 ops" in line for line in h100.formula)
    compiled = eager.with_value("task", "forward_runtime", "compiled")
    assert speed_build.inference(compiled, shape, H100).figures["image_batch_s"] < 0.5 * h100.figures["image_batch_s"]


# FramePack (github.com/lllyasviel/FramePack): its README's "minimal required GPU memory is 6GB" (DynamicSwap streams
# the models from RAM); an RTX 4090 makes ~2.5 s a frame unoptimized.
FRAMEPACK = FRAMEPACK_SECTION


def test_block_offload_holds_two_blocks_and_the_step_so_framepack_runs_in_its_6_gb():
    # Audit YS2: only model offload was modelled, which holds the whole 25.6 GB denoiser: FramePack was refused on a
    # 24 GB card. Streamed a block at a time, the GPU holds 2 of its 60 blocks (0.85 GB) and one block's working set.
    turns, streamed = answers(**FRAMEPACK, task__pipeline_offload=True), answers(**FRAMEPACK, task__block_offload=True)
    shape = model_shape(streamed.workload)[0]
    whole, blocks = estimate_memory(turns, shape), estimate_memory(streamed, shape)
    assert whole.total_bytes / GIB > 24
    assert blocks.weights_bytes == 2 * whole.weights_bytes // 60
    assert 1.5 < blocks.total_bytes / GIB <= 6.0, blocks.total_bytes / GIB
    assert blocks.host_offload_bytes == whole.weights_bytes + 17_600_000_000  # every model waits in RAM


def test_block_offload_copies_the_denoiser_each_step_beside_its_compute():
    job = answers(**FRAMEPACK, task__block_offload=True)
    shape = model_shape(job.workload)[0]
    fast, slow = (dataclasses.replace(H100, host_pcie_gb_per_s=gb) for gb in (63.0, 4.0))
    kept = speed_build.inference(answers(**FRAMEPACK), shape, fast).figures["image_batch_s"]
    # Over PCIe 5 the 25.6 GB copy (~0.5 s) hides under a ~1.1 s step: the frozen models' one copy is what it adds.
    assert speed_build.inference(job, shape, fast).figures["image_batch_s"] - kept == pytest.approx(
        17.6e9 / (25 / 31.5 * 63e9), rel=0.02)
    # Over a 4 GB/s link the copy is the step: 25 steps x 25.6 GB at ~3.2 GB/s.
    copy_s = 25.6e9 / (25 / 31.5 * 4e9)
    assert speed_build.inference(job, shape, slow).figures["image_batch_s"] == pytest.approx(
        25 * copy_s + 17.6e9 / (25 / 31.5 * 4e9), rel=0.02)


def test_an_owned_24_gb_card_runs_framepack_with_block_offload_not_int8_weights(catalog):
    # Audit YS2: the owned RTX 4090 was offered int8 weights (which change the output) or renting.
    build = recommend(answers(**FRAMEPACK, task__pipeline_offload=True, budget__owned_gpu="rtx-4090-24gb",
                              budget__owned_gpu_count=1), catalog, today=TODAY)
    assert not build.feasible
    first = build.feasible_alternatives[0]
    assert first.startswith("keeping your NVIDIA GeForce RTX 4090 24GB, block offload"), first
    assert "int8" not in first and "per batch of 1 clip" in first, first


def test_vae_slicing_on_a_videos_frames_says_a_2d_vae_decodes_them_one_at_a_time():
    # Audit XW12: zeroscope_v2_576w (diffusers' TextToVideoSDPipeline decodes a clip's frames as one batch) with
    # enable_vae_slicing, as its model card runs it in 7.9 GB, was sized decoding its 30 frames at once (33 GiB); the
    # build now says what slicing does there, and answered so it is the decode of one frame.
    clip = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=1_300_000_000,
                   workload__layers=16, workload__hidden_size=1280, workload__attention_heads=20,
                   workload__sequence_length=86_400, workload__denoising_steps=40,
                   workload__classifier_free_guidance=True, workload__output_width_px=576,
                   workload__output_height_px=320, workload__decoded_frames_at_once=30, workload__batch_size=1,
                   task__mode="inference", task__precision="fp16", task__vae_slicing=True, data__kind="video")
    shape = model_shape(clip.workload)[0]
    assert any("decoded_frames_at_once = 1" in line for line in ignored_answer_warnings(clip, shape))
    one = clip.with_value("workload", "decoded_frames_at_once", 1)
    assert not any("vae_slicing splits" in line for line in ignored_answer_warnings(one, model_shape(one.workload)[0]))


def test_a_video_clip_says_the_attention_runtime_it_is_timed_for():
    # Audit ZZ27: SkyReels-V1 (HunyuanVideo's DiT) takes 889 s a clip on an RTX 4090 in SageAttention and torch.compile,
    # ~2.2x the ~33 min timed for Diffusers' SDPA, and the build did not say which runtime it assumed.
    from pth_top.configs.diffusion import VIDEO_RUNTIME_NOTE
    from tests.configs.builders import answers as answers_of
    from tests.configs.published_speeds import HUNYUAN_VIDEO_720P, catalog_gpu

    clip = answers_of(**HUNYUAN_VIDEO_720P)
    out = speed_build.inference(clip, model_shape(clip.workload)[0], catalog_gpu("rtx-4090-24gb", clip))
    assert VIDEO_RUNTIME_NOTE in out.formula
    assert any("quantized-attention runtime" in line for line in out.warnings), out.warnings
    image = clip.with_value("data", "kind", "images")
    assert VIDEO_RUNTIME_NOTE not in speed_build.inference(image, model_shape(image.workload)[0],
                                                           catalog_gpu("rtx-4090-24gb", image)).formula

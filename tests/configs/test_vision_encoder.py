"""A vision-language model's vision encoder (configs.vision_encoder): its FLOPs over the patches, in training and in
a request's first token, and the activations it keeps when it trains."""

from __future__ import annotations

import dataclasses

import pytest

from pth_top.configs import speed as sp
from pth_top.configs import speed_build
from pth_top.configs.answers import cross_field_problems
from pth_top.configs.memory import estimate_memory
from pth_top.configs.presets import ignored_answer_warnings, model_shape
from pth_top.units import GIB
from tests.configs.builders import answers
from tests.configs.published_workloads import inference_custom, training

# MiniCPM-Llama3-V 2.5 (openbmb/MiniCPM-Llama3-V-2_5): Llama 3 8B and SigLIP-so400m (27 layers, 1,152 wide); its
# finetune README's setting: 2,048 tokens, one source image and 9 slices of 448 px, 32 x 32 = 1,024 patches each.
MINICPM_V25 = {
    "workload__preset": "custom", "workload__parameters": 8_540_000_000, "workload__layers": 32,
    "workload__hidden_size": 4096, "workload__attention_heads": 32, "workload__kv_heads": 8,
    "workload__intermediate_size": 14336, "workload__gated_mlp": True, "workload__vocabulary_size": 128_256,
    "data__kind": "mixed",
}
SIGLIP_SLICES = {"workload__vision_layers": 27, "workload__vision_hidden_size": 1152, "workload__vision_tokens": 10_240}
A100 = sp.Device("A100 80GB", 1, 2039, 312.0, "dense BF16 tensor", tensor=True, fp32_tflops=19.5)
ENCODER_PARAMETERS = 12 * 27 * 1152 ** 2  # 430M: SigLIP-so400m is 400M


def minicpm(vision_trained: bool | None, **more):
    encoder = {} if vision_trained is None else {**SIGLIP_SLICES, "workload__vision_trained": vision_trained}
    return answers(**{**training(MINICPM_V25, 2048), **encoder, **more})


def test_a_trained_encoder_keeps_its_layer_inputs_over_every_patch_under_full_recompute():
    without, trained, frozen = minicpm(None), minicpm(True), minicpm(False)
    plain = estimate_memory(without, model_shape(without.workload)[0]).activations_bytes
    kept = estimate_memory(trained, model_shape(trained.workload)[0]).activations_bytes
    # 2 B a value of each layer's input: 10,240 patches x 1,152 x 27 layers x 2 B = 0.64 GB for one sample.
    assert kept - plain == pytest.approx(2 * 10_240 * 1152 * 27, rel=0.01)
    assert estimate_memory(frozen, model_shape(frozen.workload)[0]).activations_bytes == plain


def test_without_recompute_a_trained_encoder_keeps_korthikantis_34_a_value_and_more_than_its_inputs():
    trained = minicpm(True, task__recompute="none")
    plain = minicpm(None, task__recompute="none")
    added = estimate_memory(trained, model_shape(trained.workload)[0]).activations_bytes \
        - estimate_memory(plain, model_shape(plain.workload)[0]).activations_bytes
    assert added == pytest.approx(34 * 10_240 * 1152 * 27, rel=0.01)  # 10.8 GB: why recompute matters here
    assert added / GIB > 10


def test_training_counts_the_encoders_flops_over_its_patches_and_the_language_model_over_its_tokens():
    plain, trained, frozen = minicpm(None), minicpm(True), minicpm(False)
    step = {name: speed_build.training(job, model_shape(job.workload)[0], A100, 25.0).figures["step_s"]
            for name, job in (("plain", plain), ("trained", trained), ("frozen", frozen))}
    # Trained with full recompute: 8N over 10,240 patches (35.2 TFLOP) where the language model no longer counts the
    # encoder's 430M over its 2,048 tokens (8N: 7.0 TFLOP); frozen: a forward, 2N over the patches (8.8 TFLOP).
    per_tflop = step["plain"] / (model_shape(plain.workload)[0].active * 8 * 2048
                                 + 16 * 32 * 4096 * 1024 * 2048) * 1e12  # causal: 1,024 keys a query, the mean
    assert step["trained"] - step["plain"] == pytest.approx(
        (8 * ENCODER_PARAMETERS * 10_240 - 8 * ENCODER_PARAMETERS * 2048) / 1e12 * per_tflop, rel=0.02)
    assert step["frozen"] - step["plain"] == pytest.approx(2 * ENCODER_PARAMETERS * 10_240 / 1e12 * per_tflop,
                                                           rel=0.02)


def test_a_requests_first_token_waits_on_the_encoder_over_its_image_even_with_a_cached_prefix():
    """Qwen2.5-VL-7B's ViT (32 layers, 1,280 wide) over a 1,036 px image: 74 x 74 = 5,476 patches, 1,369 tokens after
    its 2x2 merge; the encoder's forward adds 2 x 629M x 5,476 = 6.9 TFLOP to the prompt's."""
    qwen_vl = {"workload__preset": "custom", "workload__parameters": 7_615_000_000, "workload__layers": 28,
               "workload__hidden_size": 3584, "workload__attention_heads": 28, "workload__kv_heads": 4,
               "workload__intermediate_size": 18944, "workload__gated_mlp": True, "workload__vocabulary_size": 152_064,
               "workload__sequence_length": 1500, "task__generated_tokens": 200}
    encoder = {"workload__vision_layers": 32, "workload__vision_hidden_size": 1280, "workload__vision_tokens": 5476}
    plain = answers("inference_server", **inference_custom(qwen_vl))
    seen = answers("inference_server", **{**inference_custom(qwen_vl), **encoder})
    first = {name: speed_build.inference(job, model_shape(job.workload)[0], A100).figures["first_token_s"]
             for name, job in (("plain", plain), ("seen", seen))}
    assert first["seen"] / first["plain"] == pytest.approx(1 + 6.9 / (2 * 7.615 * 1500 / 1e3), rel=0.03)
    cached = seen.with_value("task", "prompt_cache_hit_fraction", 0.9).with_value("workload", "batch_size", 16)
    plain_cached = plain.with_value("task", "prompt_cache_hit_fraction", 0.9).with_value("workload", "batch_size", 16)
    loaded = {name: speed_build.inference(job, model_shape(job.workload)[0], A100).figures
              for name, job in (("plain", plain_cached), ("seen", cached))}
    # A cached system prompt does not hold the request's own image: under load the encoder still runs for each.
    rate = {name: figures["sustained_tokens_per_s_per_stream"] for name, figures in loaded.items()}
    assert rate["seen"] < 0.9 * rate["plain"]


def test_the_encoders_shape_is_answered_whole_on_a_vision_language_model_and_trains_only_in_training():
    keys = lambda job: [(section, key) for section, key, _ in cross_field_problems(job)]  # noqa: E731
    assert ("workload", "vision_tokens") in keys(answers(**{**training(MINICPM_V25, 2048),
                                                            "workload__vision_layers": 27,
                                                            "workload__vision_hidden_size": 1152}))
    assert ("workload", "vision_trained") in keys(answers(**{**training(MINICPM_V25, 2048),
                                                             "workload__vision_trained": True}))
    serving = answers(**{**inference_custom(MINICPM_V25), **SIGLIP_SLICES, "workload__vision_trained": True,
                         "workload__sequence_length": 2048})
    assert ("workload", "vision_trained") in keys(serving)
    assert ("workload", "vision_layers") in keys(answers(workload__preset="bert-base", workload__vision_layers=27,
                                                         workload__vision_hidden_size=1152,
                                                         workload__vision_tokens=729))
    assert keys(minicpm(True)) == []


def test_the_estimate_says_how_the_encoder_is_counted_or_how_to_count_it():
    counted, not_given = minicpm(True), minicpm(None)
    assert any("vision encoder is counted as a ViT" in line
               for line in ignored_answer_warnings(counted, model_shape(counted.workload)[0]))
    assert any("workload.vision_layers" in line
               for line in ignored_answer_warnings(not_given, model_shape(not_given.workload)[0]))


def test_a_tower_the_trainer_does_not_checkpoint_keeps_its_activations():
    # Audit YN2: Phi-3-vision's cookbook fine-tunes (Phi-3CookBook, 8 A100s, micro-batch 1, 16 crops + 1 of 576
    # patches through CLIP ViT-L/14-336) take ~36 GB a GPU with the tower trained and ~27 GB with it frozen: ~9 GB of
    # the tower's activations, which a checkpointed tower would not keep (0.5 GB).
    phi3v = {"workload__preset": "custom", "workload__parameters": 4_150_000_000, "workload__layers": 32,
             "workload__hidden_size": 3072, "workload__attention_heads": 32, "workload__intermediate_size": 8192,
             "workload__gated_mlp": True, "workload__vocabulary_size": 32064, "data__kind": "mixed",
             "workload__vision_layers": 24, "workload__vision_hidden_size": 1024, "workload__vision_tokens": 9792}
    def activations(**more) -> float:
        job = answers(**{**training(phi3v, 2448, batch=64, gpus=8, scale__sharding="zero2",
                                    task__accumulation_steps=8), **more})
        return estimate_memory(job, model_shape(job.workload)[0]).activations_bytes
    kept = activations(workload__vision_trained=True, workload__vision_checkpointed=False)
    frozen = activations(workload__vision_trained=False)
    checkpointed = activations(workload__vision_trained=True)
    assert (kept - frozen) / 1e9 == pytest.approx(9.0, rel=0.15)
    assert (checkpointed - frozen) / 1e9 < 1.5


def test_a_vlms_encoder_is_split_with_the_model_under_a_tensor_parallel_engine():
    # Audit XF7: Intern-S1's 6B InternViT was counted whole on each of 8 GPUs under vLLM, whose encoder layers are
    # its parallel linear layers (mm_encoder_tp_mode "weights", the default): ~1.4 GiB a GPU at TP8, not 11.
    from tests.configs.builders import custom

    def weights(engine: str, frozen: int, gpus: int) -> tuple[int, str]:
        job = answers("inference_server", **custom(72_700_000_000, 80, 8192, 64, 8, 152_064, 29_568),
                      workload__sequence_length=8192, workload__batch_size=1, workload__frozen_parameters=frozen,
                      task__mode="inference", task__precision="bf16", task__serving_engine=engine,
                      scale__gpu_count=gpus, data__kind="images")
        memory = estimate_memory(job, model_shape(job.workload)[0])
        return memory.weights_bytes, " ".join(memory.formula)

    for engine in ("vllm", "sglang"):
        (tower, line), (bare, _) = weights(engine, 6_000_000_000, 8), weights(engine, 0, 8)
        assert tower - bare == pytest.approx(6e9 * 2 / 8, rel=0.01) and "split over the 8 GPUs" in line
    (tower, _), (bare, _) = weights("vllm", 6_000_000_000, 1), weights("vllm", 0, 1)
    assert tower - bare == pytest.approx(6e9 * 2, rel=0.01)


def test_a_short_vlm_step_waits_on_its_vision_encoders_launches_too():
    # Audit AU46: Qwen-VL-Chat's LoRA (QwenLM/Qwen-VL README, one A100 80GB, 384 tokens: 2.2 s a step of 8) came out
    # 1.4 s, its 48 frozen ViT-bigG layers' forward launches left out of the eager-dispatch floor.
    from tests.configs.published_speeds import catalog_gpu
    job = answers(workload__preset="custom", workload__kind="transformer", workload__layers=32,
                  workload__hidden_size=4096, workload__attention_heads=32, workload__intermediate_size=11008,
                  workload__gated_mlp=True, workload__vocabulary_size=151936, workload__sequence_length=384,
                  workload__batch_size=8, workload__vision_layers=48, workload__vision_hidden_size=1664,
                  workload__vision_tokens=1024, workload__frozen_parameters=1_940_000_000, task__mode="training",
                  task__recompute="full", task__accumulation_steps=8, task__method="lora", task__lora_rank=64,
                  task__lora_targets="all_linear", data__kind="mixed")
    shape = model_shape(job.workload)[0]
    step_s = speed_build.training(job, shape, catalog_gpu("a100-80gb-sxm", job), 25.0).figures["step_s"]
    assert step_s == pytest.approx(8 * (32 * 4 + 48) * 1.3e-3, rel=1e-3)
    assert step_s == pytest.approx(2.2, rel=0.35)


def test_an_epoch_of_fewer_tokens_than_its_samples_at_their_length_says_which_it_times():
    # Audit BF50: MobileVLM V2 3B's stage II (2M samples, ~600M tokens, 2,048-token steps) printed 4.4 s a step of 128
    # and ~2.8 h an epoch, 15,625 steps of 4.4 s being ~19 h, without saying which count the epoch used.
    from pth_top.configs.presets import ignored_answer_warnings, model_shape
    from tests.configs.builders import answers

    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=2_700_000_000,
                  workload__layers=32, workload__hidden_size=2560, workload__attention_heads=32,
                  workload__intermediate_size=6912, workload__gated_mlp=True, workload__vocabulary_size=32000,
                  workload__sequence_length=2048, workload__batch_size=128, task__mode="training",
                  data__kind="mixed", data__tokens_count=600_000_000, data__images_count=2_000_000)
    said = [line for line in ignored_answer_warnings(job, model_shape(job.workload)[0])
            if line.startswith("the epoch is timed by data.tokens_count")]
    assert said and "4,096,000,000" in said[0], said
    fuller = job.with_value("data", "tokens_count", 3_500_000_000)
    assert not any(line.startswith("the epoch is timed") for line in
                   ignored_answer_warnings(fuller, model_shape(fuller.workload)[0]))


def test_inference_holds_the_larger_of_the_encoders_working_set_and_the_prefills():
    # Audit BS55: Cosmos-Reason1-7B (Qwen2.5-VL-7B's shape) on vLLM over a 5 s clip's 30,720 patches: its encoder runs
    # one layer at a time over them, ~0.73 GiB at width 1,280, more than the 2,048-token prefill chunk's ~0.5.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=7_615_600_000,
                  workload__layers=28, workload__hidden_size=3584, workload__attention_heads=28,
                  workload__kv_heads=4, workload__intermediate_size=18944, workload__gated_mlp=True,
                  workload__vocabulary_size=152_064, workload__sequence_length=64000, workload__batch_size=1,
                  workload__vision_layers=32, workload__vision_hidden_size=1280, workload__vision_tokens=30720,
                  workload__frozen_parameters=676_000_000, task__mode="inference", task__serving_engine="vllm",
                  data__kind="video")
    shape = model_shape(job.workload)[0]
    memory = estimate_memory(job, shape)
    line = next(line for line in memory.formula if line.startswith("vision encoder: its 30,720 patches"))
    assert "= 0.73 GiB" in line, line
    text_only = estimate_memory(job, dataclasses.replace(shape, vision_layers=0))
    assert memory.activations_bytes - text_only.activations_bytes > 0.2 * GIB

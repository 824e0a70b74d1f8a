"""Sliding-window attention (Gemma 3, gpt-oss): window layers cache the window, not the context."""

from __future__ import annotations

import datetime as dt

import pytest
import tomllib

from pth_top.configs.answers import answers_from_dict
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.memory import estimate_memory
from pth_top.configs.memory_terms import kv_cache_bytes
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import recommend
from pth_top.units import GIB
from tests.configs.builders import answers

TODAY = dt.date(2026, 11, 1)


def test_gemma3_27b_caches_its_window_on_five_layers_of_six_and_128_wide_heads():
    # google/gemma-3-27b-it config.json: 62 layers, 16 KV heads x head_dim 128 (not 5,376 / 32 = 168), a
    # 1,024-token window on every layer but each sixth (10 global). At 32k one stream's bf16 cache is
    # 2 x 2 B x 2,048 x (10 x 32,768 + 52 x 1,024) = 3.1 GB; caching every layer in full would be 16.6 GB.
    shape, _ = model_shape(answers(workload__preset="gemma3-27b").workload)
    assert shape.kv_width == 2048 and shape.window_layers == 52
    assert kv_cache_bytes(shape, 1, 32768, 2.0) == 2 * 2 * 2048 * (10 * 32768 + 52 * 1024)
    assert kv_cache_bytes(shape, 1, 512, 2.0) == 2 * 2 * 2048 * 62 * 512  # a context inside the window: all layers


def test_gemma3_27b_in_4_bit_serves_32k_on_one_24_gb_card_with_llama_cpp(catalog):
    # Google's QAT release runs Gemma 3 27B in int4 on one RTX 3090 (24 GB): developers.googleblog.com,
    # "Gemma 3 QAT Models: Bringing state-of-the-Art AI to consumer GPUs" (2025-04-18).
    build = recommend(answers(scenario="inference_server", workload__preset="gemma3-27b", workload__batch_size=1,
                              workload__sequence_length=32768, task__mode="inference", task__precision="int4",
                              task__serving_engine="llama_cpp", task__generated_tokens=512,
                              budget__amount=4000.0, budget__currency="USD"),
                      catalog, pins={"gpu": ("rtx-3090-24gb", 1)}, today=TODAY)
    assert build.memory_fits, build.memory.total_bytes / GIB
    assert build.memory.kv_cache_bytes / GIB < 4


def test_gpt_oss_caches_a_128_token_window_on_half_its_layers():
    shape, _ = model_shape(answers(workload__preset="gpt-oss-20b").workload)
    full = kv_cache_bytes(shape, 1, 131072, 2.0)
    assert full == 2 * 2 * 512 * (12 * 131072 + 12 * 128)
    assert full == pytest.approx(kv_cache_bytes(shape.__class__(**{**_fields(shape), "sliding_window_tokens": 0}),
                                                1, 131072, 2.0) / 2, rel=0.01)


def test_a_custom_model_takes_its_head_width_and_window_from_the_answers_file():
    text = """
scenario = "inference_server"
[workload]
preset = "custom"
kind = "transformer"
parameters = 27009000000
layers = 62
hidden_size = 5376
attention_heads = 32
kv_heads = 16
head_dim = 128
sliding_window_tokens = 1024
sliding_window_layers = 52
sequence_length = 32768
vocabulary_size = 262208
[task]
mode = "inference"
precision = "int4"
serving_engine = "llama_cpp"
"""
    shape, _ = model_shape(answers_from_dict(tomllib.loads(text)).workload)
    assert shape.kv_width == 2048 and shape.cached_layer_tokens(32768) == 10 * 32768 + 52 * 1024


def _fields(shape):
    return {name: getattr(shape, name) for name in shape.__dataclass_fields__}


def test_a_custom_model_with_head_dim_prefills_as_the_same_model_as_a_preset():
    # Attention's products run at heads x head_dim (32 x 128 = 4,096 for Gemma 3 27B), whichever way it is given.
    from pth_top.configs.speed_reads import prefill_flops

    preset, _ = model_shape(answers(workload__preset="gemma3-27b").workload)
    custom, _ = model_shape(answers(workload__preset="custom", workload__parameters=27_009_000_000,
                                    workload__layers=62, workload__hidden_size=5376, workload__attention_heads=32,
                                    workload__kv_heads=16, workload__head_dim=128, workload__sequence_length=32768,
                                    workload__sliding_window_tokens=1024, workload__sliding_window_layers=52,
                                    workload__vocabulary_size=262208).workload)
    assert custom.attention_flops_width == preset.attention_flops_width == 4096
    assert prefill_flops(custom, 32768) == pytest.approx(prefill_flops(preset, 32768))


def test_training_counts_the_window_layers_attention_at_their_window():
    # Gemma 3 27B at 8k: 10 layers attend to 8,192 tokens, 52 to 1,024, causally: a query's keys average 4,096 in a
    # full layer and 1,024 - 1,024^2 / 2 / 8,192 = 960 in a window one; the attention term runs at the layers' mean,
    # (10 x 4,096 + 52 x 960) / 62 = 1,466, not 8,192.
    from pth_top.configs import speed as sp
    from pth_top.configs.speed_build import training

    job = answers(workload__preset="gemma3-27b", workload__sequence_length=8192, workload__batch_size=1,
                  task__method="full", task__recompute="none")
    shape, _ = model_shape(job.workload)
    device = sp.Device("H100", 1, 3350, 989.0, "dense BF16 tensor", tensor=True, fp32_tflops=67.0)
    rate = training(job, shape, device, 63.0).figures["training_tokens_per_s"]
    per_token = sp.transformer_flops_per_token(shape.active, 62, 4096, round((10 * 4096 + 52 * 960) / 62),
                                               "full", "none")[0]
    assert rate == pytest.approx(sp.TRANSFORMER_TRAINING_MFU * 989e12 / per_token, rel=0.01)


def test_linear_attention_layers_hold_a_fixed_state_not_a_kv_cache(catalog):
    # Qwen3-Next-80B-A3B (config.json: 48 layers, full_attention_interval 4, 2 KV heads of 256): 36 Gated DeltaNet
    # layers keep 32 x 128 x 128 values a sequence each and no KV cache; counted on every layer, 4 users at 64k asked
    # for 8 GPUs where 4 x 48 GB hold it.
    base = dict(workload__preset="custom", workload__kind="transformer", workload__parameters=80_000_000_000,
                workload__active_parameters=3_000_000_000, workload__experts_count=512,
                workload__experts_per_token=10, workload__layers=48, workload__hidden_size=2048,
                workload__attention_heads=16, workload__kv_heads=2, workload__head_dim=256, workload__gated_mlp=True,
                workload__vocabulary_size=151_936, workload__sequence_length=65536, workload__batch_size=4,
                task__mode="inference", task__precision="bf16", task__serving_engine="vllm",
                task__generated_tokens=2048, scale__gpu_count=4, budget__amount=600000.0)
    hybrid, dense = answers("inference_server", **base, workload__linear_attention_layers=36), answers(
        "inference_server", **base)
    shape, all_full = model_shape(hybrid.workload)[0], model_shape(dense.workload)[0]
    state = 36 * 32 * 128 * 128 * 2  # bytes a sequence, bf16
    # The KV cache splits over its 2 KV heads; the state over all 4 GPUs by its 32 heads (review r76: vLLM's
    # MambaStateShapeCalculator divides them by the tensor-parallel size).
    assert estimate_memory(hybrid, shape).kv_cache_bytes == pytest.approx(
        estimate_memory(dense, all_full).kv_cache_bytes / 4 + 4 * state / 4, rel=0.01)
    build = recommend(hybrid, catalog, today=TODAY)
    assert build.feasible and build.component("gpu").quantity == 4, build.blockers


def test_linear_attention_layers_are_at_most_the_layers():
    table = {"scenario": "personal_research", "workload": {
        "preset": "custom", "kind": "transformer", "layers": 48, "hidden_size": 2048, "attention_heads": 16,
        "sequence_length": 4096, "linear_attention_layers": 49}}
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict(table, path="a.toml")
    assert caught.value.key.endswith(".linear_attention_layers") and "at most layers" in str(caught.value)


def test_a_pure_state_space_model_generates_130k_tokens_in_its_fixed_state_on_one_a10(catalog):
    # tiiuae/falcon-mamba-7b config.json: 64 Mamba layers, hidden 4096, state_size 16, no attention; TII's release
    # blog: it "can process sequences of arbitrary length without any increase in memory storage, in particular, fitting
    # on a single A10 24GB GPU", generating to 130k tokens at a constant peak. A transformer of its shape needs 128 GiB.
    base = dict(workload__preset="custom", workload__kind="transformer", workload__parameters=7_270_000_000,
                workload__layers=64, workload__hidden_size=4096, workload__attention_heads=32,
                workload__vocabulary_size=65_024, workload__sequence_length=1024, workload__batch_size=1,
                task__mode="inference", task__precision="bf16", task__generated_tokens=130_000,
                budget__amount=20000.0, budget__currency="USD")
    mamba = answers(**base, workload__linear_attention_layers=64, workload__ssm_state_size=16)
    shape = model_shape(mamba.workload)[0]
    assert shape.full_attention_layers == 0 and shape.linear_state_values == 64 * 4096 * 2 * 16
    assert estimate_memory(mamba, shape).kv_cache_bytes == 64 * 4096 * 32 * 2  # 16 MiB, whatever the length
    # llama.cpp keeps a recurrent state in F32 whatever the cache's type (llama_memory_recurrent; review r70).
    gguf = mamba.with_value("task", "serving_engine", "llama_cpp").with_value("task", "precision", "int4")
    q4_0 = gguf.with_value("task", "kv_cache_dtype", "q4_0")
    assert estimate_memory(q4_0, shape).kv_cache_bytes == 64 * 4096 * 32 * 4
    build = recommend(mamba, catalog, pins={"gpu": ("a10-24gb", 1)}, today=TODAY)
    assert build.memory_fits, build.memory.total_bytes / GIB
    transformer = recommend(answers(**base), catalog, pins={"gpu": ("a10-24gb", 1)}, today=TODAY)
    assert not transformer.memory_fits
    # Review r70: trained without FlashAttention, its linear layers keep no attention scores (216 GiB became 1,496).
    training = mamba.with_value("task", "mode", "training").with_value("workload", "sequence_length", 8192)
    eager = training.with_value("task", "flash_attention", False)
    assert estimate_memory(eager, shape).activations_bytes == estimate_memory(training, shape).activations_bytes
    with pytest.raises(ConfigFileError, match="ssm_state_size"):
        answers_from_dict({"scenario": "personal_research", "workload": {
            "preset": "custom", "kind": "transformer", "layers": 48, "hidden_size": 2048, "attention_heads": 16,
            "sequence_length": 4096, "ssm_state_size": 16}}, path="a.toml")


def test_llama4_scout_caches_a_chunk_on_its_36_chunked_layers_and_int4_at_128k_fits_one_h100(catalog):
    # meta-llama/Llama-4-Scout-17B-16E config.json: attention_chunk_size 8192, no_rope_layers [1, 1, 1, 0] x 12; vLLM's
    # ChunkedLocalAttentionManager frees earlier chunks. At 128k one stream's bf16 cache is 7.1 GiB, not 24 in full;
    # the model card: Scout "fits on a single H100 GPU" with int4 quantization.
    shape, _ = model_shape(answers(workload__preset="llama4-scout").workload)
    assert shape.window_layers == 36 and shape.sliding_window_tokens == 8192
    assert kv_cache_bytes(shape, 1, 131072, 2.0) == 2 * 2 * 1024 * (12 * 131072 + 36 * 8192)
    build = recommend(answers(scenario="inference_server", workload__preset="llama4-scout", workload__batch_size=1,
                              workload__sequence_length=131072, task__mode="inference", task__precision="int4",
                              task__serving_engine="vllm", task__generated_tokens=512, budget__amount=40000.0,
                              budget__currency="USD"),
                      catalog, pins={"gpu": ("h100-80gb-pcie", 1)}, today=TODAY)
    assert build.memory_fits, build.memory.total_bytes / GIB


def test_a_parallel_hybrid_holds_a_kv_cache_and_a_mamba_state_on_every_layer(catalog):
    # Audit DG68: Falcon-H1R-7B (config.json: 44 layers of 3,072, 12 heads, 2 KV heads of 128; mamba_d_ssm 3,072,
    # mamba_d_state 256) runs attention and a Mamba-2 block side by side in every layer, which no answer said: 32
    # streams of 8k on an RTX 4090 showed 20.2 of 21.6 GiB, its ~2.1 GiB of Mamba state not counted.
    falcon = dict(workload__preset="custom", workload__kind="transformer", workload__parameters=7_100_000_000,
                  workload__layers=44, workload__hidden_size=3072, workload__attention_heads=12, workload__kv_heads=2,
                  workload__head_dim=128, workload__intermediate_size=12288, workload__gated_mlp=True,
                  workload__vocabulary_size=130_048, workload__sequence_length=512, workload__batch_size=32,
                  task__mode="inference", task__precision="int8", task__quantization="fp8",
                  task__serving_engine="vllm", task__generated_tokens=8192, budget__amount=40000.0)
    plain = answers("inference_server", **falcon)
    hybrid = answers("inference_server", **falcon, workload__parallel_ssm_layers=44, workload__ssm_inner_width=3072,
                     workload__ssm_state_size=256)
    state = 44 * 3072 * 256 * 2  # bytes a sequence: d_ssm x d_state a layer, 16-bit
    kv = [estimate_memory(each, model_shape(each.workload)[0]).kv_cache_bytes for each in (plain, hybrid)]
    assert kv[1] - kv[0] == pytest.approx(32 * state, rel=0.01)
    build = recommend(hybrid, catalog, today=TODAY)
    assert build.component("gpu").spec["memory_gib"] > 24, build.component("gpu").part_id
    assert any("the fixed state of 44 state-space blocks beside attention" in line for line in build.memory.formula)
    # Review r76: vLLM splits the state by its 24 SSM heads over all 4 ranks (the KV cache by its 2 KV heads), at the
    # model's dtype whatever the KV cache's (mamba_ssm_cache_dtype "auto").
    four = [estimate_memory(each.with_value("scale", "gpu_count", 4), model_shape(each.workload)[0]).kv_cache_bytes
            for each in (plain, hybrid)]
    assert four[1] - four[0] == pytest.approx(32 * state / 4, rel=0.01)
    fp8 = [estimate_memory(each.with_value("task", "kv_cache_dtype", "fp8"), model_shape(each.workload)[0])
           .kv_cache_bytes for each in (plain, hybrid)]
    assert fp8[1] - fp8[0] == pytest.approx(32 * state, rel=0.01)
    table = {"scenario": "personal_research", "workload": {
        "preset": "custom", "kind": "transformer", "layers": 44, "hidden_size": 3072, "attention_heads": 12,
        "sequence_length": 4096, "ssm_inner_width": 3072}}
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict(table, path="a.toml")
    assert caught.value.key.endswith(".ssm_inner_width") and "parallel_ssm_layers" in str(caught.value)

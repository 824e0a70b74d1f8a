"""A custom transformer given without its parameter count is counted from its shape, as transformers builds it."""

from __future__ import annotations

import pytest

from pth_top.configs.answer_types import Workload
from pth_top.configs.answers import cross_field_problems
from pth_top.configs.derived_shape import EXPERT_WIDTH_ACTIVE_SHARE_MIN, derived_parameters
from pth_top.configs.presets import model_presets, model_shape
from pth_top.configs.recommend import recommend

from .builders import answers


def shape(layers: int, hidden: int, heads: int, kv_heads: int, mlp: int, vocabulary: int, **more: object) -> Workload:
    return Workload(preset="custom", layers=layers, hidden_size=hidden, attention_heads=heads, kv_heads=kv_heads,
                    intermediate_size=mlp, vocabulary_size=vocabulary, **more)  # type: ignore[arg-type]


# (config.json shape, the published count, what the count leaves out): each model's config.json and safetensors
# index on huggingface.co; the norms (2h a layer) and Qwen's q/k/v biases are the whole difference.
PUBLISHED_COUNTS = [
    pytest.param(shape(28, 3584, 28, 4, 18_944, 152_064, gated_mlp=True), 7_615_616_512, 333_312,
                 id="qwen2.5-7b-gqa-untied"),
    pytest.param(shape(80, 8192, 64, 8, 28_672, 128_256, gated_mlp=True), 70_553_706_496, 1_318_912,
                 id="llama-3-70b-gqa-untied"),
    # GPT-2 small ties its LM head to the embeddings; its 786,432 learned positions and biases are not counted.
    pytest.param(shape(12, 768, 12, 0, 0, 50_257, tied_embeddings=True), 124_439_808, 907_776, id="gpt2-small-tied"),
]


@pytest.mark.parametrize(("workload", "published", "left_out"), PUBLISHED_COUNTS)
def test_derived_count_is_the_published_count_less_norms_and_biases(workload: Workload, published: int,
                                                                    left_out: int) -> None:
    assert derived_parameters(workload) == published - left_out


@pytest.mark.parametrize("preset_id", ["mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-20b"])
def test_a_mixture_of_experts_counts_every_expert_and_what_a_token_reads(preset_id: str) -> None:
    # A mixture's intermediate_size is the width a token reads (Mixtral: 2 experts x 14,336), as its preset gives it.
    preset = model_presets()[preset_id]
    shape_only = Workload(preset="custom", layers=preset.layers, hidden_size=preset.hidden_size,
                          attention_heads=preset.attention_heads, kv_heads=preset.kv_heads, head_dim=preset.head_dim,
                          intermediate_size=preset.intermediate_size, gated_mlp=preset.gated_mlp,
                          vocabulary_size=preset.vocabulary_size, experts_count=preset.experts_count,
                          experts_per_token=preset.experts_per_token)
    shape, _ = model_shape(shape_only)
    assert shape.parameters == pytest.approx(preset.parameters, rel=0.02)  # norms, biases and routers left out
    # Vendors differ on the input embedding a token reads one row of: OpenAI leaves it out, Qwen and Mistral count it.
    assert shape.active == pytest.approx(preset.active_parameters, rel=0.1)


def test_a_7b_served_in_bf16_given_by_its_shape_is_not_sold_a_16_gb_card(catalog) -> None:
    """DeepSeek-R1-Distill-Qwen-7B (Qwen2.5-7B's shape) in bf16 under vLLM is 15.2 GB on disk (databasemart.com's
    vLLM RTX 4090 benchmark): a 16 GB card cannot start it. Counted as 12*L*h^2 + V*h it was 4.86B, and an RTX 5070
    Ti 16GB was recommended."""
    given: dict[str, object] = {"workload__preset": "custom", "workload__layers": 28, "workload__hidden_size": 3584,
             "workload__attention_heads": 28, "workload__kv_heads": 4, "workload__intermediate_size": 18_944,
             "workload__gated_mlp": True, "workload__vocabulary_size": 152_064, "workload__sequence_length": 4096,
             "workload__batch_size": 1, "task__mode": "inference", "task__precision": "bf16",
             "task__serving_engine": "vllm", "scenario": "inference_server", "budget__amount": 3000.0,
             "budget__currency": "EUR"}
    scenario = given.pop("scenario")
    build = recommend(answers(str(scenario), **given), catalog)
    assert build.feasible
    assert build.memory.weights_bytes / 1e9 == pytest.approx(15.2, rel=0.01)
    assert build.component("gpu").spec["memory_gib"] >= 24


def test_a_mixture_given_one_experts_width_is_told_the_width_a_token_reads() -> None:
    """PowerMoE-3B (arXiv:2408.13359 Table 4: 32 layers of 1,536, 24 heads, 8 KV; 40 experts of 512, top 8; 3.3B, 800M
    active) typed from config.json's intermediate_size 512 was counted 654M in all and sold a 16 GB card for a full
    fine-tune that took 70.7 GB on an A100 (audit XD6)."""
    powermoe = dict(workload__preset="custom", workload__layers=32, workload__hidden_size=1536,
                    workload__attention_heads=24, workload__kv_heads=8, workload__gated_mlp=True,
                    workload__experts_count=40, workload__experts_per_token=8, workload__active_parameters=800_000_000,
                    workload__vocabulary_size=49_152, workload__tied_embeddings=True,
                    workload__sequence_length=4096)
    one_expert = answers(**powermoe, workload__intermediate_size=512)
    problems = cross_field_problems(one_expert)
    assert [(section, key) for section, key, _ in problems] == [("workload", "intermediate_size")]
    assert "8 x 512 = 4,096" in problems[0][2]
    assert cross_field_problems(answers(**powermoe, workload__intermediate_size=8 * 512)) == []


def test_a_mixture_of_few_wide_experts_given_one_experts_width_is_told_too() -> None:
    """GRIN-MoE (microsoft/GRIN-MoE config.json: 32 layers of 4,096, 32 heads, 8 KV, 16 experts of 6,400, 2 a token,
    V 32,064; 41.9B, 6.6B active) typed with 6,400 read 3.99B of its 6.6B active and was counted 21.7B in all: its
    attention is half of what a token reads, so one expert's width still came to 0.60 of it (audit AO44)."""
    grin = dict(workload__preset="custom", workload__layers=32, workload__hidden_size=4096,
                workload__attention_heads=32, workload__kv_heads=8, workload__gated_mlp=True,
                workload__experts_count=16, workload__experts_per_token=2, workload__active_parameters=6_600_000_000,
                workload__vocabulary_size=32_064, workload__sequence_length=4096)
    problems = cross_field_problems(answers(**grin, workload__intermediate_size=6400))
    assert [(section, key) for section, key, _ in problems] == [("workload", "intermediate_size")]
    assert "2 x 6,400 = 12,800" in problems[0][2]
    assert cross_field_problems(answers(**grin, workload__intermediate_size=2 * 6400)) == []


def test_a_hybrid_mixture_given_its_true_width_is_not_told_to_multiply_it() -> None:
    """Qwen3.5-122B-A10B (its config.json as audit CJ60 read it: 48 layers of 3,072, 32 heads of 256, 2 KV; 256
    experts of 1,024, 8 a token and a shared one, 9 x 1,024 = 9,216; V 248,320; 36 Gated DeltaNet layers) reads 7.4B
    of its 10B active: its linear attention's wider projections and its vision tower are not in the shape. 8 x 9,216
    reads 35B, further off, and was the width the error asked for."""
    qwen35 = dict(workload__preset="custom", workload__layers=48, workload__hidden_size=3072,
                  workload__attention_heads=32, workload__kv_heads=2, workload__head_dim=256, workload__gated_mlp=True,
                  workload__experts_count=256, workload__experts_per_token=8, workload__linear_attention_layers=36,
                  workload__parameters=122_000_000_000, workload__active_parameters=10_000_000_000,
                  workload__vocabulary_size=248_320, workload__sequence_length=19_000)
    hybrid = answers(**qwen35, workload__intermediate_size=9 * 1024)
    assert 0.7 < derived_parameters(hybrid.workload, active=True) / 10e9 < EXPERT_WIDTH_ACTIVE_SHARE_MIN
    assert cross_field_problems(hybrid) == []
    one_expert = cross_field_problems(answers(**qwen35, workload__intermediate_size=1024))
    assert [(section, key) for section, key, _ in one_expert] == [("workload", "intermediate_size")]


def test_a_shared_expert_is_counted_once_in_a_mixtures_total():
    """DeepSeek-V3's MLP a token reads is 8 routed and 1 shared expert of 2,048: its 256 routed experts are in memory
    once each, and its shared one once, not 256 / 8 times."""
    shape = dict(preset="custom", layers=58, hidden_size=7168, attention_heads=128, gated_mlp=True, experts_count=256,
                 experts_per_token=8, intermediate_size=9 * 2048, vocabulary_size=129_280)
    unshared = derived_parameters(Workload(**shape))
    shared = derived_parameters(Workload(**shape, shared_expert_width=2048))
    assert unshared - shared == 58 * 3 * 7168 * 2048 * (256 // 8 - 1)
    assert derived_parameters(Workload(**shape, shared_expert_width=2048), active=True) == \
        derived_parameters(Workload(**shape), active=True)


def test_a_shared_experts_width_is_a_part_of_the_width_a_token_reads():
    """Review r74: a shared width of 4,096 beside an MLP width of 2,048 made a model of -3.2B parameters, held in
    0.57 GiB; one expert's width given beside a shared one is told the sum with it."""
    mixture = dict(workload__preset="custom", workload__layers=58, workload__hidden_size=7168,
                   workload__attention_heads=128, workload__gated_mlp=True, workload__experts_count=256,
                   workload__experts_per_token=8, workload__vocabulary_size=129_280,
                   workload__active_parameters=37_000_000_000, workload__shared_expert_width=2048,
                   workload__sequence_length=4096)
    wider = cross_field_problems(answers(**{**mixture, "workload__shared_expert_width": 4096},
                                         workload__intermediate_size=2048))
    assert [(section, key) for section, key, _ in wider] == [("workload", "shared_expert_width")]
    alone = answers(workload__preset="custom", workload__layers=8, workload__hidden_size=1024,
                    workload__attention_heads=16, workload__intermediate_size=4096, workload__shared_expert_width=1024,
                    workload__sequence_length=512)
    assert [(section, key) for section, key, _ in cross_field_problems(alone)] == [("workload", "shared_expert_width")]
    narrow_shared = {**mixture, "workload__shared_expert_width": 1024}
    one_expert = cross_field_problems(answers(**narrow_shared, workload__intermediate_size=2048))
    assert "8 x 2,048 + the shared 1,024 = 17,408" in one_expert[0][2], one_expert


def test_a_vision_language_models_count_from_its_shape_holds_its_vision_tower():
    # Audit DJ69: Qwen2.5-VL-72B (80 layers of 8,192, 64 heads, 8 KV heads, gated 29,568, V 152,064; a ViT of 32 layers
    # of 1,280) counted 72.70B from its shape, its vision tower's weights left out of memory: 73.4B on its model card.
    import msgspec

    vlm = Workload(preset="custom", kind="transformer", layers=80, hidden_size=8192, attention_heads=64, kv_heads=8,
                   intermediate_size=29568, gated_mlp=True, vocabulary_size=152_064, vision_layers=32,
                   vision_hidden_size=1280, vision_tokens=4)
    assert derived_parameters(vlm) / 1e9 == pytest.approx(73.4, rel=0.01)
    assert derived_parameters(vlm) - 12 * 32 * 1280 ** 2 == derived_parameters(
        msgspec.structs.replace(vlm, vision_layers=0, vision_hidden_size=0, vision_tokens=0))
    frozen = msgspec.structs.replace(vlm, frozen_parameters=670_000_000)  # a frozen tower answered apart (training)
    assert derived_parameters(frozen) == derived_parameters(vlm) - 12 * 32 * 1280 ** 2

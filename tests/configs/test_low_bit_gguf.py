"""llama.cpp's GGUF files under 4 bits (Q3_K_S, Q2_K): their sizes, their decode, and the lever after 4-bit weights."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.levers import answer_changes
from pth_top.configs.memory_inference import expert_bytes, inference_weight_bytes
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.presets import model_shape
from pth_top.configs.quantization import weight_format
from pth_top.configs.recommend import _context, recommend
from pth_top.configs.rules import load_rules
from pth_top.configs.speed_reads import decode_reads
from tests.configs.builders import answers

TODAY = dt.date(2026, 11, 1)
# Llama 3.1 8B (config.json: 32 layers of 4096, 8 KV heads, SwiGLU 14336, V 128,256, untied): 8.03B parameters.
LLAMA31_8B = ModelShape("transformer", 8_030_261_248, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8,
                        sequence_length=1, intermediate_size=14336, gated_mlp=True, vocabulary_size=128_256)


@pytest.mark.parametrize(("quantization", "published_bits"), [("gguf_q3_k_s", 3.6429), ("gguf_q2_k", 3.1593),
                                                              ("gguf_q4_k_m", 4.8944)])
def test_a_gguf_files_size_is_its_published_bits_a_weight(quantization, published_bits):
    # llama.cpp tools/quantize/README.md, meta-llama/Llama-3.1-8B: bits/weight of the whole file.
    weights, _ = inference_weight_bytes(LLAMA31_8B, "int4", quantization, "llama_cpp")
    assert weights * 8 / LLAMA31_8B.parameters == pytest.approx(published_bits, rel=0.03)


def test_a_home_moe_the_budget_holds_only_under_4_bits_is_offered_q3_then_q2(catalog):
    # Audit FF: GLM-4.6 (355B, 32B active; 92 layers of 5120, 8 KV heads of 128, 160 experts of 8) Q4_K_M with its
    # experts in RAM for $4,000, used: 204 GB of experts need a server's RAM ($5,621 at least). People run it at
    # ~3.2 bits a weight on a desktop with one 24 GB card (huggingface.co/sokann/GLM-4.6-GGUF-3.2263bpw, ~6.8
    # tokens/s). Each step under 4 bits is offered, after the levers that keep the weights, and says its cost.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=355_000_000_000,
                  workload__active_parameters=32_000_000_000, workload__experts_count=160,
                  workload__experts_per_token=8, workload__layers=92, workload__hidden_size=5120,
                  workload__attention_heads=96, workload__kv_heads=8, workload__head_dim=128,
                  workload__intermediate_size=12288, workload__gated_mlp=True, workload__vocabulary_size=151_552,
                  workload__sequence_length=32768, workload__batch_size=1, data__dataset_size_gb=0.0,
                  task__mode="inference", task__precision="int4",
                  task__serving_engine="llama_cpp", task__quantization="gguf_q4_k_m", task__expert_offload=True,
                  task__generated_tokens=1024, budget__currency="USD", budget__amount=4000.0,
                  budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    assert build.blockers
    lines = build.feasible_alternatives
    assert lines[0].startswith("GGUF Q3_K_S") and "a larger quality loss than 4-bit weights" in lines[0], lines
    assert lines[1].startswith("GGUF Q2_K"), lines
    assert "within $4,000" in lines[0] and "24GB" in lines[0], lines[0]


@pytest.mark.parametrize(("changes", "offered"), [
    ({}, ("Q3_K_S", "Q2_K")), ({"task__precision": "bf16"}, ("Q3_K_S", "Q2_K")),
    ({"task__precision": "int8"}, ("Q3_K_S", "Q2_K")), ({"task__quantization": "gguf_q3_k_s"}, ("Q2_K",)),
    ({"task__quantization": "gguf_q2_k"}, ()),
    ({"task__serving_engine": "vllm"}, ()), ({"task__serving_engine": "sglang"}, ()),
    ({"task__serving_engine": "hf_generate"}, ()), ({"workload__preset": "bert-base"}, ()),
    ({"task__mode": "training", "task__precision": "bf16"}, ()),
])
def test_the_under_4_bit_lever_is_llama_cpps_for_a_language_model(catalog, changes, offered):
    job = answers(**{"workload__preset": "llama3-8b", "workload__batch_size": 1, "task__mode": "inference",
                     "task__precision": "int4", "task__serving_engine": "llama_cpp", **changes})
    labels = [label for label, _ in answer_changes(_context(job, catalog, load_rules(), {}))]
    assert tuple(name for name in ("Q3_K_S", "Q2_K") if any(label.startswith(f"GGUF {name},") for label in labels)) \
        == offered, labels


def test_under_4_bits_a_gguf_decodes_at_its_own_share_of_the_bandwidth_and_4_bit_awq_keeps_4_bits():
    # llama.cpp's quantize table: Q2_K 79.85 tokens/s, Q4_K_M 71.93 (1.11x for 1.55x fewer bytes).
    job = answers(workload__preset="llama3-8b", workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp")
    q4 = decode_reads(job.with_value("task", "quantization", "gguf_q4_k_m"), LLAMA31_8B)
    q2 = decode_reads(job.with_value("task", "quantization", "gguf_q2_k"), LLAMA31_8B)
    # Both read the weights less the input embedding's table, of which a token reads one row (audit ZL).
    table = {name: LLAMA31_8B.vocabulary_size * LLAMA31_8B.hidden_size * weight_format(name, "int4", "llama_cpp")
             .vocabulary_bits / 8 for name in ("gguf_q2_k", "gguf_q4_k_m")}
    assert q2.read_bytes == pytest.approx((q2.weight_bytes - table["gguf_q2_k"]) / 0.72)
    assert q4.read_bytes == pytest.approx(q4.weight_bytes - table["gguf_q4_k_m"])
    assert "reads at 0.72 of 4-bit's bandwidth fraction a byte" in q2.line
    awq = decode_reads(job.with_value("task", "serving_engine", "vllm").with_value("task", "quantization", "awq_g128"),
                       LLAMA31_8B)
    assert awq.read_bytes < awq.weight_bytes and "bandwidth fraction a byte" not in awq.line


def test_a_count_without_the_embeddings_never_reads_a_negative_step(catalog):
    # Review ZS: Pythia-70M's model card counts 18.9M non-embedding parameters; its table (50,304 x 512 = 25.8M) was
    # taken off them whole, and the decode rate came out at -13,204 tokens/s. At most half the vocabulary's share is.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=18_915_328,
                  workload__layers=6, workload__hidden_size=512, workload__attention_heads=8,
                  workload__vocabulary_size=50_304, workload__sequence_length=512, workload__batch_size=1,
                  task__mode="inference", task__precision="fp16", budget__currency="USD", budget__amount=3000.0)
    reads = decode_reads(job, model_shape(job.workload)[0])
    assert reads.read_bytes == pytest.approx(reads.weight_bytes / 2)
    assert recommend(job, catalog, today=TODAY).speed.figures["decode_tokens_per_s_per_stream"] > 0


def test_a_checkpoint_llama_cpp_cannot_load_is_said_where_it_is_the_engine(catalog):
    # Audit ZG: AWQ weights for a Jetson were sized and timed for llama.cpp (the edge's engine for "auto"), which loads
    # GGUF files only; a GGUF format, or vLLM answered, says nothing.
    from pth_top.configs.presets import ignored_answer_warnings

    job = answers("edge_deployment", workload__preset="llama3-8b", workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__quantization="awq_g128")
    said = [line for line in ignored_answer_warnings(job, LLAMA31_8B) if "is not a GGUF file" in line]
    assert said and "the engine assumed here" in said[0] and 'task.serving_engine = "vllm"' in said[0]
    for fine in (job.with_value("task", "quantization", "gguf_q4_k_m"),
                 job.with_value("task", "serving_engine", "vllm")):
        assert not any("is not a GGUF file" in line for line in ignored_answer_warnings(fine, LLAMA31_8B))


MIMO_V26_Q2K = {
    "workload__preset": "custom", "workload__kind": "transformer", "workload__parameters": 309_000_000_000,
    "workload__active_parameters": 15_000_000_000, "workload__experts_count": 256, "workload__experts_per_token": 8,
    "workload__layers": 48, "workload__hidden_size": 4096, "workload__attention_heads": 64, "workload__kv_heads": 4,
    "workload__head_dim": 160, "workload__sliding_window_tokens": 128, "workload__sliding_window_layers": 39,
    "workload__vocabulary_size": 152_576, "workload__intermediate_size": 16_384, "workload__gated_mlp": True,
    "workload__sequence_length": 4096, "workload__batch_size": 1, "task__mode": "inference", "task__precision": "int4",
    "task__quantization": "gguf_q2_k", "task__serving_engine": "llama_cpp", "task__generated_tokens": 512,
    "budget__amount": 5000.0, "budget__currency": "USD"}


def test_a_gguf_counted_at_its_published_files_size_where_it_is_given(catalog):
    # Audit XI8: ggml-org's Q2_K of MiMo-V2.6-Flash (309B, 15B active) is 126 GB, 3.26 bits a weight, "over the 121.6
    # GiB a Spark can actually address" (Halcerion/MiMo-V2.6-Flash-RL-Single-DGX-Spark); at Q2_K's 2.95 bits a weight
    # (Llama 3.1 8B's mix) a DGX Spark was sold at 117.7 of 117.8 GiB. Its files' size, given, is what is counted.
    counted = recommend(answers(**MIMO_V26_Q2K), catalog, today=TODAY)
    given = recommend(answers(**MIMO_V26_Q2K, workload__weights_file_gb=126.0), catalog, today=TODAY)
    assert counted.memory.weights_bytes < 118e9 < given.memory.weights_bytes == pytest.approx(126e9, rel=0.01)
    assert any("the published files' 126.0 GB" in line for line in given.memory.formula)
    assert not (given.feasible and given.component("gpu").part_id.startswith("dgx-spark")), given.component("gpu")
    shape = model_shape(answers(**MIMO_V26_Q2K, workload__weights_file_gb=126.0).workload)[0]
    assert (shape.weights_file_parameters, shape.weights_file_bytes) == (309_000_000_000, 126e9)
    # Its routed experts in RAM (--cpu-moe) are their share of the files too.
    in_ram = expert_bytes(shape, "int4", "gguf_q2_k", "llama_cpp") / expert_bytes(
        model_shape(answers(**MIMO_V26_Q2K).workload)[0], "int4", "gguf_q2_k", "llama_cpp")
    assert in_ram == pytest.approx(given.memory.weights_bytes / counted.memory.weights_bytes, rel=0.01)
    trained = answers(**{**MIMO_V26_Q2K, "task__mode": "training", "task__precision": "bf16",
                         "task__quantization": "auto", "workload__weights_file_gb": 126.0})
    assert ("workload", "weights_file_gb") in {(section, key) for section, key, _ in cross_field_problems(trained)}


def test_smaller_weights_with_an_8_bit_cache_on_one_card_come_before_a_smaller_file_alone(catalog):
    # Audit BD50: Hermes-4.3-36B (Seed-OSS-36B's shape: 64 layers of 5,120, 80 heads, 8 KV heads of 128, SwiGLU 27,648,
    # V 155,136) in Q4_K_M at 32k for EUR 2,500 used: Q3_K_S was tried only with a split over 2 cards, which costs
    # what the split alone does and was dropped, so Q2_K on one RTX 3090 (tight) came before Q3_K_S with a q8_0 cache
    # on it (~20 GiB, with room).
    job = answers(workload__preset="custom", workload__kind="transformer", workload__layers=64,
                  workload__hidden_size=5120, workload__attention_heads=80, workload__kv_heads=8,
                  workload__head_dim=128, workload__intermediate_size=27648, workload__gated_mlp=True,
                  workload__vocabulary_size=155_136, workload__sequence_length=32768, workload__batch_size=1,
                  task__mode="inference", task__precision="int4", task__quantization="gguf_q4_k_m",
                  task__serving_engine="llama_cpp", task__generated_tokens=1000, budget__amount=2500.0,
                  budget__currency="EUR", budget__condition="used")
    said = recommend(job, catalog, today=TODAY).feasible_alternatives
    q3 = next(index for index, line in enumerate(said) if line.startswith("GGUF Q3_K_S"))
    q2 = next(index for index, line in enumerate(said) if line.startswith("GGUF Q2_K"))
    assert q3 < q2 and "an 8-bit KV cache" in said[q3] and "RTX 3090" in said[q3] and "TIGHT" not in said[q3], said

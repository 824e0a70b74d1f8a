"""A server asked for more concurrent requests than it holds: the engine queues the rest (configs.way_out.most_at_once),
and beyond one node pipeline parallel divides the KV cache by the nodes (configs.memory_inference.kv_split)."""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs.levers import answer_changes, queued_label
from pth_top.configs.memory import estimate_memory
from pth_top.configs.memory_inference import kv_split
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import _context, recommend
from pth_top.configs.rules import load_rules
from tests.configs.builders import QWEN25_32B, answers, custom

TODAY = dt.date(2026, 12, 2)
# GPUStack's performance lab (github.com/gpustack/gpustack docs/performance-lab/deepseek-v3.2/h200.md): vLLM v0.13.0,
# `vllm serve deepseek-ai/DeepSeek-V3.2 -tp 8` on 8 x H200, `vllm bench serve` with 500 prompts at once, 1K in and
# 2K out: mean TPOT 45.72 ms, 21.9 tokens/s a stream. DeepSeek-V3.2 is DeepSeek-V3's shape with its FP8 weights.
DEEPSEEK_500 = dict(workload__preset="deepseek-v3", workload__sequence_length=1000, workload__batch_size=500,
                    task__mode="inference", task__precision="int8", task__quantization="fp8",
                    task__serving_engine="vllm", task__generated_tokens=2000, scale__gpu_count=8,
                    budget__amount=500_000.0, budget__currency="USD")


def test_a_server_serves_what_it_holds_at_once_and_queues_the_rest(catalog):
    # Audit UU: 500 at once need 178 GiB a GPU, so it was refused, where vLLM ran the 500 by queueing them.
    build = recommend(answers("inference_server", **DEEPSEEK_500), catalog, today=TODAY)
    assert not build.feasible
    line, changed, _ = build.applicable_alternatives[0]
    assert "of the 500 requests at once, the rest queued" in line and "8 x NVIDIA H200 141GB SXM" in line, line
    assert "TIGHT" not in line, line  # the most it holds with the estimator's margin (review XA: 234 were TIGHT)
    assert 150 <= changed.workload.batch_size < 500, changed.workload.batch_size
    served = recommend(changed, catalog, today=TODAY)
    assert served.feasible, served.blockers
    # The engine's batch is the one it holds, so its rate a stream is the published one, queueing and all.
    assert served.speed.figures["decode_tokens_per_s_per_stream"] == pytest.approx(21.9, rel=0.35)


def test_pipeline_parallel_across_nodes_divides_the_kv_cache_that_tensor_parallel_keeps_whole(catalog):
    # MLA's latent cache is whole on each of a node's 8 GPUs; over 3 nodes each holds a third of the layers' cache.
    shape = model_shape(answers(**DEEPSEEK_500).workload)[0]
    assert (kv_split(shape, 8, "vllm"), kv_split(shape, 24, "vllm")) == (1, 3)
    assert kv_split(shape, 24, "llama_cpp") == 24
    grouped = model_shape(answers(**QWEN25_32B).workload)[0]  # 8 KV heads: never more ways than GPUs (review XA)
    assert (kv_split(grouped, 8, "vllm"), kv_split(grouped, 12, "vllm"), kv_split(grouped, 16, "vllm")) == (8, 12, 16)
    one, three = (estimate_memory(answers(**{**DEEPSEEK_500, "scale__gpu_count": gpus}), shape) for gpus in (8, 24))
    assert three.kv_cache_bytes == pytest.approx(one.kv_cache_bytes / 3, rel=1e-6)
    # So the way out beyond one machine sizes the nodes, where "even 64 nodes do not hold it" was said.
    build = recommend(answers("inference_server", **DEEPSEEK_500), catalog, today=TODAY)
    beyond = next(line for line in build.feasible_alternatives if line.startswith("beyond one machine"))
    assert "across 3 nodes of 8 x" in beyond and "do not hold it" not in beyond, beyond


def test_the_queued_requests_are_on_the_asked_cards_where_a_split_would_hold_them_all(catalog):
    # Review XA: Qwen2.5-32B in bf16 for 16 users at 32k on 2 cards, $45,000: splits over 4 or 8 hold all 16 (their
    # own levers), so the queue is on the 2 asked, with the estimator's margin, and its engine's flag.
    job = answers("inference_server", **QWEN25_32B, workload__sequence_length=32768, workload__batch_size=16,
                  task__mode="inference", task__precision="bf16", task__serving_engine="vllm",
                  task__generated_tokens=1024, scale__gpu_count=2, budget__amount=45000.0, budget__currency="USD")
    said = recommend(job, catalog, today=TODAY).feasible_alternatives
    queued = next(line for line in said if " of the 16 requests at once, the rest queued" in line)
    assert "vLLM --max-num-seqs" in queued and "fits 2 x " in queued and "TIGHT" not in queued, queued
    assert any(line.startswith("tensor parallel across 4 GPUs") for line in said), said


def test_each_engine_says_its_own_queue_and_generate_has_none(catalog):
    job = answers("inference_server", **QWEN25_32B, workload__sequence_length=32768, workload__batch_size=16,
                  task__mode="inference", task__precision="int4", task__serving_engine="llama_cpp",
                  task__generated_tokens=1024, budget__amount=3000.0, budget__currency="USD")
    assert "llama-server --parallel 8" in queued_label(job, 8) and "vLLM" not in queued_label(job, 8)
    served = job.with_value("task", "serving_engine", "hf_generate").with_value("task", "precision", "bf16")
    labels = [label for label, _ in answer_changes(_context(served, catalog, load_rules(), {}))]
    assert not any("requests at once" in label for label in labels), labels


def test_the_asked_cards_queue_is_offered_beside_a_split_that_holds_more(catalog):
    # Audit YA: only the split holding the most at once was shown, not the cheaper build holding fewer. (At 24k: the
    # reserve SGLang keeps on a 48 GB card, 6.8 GiB over 2 GPUs, leaves 2 of them short of a quarter of the 64 at 32k.)
    job = answers("inference_server", workload__preset="qwen3-30b-a3b", workload__sequence_length=24576,
                  workload__batch_size=64, task__mode="inference", task__precision="int8", task__quantization="fp8",
                  task__serving_engine="sglang", task__generated_tokens=1024, budget__amount=230000.0)
    queued = [line for line in recommend(job, catalog, today=TODAY).feasible_alternatives
              if " of the 64 requests at once" in line]
    # One card holds a quarter only on a DGX Spark at ~2 tokens/s each (audit ZA): the fewest fast cards that do.
    assert len(queued) == 2 and "across 2 GPUs" in queued[0] and "across 4 GPUs" in queued[1], queued


def test_an_owned_card_queues_the_requests_with_the_levers_that_shrink_them(catalog):
    # Audit YA: Llama-3.2-11B-Vision in fp16 for 64 users at 4k on an owned RTX 4090 (tenstorrent/tt-inference-server
    # #131: vLLM needed --max-num-seqs 32 on it): only renting was offered. The queue is sized on the owned card, with
    # 8-bit weights and an 8-bit KV cache, ~22 at once with the estimator's margin, and no card is bought.
    job = answers("inference_server", workload__preset="custom", workload__parameters=10_670_000_000,
                  workload__layers=40, workload__hidden_size=4096, workload__attention_heads=32, workload__kv_heads=8,
                  workload__intermediate_size=14336, workload__gated_mlp=True, workload__vocabulary_size=128256,
                  workload__sequence_length=4096, workload__batch_size=64, task__mode="inference",
                  task__precision="fp16", task__serving_engine="vllm", task__generated_tokens=256,
                  budget__amount=3000.0, budget__currency="USD", budget__owned_gpu="rtx-4090-24gb",
                  budget__owned_gpu_count=1)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible
    line, changed, _ = build.applicable_alternatives[0]
    assert line.startswith("keeping your NVIDIA GeForce RTX 4090") and "vLLM --max-num-seqs" in line, line
    assert 16 <= changed.workload.batch_size < 32 and changed.task.kv_cache_dtype == "fp8", changed
    served = recommend(changed, catalog, today=TODAY)
    assert served.feasible and "TIGHT" not in line, served.blockers


def test_the_queue_is_on_a_card_that_serves_the_requests_before_one_that_holds_more_slowly(catalog):
    # Audit ZA: Qwen1.5-7B-Chat (Qwen's MoE blog: 1,000 in and out on one A100 80GB, ~1,150 tokens/s out) for 100
    # users with $20,000 used: the queue was 87 at once on a DGX Spark at ~2.6 tokens/s each (~215 in all), where one
    # RTX PRO 6000 holds ~62 at ~20 each.
    job = answers("inference_server", workload__preset="custom", workload__parameters=7_721_000_000,
                  workload__layers=32, workload__hidden_size=4096, workload__attention_heads=32,
                  workload__kv_heads=32, workload__intermediate_size=11008, workload__gated_mlp=True,
                  workload__vocabulary_size=151936, workload__sequence_length=1000, workload__batch_size=100,
                  task__mode="inference", task__precision="bf16", task__serving_engine="vllm",
                  task__generated_tokens=1000, budget__amount=20000.0, budget__currency="USD",
                  budget__condition="used")
    build = recommend(job, catalog, today=TODAY)
    line, changed = next((line, changed) for line, changed, _ in build.applicable_alternatives
                         if " of the 100 requests at once" in line)
    assert "DGX Spark" not in line and "slower than reading" not in line, line
    served = recommend(changed, catalog, today=TODAY)
    figures = served.speed.figures
    assert figures["decode_tokens_per_s_per_stream"] * changed.workload.batch_size > 800, figures


def test_the_most_at_once_is_bisected_to_a_sixteenth_and_never_under_a_quarter():
    from pth_top.configs.way_out import largest_at_once

    def holds(limit: int):
        return lambda count: count if count <= limit else None

    assert largest_at_once(1, holds(1)) is None  # one request has nothing to queue
    assert largest_at_once(2, holds(1)) == (1, 1)
    most, found = largest_at_once(500, holds(179))  # DeepSeek-V3.2's 179 of 500 on 8 x H200 (audit UU)
    assert most == found and 179 - 179 // 16 <= most <= 179
    assert largest_at_once(64, holds(15)) is None  # under a quarter (16 of 64): not offered
    assert largest_at_once(64, holds(16)) == (16, 16)


def test_owned_cards_that_hold_the_job_with_a_lever_also_show_the_queue_the_launch_gives_as_asked(catalog):
    # Audit YQ2: Llama-3.2-90B-Vision (the language model: 80 layers of 8192, 8 KV heads) in bf16 on vLLM, TP 4 over 4
    # owned H100s, --max-model-len 81920 --max-num-seqs 8: vllm#8826 ran it so. The 8 full-length requests' KV cache
    # is short, and only an fp8 KV cache (TIGHT) or buying 8 new cards were offered: never what vLLM does with the
    # launch as asked, holding what fits at once and queueing the rest.
    vision = dict(**custom(88_600_000_000, 80, 8192, 64, 8, 128_256, 28_672), workload__sequence_length=81_920,
                  workload__batch_size=8, task__mode="inference",
                  task__precision="bf16", task__serving_engine="vllm", task__generated_tokens=1024,
                  scale__gpu_count=4, budget__amount=150_000.0, budget__currency="USD",
                  budget__owned_gpu="h100-80gb-pcie", budget__owned_gpu_count=4)
    build = recommend(answers("inference_server", **vision), catalog, today=TODAY)
    assert not build.feasible
    lines = build.feasible_alternatives
    assert "an fp8 KV cache" in lines[0] and "keeping your 4 x NVIDIA H100 80GB PCIe" in lines[0], lines
    assert "keeping your 4 x NVIDIA H100 80GB PCIe, 4 of the 8 requests at once, the rest queued" in lines[1], lines
    assert "TIGHT" not in lines[1] and "fp8" not in lines[1], lines[1]

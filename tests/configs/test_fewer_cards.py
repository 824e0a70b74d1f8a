"""Fewer, larger or used cards for the same job: a layer split's first alternative (configs.fewer_cards), a used card
before a change of method (configs.feasibility)."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.answers import cross_field_problems
from pth_top.configs.recommend import recommend
from tests.configs.builders import REKA_FLASH_3_Q4_32K, answers

TODAY = dt.date(2026, 1, 2)


def test_the_first_alternatives_layer_split_names_no_larger_card_that_is_not_a_quarter_faster(catalog):
    # Audit R: NVIDIA Nemotron-3-Nano-30B-A3B (config.json: 52 layers, 46 of them Mamba-2 or MoE, 6 attention; hidden
    # 2688; 32 heads of 128, 2 KV heads; 128 experts, 6 a token, MoE width 1856; V 131,072; 31.6B, 3.55B read a token)
    # in llama.cpp Q8_0 at 64k on 2 used cards for $2,500: no build holds Q8_0; the first way out, int4 on 2 x RTX 5070
    # (~116 tokens/s) kept the two cards where one used RTX 3090 decodes ~150 for $1,895. With used RTX 3080 Tis at
    # $453 (GPU Poet, October 2026), two of them (912 GB/s each) decode ~146 for $1,712: no faster card to name.
    nano = answers(workload__preset="custom", workload__parameters=31_600_000_000,
                   workload__active_parameters=3_550_000_000, workload__experts_count=128,
                   workload__experts_per_token=6, workload__layers=52, workload__linear_attention_layers=46,
                   workload__hidden_size=2688, workload__attention_heads=32, workload__kv_heads=2,
                   workload__head_dim=128, workload__intermediate_size=1856, workload__vocabulary_size=131_072,
                   workload__sequence_length=65_536, workload__batch_size=1, task__mode="inference",
                   task__precision="int8", task__quantization="gguf_q8_0", task__serving_engine="llama_cpp",
                   task__generated_tokens=1024, scale__gpu_count=2, budget__currency="USD", budget__amount=2500.0,
                   budget__condition="used")
    build = recommend(nano, catalog, today=TODAY)
    assert not build.feasible and build.feasible_alternatives[0].startswith("int4 weights"), build.feasible_alternatives
    _, first, _ = build.applicable_alternatives[0]
    assert first.scale.gpu_count == 2 and "2 x NVIDIA GeForce RTX 3080 Ti" in build.feasible_alternatives[0]
    assert not [line for line in build.warnings if line.startswith("faster within budget: 1 x ")], build.warnings
    one = recommend(first.with_value("scale", "gpu_count", 1), catalog, today=TODAY)
    two = recommend(first, catalog, today=TODAY)
    assert one.feasible and one.speed.figures["decode_tokens_per_s_per_stream"] < 1.25 * two.speed.figures[
        "decode_tokens_per_s_per_stream"]


def test_a_used_card_that_keeps_the_job_comes_before_a_change_of_method(catalog):
    # Audit T: Qwen2-VL-7B-Instruct LoRA (r8, all linear layers) with ms-swift's grounding example (bf16, the 675M ViT
    # frozen on the GPU, 2,048 tokens, checkpointing): 20 GiB on one GPU (modelscope/ms-swift
    # examples/train/multimodal/grounding.sh). For a new card and CNY 12,000 the first way out was QLoRA; a used RTX
    # 3090 build keeps LoRA within the budget and was never offered, as other ways out had been found.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=7_615_616_512,
                  workload__layers=28, workload__hidden_size=3584, workload__attention_heads=28, workload__kv_heads=4,
                  workload__intermediate_size=18944, workload__gated_mlp=True, workload__vocabulary_size=152_064,
                  workload__sequence_length=2048, workload__batch_size=16, workload__frozen_parameters=675_000_000,
                  task__method="lora", task__lora_rank=8, task__lora_targets="all_linear", task__recompute="full",
                  task__accumulation_steps=16, data__kind="mixed", data__dataset_size_gb=10.0,
                  budget__amount=12000.0)
    build = recommend(job, catalog, today=TODAY)
    assert not build.feasible and 19 * 2**30 < build.memory.total_bytes < 22 * 2**30
    line, used, _ = build.applicable_alternatives[0]
    assert line.startswith("a used GPU") and used.task.method == "lora" and used.budget.condition == "used", line
    assert recommend(used, catalog, today=TODAY).feasible
    # Sized as its language model, and said so: a trained vision encoder's activations are not counted (audit T).
    assert any(line.startswith("estimate: a vision-language model") for line in build.warnings), build.warnings
    text_only = recommend(job.with_value("data", "kind", "text"), catalog, today=TODAY)
    assert not any(line.startswith("estimate: a vision-language model") for line in text_only.warnings)


def test_a_training_lever_is_tried_on_fewer_gpus_where_the_machine_asked_is_over_budget(catalog):
    # Audit ZL22: Platypus2-70B (arXiv:2308.07317: LoRA of Llama 2 70B on 4 x A100 80GB) on 4 used GPUs for EUR 5,000:
    # the 4-GPU platform alone broke the budget, and the ways out were a 13B model or renting; one machine within it
    # trains the 70B with a 4-bit base (Answer.AI's FSDP-QLoRA: a 70B on two 24 GB cards).
    platypus = answers(workload__preset="llama-70b", workload__sequence_length=4096, workload__batch_size=16,
                       task__method="lora", task__lora_rank=16, task__lora_targets="all_linear",
                       task__recompute="full", task__flash_attention=True, task__accumulation_steps=4,
                       data__dataset_size_gb=0.03, scale__gpu_count=4, scale__sharding="zero3",
                       budget__currency="EUR", budget__amount=5000.0, budget__condition="used")
    build = recommend(platypus, catalog, today=TODAY)
    assert not build.feasible
    line, changed, _ = build.applicable_alternatives[0]
    assert line.startswith("QLoRA instead of LoRA") and "of the 4 GPUs asked" in line, build.feasible_alternatives
    assert changed.workload.preset == "llama-70b" and changed.scale.gpu_count < 4
    assert recommend(changed, catalog, today=TODAY).feasible


def test_a_used_card_that_runs_the_job_unchanged_comes_before_the_offloads_it_outpaces(catalog):
    # Audit ZR24: InstructPix2Pix's full fine-tune of SD 1.5's UNet (860M; diffusers' train_instruct_pix2pix.py, 256 px,
    # fp16 mixed precision, checkpointing; a 24 GB card in the published runs) for CNY 15,000 new: a used RTX 3090
    # keeps the job at ~3x the rate of the CPU offloads that came before it.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=860_000_000,
                  workload__layers=16, workload__hidden_size=1280, workload__attention_heads=8,
                  workload__sequence_length=1101, workload__frozen_parameters=207_000_000,
                  workload__frozen_precision="fp16", workload__forward_gflops_per_sample=200.0,
                  workload__batch_size=16, task__precision="amp_fp16", task__recompute="full",
                  task__accumulation_steps=4, data__kind="images", data__dataset_size_gb=1.0,
                  data__images_count=1000, budget__amount=15_000.0)
    lines = recommend(job, catalog, today=TODAY).feasible_alternatives
    used = next(index for index, line in enumerate(lines) if line.startswith("a used GPU"))
    offloads = [index for index, line in enumerate(lines) if "offload" in line.split(":")[0].lower()]
    assert offloads and used < min(offloads), lines


def test_a_training_job_on_fewer_gpus_that_trains_twice_as_fast_leads_the_ways_out_on_the_count_asked(catalog):
    # Audit BZ57: Firefly-LLaMA2-13B's QLoRA continued pretraining (yangjianxin1/Firefly-LLaMA2-Chinese: Llama-2-13B,
    # vocabulary 55,296 with its embeddings trained, 1,024 tokens, micro-batch 6 x accumulation 2 on at most 4 V100s,
    # ~2B tokens) for CNY 40,000 used on 4 GPUs led with 4 x RTX 3060 under FSDP CPU offload, ~585 tokens/s and ~39.5
    # days, where two 24 GB cards train it ~2.7x as fast within the same budget.
    firefly = answers(workload__preset="custom", workload__kind="transformer", workload__layers=40,
                      workload__hidden_size=5120, workload__attention_heads=40, workload__kv_heads=40,
                      workload__intermediate_size=13824, workload__gated_mlp=True, workload__vocabulary_size=55296,
                      workload__sequence_length=1024, workload__batch_size=48, task__precision="amp_fp16",
                      task__recompute="full", task__flash_attention=False, task__accumulation_steps=2,
                      task__method="qlora", task__lora_rank=64, task__lora_targets="all_linear",
                      task__lora_trains_embeddings=True, data__tokens_count=2_000_000_000, scale__gpu_count=4,
                      budget__currency="CNY", budget__amount=40_000.0, budget__condition="used")
    build = recommend(firefly, catalog, today=TODAY)
    assert not build.feasible
    (line, fewer, _), *others = build.applicable_alternatives
    assert fewer.scale.gpu_count == 2 and fewer.task.method == "qlora", build.feasible_alternatives
    assert fewer.workload == firefly.workload and "TIGHT" not in line, line  # the job kept, with the margin
    on_four = [recommend(changed, catalog, today=TODAY) for _, changed, _ in others if changed.scale.gpu_count == 4]
    faster = recommend(fewer, catalog, today=TODAY)
    assert faster.feasible and faster.total_price_cny <= 40_000, faster.blockers
    rate = faster.speed.figures["training_tokens_per_s"]
    assert on_four and all(rate >= 2 * other.speed.figures["training_tokens_per_s"] for other in on_four)


def test_an_inference_job_on_fewer_cards_than_asked_takes_a_q4_0_cache_before_a_cpu_only_pc(catalog):
    # Audit BY57: Reka Flash 3 in Q4_K_M at 32k on 2 used GPUs for EUR 1,200 was sent to a CPU-only PC at ~4.4
    # tokens/s; one used 16 GB card holds it with a q4_0 KV cache.
    reka = answers(**{**REKA_FLASH_3_Q4_32K, "scale__gpu_count": 2})
    build = recommend(reka, catalog, today=TODAY)
    assert not build.feasible
    line, changed, _ = build.applicable_alternatives[0]
    assert changed.scale.gpu_count == 1 and changed.task.kv_cache_dtype == "q4_0", build.feasible_alternatives
    one = recommend(changed, catalog, today=TODAY)
    assert one.feasible and one.component("gpu") is not None, one.blockers
    assert one.speed.figures["decode_tokens_per_s_per_stream"] >= 15


def test_fewer_gpus_never_lead_with_a_smaller_model_or_a_sequence_split_they_cannot_take(catalog):
    # Review r73: Llama-13B's LoRA on 4 used GPUs for CNY 40,000 led with "a smaller model of the same family ... on 2
    # of the 4 GPUs"; a sequence split over 4 GPUs was offered on 2, which the answers refuse.
    lora = answers(workload__preset="llama-13b", workload__sequence_length=2048, workload__batch_size=32,
                   task__precision="bf16", task__method="lora", task__accumulation_steps=4, task__recompute="full",
                   data__tokens_count=500_000_000, scale__gpu_count=4, budget__amount=40000.0,
                   budget__condition="used")
    split = answers(workload__preset="llama3-8b", workload__sequence_length=32768, workload__batch_size=4,
                    task__precision="bf16", task__method="lora", task__recompute="full", task__sequence_parallel=True,
                    task__sequence_parallel_gpus=4, data__tokens_count=200_000_000, scale__gpu_count=4,
                    scale__sharding="fsdp", budget__amount=40000.0, budget__condition="used")
    for job in (lora, split):
        build = recommend(job, catalog, today=TODAY)
        _, first, _ = build.applicable_alternatives[0]
        assert first.workload == job.workload and not cross_field_problems(first), build.feasible_alternatives[0]


def test_a_tight_used_card_leads_a_roomy_way_out_only_at_twice_its_rate(catalog):
    # Audit CL61: Florence-2-large (0.77B, an encoder-decoder) fully fine-tuned at 8 a batch for EUR 1,500 led with a
    # used RTX A4000 at 15.2 of 15.2 GiB, ~1.6x the rate of an 8-bit optimizer's 10.9 GiB on a new 16 GB card.
    florence = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=770_000_000,
                       workload__layers=24, workload__decoder_layers=12, workload__hidden_size=1024,
                       workload__attention_heads=16, workload__intermediate_size=4096,
                       workload__vocabulary_size=51289, workload__sequence_length=640,
                       workload__decoder_sequence_length=128, workload__batch_size=8, task__precision="bf16",
                       data__dataset_size_gb=2.0, data__kind="mixed", budget__currency="EUR", budget__amount=1500.0)
    lines = recommend(florence, catalog, today=TODAY).feasible_alternatives
    used = next(index for index, line in enumerate(lines) if line.startswith("a used GPU"))
    assert "TIGHT" in lines[used] and not lines[0].startswith("a used GPU"), lines[:2]
    assert "TIGHT" not in lines[0] and lines[0].startswith("an 8-bit optimizer"), lines[0]

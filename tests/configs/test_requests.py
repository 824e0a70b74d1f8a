"""Requests people make (issue 12, "Done when"): each build is one an ML engineer would sign.

Signable: within budget, breaking none of its own rules (no blockers), and the memory the build is sized
for within 15 % of a published figure, named with its source beside each case.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from pth_top.configs.answer_types import Budget, Data, Scale, Task, Workload
from pth_top.configs.answers import Answers, cross_field_problems
from pth_top.configs.build import Build
from pth_top.configs.recommend import recommend
from pth_top.configs.rules import host_model_gib, load_rules, storage_capacity_gb
from pth_top.units import GIB
from tests.configs.builders import GLM45_AIR, answers, custom

TODAY = dt.date(2026, 11, 1)
TOLERANCE = 0.15
GB = 1e9

# Parameter counts as the model cards / papers publish them.
LLAMA2_7B_PARAMETERS = 13.48 * GB / 2  # huggingface.co/meta-llama/Llama-2-7b-hf: 9.98 + 3.50 GB of fp16 safetensors
LLAMA2_13B_PARAMETERS = 13.0e9  # Touvron et al. 2023, "Llama 2", arXiv:2307.09288, Table 1: 13B
VIT_BASE_PARAMETERS = 86e6  # Dosovitskiy et al. 2020, arXiv:2010.11929, Table 1: ViT-Base 86M
# ZeRO (Rajbhandari et al. 2019, arXiv:1910.02054) §3: mixed-precision Adam holds 2 + 2 + K bytes per parameter, K = 12.
ADAM_MIXED_BYTES_PER_PARAMETER = 2 + 2 + 12
# QLoRA (Dettmers et al. 2023, arXiv:2305.14314) §3: NF4 weights (4 bits) + double-quantized constants 0.127 bits.
QLORA_BITS_PER_PARAMETER = 4 + 0.127
# huggingface.co/meta-llama/Llama-2-13b-hf "Files and versions": 26.0 GB of fp16 safetensors.
LLAMA2_13B_FP16_FILE_BYTES = 26.0 * GB
# 4-bit files carry 4.5 bits per parameter with their block scales (TheBloke/Llama-2-70B-GGML README: Q4_K
# "ends up using 4.5 bpw"; q4_0 is 18 bytes per 32 weights).
Q4_BITS_PER_PARAMETER = 4.5
# vLLM (Kwon et al. 2023, arXiv:2309.06180) §3: a 13B model of 40 layers x 5120 hidden (OPT-13B; Llama 2 13B has the
# same 40 x 5120) holds 800 KB of fp16 KV cache per token.
KV_BYTES_PER_TOKEN_13B = 800e3


def within(estimate: float, published: float) -> bool:
    return abs(estimate - published) <= TOLERANCE * published


def states_bytes(build: Build) -> int:
    memory = build.memory
    return memory.weights_bytes + memory.gradients_bytes + memory.optimizer_states_bytes


def assert_signable(build: Build, budget_cny: float) -> None:
    assert build.feasible, build.blockers
    assert build.total_price_cny <= budget_cny
    assert build.memory_fits
    assert not any("no " in warning and "in the catalog meets" in warning for warning in build.warnings)


def test_13b_qlora_at_20000(catalog):
    answers = Answers(workload=Workload(preset="llama-13b", batch_size=1),
                      task=Task(method="qlora", recompute="full"), budget=Budget(amount=20000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 20000)
    assert within(build.memory.weights_bytes, LLAMA2_13B_PARAMETERS * QLORA_BITS_PER_PARAMETER / 8)


def test_13b_lora_at_20000_leads_with_qlora_when_the_bf16_base_does_not_fit(catalog):
    # A bf16 13B base is 26 GB: no card buyable new in China holds it within ¥20,000, so the review says so
    # and leads with QLoRA, which does fit.
    answers = Answers(workload=Workload(preset="llama-13b", batch_size=1),
                      task=Task(method="lora", recompute="full"), budget=Budget(amount=20000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert within(build.memory.weights_bytes, LLAMA2_13B_FP16_FILE_BYTES)
    assert not build.feasible and build.blockers[0].startswith("not feasible within ¥20,000")
    assert build.total_price_cny <= 20000
    assert build.feasible_alternatives[0].startswith("QLoRA") and "within ¥20,000" in build.feasible_alternatives[0]


def test_4_gpu_server_for_7b_full_fine_tune_at_300000(catalog):
    answers = Answers(scenario="team_training", workload=Workload(preset="llama-7b", batch_size=16),
                      task=Task(recompute="full"), data=Data(dataset_size_gb=200.0),
                      scale=Scale(gpu_count=4, sharding="zero3"), budget=Budget(amount=300000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 300000)
    assert build.component("gpu").quantity == 4
    # ZeRO-3 over 4 GPUs: (2 + 2 + K) x params / 4 per GPU, and the optimizer step's fp32 sub-group of 1e9 gradients.
    assert within(states_bytes(build), ADAM_MIXED_BYTES_PER_PARAMETER * LLAMA2_7B_PARAMETERS / 4 + 4e9)


def test_13b_int4_inference_box_at_15000(catalog):
    answers = Answers(scenario="inference_server", workload=Workload(preset="llama-13b", batch_size=1),
                      task=Task(mode="inference", precision="int4"), budget=Budget(amount=15000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 15000)
    # Real 4-bit Llama 2 13B files: q4_0 7.32 GB, q4_K_M 7.87 GB (huggingface.co/localmodels/Llama-2-13B-ggml,
    # "Provided files"); GPTQ 4-bit g128 7.26 GB (huggingface.co/TheBloke/Llama-2-13B-GPTQ, branch main).
    assert all(within(build.memory.weights_bytes, size_gb * GB) for size_gb in (7.32, 7.87, 7.26))
    assert within(build.memory.kv_cache_bytes, KV_BYTES_PER_TOKEN_13B * 4096)  # the model's 4096-token context
    # Inference sizing (issue 12 item 5): RAM stages int4 weights, storage holds weights, not training checkpoints.
    ram = build.component("memory_kit")
    assert ram.quantity * ram.spec["capacity_gib"] < 64
    assert not any("checkpoints" in line for line in build.component("storage").reasoning)


def test_cpu_only_box_for_a_small_classifier_at_5000(catalog):
    # A gradient-boosted / linear classifier on tabular data: scikit-learn runs on the CPU only
    # (scikit-learn FAQ, "Will you add GPU support?": https://scikit-learn.org/stable/faq.html).
    # A 3 GB table held ~3x in RAM (data frame and DMatrix) + the OS fits 16 GB; a 5 GB one asks for 32 GB, which
    # 2026 RAM prices put just over ¥5,000.
    answers = Answers(workload=Workload(preset="custom", kind="generic", parameters=0, batch_size=256),
                      task=Task(precision="fp32", optimizer="sgd"), data=Data(dataset_size_gb=3.0, kind="tabular"),
                      budget=Budget(amount=5000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 5000)
    assert build.cpu_only and build.memory.cuda_context_bytes == 0
    assert "tabular" in build.reasoning[0]
    five = recommend(dataclasses.replace(answers, data=Data(dataset_size_gb=5.0, kind="tabular")), catalog, today=TODAY)
    ram = five.component("memory_kit")
    assert ram.quantity * ram.spec["capacity_gib"] >= 32


def test_vit_b16_training_box_at_12000(catalog):
    answers = Answers(workload=Workload(preset="vit-b16", batch_size=64),
                      data=Data(dataset_size_gb=150.0, kind="images"), budget=Budget(amount=12000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 12000)
    assert within(states_bytes(build), ADAM_MIXED_BYTES_PER_PARAMETER * VIT_BASE_PARAMETERS)


def test_resnet50_amp_batch_256_box_at_12000_needs_no_more_than_a_16_gb_card(catalog):
    # NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets configs.yml: ResNet-50 batch 256 per GPU with
    # AMP on 16 GB V100/T4 (https://github.com/NVIDIA/DeepLearningExamples).
    answers = Answers(workload=Workload(preset="resnet50", batch_size=256),
                      data=Data(dataset_size_gb=150.0, kind="images"),
                      task=Task(precision="amp_fp16", optimizer="sgd"), budget=Budget(amount=12000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 12000)
    assert build.memory.total_bytes <= 15 * GIB


def test_mistral_7b_bf16_inference_at_25000(catalog):
    # huggingface.co/mistralai/Mistral-7B-v0.1 "Files and versions": 9.94 + 4.54 GB of bf16 safetensors.
    answers = Answers(scenario="inference_server", workload=Workload(preset="mistral-7b", batch_size=1),
                      task=Task(mode="inference", precision="bf16", generated_tokens=512),
                      budget=Budget(amount=25000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 25000)
    assert within(build.memory.weights_bytes, 14.48 * GB)


def test_70b_int4_box_storage_and_ram_are_sized_to_int4_weights():
    # Issue 12 item 5: a 70B int4 box got 4.1 TB of storage (five fp32+Adam checkpoints) and RAM for fp16 weights.
    rules = load_rules()
    parameters = 70_000_000_000
    capacity = storage_capacity_gb(50.0, parameters, rules, mode="inference", precision="int4")
    assert capacity.value <= rules.storage.min_capacity_gb and "int4 weights" in capacity.reason
    assert storage_capacity_gb(50.0, parameters, rules).value > 4000  # full training keeps its checkpoints
    assert host_model_gib(parameters * 0.6, mode="inference") == pytest.approx(parameters * 0.6 / GIB)
    assert host_model_gib(parameters * 0.6, mode="training", host_offload_bytes=GIB) == 1.0


def test_the_weights_are_sized_as_the_engine_stores_them_and_mapped_not_staged_by_llama_cpp(catalog):
    # Llama 4 Scout in llama.cpp's Q4_K_M: the GGUF holds 65.4 GB (60.9 GiB; Unsloth's file), Q6_K parts and 16-bit
    # norms included, where a flat 4.5 bits a parameter counted 56.9 GiB. llama.cpp maps that file ("By default,
    # models are mapped into memory, which allows the system to load only the necessary parts": its --no-mmap
    # option's help), so RAM holds what runs from it, not the file (audit YM2: 32 GB bought for a 19 GB GGUF).
    job = answers(workload__preset="llama4-scout", workload__sequence_length=16384, workload__batch_size=1,
                  task__mode="inference", task__precision="int4", task__serving_engine="llama_cpp",
                  budget__currency="USD", budget__amount=3500.0)
    build = recommend(job, catalog, today=dt.date(2026, 10, 1))
    assert build.memory.weights_bytes / GIB == pytest.approx(60.9, abs=0.3)
    floors = [line for component in build.components for line in component.reasoning if line.startswith("RAM >=")]
    assert floors and "staged in RAM" not in floors[0] and "not the GPUs' memory" in floors[0], floors


def test_7b_lora_at_30000_is_not_an_a100(catalog):
    # Issue 12 item 1: "7B LoRA on ¥30,000" got a ¥105k A100 80GB build. The bf16 base is the
    # 13.48 GB of huggingface.co/meta-llama/Llama-2-7b-hf's fp16 safetensors.
    answers = Answers(workload=Workload(preset="llama-7b", batch_size=8),
                      task=Task(method="lora", recompute="full", accumulation_steps=8), budget=Budget(amount=30000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 30000)
    assert within(build.memory.weights_bytes, LLAMA2_7B_PARAMETERS * 2)


def test_65b_qlora_on_one_48_gb_card(catalog):
    # QLoRA (arXiv:2305.14314), abstract: a 65B model is fine-tuned on a single 48 GB GPU (Guanaco: r 64 on all
    # linear layers, sequence 512). LLaMA 65B: 80 layers, hidden 8192, 64 heads, SwiGLU 22016 (arXiv:2302.13971).
    answers = Answers(workload=Workload(preset="custom", parameters=65_200_000_000, layers=80, hidden_size=8192,
                                        attention_heads=64, sequence_length=512, vocabulary_size=32000,
                                        intermediate_size=22016, gated_mlp=True, batch_size=1),
                      task=Task(method="qlora", lora_rank=64, lora_targets="all_linear", recompute="full"),
                      budget=Budget(amount=90000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 90000)
    assert build.component("gpu").quantity == 1 and build.component("gpu").spec["memory_gib"] <= 48
    assert 24 * GB < build.memory.total_bytes <= 48 * GB


def test_llama3_8b_lora_at_8192_tokens_is_not_sold_on_a_24_gb_card(catalog):
    # Review 12 finding 4: the loss's fp32 logits (3 x 8192 x 128,256 x 4 B = 12.6 GB) were left out, so this fit a
    # 24 GB card. Published: Qwen-7B LoRA (V 151,936) at 8192 tokens peaks at 36.6 GB (github.com/QwenLM/Qwen README).
    answers = Answers(workload=Workload(preset="llama3-8b", batch_size=8),
                      task=Task(method="lora", recompute="full", accumulation_steps=8),
                      data=Data(dataset_size_gb=2.0), budget=Budget(amount=25000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert build.memory.total_bytes > 24 * GIB
    assert not build.feasible or build.component("gpu").spec["memory_gib"] > 24


def test_70b_int4_inference_box_on_two_24_gb_cards(catalog):
    # Issue 12 item 5: this box got 4.1 TB of storage (five fp32+Adam checkpoints) and RAM for fp16 weights.
    # Llama 2 70B: 70B parameters (arXiv:2307.09288, Table 1) at the 4-bit files' 4.5 bits per parameter.
    answers = Answers(scenario="inference_server", workload=Workload(preset="llama-70b", batch_size=1),
                      task=Task(mode="inference", precision="int4"), scale=Scale(gpu_count=2),
                      budget=Budget(amount=80000.0))
    build = recommend(answers, catalog, today=TODAY)
    assert_signable(build, 80000)
    assert within(build.memory.weights_bytes * 2, 70e9 * Q4_BITS_PER_PARAMETER / 8)  # both GPUs' shares
    storage = build.component("storage")
    assert storage.quantity * storage.spec["capacity_gb"] <= 2000
    ram = build.component("memory_kit")
    assert ram.quantity * ram.spec["capacity_gib"] < 70e9 * 2 / GIB  # fp16 staging would need 130 GiB


@pytest.mark.parametrize("engine", ["vllm", "llama_cpp"])
def test_a_server_engine_streams_the_checkpoint_so_ram_need_not_hold_the_model(catalog, engine):
    # vLLM and SGLang read a checkpoint a safetensors shard at a time (vLLM issue 759): the RAM floor has no "weights
    # staged" term for them (a 671B FP8 model's 625 GiB is more than an 8-slot server board holds); llama.cpp maps
    # its file and, with every layer on the GPUs, reads it through; a server keeps RAM >= the GPUs' memory.
    job = answers("inference_server", workload__preset="llama-70b", task__mode="inference", task__precision="bf16",
                  task__serving_engine=engine, workload__batch_size=4, workload__sequence_length=8192,
                  scale__gpu_count=2, budget__currency="USD", budget__amount=30000.0)
    build = recommend(job, catalog, today=dt.date(2026, 10, 1))
    floors = [line for component in build.components for line in component.reasoning if line.startswith("RAM >=")]
    assert floors and "staged in RAM" not in floors[0] and "total GPU memory" in floors[0], floors
    assert host_model_gib(2e9, mode="inference", streams_shards=True) == 0.0


def test_a_context_beyond_the_models_native_one_is_sized_as_asked_with_yarn_and_said_past_it(catalog):
    # Qwen3-30B-A3B: 32,768 native, 131,072 with YaRN (its model card). At 114,688 tokens the job needs ~27 GiB, which
    # the silent clamp to 32,768 sized as an RTX 4090's.
    job = answers("inference_server", workload__preset="qwen3-30b-a3b", workload__sequence_length=114_688,
                  task__mode="inference", task__precision="int4", task__quantization="awq_g128",
                  task__serving_engine="vllm", task__generated_tokens=1024, budget__currency="USD",
                  budget__amount=3000.0)
    build = recommend(job, catalog, today=dt.date(2026, 10, 1))
    assert build.memory.total_bytes > 26 * GIB
    assert any("YaRN RoPE scaling" in line and "131,072" in line for line in build.warnings), build.warnings
    # Past 131,072 it is sized at 131,072 and says so (a saved build file asking more still loads).
    too_long = recommend(job.with_value("workload", "sequence_length", 200_000), catalog, today=dt.date(2026, 10, 1))
    assert not cross_field_problems(too_long.answers)
    # It is the build's first warning: the job sized is not the one asked (audit AD40: an 80k context extension of
    # Llama-3-8B said so last, under a build for 8k).
    assert too_long.warnings[0].startswith("200,000 tokens is beyond Qwen3-30B-A3B") \
        and "sized at 131,072" in too_long.warnings[0], too_long.warnings


def test_a_sequence_past_a_presets_context_is_the_first_warning_of_a_training_build(catalog):
    # Audit AD40: Llama-3-8B's QLoRA context extension to 80k on 8 GPUs was sized at its 8k and said so after the
    # build's other warnings.
    job = answers("team_training", workload__preset="llama3-8b", workload__sequence_length=81920,
                  workload__batch_size=8, task__training_stack="liger", task__method="qlora", task__lora_rank=32,
                  task__recompute="full", data__tokens_count=500_000_000, scale__gpu_count=8,
                  budget__amount=600000.0, budget__currency="USD")
    build = recommend(job, catalog, today=dt.date(2026, 12, 7))
    assert len(build.warnings) > 1 and build.warnings[0].startswith("81,920 tokens is beyond"), build.warnings


def test_a_pc_for_inference_is_not_held_to_ram_as_large_as_its_gpus(catalog):
    # Audit YM2: EXAONE-3.5-32B (LGAI-EXAONE config.json: 64 layers of 5120, 40 heads, 8 KV heads, SwiGLU 27392,
    # V 102,400) in Q4_K_M at 8k for EUR 1,500, used: a used RTX 3090 holds it, but RAM >= its 24 GB and the 19 GB
    # file staged in RAM priced the build over budget and sent the student to 3-bit weights (EUR 1,528 with a case
    # and 16 GB: budget.amount 1,550 here). llama.cpp maps the file;
    # a server and training keep the rule (pinned buffers, checkpoints, an engine's swap space).
    job = answers(**custom(32_003_200_000, 64, 5120, 40, 8, 102_400, 27392), workload__sequence_length=8192,
                  workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__quantization="gguf_q4_k_m", task__serving_engine="llama_cpp",
                  task__generated_tokens=1024, budget__amount=1550.0, budget__currency="EUR",
                  budget__condition="used")
    build = recommend(job, catalog, today=dt.date(2026, 11, 1))
    assert build.feasible and build.component("gpu").part_id == "rtx-3090-24gb", build.blockers
    ram = build.component("memory_kit")
    assert ram.quantity * ram.spec["capacity_gib"] == 16
    server = recommend(dataclasses.replace(job, scenario="inference_server").with_value("budget", "amount", 3000.0),
                       catalog, today=dt.date(2026, 11, 1))
    kit = server.component("memory_kit")
    assert kit.quantity * kit.spec["capacity_gib"] >= server.component("gpu").spec["memory_gib"]


def test_generate_over_two_cards_loads_a_shard_at_a_time_not_the_whole_model(catalog):
    # Audit AI42: MOSS-16B in fp16 under generate() on two owned RTX 3090s ("runs on two 3090s in FP16") was priced
    # 64 GB of RAM for its 31 GiB staged whole, CNY 762 over the CNY 6,000 for the rest; accelerate's device map loads
    # a checkpoint shard at a time. On one card generate() (.to("cuda")) still stages the model whole.
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=16_700_000_000,
                  workload__layers=34, workload__hidden_size=6144, workload__attention_heads=24,
                  workload__vocabulary_size=107_008, workload__sequence_length=2048, workload__batch_size=1,
                  task__mode="inference", task__precision="fp16", task__serving_engine="hf_generate",
                  task__generated_tokens=512, scale__gpu_count=2, budget__amount=6000.0, budget__currency="CNY",
                  budget__owned_gpu="rtx-3090-24gb", budget__owned_gpu_count=2)
    build = recommend(job, catalog, today=dt.date(2026, 12, 7))
    assert build.feasible, build.blockers
    ram = build.component("memory_kit")
    assert ram.quantity * ram.spec["capacity_gib"] < 31, ram
    seven = job.with_value("workload", "parameters", 7_000_000_000).with_value("workload", "layers", 32) \
        .with_value("workload", "hidden_size", 4096).with_value("workload", "attention_heads", 32)
    one = recommend(seven.with_value("scale", "gpu_count", 1).with_value("budget", "owned_gpu_count", 1), catalog,
                    today=dt.date(2026, 12, 7))
    kit = one.component("memory_kit")
    assert kit.quantity * kit.spec["capacity_gib"] >= 14 * 1e9 / GIB, kit


def test_llama_cpp_with_its_experts_in_ram_holds_the_experts_there_not_the_whole_file(catalog):
    # Review AF: GLM-4.5-Air Q4 with --cpu-moe on a used RTX 3090 staged the whole 59.3 GiB GGUF in RAM beside the
    # line that says llama.cpp maps its file; RAM holds the experts it runs there.
    job = answers(**GLM45_AIR, workload__experts_count=128, workload__experts_per_token=8,
                  workload__sequence_length=8192, workload__batch_size=1, task__mode="inference",
                  task__precision="int4", task__serving_engine="llama_cpp", task__expert_offload=True,
                  budget__currency="EUR", budget__amount=3000.0, budget__condition="used")
    build = recommend(job, catalog, today=dt.date(2026, 11, 1))
    floors = [line for component in build.components for line in component.reasoning if line.startswith("RAM >=")]
    assert floors and "the experts llama.cpp runs from RAM (--cpu-moe)" in floors[0], floors
    staged = float(floors[0].split("(--cpu-moe) ")[1].split(" GiB")[0])
    # At most every routed expert (the estimate before the card keeps some of them), under the whole file's.
    assert build.memory.host_offload_bytes <= staged * GIB < 0.97 * (build.memory.weights_bytes
                                                                     + build.memory.host_offload_bytes)

"""Issue 23 §1: every estimate names the stack it assumes, and the stack is a lever (loss, serving engine, overheads).

Published figures: tests/configs/published_stacks.py (Unsloth's context table, a vLLM start-up log).
"""

from __future__ import annotations

import datetime as dt

import pytest

from pth_top.configs import speed as sp
from pth_top.configs import speed_build, stacks
from pth_top.configs.answer_types import Workload
from pth_top.configs.levers import recompute_only
from pth_top.configs.memory import estimate_memory, estimate_training, loss_logits_bytes
from pth_top.configs.memory_terms import CUDA_CONTEXT_BYTES
from pth_top.configs.presets import ignored_answer_warnings, model_shape
from pth_top.configs.recommend import recommend
from pth_top.configs.rules import gpu_usable_bytes, load_rules
from pth_top.units import GIB, MIB
from tests.configs.builders import QWEN25_3B, QWEN25_32B, REKA_FLASH_3_Q4_32K, answers
from tests.configs.published_figures import relative_error
from tests.configs.published_stacks import CASES

TODAY = dt.date(2026, 11, 1)
GB = 1e9
LLAMA3_8B = model_shape(Workload(preset="llama3-8b"))[0]
# Llama 3.1 8B / Llama 3 70B as custom transformers (their config.json: 8B 32 x 4096, 8 KV heads, SwiGLU 14336;
# 70B 80 x 8192, 64 heads, 8 KV heads, SwiGLU 28672; V 128,256), so the context is not the preset's 8K.
LLAMA31_8B = dict(workload__preset="custom", workload__parameters=8_030_261_248, workload__layers=32,
                  workload__hidden_size=4096, workload__attention_heads=32, workload__kv_heads=8,
                  workload__vocabulary_size=128256, workload__intermediate_size=14336, workload__gated_mlp=True)
LLAMA3_70B = dict(workload__preset="custom", workload__parameters=70_553_706_496, workload__layers=80,
                  workload__hidden_size=8192, workload__attention_heads=64, workload__kv_heads=8,
                  workload__vocabulary_size=128256, workload__intermediate_size=28672, workload__gated_mlp=True)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_stack_dependent_published_figures_within_15_percent(case):
    error = relative_error(case)
    assert abs(error) <= 0.15, f"{case.id}: {case.estimate():.4g} vs {case.published:.4g} ({error:+.1%}, {case.source})"


def test_each_estimate_names_the_stack_it_assumes(catalog):
    trained = recommend(answers(workload__preset="llama3-8b", workload__batch_size=1, task__method="qlora",
                                task__recompute="full"), catalog, today=TODAY)
    assert any(line.startswith("stack: Hugging Face Trainer") for line in trained.reasoning)
    liger = answers(workload__preset="llama3-8b", task__training_stack="liger")
    assert estimate_memory(liger, LLAMA3_8B).formula[0].startswith("stack: Liger-Kernel")
    served = answers("inference_server", workload__preset="llama3-8b", task__mode="inference")
    edge = answers("edge_deployment", workload__preset="llama3-8b", task__mode="inference", task__precision="int4")
    assert estimate_memory(served, LLAMA3_8B).formula[0].startswith("engine: vLLM")
    assert estimate_memory(edge, LLAMA3_8B).formula[0].startswith("engine: llama.cpp")


def test_chunked_loss_lets_llama3_8b_qlora_at_8192_tokens_fit_a_16_gb_card(catalog):
    # Eager cross-entropy holds 3 fp32 copies of 8192 x 128,256 logits (12.6 GB); torchtune's chunked loss keeps one
    # copy, Liger's fused linear cross-entropy none (it takes BT x H / V rows at a time).
    usable_16 = gpu_usable_bytes(16, "dedicated", load_rules())
    need = {stack: estimate_training(LLAMA3_8B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                                     recompute="full", stack=stack).total_bytes for stack in stacks.TRAINING_STACKS}
    assert need["hf_trainer"] > usable_16 >= need["torchtune"] > need["liger"]
    assert loss_logits_bytes(LLAMA3_8B, 1, "liger") < loss_logits_bytes(LLAMA3_8B, 1) / 50
    build = recommend(answers(workload__preset="llama3-8b", workload__batch_size=1, task__method="qlora",
                              task__recompute="full", budget__amount=9000.0), catalog, today=TODAY)
    card = build.component("gpu")
    assert card.spec["memory_gib"] == 16 and not build.memory_fits
    said = [line for line in build.reasoning if line.startswith("with another training stack")]
    assert said and "torchtune" in said[0] and "Liger" in said[0] and card.name in said[0], build.reasoning


def test_unsloth_moves_the_checkpoints_to_host_ram():
    hf = estimate_training(LLAMA3_8B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                           recompute="full")
    unsloth = estimate_training(LLAMA3_8B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                                recompute="full", stack="unsloth")
    # 2 B x s x h x L of layer inputs (Korthikanti's full-recompute term) go to host RAM.
    assert unsloth.host_offload_bytes == 2 * 8192 * 4096 * 32 and hf.host_offload_bytes == 0
    assert unsloth.activations_bytes < hf.activations_bytes / 5


def test_vllm_serves_llama31_8b_at_35k_tokens_on_one_24_gb_card(catalog):
    # vllm-project/vllm#10517: Llama-3.1-8B-Instruct on one RTX 3090 with max_model_len 35,000 starts ("35k - OK");
    # the prefill runs in chunks, so it is not 35,000 tokens of one layer's activations at once.
    chosen = answers("inference_server", **LLAMA31_8B, workload__sequence_length=35_000, workload__batch_size=1,
                     task__mode="inference", task__generated_tokens=0, budget__condition="used",
                     budget__amount=40000.0)
    build = recommend(chosen, catalog, pins={"gpu": ("rtx-3090-24gb", 1)}, today=TODAY)
    assert build.memory_fits, (build.memory.total_bytes / GIB, build.gpu_usable_per_gpu_bytes / GIB)
    assert not any("GiB per GPU" in line for line in build.blockers), build.blockers
    generate = recommend(chosen.with_value("task", "serving_engine", "hf_generate"), catalog,
                         pins={"gpu": ("rtx-3090-24gb", 1)}, today=TODAY)
    assert not generate.memory_fits  # generate() prefills the whole prompt at once


def test_llama_cpp_4_bit_70b_on_two_24_gb_cards_is_feasible(catalog):
    # A standard home set-up: Llama 3 70B Q4_K_M (42.52 GB, huggingface.co/bartowski/Meta-Llama-3-70B-Instruct-GGUF)
    # split by llama.cpp over two 24 GB cards at the model's 8192-token context.
    chosen = answers(**LLAMA3_70B, workload__sequence_length=8192, workload__batch_size=1, task__mode="inference",
                     task__precision="int4", scale__gpu_count=2, budget__amount=50000.0)
    build = recommend(chosen, catalog, today=TODAY)
    assert build.feasible, build.blockers
    assert build.component("gpu").quantity == 2 and build.component("gpu").spec["memory_gib"] == 24
    assert abs(build.memory.weights_bytes * 2 / (42.52 * GB) - 1) <= 0.15
    assert build.memory.formula[0].startswith("engine: llama.cpp")


def test_per_gpu_overheads_are_counted_once(catalog):
    # vLLM plans to fill gpu_memory_utilization (0.9) of the card, CUDA context included: the rules' 0.95 is not
    # applied on top. The context term is the context only (vLLM logs non_torch_memory 0.15-0.35 GiB).
    assert CUDA_CONTEXT_BYTES <= 512 * MIB
    served = recommend(answers("inference_server", workload__preset="llama3-8b", workload__batch_size=1,
                               task__mode="inference", budget__amount=60000.0), catalog, today=TODAY)
    memory_gib = served.component("gpu").spec["memory_gib"]
    assert served.gpu_usable_per_gpu_bytes == int(memory_gib * GIB * 0.9)
    assert any("90% of each GPU" in line for line in served.reasoning)


def test_the_hf_loss_peaks_at_three_fp32_copies_of_the_logits():
    # transformers' ForCausalLMLoss: logits.float(), a shifted copy, cross_entropy; measured on bf16 logits.
    torch = pytest.importorskip("torch")
    functional = torch.nn.functional
    tokens, vocabulary = 2048, 4000
    hidden = torch.randn(1, tokens, 64, dtype=torch.bfloat16, requires_grad=True)
    head = torch.randn(vocabulary, 64, dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocabulary, (1, tokens))

    def step():
        logits = (hidden @ head.t()).float()
        shifted = logits[..., :-1, :].contiguous()
        loss = functional.cross_entropy(shifted.view(-1, vocabulary), labels[..., 1:].reshape(-1))
        del logits, shifted
        loss.backward()

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as profile:
        step()
    current = peak = 0
    for _, size in sorted((event.start_ns(), event.nbytes()) for event in profile.profiler.kineto_results.events()
                          if event.name() == "[memory]"):
        current += size
        peak = max(peak, current)
    copies = peak / (tokens * vocabulary * 4)
    assert abs(copies - stacks.HF_LOSS_FP32_COPIES) <= 0.5, copies


def test_torchtune_trains_in_bf16_with_no_fp32_master_copy():
    # torchtune docs/source/tutorials/memory_optimizations.rst: "bfloat16 ... uses 2 bytes per model and optimizer
    # parameter"; "we don't support mixed-precision training". Llama 3.2 3B full AdamW: 8 B/param, not 16, so its
    # 54.6 GiB estimate (a 96 GB card at $5,000: a DGX Spark) was 24 GiB high.
    shape = model_shape(Workload(preset="custom", kind="transformer", parameters=3_212_749_824, layers=28,
                                 hidden_size=3072, attention_heads=24, kv_heads=8, intermediate_size=8192,
                                 gated_mlp=True, vocabulary_size=128_256, sequence_length=2048))[0]
    common = dict(precision="bf16", optimizer="adamw", global_batch=32, accumulation_steps=8, recompute="full")
    torchtune = estimate_training(shape, stack="torchtune", **common)
    trainer = estimate_training(shape, stack="hf_trainer", **common)
    states = torchtune.weights_bytes + torchtune.gradients_bytes + torchtune.optimizer_states_bytes
    assert states == pytest.approx(3_212_749_824 * 8, rel=1e-6)
    assert trainer.optimizer_states_bytes == pytest.approx(3_212_749_824 * 12, rel=1e-6)
    assert any("8 B/param" in line for line in torchtune.formula)
    fp32 = estimate_training(shape, stack="torchtune", **{**common, "precision": "fp32"})
    assert fp32.optimizer_states_bytes == pytest.approx(3_212_749_824 * 8, rel=1e-6)  # fp32 stays as it was


def test_fully_sharded_never_needs_more_than_less_sharding_and_counts_what_it_gathers():
    # What ZeRO-3/FSDP hold whole (gathered layers, a reduce bucket) is bounded by the model: GPT-2 small with ZeRO-3
    # on 8 GPUs took 4.1 GiB, more than unsharded (2.9), when DeepSpeed's 1e9 live-parameter cap was counted as held.
    for preset in ("gpt2-small", "llama-7b"):
        shape = model_shape(Workload(preset=preset, sequence_length=1024))[0]
        totals = {sharding: estimate_training(shape, precision="bf16", optimizer="adamw", global_batch=8,
                                              gpu_count=8, sharding=sharding, recompute="full").total_bytes
                  for sharding in ("none", "zero2", "zero3", "fsdp")}
        assert totals["zero3"] <= totals["zero2"] + 0.15 * GIB and totals["zero2"] < totals["none"], (preset, totals)
        states = shape.parameters * 16 / 8  # every state divided by 8
        assert totals["fsdp"] > states  # plus the gathered units and activations


def test_a_mixed_layout_torchtune_overrides_is_said_to_be_unused():
    # torchtune trains bf16 through and through: an answered hf18 layout changed nothing, without a word.
    job = answers(workload__preset="llama3-8b", task__training_stack="torchtune", task__precision="bf16",
                  task__mixed_layout="hf18")
    lines = ignored_answer_warnings(job, model_shape(job.workload)[0])
    assert any(line.startswith("task.mixed_layout (hf18) is not used") for line in lines), lines
    plain = job.with_value("task", "mixed_layout", "megatron16")
    assert not ignored_answer_warnings(plain, model_shape(plain.workload)[0])


def test_unsloth_checkpoints_to_host_ram_without_being_told_to():
    # Unsloth's get_peft_model defaults to use_gradient_checkpointing="unsloth": a 3B 16-bit LoRA at 2,048 tokens,
    # micro-batch 2 (SmolLM3-3B's shape), needs ~8 GB in Unsloth's requirements table (docs.unsloth.ai), where counting
    # no checkpointing gave 23.7 GiB and sent a CNY 6,000 student to a CNY 21,885 RTX 5090 build.
    job = answers(workload__preset="custom", workload__parameters=3_080_000_000, workload__layers=36,
                  workload__hidden_size=2048, workload__attention_heads=16, workload__kv_heads=4,
                  workload__intermediate_size=11008, workload__gated_mlp=True, workload__vocabulary_size=128256,
                  workload__tied_embeddings=True, workload__sequence_length=2048, workload__batch_size=8,
                  task__method="lora", task__lora_targets="all_linear", task__training_stack="unsloth",
                  task__accumulation_steps=4)
    assert job.task.recompute == "none"
    shape = model_shape(job.workload)[0]
    memory = estimate_memory(job, shape)
    assert memory.total_bytes / GB < 9 and memory.host_offload_bytes > 0
    assert memory.total_bytes == estimate_memory(job.with_value("task", "recompute", "full"), shape).total_bytes
    assert any("recompute full" in line for line in memory.formula), memory.formula
    # The default "none" is not warned about; a selective recompute answered is, as it is not what Unsloth does.
    assert not ignored_answer_warnings(job, shape)
    selective = job.with_value("task", "recompute", "selective")
    assert any(line.startswith("task.recompute (selective) is not used") for line in ignored_answer_warnings(
        selective, shape))
    assert recompute_only(job) == job  # no "full recompute" lever for a stack that recomputes already
    # Its speed counts the recomputed forward: 4/3 of the compute of the same job under HF Trainer.
    hf = job.with_value("task", "training_stack", "hf_trainer")
    device = sp.Device("test GPU", 1, 1000.0, 100.0, "dense BF16 tensor", tensor=True)
    step = [speed_build.training(each, shape, device, 31.5).figures["step_s"] for each in (job, hf)]
    assert step[0] > 1.2 * step[1]


def test_a_build_sized_for_the_eager_loss_names_the_far_cheaper_one_a_chunked_loss_needs(catalog):
    # nanochat d20 (561M, 20 x 1280, V 65,536), 8 GPUs x 32 sequences of 2,048 tokens: karpathy/nanochat's README runs
    # it on 8 x H100 80 GB. Three fp32 copies of the logits make it 110 GiB a GPU (an 8 x H200 server, $312,010); a
    # chunked loss, 63 GiB: 8 cards of 96 GB for under a third of the price, and the build says so.
    job = answers("team_training", workload__preset="custom", workload__parameters=561_000_000, workload__layers=20,
                  workload__hidden_size=1280, workload__attention_heads=10, workload__kv_heads=10,
                  workload__intermediate_size=5120, workload__vocabulary_size=65536, workload__sequence_length=2048,
                  workload__batch_size=256, scale__gpu_count=8, budget__currency="USD", budget__amount=350000.0)
    build = recommend(job, catalog, today=TODAY)
    line = next(line for line in build.warnings if line.startswith("cheaper with a chunked or fused loss"))
    liger = recommend(job.with_value("task", "training_stack", "liger"), catalog, today=TODAY)
    assert liger.memory.total_bytes < 80 * GIB < build.memory.total_bytes
    assert liger.total_price_cny < 0.7 * build.total_price_cny and 'training_stack = "liger"' in line
    assert not any(line.startswith("cheaper with a chunked") for line in liger.warnings)


def test_an_fp32_fine_tune_names_the_far_cheaper_build_bf16_needs(catalog):
    # Audit R: PEFT's LoRA (r8 on query_key_value) of bloomz-7b1 (config.json: 30 layers, hidden 4096, 32 heads, GELU
    # MLP 4h, V 250,880 tied; 7.07B) loaded in fp32, batch 8 x 64 tokens: "32GB GPU" on an A100 80GB (huggingface/peft
    # README), a EUR 11,208 48 GB card for EUR 15,000; a bf16 base halves the frozen weights: a 24 GB card.
    job = answers(workload__preset="custom", workload__parameters=7_069_016_064, workload__layers=30,
                  workload__hidden_size=4096, workload__attention_heads=32, workload__kv_heads=32,
                  workload__intermediate_size=16384, workload__gated_mlp=False, workload__vocabulary_size=250_880,
                  workload__tied_embeddings=True, workload__sequence_length=64, workload__batch_size=8,
                  task__precision="fp32", task__method="lora", task__lora_rank=8, task__lora_targets="attention",
                  data__dataset_size_gb=0.01, budget__currency="EUR", budget__amount=15000.0)
    build = recommend(job, catalog, today=TODAY)
    assert 29 * GB < build.memory.total_bytes < 36 * GB  # PEFT's 32 GB, within 10 %
    line = next(line for line in build.warnings if line.startswith("cheaper in bf16 mixed precision"))
    bf16 = recommend(job.with_value("task", "precision", "bf16"), catalog, today=TODAY)
    assert bf16.total_price_cny < 0.7 * build.total_price_cny and 'task.precision = "bf16"' in line
    assert bf16.component("gpu").spec["memory_gib"] <= 24
    assert not any(line.startswith("cheaper in") for line in bf16.warnings)


def test_fsdp_under_the_trainer_holds_whole_gradients_between_syncs_unless_synced_each_micro_batch():
    # LitGPT's Gemma-2B full fine-tune (config_hub gemma-2b/full.yaml: FSDP over 4 A10G, micro-batch 1, global batch
    # 16, so 4 micro-batches a step under Fabric's no_backward_sync): 17.43 GB peak. PyTorch's FSDP.no_sync "will
    # accumulate the full model gradients"; accelerate uses it unless sync_each_batch. Counted with sharded
    # gradients it was 8.3 GiB a GPU, half the published peak, and a 16 GB card looked roomy.
    gemma = answers("team_training", workload__preset="custom", workload__parameters=2_506_172_416,
                    workload__layers=18, workload__hidden_size=2048, workload__attention_heads=8, workload__kv_heads=1,
                    workload__head_dim=256, workload__intermediate_size=16384, workload__gated_mlp=True,
                    workload__vocabulary_size=256_000, workload__tied_embeddings=True, workload__sequence_length=512,
                    workload__batch_size=16, task__accumulation_steps=4, task__recompute="full",
                    task__mixed_layout="bf16_pure", scale__gpu_count=4, scale__sharding="fsdp")
    shape = model_shape(gemma.workload)[0]
    held = estimate_memory(gemma, shape)
    synced = estimate_memory(gemma.with_value("task", "sync_each_batch", True), shape)
    assert held.gradients_bytes == pytest.approx(2_506_172_416 * 2)  # whole, bf16
    assert any("no_sync" in line for line in held.formula), held.formula
    assert held.total_bytes / GIB == pytest.approx(11.6, abs=0.1)  # published 17.43 GB = 16.2 GiB: still -29 %
    # Synced each micro-batch: a quarter of the gradients, and the root unit's (the 256k x 2048 embedding) whole
    # until the embeddings' gradient comes last in backward.
    assert synced.gradients_bytes == pytest.approx(2_506_172_416 * 2 / 4)
    assert synced.total_bytes / GIB == pytest.approx(9.3, abs=0.1)
    assert any("the root unit's 0.977 GiB, whole until" in line for line in synced.formula), synced.formula
    # torchtune's FSDP2 reduce-scatters every micro-batch; one micro-batch a step has nothing to hold.
    assert estimate_memory(gemma.with_value("task", "training_stack", "torchtune"), shape).gradients_bytes \
        == synced.gradients_bytes
    assert estimate_memory(gemma.with_value("task", "accumulation_steps", 1), shape).gradients_bytes \
        == synced.gradients_bytes


def test_sync_each_batch_where_it_changes_nothing_says_so():
    # One GPU, no FSDP, or one micro-batch a step: no no_sync to avoid (review AB: the field was ignored silently).
    shape = model_shape(Workload(preset="llama3-8b"))[0]
    fsdp = answers("team_training", workload__preset="llama3-8b", workload__batch_size=16,
                   task__accumulation_steps=4, task__sync_each_batch=True, scale__gpu_count=4,
                   scale__sharding="fsdp")
    unused = "task.sync_each_batch is not used"
    assert not any(line.startswith(unused) for line in ignored_answer_warnings(fsdp, shape))
    for changed in (fsdp.with_value("scale", "sharding", "zero3"), fsdp.with_value("task", "accumulation_steps", 1),
                    fsdp.with_value("task", "training_stack", "torchtune")):
        assert any(line.startswith(unused) for line in ignored_answer_warnings(changed, shape)), changed


def test_a_prompt_cache_share_outside_a_server_of_several_streams_says_so():
    shape = model_shape(Workload(preset="llama3-8b"))[0]
    server = answers("inference_server", workload__preset="llama3-8b", workload__batch_size=8,
                     task__mode="inference", task__prompt_cache_hit_fraction=0.5)
    unused = "task.prompt_cache_hit_fraction is not used"
    assert not any(line.startswith(unused) for line in ignored_answer_warnings(server, shape))
    for changed in (server.with_value("workload", "batch_size", 1),
                    answers(workload__preset="llama3-8b", task__mode="inference", task__prompt_cache_hit_fraction=0.5)):
        assert any(line.startswith(unused) for line in ignored_answer_warnings(changed, shape)), changed


# ERNIE-4.5-300B-A47B (baidu/ERNIE-4.5-300B-A47B-PT config.json: 54 layers, hidden 8192, 64 heads, 8 KV heads of 128,
# 64 experts with 8 a token, V 103,424) in 4-bit weights for 32 streams of 32k (audit ZI): FastDeploy's best practice
# runs its WINT4 weights on 4 x 80 GB; the 16-bit KV cache of 32 x 32k is 223 GiB more.
ERNIE45_300B = dict(
    workload__preset="custom", workload__kind="transformer", workload__parameters=300_000_000_000,
    workload__active_parameters=47_000_000_000, workload__layers=54, workload__hidden_size=8192,
    workload__attention_heads=64, workload__kv_heads=8, workload__head_dim=128, workload__vocabulary_size=103_424,
    workload__experts_count=64, workload__experts_per_token=8, workload__sequence_length=32768,
    workload__batch_size=32, task__mode="inference", task__precision="int4", task__serving_engine="vllm",
    budget__currency="CNY", budget__amount=1_500_000.0,
)


def test_a_server_that_an_fp8_kv_cache_makes_far_cheaper_is_offered_that_build_beside_the_dearer_one(catalog):
    # A chat server whose earlier turns are cached (90 % of each prompt): on one GPU nothing holds it; tensor parallel
    # alone needs 47 GiB a GPU (8 x H200 for CNY 1.5 million), with an fp8 KV cache 33 GiB (8 x 48 GB cards for about
    # a quarter, ~6 tokens/s a stream under load). A value within 5 % a yuan is no reason to buy only the dearer one.
    job = answers("inference_server", **ERNIE45_300B).with_value("task", "prompt_cache_hit_fraction", 0.9)
    build = recommend(job, catalog, today=TODAY)
    assert build.blockers
    found = {changed.task.kv_cache_dtype: recommend(changed, catalog, today=TODAY)
             for _, changed, _ in build.applicable_alternatives
             if changed.scale.gpu_count == 8 and changed.workload == job.workload}
    assert set(found) == {"auto", "fp8"}, build.feasible_alternatives
    assert not found["fp8"].blockers and found["fp8"].total_price_cny < 0.35 * found["auto"].total_price_cny
    # Answered on 8 GPUs, the build with the 16-bit cache names the one an fp8 cache needs, with both rates.
    eight = recommend(job.with_value("scale", "gpu_count", 8), catalog, today=TODAY)
    line = next(line for line in eight.warnings if line.startswith("cheaper with an fp8 KV cache"))
    fp8 = recommend(job.with_value("scale", "gpu_count", 8).with_value("task", "kv_cache_dtype", "fp8"), catalog,
                    today=TODAY)
    assert fp8.total_price_cny < 0.35 * eight.total_price_cny and 'kv_cache_dtype = "fp8"' in line
    assert line.count("under load") == 2 and not any(line.startswith("cheaper with") for line in fp8.warnings)
    assert fp8.speed.figures["sustained_tokens_per_s_per_stream"] >= 5
    # Review AA: with a fresh 32k prompt a request the 48 GB cards prefill to ~1 token/s a stream under load, the
    # H200s ~5.6: no near tie, and no cheaper line for it.
    fresh = job.with_value("task", "prompt_cache_hit_fraction", 0.0).with_value("scale", "gpu_count", 8)
    assert recommend(fresh.with_value("task", "kv_cache_dtype", "fp8"), catalog,
                     today=TODAY).total_price_cny == eight.total_price_cny
    assert not any(line.startswith("cheaper with") for line in recommend(fresh, catalog, today=TODAY).warnings)


def test_sglang_keeps_back_its_reserve_by_the_cards_size(catalog):
    # Audit ZU: Grok-2 (~270B, 115B active, 8 experts of which 2 a token; 64 x 8192, 8 KV heads, V 131,072) in FP8 on
    # SGLang with --tp 8: xAI's README asks for 8 GPUs "each with > 40GB of memory". 34 GiB a GPU fitted a 40 GB A100 at
    # the rules' 95 %; SGLang's server_args.py (sglang#10975) keeps back 512 MiB + 4,096 x 1.5 + 160 x 2 + 8/8 GiB.
    job = answers("inference_server", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=270_000_000_000, workload__active_parameters=115_000_000_000,
                  workload__experts_count=8, workload__experts_per_token=2, workload__layers=64,
                  workload__hidden_size=8192, workload__attention_heads=64, workload__kv_heads=8,
                  workload__vocabulary_size=131_072, workload__sequence_length=4096, workload__batch_size=8,
                  task__mode="inference", task__precision="int8", task__quantization="fp8",
                  task__serving_engine="sglang", scale__gpu_count=8, budget__currency="USD", budget__amount=150_000.0)
    assert stacks.sglang_reserved_gib(40, 8) == pytest.approx(8000 / 1024)
    assert stacks.sglang_reserved_gib(24, 1) == pytest.approx(3760 / 1024) and stacks.sglang_reserved_gib(80, 1) > 10
    forty = recommend(job, catalog, today=TODAY, pins={"gpu": ("a100-40gb-pcie", 8)})
    assert not forty.memory_fits and forty.gpu_usable_per_gpu_bytes < forty.memory.total_bytes < 38 * GIB
    ninety_six = recommend(job, catalog, today=TODAY, pins={"gpu": ("rtx-pro-6000-blackwell-max-q-96gb", 8)})
    assert ninety_six.memory_fits
    vllm = recommend(job.with_value("task", "serving_engine", "vllm"), catalog, today=TODAY,
                     pins={"gpu": ("a100-40gb-pcie", 8)})  # vLLM's own 0.9 of the card, unchanged
    assert vllm.gpu_usable_per_gpu_bytes == pytest.approx(0.9 * 40 * GIB, rel=0.01)
    # Review AB: a prefill chunk whose activations outgrow the reserve takes them off the pool, never past the card.
    big_chunk = recommend(answers("inference_server", **QWEN25_3B, workload__sequence_length=131_072,
                                  task__mode="inference", task__serving_engine="sglang",
                                  task__prefill_chunk_tokens=131_072), catalog, today=TODAY,
                          pins={"gpu": ("rtx-4090-24gb", 1)})
    assert big_chunk.memory.activations_bytes > 4 * GIB and big_chunk.gpu_usable_per_gpu_bytes <= 24 * GIB


def test_a_vllm_server_names_the_cheaper_build_a_headless_cards_fuller_plan_needs_before_an_fp8_cache(catalog):
    # Audit BY57: Reka Flash 3 (20.9B) in bf16 at 32k on vLLM, one GPU, for $15,000: a 96 GB card at vLLM's 0.9 was
    # told only of an fp8 cache on a 48 GB card, where --gpu-memory-utilization 0.95 holds it there with its 16-bit
    # cache (44.3 of 45.6 GiB) at that price.
    job = answers("inference_server", **{**REKA_FLASH_3_Q4_32K, "task__precision": "bf16", "task__quantization": "",
                                         "task__serving_engine": "vllm", "budget__currency": "USD",
                                         "budget__amount": 15000.0, "budget__condition": "new"})
    build = recommend(job, catalog, today=TODAY)
    line = next(line for line in build.warnings if line.startswith("cheaper with"))
    assert line.startswith("cheaper with vLLM --gpu-memory-utilization 0.95"), line
    fuller = recommend(job.with_value("task", "engine_memory_fraction", 0.95), catalog, today=TODAY)
    assert fuller.feasible and fuller.total_price_cny < 0.7 * build.total_price_cny
    assert fuller.memory.kv_cache_bytes == build.memory.kv_cache_bytes  # the 16-bit cache kept


def test_data_parallel_copies_name_the_far_cheaper_build_zero_3_needs(catalog):
    # Audit YB2: data parallel keeps a whole copy of the model on each GPU; ZeRO-3 (FSDP) divides it. Qwen2.5-32B LoRA
    # (16-bit base) on 4 GPUs: 66.8 GiB a GPU under plain DDP (4 x 96 GB cards), ~22 GiB under ZeRO-3.
    job = answers("team_training", **QWEN25_32B, workload__sequence_length=2048, workload__batch_size=16,
                  task__method="lora", task__recompute="full", task__accumulation_steps=4, scale__gpu_count=4,
                  budget__amount=60_000.0, budget__currency="USD")
    build = recommend(job, catalog, today=TODAY)
    line = next(line for line in build.warnings if line.startswith("cheaper with ZeRO-3 (FSDP)"))
    sharded = recommend(job.with_value("scale", "sharding", "zero3"), catalog, today=TODAY)
    assert sharded.total_price_cny < 0.7 * build.total_price_cny and 'scale.sharding = "zero3"' in line
    assert sharded.memory.total_bytes < 0.5 * build.memory.total_bytes
    assert not any(line.startswith("cheaper with ZeRO-3") for line in sharded.warnings)


def test_fsdp_gradients_held_whole_between_syncs_name_the_far_cheaper_build_synced_ones_need(catalog):
    # Audit YF2: MPT-30B (its config: 48 layers, d 7168, 64 heads, vocabulary 50,432) fully fine-tuned at 8k under FSDP
    # with accumulation x 8 on 8 GPUs. Accelerate's no_sync keeps each GPU's whole gradients between syncs, 55.8 GiB
    # of 118 a GPU, and bought an HGX H200; synced each micro-batch (as torchtune always does) 8 x 96 GB cards do.
    job = answers("team_training", workload__preset="custom", workload__kind="transformer",
                  workload__parameters=29_958_000_000, workload__layers=48, workload__hidden_size=7168,
                  workload__attention_heads=64, workload__kv_heads=64, workload__intermediate_size=28672,
                  workload__vocabulary_size=50432, workload__tied_embeddings=True, workload__sequence_length=8192,
                  workload__batch_size=64, task__method="full", task__recompute="full", task__accumulation_steps=8,
                  scale__gpu_count=8, scale__sharding="fsdp", budget__amount=400_000.0, budget__currency="USD")
    build = recommend(job, catalog, today=TODAY)
    line = next(line for line in build.warnings if line.startswith("cheaper with FSDP's gradients reduce-scattered"))
    synced = recommend(job.with_value("task", "sync_each_batch", True), catalog, today=TODAY)
    assert synced.total_price_cny < 0.7 * build.total_price_cny and "task.sync_each_batch = true" in line
    assert not any(line.startswith("cheaper with FSDP's") for line in synced.warnings)


def test_a_moes_qlora_names_the_far_cheaper_build_its_quantized_experts_need(catalog):
    # Qwen3-30B-A3B (config.json: 48 layers, hidden 2048, 32 heads of 128, 4 KV heads, 128 experts of width 768, 8 a
    # token, V 151,936) QLoRA: under transformers v5 bitsandbytes leaves its 29B routed experts 16-bit, 64 GiB; Unsloth
    # quantizes them, and its Qwen3 guide says the 30B-A3B "fits in 17.5GB VRAM"; Axolotl does with
    # quantize_moe_experts (audit YF15: its GLM-4.7-Flash QLoRA, "1x48GB @ ~24GiB/GPU", was sold a 128 GB DGX Spark).
    job = answers(workload__preset="custom", workload__parameters=30_532_122_624,
                  workload__active_parameters=3_300_000_000, workload__experts_count=128,
                  workload__experts_per_token=8, workload__layers=48, workload__hidden_size=2048,
                  workload__attention_heads=32, workload__kv_heads=4, workload__head_dim=128,
                  workload__intermediate_size=768, workload__vocabulary_size=151_936, workload__sequence_length=2048,
                  workload__batch_size=8, task__method="qlora", task__lora_targets="all_linear",
                  task__optimizer="adam8bit", task__recompute="full", task__accumulation_steps=4,
                  budget__amount=8000.0, budget__currency="USD")
    build = recommend(job, catalog, today=TODAY)
    line = next(line for line in build.warnings if line.startswith("cheaper with the experts quantized too"))
    unsloth = recommend(job.with_value("task", "training_stack", "unsloth"), catalog, today=TODAY)
    assert unsloth.memory.total_bytes < 1.15 * 17.5e9 and build.memory.total_bytes > 2 * 17.5e9
    assert 'training_stack = "unsloth"' in line  # the experts quantized alone need an RTX 5090, dearer than a Spark
    # One rented node holds it with ZeRO-3 over its 8 GPUs (audit YF15: "rent 2 nodes, the fewest that hold it").
    rent = next(line for line in build.warnings if "rent" in line)
    assert rent.startswith("or rent it: 8 x ") and "nodes" not in rent, rent
    assert not any(line.startswith("cheaper with the experts") for line in unsloth.warnings)
    quantized = recommend(job.with_value("task", "quantize_moe_experts", True), catalog, today=TODAY)
    assert quantized.memory.total_bytes < 0.5 * build.memory.total_bytes
    assert not any(line.startswith("cheaper with the experts") for line in quantized.warnings)
    # Where no build holds it within budget, the experts quantized on the same stack come first, then Unsloth (review
    # AD): $3,000, an RTX 4090 build.
    short = recommend(job.with_value("budget", "amount", 3000.0), catalog, today=TODAY)
    ways = short.feasible_alternatives
    assert not short.feasible and ways[0].startswith("the MoE's fused experts quantized") and \
        any(way.startswith("Unsloth") for way in ways), ways

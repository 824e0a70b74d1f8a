"""Training methods (full, LoRA, QLoRA, frozen backbone) and ZeRO-Offload in the estimator and the answers."""

from __future__ import annotations

import msgspec
import pytest

from pth_top.configs.answer_types import Scale, Task, Workload
from pth_top.configs.answers import Answers, answers_from_dict, cross_field_problems
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.levers import answer_changes
from pth_top.configs.memory import estimate_memory, estimate_training
from pth_top.configs.memory_methods import adapted_matrices, lora_dropout_per_token, lora_parameters
from pth_top.configs.presets import model_shape
from pth_top.configs.recommend import _context
from pth_top.configs.rules import load_rules
from pth_top.configs.speed_reads import decode_reads
from pth_top.units import GIB
from tests.configs.builders import answers

LLAMA_7B = model_shape(Workload(preset="llama-7b"))[0]


def memory(**task) -> int:
    answers = Answers(workload=Workload(preset="llama-7b", batch_size=1), task=Task(**task))
    return estimate_memory(answers, LLAMA_7B).total_bytes


def test_lora_adapters_are_rank_times_in_plus_out_per_matrix_per_layer():
    # Llama 2 7B, r 16 on q,k,v,o (4096 -> 4096 each): 16 x 4 x 8192 x 32 layers = 16,777,216.
    attention = adapted_matrices(4096, 4096, 11008, True, "attention")
    assert lora_parameters(attention, 16, 32) == 16_777_216
    # all_linear adds gate, up (4096 -> 11008) and down (11008 -> 4096): 3 x 15104 more per layer and rank.
    every = adapted_matrices(4096, 4096, 11008, True, "all_linear")
    assert lora_parameters(every, 16, 32) == 16 * 32 * (4 * 8192 + 3 * 15104)
    # Grouped-query attention: k and v project to the kv width only (Llama 2 70B: 8 of 64 heads of 8192 = 1024).
    gqa = {m.name: m.d_out for m in adapted_matrices(8192, 1024, 28672, True, "attention")}
    assert gqa == {"q": 8192, "k": 1024, "v": 1024, "o": 8192}
    # Non-gated MLP (GPT-2): up and down only, width 4h when not given.
    gpt2 = adapted_matrices(768, 768, 3072, False, "all_linear")
    assert [m.name for m in gpt2] == ["q", "k", "v", "o", "up", "down"]


def test_each_method_shows_its_terms_and_orders_as_expected():
    full, lora, qlora = memory(method="full"), memory(method="lora"), memory(method="qlora")
    assert qlora < lora < full
    # LoRA keeps the 7B base at 2 B/param, no gradients or optimizer states for it.
    breakdown = estimate_training(LLAMA_7B, precision="bf16", optimizer="adamw", global_batch=1, method="lora",
                                  cuda_context_bytes=0)
    adapters = 16_777_216
    assert breakdown.weights_bytes == LLAMA_7B.parameters * 2 + adapters * 2
    assert breakdown.gradients_bytes == adapters * 2 and breakdown.optimizer_states_bytes == adapters * 12
    assert any(line.startswith("LoRA adapters") for line in breakdown.formula)
    q = estimate_training(LLAMA_7B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                          cuda_context_bytes=0)
    assert any("NF4" in line for line in q.formula) and any("adamw states 8 B" in line for line in q.formula)
    # Audit R: the answered optimizer sets the adapters' states (it was paged 8-bit Adam whatever the answers said).
    assert q.optimizer_states_bytes == adapters * 8 and q.gradients_bytes == adapters * 2
    eight_bit = estimate_training(LLAMA_7B, precision="bf16", optimizer="adam8bit", global_batch=1, method="qlora",
                                  cuda_context_bytes=0)
    assert eight_bit.optimizer_states_bytes == adapters * 2
    # torchtune trains bf16 through, its AdamW states too (review U): 4 B an adapter parameter, not 8.
    torchtune = estimate_training(LLAMA_7B, precision="bf16", optimizer="adamw", global_batch=1, method="qlora",
                                  cuda_context_bytes=0, stack="torchtune")
    assert torchtune.optimizer_states_bytes == adapters * 4
    # 4.127 bits/param for the quantized matrices, embeddings + head (2 x 32000 x 4096) at 2 B.
    embeddings = 2 * 32000 * 4096
    base = (LLAMA_7B.parameters - embeddings) * 4.127 / 8 + embeddings * 2
    assert q.weights_bytes == int(base + adapters * 2)


def test_frozen_backbone_keeps_weights_and_a_head_only():
    resnet = model_shape(Workload(preset="resnet50"))[0]
    full = estimate_training(resnet, precision="fp32", optimizer="sgd", global_batch=64, cuda_context_bytes=0)
    frozen = estimate_training(resnet, precision="fp32", optimizer="sgd", global_batch=64, method="frozen",
                               cuda_context_bytes=0)
    head = (2048 + 1) * 1000
    assert frozen.gradients_bytes == head * 4
    assert frozen.weights_bytes == (resnet.parameters + head) * 4
    assert frozen.activations_bytes < full.activations_bytes / 2


def test_zero_offload_moves_gradients_and_optimizer_states_to_host_ram():
    # DeepSpeed estimate_zero2_model_states_mem_needs(cpu_offload=True): gpu = 2P, cpu = P x max(4N, 16) x 1.5.
    base = dict(precision="bf16", optimizer="adamw", global_batch=1, cuda_context_bytes=0)
    plain = estimate_training(LLAMA_7B, **base)
    offload = estimate_training(LLAMA_7B, sharding="zero_offload", **base)
    assert offload.optimizer_states_bytes == 0 and offload.gradients_bytes == 5e8 * 2  # its backward's bucket alone
    assert offload.weights_bytes == plain.weights_bytes == LLAMA_7B.parameters * 2
    assert offload.host_offload_bytes == int(LLAMA_7B.parameters * 16 * 1.5)
    eight = estimate_training(LLAMA_7B, sharding="zero_offload", gpu_count=8, **base)
    assert eight.host_offload_bytes == int(LLAMA_7B.parameters * 32 * 1.5)
    assert plain.host_offload_bytes == 0
    assert any("ZeRO-Offload" in line for line in offload.formula)
    answers = Answers(workload=Workload(preset="llama-7b", batch_size=1), scale=Scale(sharding="zero_offload"))
    assert estimate_memory(answers, LLAMA_7B).host_offload_bytes > 100 * GIB
    # LoRA offloads only the adapters' states.
    lora = estimate_training(LLAMA_7B, sharding="zero_offload", method="lora", **base)
    assert lora.host_offload_bytes == int(16_777_216 * 16 * 1.5)


def good_answers(**task) -> dict:
    return {
        "scenario": "personal_research", "workload": {"preset": "llama-7b"}, "task": task, "data": {},
        "scale": {}, "budget": {},
    }


def test_old_answers_without_method_keys_load_as_full_training():
    answers = answers_from_dict(good_answers(mode="training"))
    assert (answers.task.method, answers.task.lora_rank, answers.task.lora_targets) == ("full", 16, "attention")
    assert answers.workload.intermediate_size == 0 and not answers.workload.gated_mlp


@pytest.mark.parametrize(("task", "key", "reason"), [
    ({"method": "adapter"}, "task.method", "must be one of"),
    ({"method": "lora", "lora_rank": 0}, "task.lora_rank", "must be at least 1"),
    ({"method": "lora", "lora_targets": "mlp"}, "task.lora_targets", "must be one of"),
    ({"method": "lora", "lora_rank": True}, "task.lora_rank", "must be a whole number"),
])
def test_bad_method_answers_name_the_key(task, key, reason):
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict(good_answers(**task))
    assert caught.value.key == key and reason in str(caught.value)


def test_lora_on_a_cnn_is_refused_with_the_reason():
    data = good_answers(method="qlora")
    data["workload"] = {"preset": "resnet50"}
    with pytest.raises(ConfigFileError) as caught:
        answers_from_dict(data)
    assert caught.value.key == "task.method" and "transformer" in str(caught.value)


def test_answers_round_trip_the_new_keys():
    answers = answers_from_dict(good_answers(method="qlora", lora_rank=64, lora_targets="all_linear"))
    again = answers_from_dict(answers.to_dict())
    assert again.task == answers.task
    assert msgspec.structs.asdict(again.task)["method"] == "qlora"


def test_lora_on_an_int8_base_sits_between_bf16_lora_and_qlora():
    # LLM.int8() (arXiv:2208.07339, abstract): Int8 attention and MLP projections halve their 16-bit memory;
    # one fp32 absmax per row (bitsandbytes row_stats). Llama 2 7B: 32 layers x (3 x 4096 + 4096 + 2 x 11008 +
    # 4096) rows; embedding and LM head 2 x 32000 x 4096 stay 16-bit.
    int8 = estimate_training(LLAMA_7B, precision="bf16", optimizer="adamw", global_batch=1, method="lora_int8")
    lora = estimate_training(LLAMA_7B, precision="bf16", optimizer="adamw", global_batch=1, method="lora")
    vocabulary = 2 * 32000 * 4096
    rows = 32 * (4 * 4096 + 3 * 11008 - 11008 + 4096)
    adapters = lora.weights_bytes - LLAMA_7B.parameters * 2
    assert int8.weights_bytes == int((LLAMA_7B.parameters - vocabulary) * 1 + rows * 4 + vocabulary * 2 + adapters)
    assert memory(method="qlora") < memory(method="lora_int8") < memory(method="lora")
    assert any("LLM.int8(), arXiv:2208.07339" in line for line in int8.formula)


def test_int8_lora_is_an_answer_and_a_feasible_step_before_qlora():
    from pathlib import Path

    from pth_top.configs.levers import answer_changes
    from pth_top.configs.parts import load_catalog
    from pth_top.configs.recommend import _context
    from pth_top.configs.rules import load_rules

    data = {"scenario": "personal_research", "workload": {"preset": "llama-7b"}, "task": {"method": "lora_int8"}}
    assert answers_from_dict(data).task.method == "lora_int8"
    data["workload"]["preset"] = "resnet50"
    with pytest.raises(ConfigFileError, match="lora_int8 adapts a transformer"):
        answers_from_dict(data)
    ctx = _context(Answers(workload=Workload(preset="llama-13b")), load_catalog(Path("/nonexistent-user-catalog")),
                   load_rules(), {})
    labels = [label.split(" (")[0] for label, _ in answer_changes(ctx)]
    # Issue 23: QLoRA, the common recipe, is offered before the int8 base (it was after it).
    assert labels.index("LoRA") < labels.index("QLoRA instead of full training") < labels.index(
        "LoRA on an int8 base"), labels


def test_adapters_are_offered_an_8_bit_optimizer_for_their_states(catalog):
    # Review U: QLoRA's states follow task.optimizer (AdamW: 8 B an adapter parameter), and the 8-bit optimizer was
    # offered to full training only: Llama 2 70B QLoRA, r64 on all linear layers, at 2k tokens on a pinned 48 GB card
    # (46.9 GiB of 45.6 usable) was left FSDP with CPU offload and renting.
    job = answers(workload__preset="llama-70b", workload__sequence_length=2048, workload__batch_size=1,
                  task__method="qlora", task__lora_rank=64, task__lora_targets="all_linear", task__recompute="full",
                  budget__currency="USD", budget__amount=20000.0)
    changes = dict(answer_changes(_context(job, catalog, load_rules(), {"gpu": ("rtx-a6000-48gb", 1)})))
    eight_bit = next(changed for label, changed in changes.items() if label.startswith("an 8-bit optimizer"))
    assert eight_bit.task.optimizer == "adam8bit" and eight_bit.task.method == "qlora"
    shape = model_shape(job.workload)[0]
    adapters = estimate_memory(job, shape).gradients_bytes / 2  # bf16 gradients: 2 B an adapter parameter
    saved = estimate_memory(job, shape).total_bytes - estimate_memory(eight_bit, shape).total_bytes
    assert saved == pytest.approx(6 * adapters, rel=1e-6) and saved > 4 * GIB


def test_lora_dropout_counts_the_inputs_of_the_mlps_own_matrices():
    # Audit ZH: Phi-2's GELU MLP (h 2,560, m 10,240) has fc1 and fc2 behind a dropout each, not SwiGLU's gate, up and
    # down: 12 B for q, k, v and o, 3 for fc1's input h and 3 x m/h for fc2's; a gated MLP's gate and up add 6.
    assert lora_dropout_per_token("all_linear", 2560, 10240, gated_mlp=False) == 12 + 3 + 3 * 4
    assert lora_dropout_per_token("all_linear", 2560, 10240, gated_mlp=True) == 12 + 6 + 3 * 4
    assert lora_dropout_per_token("attention", 2560, 10240, gated_mlp=False) == 12


def test_a_lora_base_held_in_fp32_under_autocast_is_4_bytes_a_parameter():
    # Audits BE50 and BN53: musicgen-dreamboothing loads MusicGen Melody (1.39B) without a torch_dtype and trains its
    # LoRA under --fp16, so the base stays fp32; "this fine-tuning run used 10GB of GPU memory" on an A100, where
    # 4.7 GiB was counted at 2 B a base parameter (7.3 GiB at 4 B).
    job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=1_385_000_000,
                  workload__layers=48, workload__hidden_size=1536, workload__attention_heads=24,
                  workload__intermediate_size=6144, workload__vocabulary_size=8192, workload__sequence_length=1504,
                  workload__batch_size=16, workload__frozen_parameters=170_000_000,
                  workload__frozen_precision="fp32", task__precision="amp_fp16", task__method="lora",
                  task__lora_targets="all_linear", task__lora_dropout=0.05, task__recompute="full",
                  task__accumulation_steps=8, data__kind="audio")
    shape = model_shape(job.workload)[0]
    half, full = (estimate_memory(job.with_value("task", "lora_base_fp32", held), shape) for held in (False, True))
    assert full.weights_bytes - half.weights_bytes == pytest.approx(1_385_000_000 * 2, rel=1e-6)
    assert any("frozen base 1.39B params x 4 B" in line for line in full.formula)
    assert half.total_bytes < 0.55 * 10e9 and 0.7 * 10e9 <= full.total_bytes <= 10e9
    qlora = job.with_value("task", "method", "qlora").with_value("task", "lora_base_fp32", True)
    assert any(key == "lora_base_fp32" for _, key, _ in cross_field_problems(qlora))
    # Review r72: DeepSpeed casts the model to 16 bits, and torchtune and Unsloth load it in bf16 or 4 bits.
    held = job.with_value("task", "lora_base_fp32", True)
    for section, key, value in (("scale", "sharding", "zero2"), ("task", "training_stack", "unsloth")):
        assert any(field == "lora_base_fp32" for _, field, _ in cross_field_problems(held.with_value(section, key,
                                                                                                       value)))


def test_trained_embeddings_are_two_copies_of_a_tied_pair_and_need_a_vocabulary():
    # Review r72: PEFT's modules_to_save wraps embed_tokens and lm_head each, two trained copies no longer tied.
    def trained(tied: bool) -> float:
        job = answers(workload__preset="custom", workload__kind="transformer", workload__parameters=3_200_000_000,
                      workload__layers=28, workload__hidden_size=3072, workload__attention_heads=24,
                      workload__kv_heads=8, workload__intermediate_size=8192, workload__vocabulary_size=128_256,
                      workload__tied_embeddings=tied, workload__sequence_length=1024, workload__batch_size=1,
                      task__method="lora", task__lora_trains_embeddings=True)
        return estimate_memory(job, model_shape(job.workload)[0]).optimizer_states_bytes
    assert trained(True) == trained(False)
    encoder = answers(workload__preset="vit-b16", task__method="lora", task__lora_trains_embeddings=True)
    assert any(key == "lora_trains_embeddings" for _, key, _ in cross_field_problems(encoder))


def test_bitsandbytes_leaves_a_moes_fused_experts_at_16_bits_unless_unsloth_quantizes_them(catalog):
    # axolotl's examples/kimi-linear (Kimi-Linear-48B-A3B, 8-bit LoRA r16 on all linear layers, 2,048 tokens, micro-
    # batch 2): "about 98.7GiB VRAM", where every projection in 8 bits would be ~50 GiB. transformers v5 fuses the
    # routed experts into 3-D parameters, which bitsandbytes does not quantize (bitsandbytes#1849); it bought a 96 GB
    # card, 90.8 GiB usable (audit YD2).
    kimi = answers(workload__preset="custom", workload__parameters=49_100_000_000,
                   workload__active_parameters=3_000_000_000, workload__experts_count=256,
                   workload__experts_per_token=8, workload__layers=27, workload__hidden_size=2304,
                   workload__attention_heads=32, workload__kv_heads=32, workload__head_dim=128,
                   workload__linear_attention_layers=20, workload__vocabulary_size=163_840,
                   workload__intermediate_size=9216, workload__gated_mlp=True, workload__sequence_length=2048,
                   workload__batch_size=4, task__method="lora_int8", task__lora_targets="all_linear",
                   task__optimizer="adam8bit", task__recompute="full", task__accumulation_steps=2,
                   task__training_stack="liger")
    shape = model_shape(kimi.workload)[0]
    memory = estimate_memory(kimi, shape)
    assert 0.85 * 98.7 < memory.total_bytes / GIB < 1.15 * 98.7
    assert any("stay 16-bit (2 B): transformers v5 fuses them" in line for line in memory.formula)
    unsloth = estimate_memory(kimi.with_value("task", "training_stack", "unsloth"), shape)
    assert unsloth.weights_bytes < 0.6 * memory.weights_bytes
    qlora = estimate_memory(kimi.with_value("task", "method", "qlora"), shape)
    assert qlora.weights_bytes / GIB > 0.9 * shape.routed_expert_parameters * 2 / GIB
    served = kimi.with_value("task", "mode", "inference").with_value("task", "precision", "int4")
    generate = served.with_value("task", "serving_engine", "hf_generate")  # bitsandbytes nf4
    assert estimate_memory(generate, shape).weights_bytes > 0.9 * shape.routed_expert_parameters * 2
    gguf = served.with_value("task", "serving_engine", "llama_cpp")  # a GGUF quantizes them
    assert estimate_memory(gguf, shape).weights_bytes < 0.4 * shape.routed_expert_parameters * 2
    # vLLM's own bitsandbytes loader quantizes fused experts (vllm#32013); torchtune uses neither library (review AD).
    vllm = served.with_value("task", "serving_engine", "vllm").with_value("task", "quantization", "bnb_nf4")
    assert estimate_memory(vllm, shape).weights_bytes < 0.4 * shape.routed_expert_parameters * 2
    torchtune = estimate_memory(kimi.with_value("task", "training_stack", "torchtune"), shape)
    assert torchtune.weights_bytes < 0.6 * memory.weights_bytes


def test_a_moes_decode_under_bitsandbytes_reads_its_16_bit_experts_at_their_bytes():
    # Review AD: the weights counted the routed experts at 16 bits but a token's active read at 4, and a batch of 2
    # then read 51.5 GB a step against 15.1 for one stream. Qwen3-30B-A3B (config.json) under generate().
    def reads(quantization: str, batch: int) -> float:
        job = answers(workload__preset="custom", workload__parameters=30_532_122_624,
                      workload__active_parameters=3_300_000_000, workload__experts_count=128,
                      workload__experts_per_token=8, workload__layers=48, workload__hidden_size=2048,
                      workload__attention_heads=32, workload__kv_heads=4, workload__head_dim=128,
                      workload__intermediate_size=768, workload__vocabulary_size=151_936,
                      workload__sequence_length=1024, workload__batch_size=batch, task__mode="inference",
                      task__precision="int4" if quantization == "bnb_nf4" else "int8", task__quantization=quantization,
                      task__serving_engine="hf_generate")
        return decode_reads(job, model_shape(job.workload)[0]).read_bytes
    for quantization in ("bnb_nf4", "bnb_int8"):
        one, two, eight = (reads(quantization, batch) for batch in (1, 2, 8))
        assert one < two < min(eight, 2 * one), (quantization, one, two, eight)  # a second stream adds at most one
        # A token reads its 8 of 128 experts' 29B parameters at 2 B: 3.6 GB of the step at least.
        assert one > 29e9 * 2 * 8 / 128


def test_qlora_answered_with_its_own_nf4_base_is_the_same_job():
    # Audit ZU26: LLaMA-Factory's QLoRA (quantization_method bnb, quantization_bit 4) written as task.quantization =
    # "bnb_nf4" beside method = "qlora" was refused ("bnb_nf4 stores int4 weights; bf16 takes auto").
    data = {"scenario": "personal_research", "workload": {"preset": "llama-7b"},
            "task": {"method": "qlora", "precision": "bf16", "quantization": "bnb_nf4"}}
    answered = answers_from_dict(data)
    assert estimate_memory(answered, LLAMA_7B) == estimate_memory(
        answered.with_value("task", "quantization", "auto"), LLAMA_7B)
    data["task"]["quantization"] = "gptq_g128"  # another 4-bit format is not QLoRA's
    with pytest.raises(ConfigFileError, match="gptq_g128 stores int4 weights"):
        answers_from_dict(data)


def test_the_fp32_master_copy_is_said_apart_from_the_optimizers_states():
    # Audit CR63: Magicoder's full fine-tune with Adafactor read "optimizer 4", its fp32 master copy, as states.
    def layout(precision: str, optimizer: str) -> str:
        job = Answers(workload=Workload(preset="llama-7b", batch_size=1),
                      task=Task(mode="training", precision=precision, optimizer=optimizer))
        return " | ".join(estimate_memory(job, model_shape(job.workload)[0]).formula)
    assert "optimizer 4: fp32 master weights 4 + states 0)" in layout("bf16", "adafactor")
    assert "optimizer 12: fp32 master weights 4 + states 8)" in layout("bf16", "adamw")
    assert "optimizer 8)" in layout("fp32", "adamw")

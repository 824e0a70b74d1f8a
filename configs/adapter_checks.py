"""Cross-field checks of the answers that say how an engine plans its cards, how a LoRA run holds its weights and
how a preference run batches its pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pth_top.configs import stacks
from pth_top.configs.memory_methods import ADAPTER_METHODS
from pth_top.configs.sequence_split import data_parallel_gpus

if TYPE_CHECKING:
    from pth_top.configs.answers import Answers

DEEPSPEED_SHARDINGS = ("zero1", "zero2", "zero3", "zero_offload")
# FSDP and ZeRO-3 cannot shard bitsandbytes' 8-bit weights: "Integer parameters are unsupported" (accelerate#1415;
# LLaMA-Factory#3543, peft#2833); their 4-bit ones shard with bnb_4bit_quant_storage (Answer.AI's FSDP-QLoRA).
INT8_UNSHARDABLE = ("zero3", "fsdp", "fsdp_offload")


def engine_and_adapter_problems(answers: Answers, model_kind: str, vocabulary_size: int) -> list[tuple[str, str, str]]:
    """task.engine_memory_fraction, the LoRA answers and preference pairs, where they apply: each with what it
    needs."""
    workload, task = answers.workload, answers.task
    problems: list[tuple[str, str, str]] = []
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    if task.engine_memory_fraction and not (task.mode == "inference" and model_kind == "transformer"
                                            and engine in stacks.ENGINE_MEMORY_FRACTION):
        problems.append(("task", "engine_memory_fraction", "is vLLM's --gpu-memory-utilization for a transformer it "
                         "serves: give task.mode = 'inference' and task.serving_engine = 'vllm'"))
    if task.lora_base_fp32 and not (task.mode == "training" and task.method == "lora" and task.precision != "fp32"):
        problems.append(("task", "lora_base_fp32", "is a 16-bit LoRA's base held in fp32 under mixed precision: give "
                         "task.method = 'lora' and task.precision = 'amp_fp16' or 'bf16'"))
    elif task.lora_base_fp32 and (answers.scale.sharding in DEEPSPEED_SHARDINGS
                                  or task.training_stack in ("torchtune", "unsloth")):
        problems.append(("task", "lora_base_fp32", "DeepSpeed casts the model to 16 bits, and torchtune and Unsloth "
                         "load it in bf16 or 4 bits: the base is not held in fp32 there"))
    if task.lora_trains_embeddings and not (task.mode == "training" and task.method in ADAPTER_METHODS
                                            and model_kind == "transformer" and vocabulary_size):
        problems.append(("task", "lora_trains_embeddings", "trains the embeddings and LM head beside LoRA adapters: "
                         "give task.mode = 'training', task.method = 'lora', 'lora_int8' or 'qlora' and a language "
                         "model (workload.vocabulary_size)"))
    if task.method == "lora_int8" and answers.scale.sharding in INT8_UNSHARDABLE:
        problems.append(("scale", "sharding", "FSDP and ZeRO-3 cannot shard bitsandbytes' 8-bit weights (accelerate"
                         "#1415): split its layers over the GPUs (scale.sharding = 'layers'), or shard a QLoRA base "
                         "(task.method = 'qlora')"))
    if task.preference_pairs and not (task.mode == "training" and model_kind == "transformer"
                                      and answers.workload.batch_size % 2 == 0):
        problems.append(("task", "preference_pairs", "are a preference trainer's chosen and rejected sequences: give "
                         "task.mode = 'training', a transformer and workload.batch_size in sequences, two a pair"))
    if task.optimizer_in_backward and not (task.mode == "training" and task.method == "full"
                                           and task.accumulation_steps == 1 and answers.scale.gpu_count == 1):
        problems.append(("task", "optimizer_in_backward", "steps a full fine-tune's optimizer in its backward pass "
                         "(torchtune's optimizer_in_bwd): give task.mode = 'training', task.method = 'full', one GPU "
                         "and task.accumulation_steps = 1, as it has no gradient to accumulate"))
    texts = task.contrastive_texts
    # Whole samples on each GPU and in each micro-batch (review r76: 1,599 texts of 3 on 8 GPUs was accepted).
    per_micro = answers.workload.batch_size / (data_parallel_gpus(answers) * max(1, task.accumulation_steps))
    if texts and not (task.mode == "training" and model_kind == "transformer" and not task.preference_pairs
                      and per_micro == int(per_micro) and int(per_micro) % texts == 0):
        problems.append(("task", "contrastive_texts", "are a contrastive trainer's texts a sample: give task.mode = "
                         "'training', a transformer, no preference pairs, and workload.batch_size in texts, whole "
                         f"samples of {texts} in each GPU's micro-batch (batch / GPUs / accumulation_steps)"))
    if task.reference_without_adapters and not (task.mode == "training" and task.method in ADAPTER_METHODS):
        problems.append(("task", "reference_without_adapters", "is a LoRA or QLoRA base run again with its adapters "
                         "off: give task.mode = 'training' and task.method = 'lora', 'lora_int8' or 'qlora'"))
    elif task.reference_without_adapters and workload.frozen_parameters and answers.data.kind == "text":
        problems.append(("task", "reference_without_adapters", "one reference: the base with its adapters off, or a "
                         "separate model (workload.frozen_parameters), not both"))
    return problems

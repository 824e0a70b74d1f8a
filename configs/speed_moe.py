"""A mixture of experts' training rate: its share of a dense model's utilisation, and transformers' Python loop over
its experts where the answers say the stack (or generate()) runs one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.memory_terms import ModelShape

if TYPE_CHECKING:
    from pth_top.configs.answer_types import Task
    from pth_top.configs.answers import Answers

# A mixture of experts trains further below its active parameters' 6N than a dense model: the router, the tokens'
# permutation to and from their experts and each expert's small GEMM. Megatron-Core's grouped GEMMs train
# Qwen3-30B-A3B at 6,244-6,325 tokens/s a GPU on 16 H800s at 8k (alibaba/Pai-Megatron-Patch#643), 0.45 of the rate its
# 6N + causal attention gives at Hopper's dense MFU (fitted there).
MOE_TRAINING_MFU_SHARE = 0.45
# Transformers' eager MoE block (4.x; 5 defaults to grouped_mm) runs each expert's tokens through its own small kernels
# from Python on every pass of every micro-batch: fitted on IBM's PowerMoE-3B (32 layers, 40 experts) fine-tuned under
# the HF Trainer on an A100, 5.447 samples/s of 320 tokens, 8 a micro-batch, with checkpointing (fms-acceleration
# scripts/benchmarks/refs/a100_80gb_moe.csv); its ScatterMoE row (4,784 tokens/s) is the check of the share above.
HF_MOE_TRAINING_EXPERT_PASS_S = 340e-6
# DeepSeek's remote code (moe_infer) and transformers' later eager blocks (expert_hit) run only the experts a decode
# step's tokens hit, each at HF_MOE_EXPERT_S, after a layer's routing, sort and one host sync (bincount().cpu()): 0.75
# ms a layer, fitted on DeepSeekMoE 16B under generate() on an A800, 14.73 tokens/s (deepseek-ai/DeepSeek-MoE#13; batch
# 1 assumed), with that issue's Baichuan-13B row, 22.00, taken as 0.76 of generate()'s rate here (28.8): both fitted.
# Its first layer is dense (first_k_dense_replace = 1): the loop is charged on all 28, ~4 % more.
HF_MOE_HIT_LAYER_S = 0.75e-3


def mixture(shape: ModelShape) -> bool:
    """A transformer whose tokens pass fewer parameters than it holds."""
    return shape.kind == "transformer" and shape.active < shape.parameters


def expert_loop_seconds(answers: Answers, shape: ModelShape, recompute: str) -> tuple[float, str]:
    """Seconds a step spends in transformers' loop over a mixture's experts on each GPU, and the formula's text; (0,
    "") where the experts run as grouped GEMMs (task.experts_loop false, or a stack outside transformers' code)."""
    task = answers.task
    if not (mixture(shape) and shape.experts_count and task.experts_loop
            and task.training_stack in stacks.HF_EXPERT_LOOP_STACKS):
        return 0.0, ""
    passes = 3 if recompute == "full" else 2  # forward, backward, and a full recompute's forward again
    seconds = task.accumulation_steps * passes * shape.layers * shape.experts_count * HF_MOE_TRAINING_EXPERT_PASS_S
    return seconds, (f"transformers' expert loop ({stacks.TRAINING_STACK_LABELS[task.training_stack]}): "
                     f"{task.accumulation_steps} micro-batch(es) x {passes} passes x {shape.layers} layers x "
                     f"{shape.experts_count} experts x {HF_MOE_TRAINING_EXPERT_PASS_S * 1e6:g} us = "
                     f"{sp.duration(seconds)} per step (task.experts_loop; grouped GEMMs, transformers 5's default, "
                     "have none)")


def decode_expert_loop(shape: ModelShape, task: Task, tokens: int) -> tuple[float, str]:
    """Seconds a step spends in transformers' loop over a mixture's experts under generate(), and the formula's text:
    every routed expert of each layer (task.experts_loop), or only those the step's `tokens` hit
    (task.experts_loop_hit_only), n x (1 - (1 - k/n)^t) of them on average, never more than every expert's loop."""
    layers, experts = shape.layers, shape.experts_count
    if not (task.experts_loop and experts):
        return 0.0, ""
    every = layers * experts * sp.HF_MOE_EXPERT_S
    every_text = (f"{layers} layers x {experts} experts x {sp.HF_MOE_EXPERT_S * 1e6:g} us of Transformers' loop over "
                  "them")
    if not task.experts_loop_hit_only:
        return every, every_text + " (a host sync each)"
    per_token = max(1, round(shape.routed_expert_share * experts))
    hit = experts * (1.0 - (1.0 - per_token / experts) ** tokens)
    seconds = layers * (HF_MOE_HIT_LAYER_S + hit * sp.HF_MOE_EXPERT_S)
    if seconds >= every:  # the step's tokens hit about all of them: at most the loop over every expert
        return every, every_text + f" ({tokens:,} tokens a step hit about all of them)"
    return seconds, (f"{layers} layers x ({HF_MOE_HIT_LAYER_S * 1e3:g} ms of routing and one host sync + {hit:.3g} "
                     f"experts hit ({tokens:,} token(s) a step x {per_token} of {experts}) x "
                     f"{sp.HF_MOE_EXPERT_S * 1e6:g} us) of the loop over the experts a step hits "
                     "(task.experts_loop_hit_only)")

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
# DeepSeek's remote code (moe_infer, one host sync a layer) and transformers' later eager blocks (expert_hit) run only
# the experts a decode step's tokens hit: fitted on DeepSeekMoE 16B under generate() on an A800, 14.73 tokens/s
# (deepseek-ai/DeepSeek-MoE#13), whose Baichuan-13B row there, 22.00, is 0.76 of generate()'s rate here (28.9).
HF_MOE_HIT_EXPERT_S = 210e-6


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


def decode_expert_loop(shape: ModelShape, task: Task, batch: int) -> tuple[float, str]:
    """Seconds a decode step spends in transformers' loop over a mixture's experts under generate(), and the formula's
    text: every routed expert of each layer (task.experts_loop), or only those the step's `batch` tokens hit
    (task.experts_loop_hit_only), n x (1 - (1 - k/n)^b) of them on average."""
    layers, experts = shape.layers, shape.experts_count
    if not (task.experts_loop and experts):
        return 0.0, ""
    if not task.experts_loop_hit_only:
        return layers * experts * sp.HF_MOE_EXPERT_S, (
            f"{layers} layers x {experts} experts x {sp.HF_MOE_EXPERT_S * 1e6:g} us of Transformers' loop over them "
            "(a host sync each)")
    per_token = max(1, round(shape.routed_expert_share * experts))
    hit = experts * (1.0 - (1.0 - per_token / experts) ** batch)
    return layers * hit * HF_MOE_HIT_EXPERT_S, (
        f"{layers} layers x {hit:.3g} experts hit ({batch} token(s) a step x {per_token} of {experts}) x "
        f"{HF_MOE_HIT_EXPERT_S * 1e6:g} us of the loop over the experts a step hits (task.experts_loop_hit_only)")

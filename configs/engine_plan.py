"""vLLM planning for more of a card that drives no display: a way out that keeps the job as answered."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pth_top.configs import stacks

if TYPE_CHECKING:
    from pth_top.configs.answers import Answers
    from pth_top.configs.assembly import Context

# vLLM plans for 0.9 of each GPU by default; a card that drives no display has room for 0.95 (vLLM's docs: raise
# gpu_memory_utilization for more KV cache; audit BJ52: Baichuan-M2-32B in int4 at 8k missed a 3090's 0.9 by 0.3 GiB).
FULLER_ENGINE_FRACTION = 0.95
FULLER_ENGINE_PLAN_LABEL = (f"vLLM --gpu-memory-utilization {FULLER_ENGINE_FRACTION} on a card that drives no display "
                            f"(task.engine_memory_fraction = {FULLER_ENGINE_FRACTION}): its plan takes "
                            f"{FULLER_ENGINE_FRACTION * 100:g} % of each GPU, not its default "
                            f"{stacks.ENGINE_MEMORY_FRACTION['vllm'] * 100:g}; run the machine "
                            "headless, over SSH, where a desktop session would take the 0.3-1 GiB the default leaves")


def fuller_engine_plan(ctx: Context) -> Answers:
    """The answers with vLLM planning for more of each card, where it serves a transformer at its default share."""
    return fuller_plan(ctx.answers, ctx.shape.kind)


def fuller_plan(answers: Answers, kind: str) -> Answers:
    """fuller_engine_plan for answers whose model is of this kind ("transformer", "cnn", ...)."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    if task.mode != "inference" or kind != "transformer" or task.engine_memory_fraction or \
            FULLER_ENGINE_FRACTION <= stacks.ENGINE_MEMORY_FRACTION.get(engine, 1.0):
        return answers
    return answers.with_value("task", "engine_memory_fraction", FULLER_ENGINE_FRACTION)

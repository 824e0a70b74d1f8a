"""Where llama.cpp's two offloads apply: the experts in RAM (--cpu-moe) and whole layers (-ngl)."""

from __future__ import annotations

from pth_top.configs import stacks
from pth_top.configs.answer_types import Task, Workload
from pth_top.configs.presets import model_presets

SHARED_MEMORY_GAINS_NOTHING = "a module that shares its memory with the CPU gains nothing from it"


def llama_cpp_offload_problems(scenario: str, workload: Workload, task: Task) -> list[tuple[str, str, str]]:
    """Each offload out of place, with what it needs: llama.cpp inference, a mixture of experts for the experts and
    a dense model for layers, one at a time, not at the edge."""
    problems: list[tuple[str, str, str]] = []
    presets = model_presets()
    if task.expert_offload and (task.mode != "inference" or stacks.serving_engine(
            task.serving_engine, scenario, task.precision) != "llama_cpp"):
        problems.append(("task", "expert_offload", "--cpu-moe is llama.cpp's: inference with llama_cpp as "
                         "task.serving_engine (or auto with int4 weights)"))
    elif task.expert_offload and not (workload.preset in presets and presets[workload.preset].experts_count) \
            and not (workload.preset == "custom" and workload.experts_count):
        moe = ", ".join(name for name, preset in presets.items() if preset.experts_count)
        problems.append(("task", "expert_offload", f"needs a mixture of experts with its expert counts (they size "
                         f"what stays in RAM): a preset ({moe}) or a custom model's experts_count and "
                         "experts_per_token"))
    elif task.expert_offload and scenario == "edge_deployment":
        problems.append(("task", "expert_offload", f"not at the edge: {SHARED_MEMORY_GAINS_NOTHING}"))
    if task.layer_offload and (task.mode != "inference" or stacks.serving_engine(
            task.serving_engine, scenario, task.precision) != "llama_cpp"):
        problems.append(("task", "layer_offload", "-ngl is llama.cpp's: inference with llama_cpp as "
                         "task.serving_engine (or auto with int4 weights)"))
    elif task.layer_offload and task.expert_offload:
        problems.append(("task", "layer_offload", "one offload at a time: the experts in RAM (task.expert_offload) "
                         "or whole layers (task.layer_offload)"))
    elif task.layer_offload and (workload.preset in presets and presets[workload.preset].experts_count
                                 or workload.preset == "custom" and workload.experts_count):
        problems.append(("task", "layer_offload", "a mixture of experts offloads its experts, not whole layers: "
                         "task.expert_offload (--cpu-moe) keeps attention and the shared weights on the GPU"))
    elif task.layer_offload and scenario == "edge_deployment":
        problems.append(("task", "layer_offload", f"not at the edge: {SHARED_MEMORY_GAINS_NOTHING}"))
    return problems

"""What host RAM holds of the job, beside the rule of thumb of the GPUs' memory: the weights an engine stages, the
experts or layers llama.cpp runs there, what training offloads to the CPU, and a checkpoint loaded or quantized."""

from __future__ import annotations

from pth_top.configs import stacks
from pth_top.configs.assembly import Context
from pth_top.configs.memory_inference import inference_weight_bytes
from pth_top.configs.memory_terms import MemoryBreakdown
from pth_top.configs.rules import checkpoint_staging_gib, host_model_gib
from pth_top.units import GIB


def host_ram_need(ctx: Context, memory: MemoryBreakdown | None = None) -> tuple[float, str]:
    """GiB of RAM the job itself holds, and what (for the RAM floor's reason); a PC's and a server's alike. `memory`:
    the job on the build's GPU, read where it leaves layers in RAM (-ngl); every routed expert of an offloaded
    mixture is counted in RAM whatever of them the card keeps (--cpu-moe's file, staged whole)."""
    memory = memory if memory is not None and memory.offloaded_layers else ctx.memory
    task = ctx.answers.task
    engine = stacks.serving_engine(task.serving_engine, ctx.answers.scenario, task.precision)
    inference = task.mode == "inference"
    weight_bytes = inference_weight_bytes(ctx.shape, task.precision, task.quantization, engine)[0] if inference else 0.0
    host_weights_gib = host_model_gib(weight_bytes, mode=task.mode, host_offload_bytes=memory.host_offload_bytes,
                                      streams_shards=stacks.stages_no_whole_checkpoint(engine, ctx.gpu_count))
    staging_gib, staging_text = checkpoint_staging_gib(ctx.shape.parameters, mode=task.mode, method=task.method,
                                                       stack=task.training_stack,
                                                       frozen_parameters=ctx.answers.workload.frozen_parameters,
                                                       unquantized_parameters=ctx.shape.vocabulary_parameters)
    experts_gib = memory.host_offload_bytes / GIB if task.expert_offload else 0.0
    layers = memory.offloaded_layers  # audit DS72: 34 of Command R's 40 layers, 55 GB with their KV, on 16 GB
    host_text = staging_text if staging_gib > host_weights_gib else (
        "the experts llama.cpp runs from RAM (--cpu-moe)" if experts_gib >= host_weights_gib > 0 else
        f"the {layers} layers llama.cpp runs from RAM (-ngl), with their KV cache" if layers else
        "" if inference else _training_offload_text(task.training_stack, ctx.answers.scale.sharding,
                                                    ctx.answers.workload.frozen_parameters))
    return max(host_weights_gib, staging_gib), host_text


def gpu_memory_rule(ctx: Context) -> bool:
    """Whether RAM >= the GPUs' memory applies: training (pinned buffers, checkpoints saved and loaded, data cached)
    and a server (its engine's swap space, many models); a PC or an edge module that runs inference stages no more
    than its weights (audit YM2: EXAONE-3.5-32B Q4 on a used RTX 3090 was priced with 32 GB of RAM)."""
    return ctx.answers.task.mode == "training" or ctx.answers.scenario == "inference_server"


def _training_offload_text(stack: str, sharding: str, frozen_parameters: int = 0) -> str:
    """What training keeps in host RAM: ZeRO-Offload's or FSDP's offloaded states (and a reference model beside them),
    Unsloth's layer checkpoints."""
    offloaded = ["optimizer states (and master weights) offloaded to the CPU"] if sharding.endswith("_offload") else []
    if sharding == "fsdp_offload" and frozen_parameters:
        offloaded.append("the frozen reference or teacher offloaded with them")
    if stack == "unsloth":
        offloaded.append("the layer checkpoints Unsloth offloads")
    return " and ".join(offloaded)

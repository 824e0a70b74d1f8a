"""llama.cpp's partial offload (-ngl N): the layers a card you have cannot hold stay in system RAM, run by the CPU.

llama.cpp puts the last N of a model's L repeating layers on the GPU, each with its KV cache, and the output layer
only when all L are there (-ngl L + 1); the token embedding stays in RAM. A decode step reads the GPU's layers at
its bandwidth and the CPU's, with the output layer, at the RAM's; a prompt runs on the GPU, which copies the CPU's
layers over PCIe once per 512-token micro-batch (PR 6083, "offload large batches to GPU").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.build import Build
from pth_top.configs.expert_offload import experts_in_ram_share, offload_prefill_s
from pth_top.configs.memory_inference import inference_weight_bytes
from pth_top.configs.memory_terms import MemoryBreakdown, ModelShape
from pth_top.configs.quantization import weight_format
from pth_top.configs.speed_cpu import CPU_DECODE_BANDWIDTH_FRACTION, ram_bandwidth_gb_per_s
from pth_top.configs.speed_reads import DecodeReads, prefill_attention_flops, prefill_flops
from pth_top.configs.speed_server import decode_summary


@dataclass(frozen=True, slots=True)
class LayerBytes:
    """A dense model's weights as llama.cpp places them: the repeating layers', the output layer's, the rest's."""

    layers: float  # all L repeating layers
    output: float  # the LM head (the embedding where they are tied): on the GPU only with every layer
    embedding: float  # the input embedding: always in RAM (0 where it is the output layer)


def layer_bytes(answers: Answers, shape: ModelShape) -> LayerBytes:
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    weights, _ = inference_weight_bytes(shape, task.precision, task.quantization, engine)
    fmt = weight_format(task.quantization, task.precision, engine)
    bits = fmt.vocabulary_bits if fmt else 8 * weights / max(1, shape.parameters)
    matrix = shape.vocabulary_size * shape.hidden_size * bits / 8 if shape.lm_head else 0.0
    embedding = 0.0 if shape.tied_embeddings else matrix
    return LayerBytes(layers=max(0.0, weights - matrix - embedding), output=matrix, embedding=embedding)


def layers_kept_on_gpus(memory: MemoryBreakdown, answers: Answers, shape: ModelShape, usable_bytes: float,
                        gpus: int) -> MemoryBreakdown:
    """-ngl N: as many layers as fit `usable_bytes` a GPU beside its fixed part stay on the GPUs, the rest (and the
    output layer) in RAM; unchanged where every layer fits or none does."""
    placed = layer_bytes(answers, shape)
    layers, n = shape.layers, max(1, gpus)
    kv = memory.kv_cache_bytes * n
    per_layer = (placed.layers + kv) / layers if layers else 0.0
    fixed = memory.activations_bytes + memory.cuda_context_bytes
    kept = min(layers, int(n * (usable_bytes - fixed) // per_layer)) if per_layer else 0
    if kept >= layers or kept <= 0 or memory.total_bytes <= usable_bytes:
        return memory
    in_ram = layers - kept
    line = (f"llama.cpp -ngl {kept} (task.layer_offload): {kept} of {layers} layers ({kept * per_layer / 1e9:.3g} GB "
            f"with their KV cache) on the GPU; the other {in_ram} ({in_ram * per_layer / 1e9:.3g} GB) and the output "
            f"layer ({placed.output / 1e9:.3g} GB) in system RAM, run by the CPU")
    return replace(memory, weights_bytes=int(kept * placed.layers / layers / n),
                   kv_cache_bytes=int(kept * kv / layers / n), offloaded_layers=in_ram,
                   host_offload_bytes=int(in_ram * per_layer + placed.output + placed.embedding),
                   formula=(*memory.formula, line))


def with_host_ram(device: sp.Device, build: Build, shape: ModelShape) -> sp.Device:
    """The GPUs with what the build keeps in RAM (layers, or a share of the experts) and, on a desktop CPU, the
    RAM's bandwidth the CPU runs it at (a workstation's depends on NUMA and threads: not predicted)."""
    cpu, kit = build.component("cpu"), build.component("memory_kit")
    return with_ram_split(device, build.answers, shape, build.memory, dict(cpu.spec) if cpu else None,
                          dict(kit.spec) if kit else None, kit.quantity if kit else 0)


def with_ram_split(device: sp.Device, answers: Answers, shape: ModelShape, memory: MemoryBreakdown,
                   cpu: dict[str, Any] | None, kit: dict[str, Any] | None, kits: int) -> sp.Device:
    """with_host_ram for the parts of a build not yet made (a way out's assembly)."""
    share = experts_in_ram_share(answers, shape, memory.host_offload_bytes) if answers.task.expert_offload else 0.0
    device = replace(device, layers_in_ram=memory.offloaded_layers, experts_in_ram_share=share)
    if not (share or device.layers_in_ram) or cpu is None or kit is None or cpu.get("platform") != "desktop":
        return device
    return replace(device, host_ram_gb_per_s=ram_bandwidth_gb_per_s(cpu, kit, kits)[0])


def partial_offload_speed(answers: Answers, shape: ModelShape, device: sp.Device, reads: DecodeReads
                          ) -> sp.Prediction:
    """Decode from the GPU's layers and the CPU's, the prompt on the GPU with the CPU's layers copied over PCIe."""
    if not device.host_ram_gb_per_s:
        return sp.Prediction(summary=["not predicted: the CPU runs some layers from system RAM, and this build's RAM "
                                      "bandwidth is not known (a desktop CPU and its kit give it)"])
    batch, layers, in_ram = answers.workload.batch_size, shape.layers, device.layers_in_ram
    placed = layer_bytes(answers, shape)
    layer_s = (placed.layers + batch * reads.kv_bytes) / layers
    gpu_bytes, cpu_bytes = (layers - in_ram) * layer_s, in_ram * layer_s + placed.output
    bandwidth, bandwidth_text = sp.achieved_bandwidth(device, reads.bandwidth_fraction(0.0, moe=False))
    ram = CPU_DECODE_BANDWIDTH_FRACTION * device.host_ram_gb_per_s
    gpu_s = gpu_bytes / (bandwidth * 1e9) + (layers - in_ram) * device.decode_layer_s(shape.hidden_size)
    cpu_s = cpu_bytes / (ram * 1e9)
    step_s = gpu_s + cpu_s
    out = sp.Prediction(figures={"decode_tokens_per_s_per_stream": 1 / step_s,
                                 "decode_tokens_per_s_aggregate": batch / step_s})
    out.formula.append(reads.line)
    out.formula.append(
        f"decode: {layers - in_ram} layers on the GPU, {gpu_bytes / 1e9:.3g} GB with the KV cache at {bandwidth_text} "
        f"+ their small kernels = {gpu_s * 1e3:,.1f} ms, then {in_ram} layers and the output layer on the CPU, "
        f"{cpu_bytes / 1e9:.3g} GB at {CPU_DECODE_BANDWIDTH_FRACTION:g} x {device.host_ram_gb_per_s:,.1f} GB/s of RAM "
        f"= {cpu_s * 1e3:,.1f} ms: {1 / step_s:,.1f} tokens/s per stream")
    compute_s, _ = sp.prefill_seconds(prefill_flops(shape, reads.prompt), 0.0, device,
                                      prefill_attention_flops(shape, reads.prompt))
    copied = in_ram * placed.layers / layers + placed.output
    first_s, first_line = offload_prefill_s(copied, reads.prompt, compute_s, device.main_link_gb_per_s, "layers")
    out.formula.append(first_line)
    per_stream = decode_summary(out, batch, reads.prompt, first_s, f" with {in_ram} of {layers} layers in system RAM")
    if per_stream < sp.SLOW_DECODE_TOKENS_PER_S:
        out.warnings.append(f"slow: ~{per_stream:.1f} tokens/s per stream with {in_ram} of {layers} layers on the CPU "
                            f"is under {sp.SLOW_DECODE_TOKENS_PER_S:g} tokens/s: a card that holds the model, or "
                            "smaller weights, decodes faster")
    return out

"""llama.cpp's --cpu-moe: a mixture of experts' routed experts in system RAM, run by the CPU (PR 15077).

The GPU keeps attention, the shared weights and the KV cache. A decode step reads the GPU's part at its bandwidth
and the token's routed experts from RAM; a prompt is processed on the GPU, which copies every expert over PCIe once
per 512-token micro-batch (llama.cpp's op offload, `-ub 512`).
"""

from __future__ import annotations

import math

from pth_top.configs import speed as sp
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.memory_inference import expert_bytes
from pth_top.configs.memory_terms import ModelShape
from pth_top.configs.speed_reads import DecodeReads, prefill_attention_flops, prefill_flops, routed_union_bytes
from pth_top.configs.speed_server import decode_summary

# Share of the RAM's bandwidth a token's routed experts are read at: small scattered matrices, as on the GPU (0.55 for
# a MoE against 0.65 dense, configs.speed). Fitted on gpt-oss-20b with every expert on a Ryzen 9 5900X's two DDR4-3200
# channels beside an RX 7900 XT: ~20 tokens/s, 1.39 GB of experts a token at 4.5 bit (github.com/ggml-org/llama.cpp
# discussions 15396); a 14900K's DDR5 gave 18-26 tokens/s on gpt-oss-120b's 1.9 GB a token (its RAM speed not
# stated: 0.35-0.55 of DDR5-5600 to 6400 in two channels).
CPU_MOE_DECODE_BANDWIDTH_FRACTION = 0.55
# llama.cpp's default micro-batch (-ub): the unit a prompt's experts are copied to the GPU for.
MICRO_BATCH_TOKENS = 512


def offload_decode(reads: DecodeReads, expert_bytes: float, shape: ModelShape, batch: int, device: sp.Device,
                   ram_gb_per_s: float) -> sp.Prediction:
    """A decode step: the GPU's part (with the experts kept there) at its bandwidth with each layer's small kernels,
    then the streams' routed experts in RAM (the expected union over the batch)."""
    routed = routed_union_bytes(expert_bytes, shape.routed_expert_share, batch)
    in_ram = routed * device.experts_in_ram_share
    gpu_bytes = max(0.0, reads.read_bytes - in_ram) + batch * reads.kv_bytes
    bandwidth, bandwidth_text = sp.achieved_bandwidth(device)
    ram = CPU_MOE_DECODE_BANDWIDTH_FRACTION * ram_gb_per_s
    gpu_s = gpu_bytes / (bandwidth * 1e9) + shape.layers * device.decode_layer_s(shape.hidden_size)
    cpu_s = in_ram / (ram * 1e9)
    step_s = gpu_s + cpu_s
    out = sp.Prediction(figures={"decode_tokens_per_s_per_stream": 1 / step_s,
                                 "decode_tokens_per_s_aggregate": batch / step_s})
    kept = " and the experts kept there" if device.experts_in_ram_share < 1 else ""
    out.formula.append(
        f"decode: GPU {gpu_bytes / 1e9:.3g} GB (shared weights, KV cache{kept}) at {bandwidth_text} + {shape.layers} "
        f"layers' small kernels = {gpu_s * 1e3:,.1f} ms, then {in_ram / 1e9:.3g} GB of routed experts from RAM at "
        f"{CPU_MOE_DECODE_BANDWIDTH_FRACTION:g} x {ram_gb_per_s:,.1f} GB/s = {cpu_s * 1e3:,.1f} ms: {1 / step_s:,.1f} "
        "tokens/s per stream")
    return out


def offload_prefill_s(expert_bytes: float, prompt: int, compute_s: float, host_gb_per_s: float, what: str = "experts"
                      ) -> tuple[float, str]:
    """The prompt on the GPU, each micro-batch waiting for the weights in RAM (`what`) to cross PCIe."""
    batches = max(1, math.ceil(prompt / MICRO_BATCH_TOKENS))
    link_gb_per_s = host_gb_per_s * sp.HOST_COPY_FRACTION
    copy_s = batches * expert_bytes / (link_gb_per_s * 1e9)
    seconds = copy_s + compute_s
    return seconds, (f"first token: {batches} micro-batch(es) of {MICRO_BATCH_TOKENS} tokens x "
                     f"{expert_bytes / 1e9:.3g} GB of {what} over PCIe at {sp.HOST_COPY_FRACTION:.2f} x "
                     f"{host_gb_per_s:g} GB/s + "
                     f"{sp.duration(compute_s)} of GPU compute = {sp.duration(seconds)}")


def experts_in_ram_share(answers: Answers, shape: ModelShape, in_ram_bytes: float) -> float:
    """The share of the routed experts the build keeps in RAM (configs.memory_inference.experts_kept_on_gpus)."""
    task = answers.task
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    experts = expert_bytes(shape, task.precision, task.quantization, engine)
    return min(1.0, in_ram_bytes / experts) if experts else 1.0


def offloaded_speed(answers: Answers, shape: ModelShape, device: sp.Device, reads: DecodeReads) -> sp.Prediction:
    """llama.cpp --cpu-moe: decode from the GPU and the build's RAM, the prompt with the experts copied over PCIe."""
    task, batch = answers.task, answers.workload.batch_size
    if not device.host_ram_gb_per_s:
        return sp.Prediction(summary=["not predicted: the experts run from system RAM, and this build's RAM "
                                      "bandwidth is not known (a desktop CPU and its kit give it)"])
    engine = stacks.serving_engine(task.serving_engine, answers.scenario, task.precision)
    experts_bytes = expert_bytes(shape, task.precision, task.quantization, engine)
    out = offload_decode(reads, experts_bytes, shape, batch, device, device.host_ram_gb_per_s)
    compute_s, _ = sp.prefill_seconds(prefill_flops(shape, reads.prompt), 0.0, device,
                                      prefill_attention_flops(shape, reads.prompt))
    first_s, first_line = offload_prefill_s(experts_bytes * device.experts_in_ram_share, reads.prompt, compute_s,
                                            device.main_link_gb_per_s)
    out.formula.insert(0, reads.line)
    out.formula.append(first_line)
    per_stream = decode_summary(out, batch, reads.prompt, first_s, " with the experts in system RAM")
    if per_stream < sp.SLOW_DECODE_TOKENS_PER_S:
        out.warnings.append(f"slow: ~{per_stream:.1f} tokens/s per stream with the experts in RAM is under "
                            f"{sp.SLOW_DECODE_TOKENS_PER_S:g} tokens/s: faster RAM (more channels) or a GPU that holds "
                            "the experts decodes faster")
    return out

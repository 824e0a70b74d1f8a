"""What a training step's GPUs exchange (all-reduce, FSDP/ZeRO-3 gathers, host offload) and how long it waits for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pth_top.configs import memory_methods as methods
from pth_top.configs import stacks
from pth_top.configs.answers import Answers
from pth_top.configs.memory import head_size
from pth_top.configs.memory_terms import ModelShape, value_bytes_of
from pth_top.configs.speed import BASE_WEIGHT_BYTES, Device

# All-reduce bus bandwidth reached on a link: nccl-tests on 8x A100 SXM ~230 of 300 GB/s per direction;
# pinned PCIe 4.0 copies ~25 of 31.5 GB/s (../shared/reference/benchmarks.md).
ALLREDUCE_LINK_FRACTION = 0.77
# DeepSpeed's CPU-Adam steps ~1.4B parameters a second on a host: 8.2 s for an 11.6B-parameter GPT-2, where
# torch.optim.Adam on the CPU took 56 (DeepSpeed PR #735); the step waits for it (audit XJ8: a 34B full fine-tune's
# offload was timed as fast as no offload). Qwen-72B on 4 nodes: ~10 s a step offloaded, ~0.2 not (DeepSpeed #6834).
CPU_ADAM_SECONDS_PER_PARAMETER = 8.2 / 11.6e9
# GeForce cards have no P2P (NVIDIA/nccl-tests#287): NCCL goes through host memory. 8 x RTX 5090 on two Xeon 8480+
# reach 28 GB/s busbw, 4 reach 35, about what 8 x RTX 4090 do (NVIDIA/nccl#1639); Gen5's link would give 48.5.
NO_P2P_BUSBW_GB_PER_S = {4: 35.0, 8: 28.0}


def allreduce_gb_per_s(device: Device) -> tuple[float, str]:
    """The all-reduce bus bandwidth the GPUs reach, and where it comes from: measured, else the link's fraction,
    at most host memory's where the cards have no peer-to-peer."""
    if device.busbw_gb_per_s:
        return device.busbw_gb_per_s, "measured busbw"
    link = device.link_gb_per_s * ALLREDUCE_LINK_FRACTION
    cap = NO_P2P_BUSBW_GB_PER_S[4 if device.count <= 4 else 8]
    if device.peer_to_peer or link <= cap:
        return link, f"{device.link} x {ALLREDUCE_LINK_FRACTION:g}"
    return cap, (f"no peer-to-peer on GeForce cards: through host memory, {cap:g} GB/s at {device.count} GPUs "
                 "(NVIDIA/nccl#1639)")


def tensor_parallel_prefill_seconds(layers: int, hidden: int, tokens: int, device: Device) -> tuple[float, str]:
    """A prefill's all-reduces under tensor parallel: two a layer (after attention and after the MLP; Megatron-LM,
    arXiv:1909.08053) of its tokens' 16-bit activations, 2(n-1)/n of them on the bus (nccl-tests' busbw), and not
    hidden behind the matmuls (vLLM and SGLang run them in turn); 0 for one GPU or a layer split."""
    n = device.working_count
    busbw, busbw_text = allreduce_gb_per_s(device)
    if n <= 1 or busbw <= 0:
        return 0.0, ""
    size = tokens * hidden * 2.0
    seconds = 2 * layers * size * 2 * (n - 1) / n / (busbw * 1e9)
    return seconds, (f" + tensor parallel: 2 x {layers} all-reduces of {tokens:,} x {hidden:,} x 2 B x 2({n}-1)/{n} "
                     f"at {busbw:,.0f} GB/s ({busbw_text}) = {seconds * 1e3:,.1f} ms")


@dataclass(frozen=True, slots=True)
class Communication:
    """Bytes each GPU moves per optimizer step, and how much of it compute hides."""

    collective_bytes: float  # all-reduce / gather volume per GPU, 2(n-1)/n already applied
    host_bytes: float = 0.0  # over PCIe to and from the host (ZeRO-Offload)
    overlap: str = "backward"  # what the collective overlaps with: "backward", "compute" or "none"
    text: str = ""
    host_overlapped: bool = False  # the host traffic is prefetched behind compute too (FSDP's CPU offload)
    cpu_step_s: float = 0.0  # the optimizer step on the host's CPU, after backward (ZeRO-Offload, FSDP's CPU offload)


def communication(sharding: str, gpus: int, parameters: float, trainable: float, gradient_bytes: float,
                  micro_steps: int, weight_bytes: float = 2.0, held_whole: bool = False) -> Communication:
    """Data parallel: a ring all-reduce moves 2(n-1)/n x the gradients per step (nccl-tests' busbw), overlapped
    with backward (PyTorch DDP's buckets, arXiv:2006.15704); ZeRO-3/FSDP gathers the weights (`weight_bytes` each)
    for forward and backward and reduce-scatters the gradients on every micro-batch, prefetched behind compute
    (arXiv:1910.02054: 1.5x data parallel's volume); ZeRO-Offload also ships gradients down and 16-bit weights up
    over PCIe each step, not overlapped here (an upper bound); FSDP with CPU offload uploads each GPU's shard of the
    weights (`weight_bytes` a parameter) for forward and backward on every micro-batch, prefetched behind compute
    (Answer.AI's FSDP-QLoRA benchmarks: Yi 34B on two 4090s at x16, 2,061 s offloaded vs 2,072 s not)."""
    n = max(1, gpus)
    ring = (n - 1) / n
    if sharding == "fsdp_offload":  # and each micro-batch's gradient shard sent back (a full training's are all)
        gathers = micro_steps * ring * (2 * parameters * weight_bytes + trainable * gradient_bytes)
        host = micro_steps * (2 * parameters * weight_bytes + trainable * gradient_bytes) / n
        cpu_s, cpu_text = cpu_optimizer_step(trainable)
        return Communication(gathers, host, "compute", host_overlapped=True, cpu_step_s=cpu_s, text=(
            f"{micro_steps} micro-batch(es) x (2 uploads of each GPU's 1/{n} of {parameters / 1e6:,.0f}M weights x "
            f"{weight_bytes:g} B + its 1/{n} of {trainable / 1e6:,.1f}M gradients x {gradient_bytes:g} B back) = "
            f"{host / 1e9:.3g} GB over PCIe per step" + (", gathered across the GPUs" if n > 1 else "")
            + f", prefetched behind compute; {cpu_text}"))
    if sharding in ("zero3", "fsdp"):  # under no_sync (`held_whole`) the gradients reduce-scatter once a step
        syncs = 1 if held_whole else micro_steps
        # A QLoRA base gathers its 4-bit weights (FSDP-QLoRA shards the NF4 storage): 0.5 B a weight, not 2 (AZ48).
        volume = ring * (micro_steps * 2 * parameters * weight_bytes + syncs * trainable * gradient_bytes)
        return Communication(volume, overlap="compute", text=(
            f"(n-1)/n x ({micro_steps} micro-batch(es) x 2 weight gathers x {parameters / 1e6:,.0f}M x "
            f"{weight_bytes:.3g} B + "
            f"{syncs} gradient reduce-scatter(s) {trainable / 1e6:,.1f}M x {gradient_bytes:g} B), prefetched behind "
            "compute"))
    volume = 2 * ring * trainable * gradient_bytes
    text = (f"all-reduce 2(n-1)/n x {trainable / 1e6:,.1f}M gradients x {gradient_bytes:g} B per step, overlapped "
            "with backward")
    if sharding in ("zero2", "zero_offload") and micro_steps > 1 and n > 1:
        # Stage 2 partitions the gradients, so it reduces them in every micro-batch's backward, not once a step
        # (DeepSpeed stage_1_and_2.py: reduce when partition_gradients or at the accumulation boundary).
        volume = ring * trainable * (micro_steps * gradient_bytes + 2.0)
        text = (f"(n-1)/n x {trainable / 1e6:,.1f}M x ({micro_steps} micro-batches' gradient reduce-scatters x "
                f"{gradient_bytes:g} B, as ZeRO-2 reduces in each backward, + an all-gather of the updated 16-bit "
                "weights) per step, overlapped with backward")
    if sharding == "zero_offload":
        host = trainable * (gradient_bytes + 2.0)
        cpu_s, cpu_text = cpu_optimizer_step(trainable)
        across = text + "; " if n > 1 else ""  # one GPU all-reduces nothing (audit XS11: a line for n = 1)
        return Communication(volume, host, "backward", f"{across}ZeRO-Offload: {host / 1e9:.3g} GB over PCIe to "
                             f"and from the host per step, not overlapped; {cpu_text}", cpu_step_s=cpu_s)
    return Communication(volume, overlap="backward", text=text)


def cpu_optimizer_step(trainable: float) -> tuple[float, str]:
    """The host CPU's optimizer step over the trained parameters, at DeepSpeed's CPU-Adam rate."""
    seconds = trainable * CPU_ADAM_SECONDS_PER_PARAMETER
    return seconds, (f"the CPU's optimizer step over {trainable / 1e6:,.1f}M trained parameters at DeepSpeed's "
                     f"CPU-Adam rate (11.6B in 8.2 s) = {seconds * 1e3:,.1f} ms, after backward")


def exposed_seconds(comm: Communication, compute_s: float, device: Device, host_gb_per_s: float) -> float:
    """What the step waits for: the collective beyond what it overlaps, plus host traffic."""
    busbw, _ = allreduce_gb_per_s(device)
    collective_s = comm.collective_bytes / (busbw * 1e9) if comm.collective_bytes and busbw else 0.0
    window = {"backward": compute_s * 2 / 3, "compute": compute_s}.get(comm.overlap, 0.0)
    host_s = comm.host_bytes / (host_gb_per_s * ALLREDUCE_LINK_FRACTION * 1e9) if comm.host_bytes else 0.0
    if comm.host_overlapped:
        return max(0.0, collective_s + host_s - window) + comm.cpu_step_s
    return max(0.0, collective_s - window) + host_s + comm.cpu_step_s


def step_communication(answers: Answers, shape: ModelShape, gpus: int, sharding: str) -> Communication:
    """What a training step's GPUs exchange under `sharding` over `gpus` (speed_comm.communication), from the answers:
    a node's own, or ZeRO-3 across nodes (scale_out)."""
    task = answers.task
    return communication(sharding, gpus, shape.parameters, _trainable_parameters(shape, task),
                         value_bytes_of(task.precision), task.accumulation_steps,
                         BASE_WEIGHT_BYTES.get(task.method, 2.0), stacks.unsharded_between_syncs(
                             sharding, task.training_stack, task.accumulation_steps, gpus, task.sync_each_batch))


def _trainable_parameters(shape: ModelShape, task: Any) -> float:
    """The parameters a step trains: a frozen backbone's head, a LoRA's adapters, else all of them."""
    if task.method in methods.HEAD_METHODS:
        return float(head_size(shape, task.head_parameters, projector=task.method == "projector")[0])
    if task.method in methods.ADAPTER_METHODS and shape.kind == "transformer":
        matrices = methods.adapted_matrices(shape.hidden_size, shape.kv_width, shape.mlp_width, shape.gated_mlp,
                                            task.lora_targets)
        return float(methods.lora_parameters(matrices, task.lora_rank, shape.layers))
    return float(shape.parameters)

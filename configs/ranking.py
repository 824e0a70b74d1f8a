"""GPU ranking (memory floor, then score per yuan) and the budget fit: which build leads a recommendation."""

from __future__ import annotations

from dataclasses import dataclass

from pth_top.configs.assemble import PC_GPU_FORMS, assemble
from pth_top.configs.assembly import Assembly, Context, gpu_price
from pth_top.configs.parts import Part
from pth_top.configs.platforms import SYSTEM_GPU_FORMS, systems_for
from pth_top.configs.rules import gpu_usable_bytes


def gpu_metric(ctx: Context) -> tuple[str, str]:
    if ctx.tier == "entry":
        return "memory_gib", "GiB of GPU memory per yuan (entry tier: VRAM first, guide §6.1)"
    if ctx.answers.task.mode == "inference" and ctx.shape.kind == "transformer":
        return "bandwidth_gb_per_s", "memory bandwidth per yuan (LLM decoding is bandwidth-bound; Dettmers 2023)"
    return "bf16_dense_tflops", "dense BF16 tensor TFLOPS per yuan (training; Dettmers 2023)"


def usable_bytes(ctx: Context, gpu: Part) -> float:
    return gpu_usable_bytes(gpu["memory_gib"], gpu["memory_kind"], ctx.rules)


def unit_price(ctx: Context, gpu: Part) -> float:
    """What one GPU costs here: an SXM/OAM module's share of the cheapest whole server carrying this many."""
    if gpu["form"] in SYSTEM_GPU_FORMS:
        systems = [system for system in systems_for(ctx, gpu) if system["gpu_count"] == ctx.gpu_count]
        if systems:
            return min(system.price_cny for system in systems) / ctx.gpu_count
    return gpu_price(ctx, gpu)


def needed_bytes(ctx: Context, gpu: Part) -> int:
    """The workload's memory on this device: a CPU-only module (Raspberry Pi) has no CUDA context."""
    return ctx.memory.total_bytes - (ctx.memory.cuda_context_bytes if gpu["software"] == "cpu" else 0)


def ranked_gpus(ctx: Context) -> list[tuple[Part, bool]]:
    """GPUs allowed and buyable here, those meeting the memory floor first, each group by score per yuan."""
    metric, _ = gpu_metric(ctx)
    quiet = ctx.answers.budget.noise == "quiet"
    condition = ctx.answers.budget.condition
    ranked = []
    for gpu in ctx.catalog.of_kind("gpu"):
        if ctx.edge != (gpu["form"] == "edge"):
            continue
        if not ctx.edge and gpu["form"] not in PC_GPU_FORMS and not _in_a_system(ctx, gpu):
            continue
        if quiet and gpu["cooling"] in ("blower", "passive") and not ctx.edge:
            continue
        if not gpu.buyable(condition):  # end of life, or not sold new in China: used only
            continue
        fits = needed_bytes(ctx, gpu) <= usable_bytes(ctx, gpu)
        preferred = ctx.tier == "datacenter" and gpu["form"] in ("workstation", "datacenter")
        score = gpu[metric] / unit_price(ctx, gpu)
        ranked.append((not fits, not preferred, -score, gpu.id, gpu, fits))
    ranked.sort(key=lambda item: item[:4])
    return [(gpu, fits) for *_, gpu, fits in ranked]


def _in_a_system(ctx: Context, gpu: Part) -> bool:
    """An SXM/OAM module counts when the catalog sells a whole server with this many of it."""
    return gpu["form"] in SYSTEM_GPU_FORMS and any(
        system["gpu_count"] == ctx.gpu_count for system in systems_for(ctx, gpu))


def acceptable(ctx: Context, assembly: Assembly) -> bool:
    """Within budget and power limit, and breaking none of its own rules."""
    max_power = ctx.answers.budget.max_power_w
    return (
        assembly.total_cny <= ctx.budget_cny and (not max_power or assembly.wall_w <= max_power)
        and not assembly.unsatisfied
    )


@dataclass(frozen=True, slots=True)
class Fit:
    """The build that leads: an acceptable one whose GPU holds the workload, or (feasible False) the closest."""

    assembly: Assembly
    gpu: Part
    feasible: bool
    cheapest_fitting: tuple[float, Part] | None  # (price, GPU) of the cheapest build whose GPU holds the workload


def first_acceptable(ctx: Context, gpus: list[tuple[Part, bool]]) -> tuple[Assembly, Part] | None:
    """The best-ranked acceptable build whose GPU holds the workload, or None (GPUs alone over budget are skipped)."""
    for gpu, fits in gpus:
        if not fits:
            return None
        if unit_price(ctx, gpu) * ctx.gpu_count > ctx.budget_cny:
            continue
        assembly = assemble(ctx, gpu)
        if acceptable(ctx, assembly):
            return assembly, gpu
    return None


def fit_budget(ctx: Context, gpus: list[tuple[Part, bool]]) -> Fit:
    """The first acceptable build among GPUs that hold the workload; failing that, the best card within budget."""
    cheapest: tuple[float, Part] | None = None
    for gpu, fits in gpus:
        if not fits:
            break
        if cheapest is not None and unit_price(ctx, gpu) * ctx.gpu_count > max(ctx.budget_cny, cheapest[0]):
            continue  # its GPUs alone cost more than the budget and than a fitting build already tried
        assembly = assemble(ctx, gpu)
        if acceptable(ctx, assembly):
            return Fit(assembly, gpu, True, (assembly.total_cny, gpu))
        if cheapest is None or assembly.total_cny < cheapest[0]:
            cheapest = (assembly.total_cny, gpu)
    # Nothing acceptable holds the workload: lead with the largest card whose build stays within budget.
    by_memory = sorted((gpu for gpu, _ in gpus), key=lambda part: (-usable_bytes(ctx, part), unit_price(ctx, part)))
    fallback: tuple[Assembly, Part] | None = None
    for gpu in by_memory:
        if unit_price(ctx, gpu) * ctx.gpu_count > ctx.budget_cny:
            continue
        assembly = assemble(ctx, gpu)
        if assembly.total_cny <= ctx.budget_cny:
            return Fit(assembly, gpu, False, cheapest)
        if fallback is None or assembly.total_cny < fallback[0].total_cny:
            fallback = (assembly, gpu)
    if fallback is None:  # every card alone is over budget: the cheapest one
        gpu = min((gpu for gpu, _ in gpus), key=lambda part: (unit_price(ctx, part), part.id))
        fallback = (assemble(ctx, gpu), gpu)
    return Fit(fallback[0], fallback[1], False, cheapest)

"""The platform for a training step that waits on its GPUs' links: where the cheapest CPU and board give several
cards a slower PCIe link than theirs and ZeRO-3's gathers or the gradients' all-reduce then wait on it, the budget
buys the platform the job runs fastest on (audit DT72: four Gen5 RTX PRO 6000s on a Gen4 EPYC board, 61 of each 77 s
step on PCIe, where a Gen5 platform halved the step for a few thousand dollars of an unspent $36,666)."""

from __future__ import annotations

from pth_top.configs.assemble import best_cpu_build
from pth_top.configs.assembly import Assembly, Context
from pth_top.configs.host_link import ChosenParts, host_generation, lanes_per_gpu
from pth_top.configs.market import money
from pth_top.configs.parts import Part
from pth_top.configs.ranking import job_speed

LINK_BOUND_GAIN = 1.1  # the cards on full links at least this much faster than as built: the links are worth buying


def build_speed(ctx: Context, gpu: Part, assembly: Assembly) -> float:
    """The job's predicted rate on this build's links (its host's PCIe generation and lanes a card)."""
    parts = ChosenParts(assembly.chosen)
    return job_speed(ctx, gpu, host_generation(parts), lanes_per_gpu(parts))


def link_bound(ctx: Context, gpu: Part | None, assembly: Assembly) -> bool:
    """A multi-GPU training build whose CPU is the wizard's to choose and whose step would run LINK_BOUND_GAIN
    faster with each card on its own full link."""
    if gpu is None or ctx.gpu_count < 2 or ctx.answers.task.mode != "training" or "cpu" in ctx.pins \
            or "system" in assembly.chosen or "cpu" not in assembly.chosen:
        return False
    return job_speed(ctx, gpu) >= LINK_BOUND_GAIN * build_speed(ctx, gpu, assembly)


def fastest_links_within_budget(ctx: Context, gpu: Part | None, cheapest: Assembly) -> Assembly:
    """Where the step waits on the links (link_bound), the CPU, with its board, whose build the job runs fastest on
    and the budget buys, the cheaper among equals; else the cheapest build."""
    if not link_bound(ctx, gpu, cheapest):
        return cheapest
    assert gpu is not None
    best = best_cpu_build(ctx, gpu, cheapest, lambda build: round(build_speed(ctx, gpu, build)), desktop_only=False)
    if best is cheapest:
        return cheapest
    parts = ChosenParts(best.chosen)
    line = (f"the step waits on the links between its {ctx.gpu_count} GPUs, so the platform follows them: PCIe "
            f"Gen{host_generation(parts)} x{lanes_per_gpu(parts)} a card here, ~{build_speed(ctx, gpu, best):,.0f} "
            f"against ~{build_speed(ctx, gpu, cheapest):,.0f} a second on the cheapest "
            f"({cheapest.chosen['cpu'][0].name}, {money(cheapest.total_cny, ctx.currency, ctx.rules)} in all), "
            "within the budget")
    best.cpu_chosen_because(line)
    return best

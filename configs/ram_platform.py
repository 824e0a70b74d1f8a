"""The platform for a language model decoded from system RAM (llama.cpp --cpu-moe's routed experts, or a CPU-only
PC): the decode rate follows the RAM's bandwidth (channels x MT/s), so the budget buys the fastest RAM first, not the
cheapest board and kit."""

from __future__ import annotations

from pth_top.configs.assemble import assemble, best_cpu_build
from pth_top.configs.assembly import Assembly, Context, memory_on
from pth_top.configs.link_platform import fastest_links_within_budget
from pth_top.configs.market import money
from pth_top.configs.parts import Part
from pth_top.configs.speed_cpu import ram_bandwidth_gb_per_s


def ram_gb_per_s(assembly: Assembly) -> float:
    cpu, kit = assembly.chosen.get("cpu"), assembly.chosen.get("memory_kit")
    if not cpu or not kit:
        return 0.0
    return ram_bandwidth_gb_per_s(cpu[0].spec, kit[0].spec, kit[1])[0]


def runs_from_ram(ctx: Context, gpu: Part) -> bool:
    """Whether some of the model runs from RAM on this GPU: experts it cannot hold (task.expert_offload) or layers
    (task.layer_offload, on a card you have)."""
    memory = memory_on(ctx, gpu)
    return bool(memory.offloaded_layers or ctx.answers.task.expert_offload and memory.host_offload_bytes)


def chooses_ram_for_experts(ctx: Context, assembly: Assembly, gpu: Part) -> bool:
    """A build of which some runs from RAM on this GPU, and whose CPU is the wizard's to choose: not pinned, not part
    of a whole server."""
    return runs_from_ram(ctx, gpu) and cpu_is_chosen(ctx, assembly)


def cpu_is_chosen(ctx: Context, assembly: Assembly) -> bool:
    """Whether the build's CPU is the wizard's to choose: not pinned, not part of a whole server."""
    return "cpu" not in ctx.pins and "system" not in assembly.chosen


def fastest_ram_within_budget(ctx: Context, gpu: Part | None, cheapest: Assembly) -> Assembly:
    """With the experts in RAM (task.expert_offload): the desktop CPU, with its board and kit (the least money a GB/s),
    whose RAM has the most bandwidth and whose build the budget buys, the cheaper among equals; else the cheapest
    build."""
    # Desktops only: a workstation's share of its many channels is not predicted.
    best = best_cpu_build(ctx, gpu, cheapest, lambda build: round(ram_gb_per_s(build), 1))
    if best is not cheapest:
        what = ("the CPU decodes from RAM" if gpu is None else "the experts run from RAM (llama.cpp --cpu-moe)"
                if ctx.answers.task.expert_offload else "some layers run from RAM (llama.cpp -ngl)")
        line = (f"{what}, so the decode rate follows its bandwidth: "
                f"{ram_gb_per_s(best):,.1f} GB/s on this platform against {ram_gb_per_s(cheapest):,.1f} on the "
                f"cheapest ({cheapest.chosen['cpu'][0].name}, {money(cheapest.total_cny, ctx.currency, ctx.rules)} "
                "in all), within the budget")
        best.cpu_chosen_because(line)
    return best


def platform_for_ram(ctx: Context, gpu: Part, assembly: Assembly, holding: list[Part] | None
                     ) -> tuple[Part, Assembly]:
    """The card and platform of a build of which some may run from RAM: where the card is the wizard's to choose
    (holding: the cards that hold the GPU part) and the experts are offloaded, the one the budget decodes fastest
    with; else this card on its fastest RAM within budget, or on the platform whose links a training step waiting on
    them runs fastest over (link_platform). One chooser for the build and its way out (review RW)."""
    if holding is not None and ctx.answers.task.expert_offload and cpu_is_chosen(ctx, assembly):
        return experts_in_ram_choice(ctx, (gpu, assembly), holding)
    if chooses_ram_for_experts(ctx, assembly, gpu):
        return gpu, fastest_ram_within_budget(ctx, gpu, assembly)
    return gpu, fastest_links_within_budget(ctx, gpu, assembly)


EXPERTS_IN_RAM_GPUS_TRIED = 8  # the best-ranked cards that hold the GPU part, each tried with its fastest RAM


def experts_in_ram_choice(ctx: Context, chosen: tuple[Part, Assembly], holding: list[Part]) -> tuple[Part, Assembly]:
    """Of the GPUs that hold the job's GPU part, the one whose build leaves the most for fast RAM: each with its
    fastest platform within budget; the RAM's bandwidth first, then the card's (a used 12 GB card on DDR4 decoded
    gpt-oss-20b at 18 tokens/s where an 8 GB one on DDR5 does 31)."""
    tried = [chosen] + [(gpu, assembly) for gpu in holding[:EXPERTS_IN_RAM_GPUS_TRIED] if gpu.id != chosen[0].id
                        and not (assembly := assemble(ctx, gpu)).unsatisfied and assembly.total_cny <= ctx.budget_cny]
    builds = []  # (all on the card, the build with its RAM, the card)
    for gpu, assembly in tried:
        from_ram = runs_from_ram(ctx, gpu)
        builds.append((not from_ram, fastest_ram_within_budget(ctx, gpu, assembly) if from_ram else assembly, gpu))
    # A card that holds every expert decodes at its own bandwidth: first; then the RAM's bandwidth, then the card's.
    best = max(builds, key=lambda each: (each[0], round(ram_gb_per_s(each[1]), 1), each[2]["bandwidth_gb_per_s"]))
    return best[2], best[1]

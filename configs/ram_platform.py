"""The platform for llama.cpp --cpu-moe: its routed experts run from system RAM, so the decode rate follows the RAM's
bandwidth (channels x MT/s), and the budget buys the fastest RAM first, not the cheapest board and kit."""

from __future__ import annotations

import dataclasses

from pth_top.configs.assemble import assemble
from pth_top.configs.assembly import Assembly, Context, offered
from pth_top.configs.market import money
from pth_top.configs.parts import Part
from pth_top.configs.speed_cpu import ram_bandwidth_gb_per_s


def ram_gb_per_s(assembly: Assembly) -> float:
    cpu, kit = assembly.chosen.get("cpu"), assembly.chosen.get("memory_kit")
    if not cpu or not kit:
        return 0.0
    return ram_bandwidth_gb_per_s(cpu[0].spec, kit[0].spec, kit[1])[0]


def fastest_ram_within_budget(ctx: Context, gpu: Part, cheapest: Assembly) -> Assembly:
    """With the experts in RAM (task.expert_offload): the desktop CPU, board and kit with the most RAM bandwidth whose
    build the budget buys, the cheaper among equals; the cheapest build where none is faster."""
    best, best_key = cheapest, (round(ram_gb_per_s(cheapest), 1), -cheapest.total_cny)
    for cpu in offered(ctx, "cpu"):
        if cpu["platform"] != "desktop":  # a workstation's many channels: its share of them is not predicted
            continue
        trial = assemble(dataclasses.replace(ctx, pins={**ctx.pins, "cpu": (cpu.id, 1)}), gpu)
        key = (round(ram_gb_per_s(trial), 1), -trial.total_cny)
        if not trial.unsatisfied and trial.total_cny <= ctx.budget_cny and key > best_key:
            best, best_key = trial, key
    if best is not cheapest:
        best.reasons.setdefault("cpu", []).append(
            f"the experts run from RAM (llama.cpp --cpu-moe), so the decode rate follows its bandwidth: "
            f"{ram_gb_per_s(best):,.1f} GB/s on this platform against {ram_gb_per_s(cheapest):,.1f} on the cheapest "
            f"({cheapest.chosen['cpu'][0].name}, {money(cheapest.total_cny, ctx.currency, ctx.rules)} in all), "
            "within the budget")
        best.alternatives["cpu"] = cheapest.alternatives.get("cpu", ())
    return best

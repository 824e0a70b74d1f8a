"""The build's RAM: the cheapest kit a board takes for the RAM floor; where the decode reads RAM, every channel filled
and the least money a GB/s."""

from __future__ import annotations

import math

from pth_top.configs.assembly import Assembly, Context, offered, part_price, rank
from pth_top.configs.parts import Part
from pth_top.configs.rules import Floor
from pth_top.configs.speed_cpu import ram_bandwidth_gb_per_s

UNFILLABLE_PLATFORM_CNY = 1e12  # sorts a board that takes no RAM for the floor after every other


def board_with_ram_cost(ctx: Context, board: Part, need_ecc: bool, ram_floor_gib: float, cpu: Part | None = None
                        ) -> float:
    """The board with the RAM choose_ram would buy for it (the cheapest kit for the floor; where the decode reads
    RAM, the least money a GB/s over every channel); one that takes none sorts after every other (the RAM rule then
    says why)."""
    kits = kit_order(ctx, board, need_ecc, ram_floor_gib, cpu)
    return part_price(ctx, board) + (kits[0][3] if kits else UNFILLABLE_PLATFORM_CNY)


def kit_order(ctx: Context, board: Part, need_ecc: bool, floor_gib: float, cpu: Part | None, sockets: int = 1
              ) -> list[tuple[float, str, Part, float, int]]:
    """The kits the board takes for the floor as (rank key, id, kit, price, how many), best first: the cheapest, or
    where the decode reads RAM (channels_to_fill), the least money a GB/s."""
    channels = channels_to_fill(ctx, cpu, sockets)
    found = ram_candidates(ctx, board, need_ecc, floor_gib, channels)
    keyed = by_money_a_bandwidth(cpu, found) if channels and cpu is not None else found
    return sorted((key, kit.id, kit, price, quantity)
                  for (key, kit, quantity), (price, _, _) in zip(keyed, found, strict=True))


def channels_to_fill(ctx: Context, cpu: Part | None, sockets: int = 1) -> int:
    """The memory channels a build that decodes from RAM (CPU-only, llama.cpp --cpu-moe's experts, or -ngl's layers
    on a card you have) fills: its rate is the populated channels' bandwidth (an EPYC 9554 with 4 of its 12 filled
    reads at a third); else 0."""
    task = ctx.answers.task
    if cpu is None or not (ctx.gpu_count == 0 or task.expert_offload or task.layer_offload and "gpu" in ctx.pins):
        return 0
    return int(cpu.get("memory_channels_count", 0) or 0) * sockets  # a 2-socket server: both CPUs' channels


def ram_candidates(ctx: Context, board: Part, need_ecc: bool, floor_gib: float, channels: int = 0
                   ) -> list[tuple[float, Part, int]]:
    """(price, kit, how many) for each kit the board takes in the quantity the floor needs, and at least one module
    a channel of `channels` the board has slots for (1 yuan a module breaks ties toward fewer modules)."""
    modules_floor = min(channels, board["dimm_slots_count"])
    candidates = []
    for kit in offered(ctx, "memory_kit"):
        if kit["memory_type"] != board["memory_type"] or kit["registered"] != board["memory_registered"]:
            continue
        if need_ecc and not kit["ecc"]:
            continue
        quantity = max(1, math.ceil(floor_gib / kit["capacity_gib"]), math.ceil(modules_floor / kit["modules_count"]))
        if quantity * kit["modules_count"] > board["dimm_slots_count"]:
            continue
        if quantity * kit["capacity_gib"] > board["max_memory_gib"]:
            continue
        candidates.append((part_price(ctx, kit) * quantity + kit["modules_count"] * quantity, kit, quantity))
    return candidates


def by_money_a_bandwidth(cpu: Part, candidates: list[tuple[float, Part, int]]) -> list[tuple[float, Part, int]]:
    """Kits for a build that decodes from RAM, keyed by price a GB/s: the decode rate is the bandwidth, and two DDR5
    DIMMs a channel on a desktop run at 3,600 MT/s, not 5,600 (gpt-oss-120b's experts: 2 x 48 GB at 89.6 GB/s, not
    4 x 32 GB at 57.6, where the 48s cost less than 1.56x as much)."""
    return [(price / max(ram_bandwidth_gb_per_s(cpu.spec, kit.spec, quantity)[0], 1e-9), kit, quantity)
            for price, kit, quantity in candidates]


def choose_ram(ctx: Context, asm: Assembly, board: Part, need_ecc: bool, floor: Floor) -> None:
    """The build's kit and how many (kit_order's first, or the pinned one), with the lines that say why."""
    cpu, sockets = asm.chosen.get("cpu", (None, 1))
    channels = channels_to_fill(ctx, cpu, sockets)
    ordered = kit_order(ctx, board, need_ecc, floor.value, cpu, sockets)
    candidates = [(key, kit, quantity) for key, _, kit, _, quantity in ordered]
    fitting = [kit for kit in offered(ctx, "memory_kit") if kit["memory_type"] == board["memory_type"]
               and kit["registered"] == board["memory_registered"]] or offered(ctx, "memory_kit")
    kit, quantity = rank(ctx, asm, "memory_kit", candidates, fitting, floor.reason,
                         closest=lambda part: (-part["capacity_gib"], part_price(ctx, part), part.id))
    if quantity * kit["capacity_gib"] < floor.value:
        asm.unsatisfied_add(f"RAM {quantity} x {kit['capacity_gib']:g} GiB = {quantity * kit['capacity_gib']:g} GiB "
                            f"is below the floor: {floor.reason}")
    lines = [floor.reason, f"{quantity} x {kit['capacity_gib']:g} GiB {kit['memory_type']}-{kit['speed_mt_per_s']:g} = "
             f"{quantity * kit['capacity_gib']:g} GiB, "
             + (f"the kit with the least money a GB/s of bandwidth that fits {board.name}'s "
                f"{board['dimm_slots_count']} slots, a module in each of the {channels} memory channels (the decode "
                "reads RAM at their bandwidth)" if channels and "cpu" in asm.chosen else
                f"cheapest kit that fits {board.name}'s {board['dimm_slots_count']} slots")]
    if kit["ecc"]:
        lines.append("ECC registered memory: a server platform's memory, and at the high budget tier required for "
                     "3+ GPUs, whose workstation platform it comes with (guide §6.1)")
    if kit["memory_type"] == "DDR4" and ctx.answers.data.dataset_size_gb >= ctx.rules.ram.large_dataset_gb:
        lines.append(
            "the guide suggests DDR5 >= 4800 for large data (§3.1); "
            "capacity matters more than generation for data loading"
        )
    asm.reasons["memory_kit"] = lines

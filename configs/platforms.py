"""What holds the GPUs: slot spacing on a workstation board, and whole servers (HGX/DGX) bought as one unit."""

from __future__ import annotations

from pth_top.configs.assembly import Assembly, Context, rank
from pth_top.configs.parts import Part
from pth_top.configs.power import circuit_w
from pth_top.configs.rules import ram_floor_gib, storage_capacity_gb

# GPU forms that only come on a server's own baseboard (kind "system"), never as a card for a board.
SYSTEM_GPU_FORMS = ("sxm", "oam")


def gpus_that_fit(board: Part, card_width_slots: int) -> int:
    """Cards of this width the board takes without risers.

    Slots in consecutive positions: a card covering w positions blocks the next w - 1; the last card may
    hang one bracket below the board (an EEB case has one more bracket than a 7-slot board has slots).
    """
    positions = board.get("slot_positions_count", 0)
    if not positions or card_width_slots <= 1:
        return int(board["gpu_slots_count"])
    return int(min(board["gpu_slots_count"], (positions + 1) // card_width_slots))


def slot_fit_problem(board: Part, gpu: Part, gpu_count: int) -> str:
    """One sentence when the cards are too wide for the board's slot spacing, else ""."""
    width = int(gpu["slot_width_count"])
    fit = gpus_that_fit(board, width)
    if gpu_count <= fit or gpu_count > board["gpu_slots_count"]:  # too few slots at all: a compatibility problem
        return ""
    positions = board.get("slot_positions_count", 0)
    where = f"the {positions} slot positions of {board.name}" if positions else (
        f"{board.name}'s {board['gpu_slots_count']} GPU slot(s)")
    return (f"slots: {gpu_count} x {width}-slot {gpu.name} do not fit {where} ({fit} fit): use PCIe risers in an "
            "open frame, 2-slot blower cards, or a server chassis")


def systems_for(ctx: Context, gpu: Part) -> list[Part]:
    return [system for system in ctx.catalog.of_kind("system") if system["gpu_id"] == gpu.id]


def assemble_system(ctx: Context, asm: Assembly, gpu: Part) -> None:
    """An SXM/OAM GPU comes inside a whole server: the server is the one part, its GPUs are included."""
    count = ctx.gpu_count
    matching = [system for system in systems_for(ctx, gpu) if system["gpu_count"] == count]
    candidates = [(system.price_cny, system, 1) for system in matching]
    fallback = systems_for(ctx, gpu) or ctx.catalog.of_kind("system")
    if not fallback:
        asm.unsatisfied_add(f"{gpu.name} is an {gpu['form'].upper()} module: it comes only inside a whole server, "
                            "and the catalog has none (add one to the user catalog as a [[system]])")
        return
    offered = sorted({system["gpu_count"] for system in fallback})
    system, _ = rank(ctx, asm, "system", candidates, fallback,
                     f"a server carrying {count} x {gpu.name} (catalog servers carry {offered})")
    asm.unit_prices["gpu"] = 0.0  # the server's price includes its GPUs
    asm.reasons["gpu"] = [f"{gpu.name} is an {gpu['form'].upper()} module on {system.name}'s baseboard: "
                          "bought with the server, priced there"]
    _system_floors(ctx, asm, system)
    _system_power(ctx, asm, system)


def _system_floors(ctx: Context, asm: Assembly, system: Part) -> None:
    task = ctx.answers.task
    gpu_gib = ctx.catalog.parts[system["gpu_id"]]["memory_gib"] * system["gpu_count"]
    ram = ram_floor_gib(ctx.answers.data.dataset_size_gb, gpu_gib, 0.0, ctx.rules)
    storage = storage_capacity_gb(ctx.answers.data.dataset_size_gb, ctx.shape.parameters, ctx.rules, mode=task.mode,
                                  precision=task.precision, method=task.method)
    if system["memory_gib"] < ram.value:
        asm.unsatisfied_add(f"{system.name} has {system['memory_gib']:g} GiB RAM, below the floor: {ram.reason}")
    if system["storage_gb"] < storage.value:
        asm.unsatisfied_add(f"{system.name} has {system['storage_gb']:,.0f} GB of data drives, below the floor: "
                            f"{storage.reason}")
    asm.reasons["system"] = [
        f"{system['form_factor']} server with {system['gpu_count']} x {ctx.catalog.parts[system['gpu_id']].name}, "
        f"{system['cpu_name']} ({system['cpu_cores_count']} cores), {system['memory_gib']:g} GiB RAM, "
        f"{system['storage_gb']:,.0f} GB data drives: bought as one unit",
        ram.reason, storage.reason, *system.notes,
    ]


def _system_power(ctx: Context, asm: Assembly, system: Part) -> None:
    """Redundant server PSUs: N units carry the load and R are spares, so capacity is N units, not N + R."""
    rules = ctx.rules
    carrying = system["psu_count"] - system["psu_redundant_count"]
    capacity = carrying * system["psu_capacity_w"]
    load = system["max_power_w"]
    asm.sustained_w = asm.peak_w = asm.psu_required_w = asm.wall_w = load
    asm.psu_capacity_w = capacity
    if capacity < load:
        asm.unsatisfied_add(f"{system.name}: {carrying} carrying PSUs give {capacity:,.0f} W, below its "
                            f"{load:,.0f} W maximum")
    large_a = max(rules.power.socket_currents_a)
    per_cord = load / carrying
    feeds = (f"one {large_a:g} A feed per PSU cord ({system['psu_count']} cords, ~{per_cord:,.0f} W each with "
             f"{carrying} carrying), split over two circuits (A/B) so a lost circuit leaves {carrying} units")
    lines = (
        f"power: {system['psu_count']} x {system['psu_capacity_w']:,.0f} W redundant PSUs, "
        f"{carrying}+{system['psu_redundant_count']}: capacity {capacity:,.0f} W (N units, not N+R) for up to "
        f"{load:,.0f} W",
        f"circuit: ~{load:,.0f} W is {load / circuit_w(large_a, rules):.1f} x a {large_a:g} A socket: a rack PDU with "
        f"{feeds}",
    )
    asm.power_lines = lines
    asm.reasons["system"].extend(lines)
    asm.warnings.append(lines[1])
    asm.heat_line = f"cooling: ~{load:,.0f} W of heat: rack airflow through the server's own fans, not a desktop case"

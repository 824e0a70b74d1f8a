"""What holds the GPUs beyond a desktop board: server barebones for 5-8 PCIe cards and whole servers (HGX/DGX)
bought as one unit (a board's own slots and open frames: configs.slots)."""

from __future__ import annotations

import dataclasses
import math

from msgspec import NODEFAULT
from msgspec.structs import fields as struct_fields

from pth_top.configs.assembly import Assembly, Context, buyable, offered, part_price, rank, run_fits, trees
from pth_top.configs.host_ram import host_ram_need
from pth_top.configs.mains import Mains, largest, mains_of, outlets
from pth_top.configs.market import MARKET_NAMES, money
from pth_top.configs.owned import all_owned, owns_server
from pth_top.configs.part_types import SYSTEM_GPU_FORMS, System
from pth_top.configs.parts import Part
from pth_top.configs.power import power_estimate, wall_draw_w
from pth_top.configs.rules import (
    Floor,
    cpu_floor,
    decode_cores_floor,
    ram_floor_gib,
    storage_capacity_gb,
)
from pth_top.configs.slots import MOUNT_ROLES, ducts_for, ecc_required, gpus_held
from pth_top.configs.storage_choice import choose_storage

# A system's optional keys with their defaults, so a barebone or user entry that leaves one out still reads.
SYSTEM_DEFAULTS = {field.name: field.default for field in struct_fields(System) if field.default is not NODEFAULT}

# Pins that make a build a desktop one: its own board, PSU, cooler or open frame.
DESKTOP_PIN_ROLES = frozenset({"motherboard", "psu", "cooler", "case", *MOUNT_ROLES})


def with_defaults(system: Part) -> Part:
    return dataclasses.replace(system, spec={**SYSTEM_DEFAULTS, **system.spec})


def whole_systems(ctx: Context) -> list[Part]:
    return [with_defaults(system) for system in offered(ctx, "system") if not system.get("barebone", False)]


def systems_for(ctx: Context, gpu: Part) -> list[Part]:
    """Whole servers whose baseboard carries this GPU, any count."""
    return [system for system in whole_systems(ctx) if system.get("gpu_id") == gpu.id]


def carries_the_job(ctx: Context, system: Part) -> bool:
    """Whether the job runs on this server: one of its GPU count, or your own (budget.owned_gpu) whose GPUs include
    the job's, a share of it (a cloud VM's one of its eight, as Colab's A100; audit BL52)."""
    count = int(system["gpu_count"])
    return count == ctx.gpu_count or count > ctx.gpu_count and all_owned(
        ctx.answers, ctx.catalog.get(system.get("gpu_id") or ""))


def share_of(ctx: Context, system: Part) -> str:
    """How much of an owned server the job runs on ("" where all of it)."""
    count = int(system["gpu_count"])
    return f"{ctx.gpu_count} of its {count} GPUs (budget.owned_gpu_count)" if ctx.gpu_count < count else ""


def system_options(ctx: Context, gpu: Part) -> list[tuple[Part, int]]:
    """Server units that hold ctx.gpu_count x gpu, cheapest first, quantity 1 each (the ranking's hook).

    SXM/OAM: whole systems carrying exactly that many (their price includes the GPUs). PCIe cards when the
    desktop boards cannot hold them (see needs_server_chassis): barebones whose slots take the cards.
    """
    if gpu["form"] in SYSTEM_GPU_FORMS:  # an owned server's share: the smallest that carries it
        units = [system for system in systems_for(ctx, gpu) if carries_the_job(ctx, system)]
    else:
        units = [chassis for chassis in barebones(ctx) if not barebone_fit_problems(chassis, gpu, ctx.gpu_count)]
    return [(unit, 1) for unit in sorted(units, key=lambda part: (
        part_price(ctx, part), part.get("gpu_count") or 0, part.id))]


def assemble_system(ctx: Context, asm: Assembly, gpu: Part) -> None:
    """An SXM/OAM GPU comes inside a whole server: the server is the one part, its GPUs are included."""
    count = ctx.gpu_count
    own = systems_for(ctx, gpu)
    if not own:
        availability = _availability(ctx, gpu)
        asm.unsatisfied_add(f"{gpu.name} is an {gpu['form'].upper()} module: it comes only inside a whole server, "
                            "and the catalog prices no server for it" + (f"; it{availability}" if availability else "")
                            + f"; {_alternatives(ctx, gpu)}")
        return
    candidates = [(part_price(ctx, system), system, 1) for system, _ in system_options(ctx, gpu)]
    system, _ = rank(ctx, asm, "system", candidates, own,
                     f"a server carrying {count} x {gpu.name} (catalog servers carry "
                     f"{sorted({part['gpu_count'] for part in own})})")
    asm.unit_prices["gpu"] = 0.0  # the server's price includes its GPUs
    asm.reasons["gpu"] = [f"{gpu.name} is an {gpu['form'].upper()} module on {system.name}'s baseboard: "
                          "bought with the server, priced there"]
    _system_floors(ctx, asm, system)
    _system_power(ctx, asm, system)
    if share_of(ctx, system):  # a cloud VM's GPUs: the server's circuits are its operator's (audit BR54)
        asm.warnings = [line for line in asm.warnings if line not in asm.power_lines]
    if not buyable(ctx, gpu) and not all_owned(ctx.answers, gpu):
        line = f"availability: {gpu.name}{_availability(ctx, gpu)}; {_alternatives(ctx, gpu)}"
        asm.warnings.append(line)
        asm.reasons["system"].insert(1, line)


def _system_floors(ctx: Context, asm: Assembly, system: Part) -> None:
    task = ctx.answers.task
    gpu_gib = ctx.catalog.parts[system["gpu_id"]]["memory_gib"] * ctx.gpu_count  # an owned share: its GPUs
    # What the job holds in RAM, as on a PC (audit ZV: DBRX's 1,960 GiB of offloaded states on a DGX).
    host_gib, host_text = host_ram_need(ctx)
    ram = ram_floor_gib(ctx.answers.data.dataset_size_gb, gpu_gib, host_gib, ctx.rules, host_text,
                        table_in_ram=trees(ctx))
    storage = storage_capacity_gb(ctx.answers.data.dataset_size_gb, ctx.shape.parameters, ctx.rules, mode=task.mode,
                                  precision=task.precision, method=task.method, run_fits=run_fits(ctx, asm))
    if system["memory_gib"] < ram.value:
        asm.unsatisfied_add(f"{system.name} has {system['memory_gib']:g} GiB RAM, below the floor: {ram.reason}")
    # Drives go in its bays: no reason to refuse the server (audit ZY: a 32 TB corpus refused an 8 x H200 one).
    if system["storage_gb"] < storage.value:
        asm.warnings.append(f"storage: {system.name} has {system['storage_gb']:,.0f} GB of data drives, "
                            f"{storage.value - system['storage_gb']:,.0f} GB below the floor ({storage.reason}): add "
                            "or swap in larger NVMe drives (not priced here), or read the data from network storage")
    asm.reasons["system"] = [
        f"{system['form_factor']} server with {system['gpu_count']} x {ctx.catalog.parts[system['gpu_id']].name}, "
        f"{system['cpu_name']} ({system['cpu_cores_count']} cores), {system['memory_gib']:g} GiB RAM, "
        f"{system['storage_gb']:,.0f} GB data drives: "
        + ("the server you have (budget.owned_gpu), its host taken as this catalog entry's: check yours"
           + (f"; the job runs on {share}, a share whose host CPU, RAM and drives may be less" if (
               share := share_of(ctx, system)) else "")
           if owns_server(ctx.answers, ctx.catalog, system) else "bought as one unit"),
        ram.reason, storage.reason, *system.notes_for(ctx.market),
    ]


def _system_power(ctx: Context, asm: Assembly, system: Part) -> None:
    """The server's maximum draw, or a share's part of it, its GPUs' share (review r72: one A100 of a DGX was the
    whole 6,500 W, refused under a 1,500 W limit)."""
    share = min(1.0, ctx.gpu_count / int(system["gpu_count"]))
    load = system["max_power_w"] * share
    asm.sustained_w = asm.peak_w = asm.psu_required_w = asm.wall_w = load
    server_power(ctx, asm, system, load, load, f"{load:,.0f} W maximum" + (
        f", {ctx.gpu_count} of its {system['gpu_count']} GPUs' share of its {system['max_power_w']:,.0f}"
        if share < 1.0 else ""))


def server_power(ctx: Context, asm: Assembly, server: Part, required_w: float, wall_w: float, need: str) -> None:
    """Server PSUs: N units carry the load and R are spares, so capacity is N units, not N + R; and the circuits."""
    rules = ctx.rules
    supply = mains_of(rules.power.mains, ctx.market)
    count, spares = server["psu_count"], server["psu_redundant_count"]
    carrying = count - spares
    capacity = carrying * server["psu_capacity_w"]
    asm.psu_capacity_w = capacity
    if capacity < required_w:
        asm.unsatisfied_add(f"{server.name}: {carrying} carrying PSUs give {capacity:,.0f} W, below the "
                            f"{required_w:,.0f} W it needs ({need})")
    redundancy = ("redundant PSUs" if spares else
                  "PSUs (not redundant: every PSU carries load, so a lost PSU or circuit stops the server)")
    lines = (
        f"power: {count} x {server['psu_capacity_w']:,.0f} W {redundancy}, {carrying}+{spares}: capacity "
        f"{capacity:,.0f} W (N units, not N+R) for {required_w:,.0f} W ({need})",
        _server_circuit_line(supply, count, spares, wall_w),
    )
    asm.power_lines = lines
    asm.reasons.setdefault("system", []).extend(lines)
    if spares or wall_w > outlets(supply)[0].continuous_w:
        asm.warnings.append(lines[1])  # one ordinary socket carrying it is no warning
    asm.heat_line = (f"cooling: ~{wall_w:,.0f} W of heat: rack airflow through the server's own fans, front to back, "
                     "not a desktop case")


def _server_circuit_line(supply: Mains, psu_count: int, spares: int, wall_w: float) -> str:
    """Which supply the server needs in the market: an ordinary socket, dedicated circuits, or 3-phase."""
    ordinary, large = outlets(supply)[0], largest(supply)
    carrying = psu_count - spares
    per_cord = wall_w / carrying  # after a spare fails, the carrying units take it all
    circuits = math.ceil(wall_w / large.continuous_w)
    head = f"circuit: ~{wall_w:,.0f} W from the wall over {psu_count} PSU cords (~{per_cord:,.0f} W each)"
    rated = f"{large.name} at {large.voltage_v:g} V, {large.continuous_w:,.0f} W ({supply.standard})"
    if spares:
        feeds = (f"two {large.name} circuits, A and B ({rated})" if circuits == 1 else
                 f"{circuits} x {large.name} circuits per feed ({rated}), or a {supply.three_phase} rack PDU per feed")
        return (f"{head}: split the cords over two feeds (A/B), each able to carry all of it alone, so a lost "
                f"circuit leaves {carrying} units: {feeds}")
    if wall_w <= ordinary.continuous_w:
        return f"{head}: one {ordinary.name} socket ({ordinary.continuous_w:,.0f} W) carries it"
    if circuits == 1:
        return (f"{head}: more than a {ordinary.name} socket ({ordinary.continuous_w:,.0f} W): one dedicated "
                f"{large.name} circuit ({rated}) for all cords, or the cords on separate {ordinary.name} circuits"
                if per_cord <= ordinary.continuous_w else
                f"{head}: one dedicated {large.name} circuit ({rated}) for all cords")
    return (f"{head}: {circuits} x the {large.continuous_w:,.0f} W of a {large.name} circuit: each cord on its own "
            f"{large.name} circuit, or a {supply.three_phase} rack PDU")


def barebones(ctx: Context) -> list[Part]:
    return [with_defaults(system) for system in offered(ctx, "system") if system.get("barebone", False)]


def barebone_fit_problems(chassis: Part, gpu: Part, gpu_count: int) -> list[str]:
    """Why these cards do not go into this barebone's GPU slots, one sentence each (empty: they fit)."""
    problems = []
    if gpu_count > chassis["gpu_slots_count"]:
        problems.append(f"{chassis.name} has {chassis['gpu_slots_count']} GPU slots for {gpu_count} GPUs")
    if gpu["slot_width_count"] > chassis["gpu_slot_width_count"]:
        problems.append(f"{gpu.name} is {gpu['slot_width_count']} slots wide; {chassis.name}'s GPU slots take "
                        f"{chassis['gpu_slot_width_count']}-slot cards (blower or passive)")
    if gpu["length_mm"] > chassis["gpu_length_max_mm"]:
        problems.append(f"{gpu.name} is {gpu['length_mm']:g} mm long; {chassis.name} takes "
                        f"{chassis['gpu_length_max_mm']:g} mm")
    coolers = chassis.get("gpu_coolers") or []
    if coolers and gpu["cooling"] not in coolers:
        problems.append(f"{gpu.name} is an open-air ({gpu['cooling']}) card: {chassis.name} cools its GPUs with "
                        f"front-to-back chassis airflow for {' or '.join(coolers)} cards, and packed side by side an "
                        "open-air card recirculates its neighbour's heat and throttles: use blower or passive cards "
                        "(RTX PRO Server, L40S, L4 class), or fewer open-air cards in a workstation tower")
    if gpu["board_power_w"] > chassis["gpu_slot_power_w"]:
        problems.append(f"{gpu.name} draws {gpu['board_power_w']:g} W; each GPU slot's power lead in "
                        f"{chassis.name} gives {chassis['gpu_slot_power_w']:g} W")
    return problems


def desktop_gpu_capacity(ctx: Context, gpu: Part) -> int:
    """Most cards like this one single-socket board in the catalog holds (open-air ones on risers where they must)."""
    boards = [board for board in offered(ctx, "motherboard") if board["cpu_sockets_count"] == 1]
    return max((gpus_held(ctx, board, gpu) for board in boards), default=0)


def server_chassis_allowed(ctx: Context, gpu: Part) -> bool:
    """A barebone may hold these cards: one takes them, and no desktop part (board, PSU, cooler) was pinned."""
    if DESKTOP_PIN_ROLES & set(ctx.pins):
        return False
    return bool(system_options(ctx, gpu))


def needs_server_chassis(ctx: Context, gpu: Part) -> bool:
    """Build around a barebone: more cards than any desktop board holds, passive cards that need a server's
    front-to-back airflow (more than a desktop case ducts, when a barebone takes them), or a pinned barebone; never
    with pinned desktop parts."""
    pinned = ctx.pins.get("system")
    if pinned:
        part = ctx.catalog.get(pinned[0])
        return part is not None and bool(part.get("barebone", False))
    if DESKTOP_PIN_ROLES & set(ctx.pins) or not barebones(ctx):  # a desktop build was pinned
        return False
    if ctx.gpu_count > desktop_gpu_capacity(ctx, gpu):
        return True
    # One or two passive cards take a fan duct each in a desktop PC (audits ZH, ZJ, ZL: an owned T4 was put in an
    # 8-GPU barebone).
    return gpu["cooling"] == "passive" and not ducts_for(ctx, gpu) and bool(system_options(ctx, gpu))


def assemble_barebone(ctx: Context, asm: Assembly, gpu: Part, ram_floor: Floor, why: str = "") -> None:
    """PCIe cards in a server barebone: the chassis (board, PSUs, fans, heatsinks) plus CPUs, RAM and drives."""
    # assemble imports this module; its RAM and storage choosers take a board, which the barebone stands in for.
    from pth_top.configs.ram_choice import choose_ram

    count = ctx.gpu_count
    candidates = [(part_price(ctx, chassis), chassis, 1) for chassis, _ in system_options(ctx, gpu)]
    chassis, _ = rank(ctx, asm, "system", candidates, barebones(ctx),
                      f"a server barebone taking {count} x {gpu.name}",
                      closest=lambda part: (len(barebone_fit_problems(part, gpu, count)), part_price(ctx, part),
                                            part.id))
    chassis = with_defaults(chassis)  # a pinned one comes straight from the catalog
    for problem in barebone_fit_problems(chassis, gpu, count):
        asm.unsatisfied_add(problem)
    desktop = desktop_gpu_capacity(ctx, gpu)
    why = why or (f"more than any desktop board in the catalog holds (at most {desktop})" if count > desktop else
                  "passive cards, cooled only by a server's front-to-back airflow")
    asm.reasons["system"] = [
        f"{count} x {gpu['slot_width_count']}-slot {gpu.name}: {why}; built around a "
        f"{chassis['form_factor']} server barebone",
        f"{chassis.name}: chassis, board, CPU heatsink, {chassis['psu_count']} PSUs and fans included; "
        f"{chassis['gpu_slots_count']} GPU slots ({chassis['gpu_slot_width_count']}-slot cards up to "
        f"{chassis['gpu_length_max_mm']:g} mm, {chassis['gpu_slot_power_w']:g} W lead each); you add the GPUs, "
        f"{chassis['cpu_sockets_count']} x {chassis['cpu_socket']} CPU, RAM and drives",
        *chassis.notes_for(ctx.market),
    ]
    if gpu["form"] == "consumer":
        line = (f"licence: {gpu.name} is a GeForce card; NVIDIA's GeForce driver licence says 'No Datacenter "
                "Deployment' (the software is not licensed for data-centre deployment): a rack server of them is "
                "outside it (https://www.nvidia.com/en-us/drivers/geforce-license/)")
        asm.warnings.append(line)
        asm.reasons["system"].append(line)
    cpu, sockets = _barebone_cpu(ctx, asm, gpu, chassis)
    board = dataclasses.replace(chassis, kind="motherboard")  # its board: memory type, DIMM and M.2 slots
    ram_floor = _capped_to_the_chassis(ram_floor, chassis)
    choose_ram(ctx, asm, board, ecc_required(ctx), ram_floor)
    choose_storage(ctx, asm, board)
    _, dimm_kits = asm.chosen["memory_kit"]
    _, drives = asm.chosen["storage"]
    estimate = power_estimate(
        gpu_board_power_w=gpu["board_power_w"], gpu_transient_peak_w=gpu["transient_peak_w"], gpu_count=count,
        gpu_recommended_psu_w=0.0, cpu_turbo_power_w=cpu["turbo_power_w"] * sockets,
        dimm_count=asm.chosen["memory_kit"][0]["modules_count"] * dimm_kits, drive_count=drives, fan_count=0,
        rules=ctx.rules,
    )
    asm.sustained_w, asm.peak_w, asm.psu_required_w = estimate.sustained_w, estimate.peak_w, estimate.psu_required_w
    asm.wall_w = wall_draw_w(estimate.sustained_w, "platinum", ctx.rules)
    rule = (f"sustained {estimate.sustained_w:,.0f} W / {ctx.rules.power.psu_max_load_fraction:g}, "
            f"multi-GPU transient peak {estimate.peak_w:,.0f} W")
    server_power(ctx, asm, chassis, estimate.psu_required_w, asm.wall_w, rule)
    asm.power_lines = estimate.lines + asm.power_lines


def _capped_to_the_chassis(floor: Floor, chassis: Part) -> Floor:
    """The rule of thumb RAM >= GPU memory capped at what the barebone holds, where the job's own need fits: 8 x 96 GB
    cards in a 512 GiB server (DeepSpeed ZeRO-3 without offload keeps nothing of the model in RAM)."""
    most = float(chassis["max_memory_gib"])
    if floor.value <= most or floor.own_gib > most:
        return floor
    return Floor(most, f"{floor.reason}; capped at {chassis.name}'s {most:g} GiB: the rule of thumb (RAM >= GPU "
                       f"memory) yields to the platform, as the job's own need ({floor.own_gib:.0f} GiB) fits it",
                 floor.own_gib)


def _barebone_cpu(ctx: Context, asm: Assembly, gpu: Part, chassis: Part) -> tuple[Part, int]:
    """The cheapest CPU for the barebone's socket and heatsink; every socket filled (an empty one has dead slots)."""
    sockets = chassis["cpu_sockets_count"]
    cores, threads, clock, reason = cpu_floor(ctx.gpu_count, True, ctx.rules)
    decode, decode_line = decode_cores_floor(ctx.answers.data.kind, ctx.gpu_count, ctx.rules)
    cores = max(cores, decode)
    threads = max(threads, cores)
    same_socket = [cpu for cpu in offered(ctx, "cpu") if cpu["socket"] == chassis["cpu_socket"]]
    able = [
        (part_price(ctx, cpu) * sockets, cpu, sockets) for cpu in same_socket
        if cpu["cores_count"] * sockets >= cores and cpu["threads_count"] * sockets >= threads
        and cpu["boost_clock_ghz"] >= clock and cpu["tdp_w"] <= chassis["cpu_tdp_max_w"]
        and (cpu["ecc"] or not ecc_required(ctx))
    ]
    cpu, _ = rank(ctx, asm, "cpu", able, same_socket or offered(ctx, "cpu"),
                  "; ".join(filter(None, (reason, decode_line)))
                  + f"; socket {chassis['cpu_socket']}, <= {chassis['cpu_tdp_max_w']:g} W for its heatsink",
                  closest=lambda part: (-part["cores_count"], part_price(ctx, part), part.id))
    asm.chosen["cpu"] = (cpu, sockets)
    asm.reasons["cpu"] = [
        reason, *filter(None, (decode_line,)),
        f"{sockets} x {cpu.name} ({cpu['cores_count'] * sockets} cores) for {chassis.name}'s "
        f"{sockets} {chassis['cpu_socket']} socket(s), TDP {cpu['tdp_w']:g} W <= {chassis['cpu_tdp_max_w']:g} W",
        *cpu.notes_for(ctx.market),
    ]
    return cpu, sockets


def _availability(ctx: Context, gpu: Part) -> str:
    """' is not sold new in <market> (why)' when the answers' condition rules it out, else ''."""
    if buyable(ctx, gpu):
        return ""
    where = "China" if ctx.market == "cn" else f"the {MARKET_NAMES[ctx.market]} market"
    return f" is not sold new in {where} ({gpu.get('availability_reason', '')})"


def _alternatives(ctx: Context, gpu: Part) -> str:
    """What to buy instead of a GPU with no buyable server: other whole servers, or PCIe cards in a barebone."""
    def shown(part: Part) -> str:
        return money(part_price(ctx, part), ctx.currency, ctx.rules)

    options = [f"{system.name} {shown(system)}" for system in whole_systems(ctx)
               if system["gpu_id"] != gpu.id and system["gpu_count"] == ctx.gpu_count
               and buyable(ctx, ctx.catalog.parts[system["gpu_id"]])]
    cards = sorted((card for card in offered(ctx, "gpu") if card["form"] in ("workstation", "datacenter")
                    and buyable(ctx, card) and (system_options(ctx, card) or card["cooling"] != "passive"
                                                and not needs_server_chassis(ctx, card))),
                   key=lambda card: (-card["memory_gib"], part_price(ctx, card), card.id))
    if cards:
        card = cards[0]
        if needs_server_chassis(ctx, card):  # 5-8 cards, or passive ones: a server barebone
            chassis, _ = system_options(ctx, card)[0]
            where = f"a {chassis.name} ({shown(chassis)})"
        else:  # a workstation holds them
            where = "a PC built around them"
        options.append(f"{ctx.gpu_count} x {card.name} ({shown(card)} each) in {where}")
    return "alternatives: " + ("; ".join(options) if options else "none in the catalog")

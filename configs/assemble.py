"""The parts around a chosen GPU (or none: a CPU-only PC): CPU, board, RAM, storage, cooler and PSU.

Each part is the cheapest meeting the rules, or the pinned one; a rule nothing meets goes on `unsatisfied`.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from pth_top.configs.assembly import (
    Assembly,
    Context,
    chosen_by_you,
    gpu_price,
    headroom_line,
    memory_on,
    offered,
    part_price,
    pinned_part,
    rank,
    trees,
)
from pth_top.configs.case_choice import choose_case
from pth_top.configs.compat import chipset_generation, chipset_slot_cards, compatibility_blockers, runs_on
from pth_top.configs.desktop_system import EXTERNAL_ADAPTER_EFFICIENCY, assemble_desktop_system
from pth_top.configs.host_ram import gpu_memory_rule, host_ram_need
from pth_top.configs.memory_inference import forward_only
from pth_top.configs.part_types import DESKTOP_SYSTEM
from pth_top.configs.parts import Part
from pth_top.configs.platforms import (
    SYSTEM_GPU_FORMS,
    assemble_barebone,
    assemble_system,
    needs_server_chassis,
    server_chassis_allowed,
)
from pth_top.configs.power import FED, choose_psu
from pth_top.configs.ram_choice import board_with_ram_cost, choose_ram
from pth_top.configs.rules import (
    Floor,
    cpu_floor,
    decode_cores_floor,
    ram_floor_gib,
)
from pth_top.configs.slots import (
    card_width,
    choose_ducts,
    choose_mount,
    ducts_for,
    ecc_required,
    gpu_link_lanes,
    gpu_slots,
    gpus_held,
    hanging_card_line,
    little_crosses_the_link,
    mount_cost,
    mount_problems,
    on_risers,
    slot_fit_problem,
)
from pth_top.configs.storage_choice import choose_storage
from pth_top.units import GIB

__all__ = ["PC_GPU_FORMS", "Assembly", "Context", "assemble", "gpu_price", "pinned_part"]

PC_GPU_FORMS = ("consumer", "workstation", "datacenter")


def assemble(ctx: Context, gpu: Part | None) -> Assembly:
    """Every other part for this GPU, cheapest that meets each rule (or the pinned one); None: a CPU-only PC."""
    asm = Assembly()
    if gpu is None:
        return _assemble_cpu_only(dataclasses.replace(ctx, gpu_count=0), asm)
    asm.chosen["gpu"] = (gpu, ctx.gpu_count)
    asm.unit_prices["gpu"] = gpu_price(ctx, gpu)
    room = headroom_line(ctx, gpu)
    asm.reasons["gpu"] = [room] if room else []
    if room.startswith("tight"):
        asm.warnings.append(room)
    if gpu["form"] in SYSTEM_GPU_FORMS:
        assemble_system(ctx, asm, gpu)
        return asm
    if gpu["form"] == DESKTOP_SYSTEM:
        assemble_desktop_system(ctx, asm, gpu)
        return asm
    if ctx.edge:
        choose_storage(ctx, asm, board=None, edge_module=gpu)
        sustained = gpu["board_power_w"] + ctx.rules.power.per_drive_w
        asm.sustained_w, asm.peak_w = sustained, gpu["transient_peak_w"] + ctx.rules.power.per_drive_w
        asm.psu_required_w = asm.psu_capacity_w = 0.0
        asm.wall_w = sustained / EXTERNAL_ADAPTER_EFFICIENCY
        asm.power_lines = (
            f"module power up to {gpu['board_power_w']:g} W from its own supply; no PC PSU, CPU, RAM or board to buy",
        )
        asm.heat_line = "cooling: the module's own fan/heatsink; keep its intake clear"
        return asm
    need_ecc = ecc_required(ctx)
    host_gib, host_text = host_ram_need(ctx, memory_on(ctx, gpu))
    ram_floor = ram_floor_gib(ctx.answers.data.dataset_size_gb, gpu["memory_gib"] * ctx.gpu_count, host_gib,
                              ctx.rules, host_text, trees(ctx), gpu_memory_rule(ctx))
    def built(floor: Floor) -> Assembly:
        if needs_server_chassis(ctx, gpu):  # 5-8 PCIe cards (or passive ones): a server barebone, not a desktop board
            server = _with_gpu(asm, room)
            assemble_barebone(ctx, server, gpu, floor)
            return server
        return _assemble_pc(ctx, _with_gpu(asm, room), gpu, need_ecc, floor, room)

    rule_of_thumb_build = built(ram_floor)
    if not chosen_by_you(ctx, gpu) or ram_floor.value <= ram_floor.own_gib \
            or _within_its_rules(ctx, rule_of_thumb_build):
        return rule_of_thumb_build
    # RAM >= the GPUs' memory is a rule of thumb: around cards you have or pinned it yields where it alone breaks the
    # budget or the platform and the job's own need fits (audit ZI: two 3090s you have and EUR 1,500, refused at EUR
    # 1,713 for 64 GB of RAM; audit CH60: 8 owned V100s in a server chassis, refused at $8,566 for 256 GiB, where the
    # job's 104 GiB fit $8,000); a ranked card keeps it, a better card with less RAM not bought (review ZS).
    need_floor = Floor(ram_floor.own_gib, f"{ram_floor.reason}; the rule of thumb (RAM >= GPU memory) yields to the "
                       f"budget and the platform: the job itself needs {ram_floor.own_gib:.0f} GiB", ram_floor.own_gib)
    job_need_build = built(need_floor)
    # Over budget either way, the nearer build is the one the refusal prices (EUR 1,486, not 1,713, at EUR 1,450).
    nearer = not job_need_build.unsatisfied and job_need_build.total_cny < rule_of_thumb_build.total_cny
    return job_need_build if _within_its_rules(ctx, job_need_build) or nearer else rule_of_thumb_build


def _within_its_rules(ctx: Context, asm: Assembly) -> bool:
    """Within budget and breaking none of its own rules (the power limit is the ranking's to weigh)."""
    return asm.total_cny <= ctx.budget_cny and not asm.unsatisfied


def _with_gpu(asm: Assembly, room: str) -> Assembly:
    """A fresh build with only the GPU lines of this one: its price, reasons and headroom warning."""
    return Assembly(chosen={"gpu": asm.chosen["gpu"]}, unit_prices={"gpu": asm.unit_prices["gpu"]},
                    reasons={"gpu": list(asm.reasons["gpu"])}, warnings=[line for line in asm.warnings if line == room])


def _assemble_pc(ctx: Context, asm: Assembly, gpu: Part, need_ecc: bool, ram_floor: Floor, room: str) -> Assembly:
    """A desktop or workstation PC around the cards; a barebone where no two ATX units feed them."""
    fed = _assemble_host(ctx, asm, gpu, need_ecc, ram_floor)
    # The platform by need: the workstation when the desktop breaks a rule (RAM, lanes, slots, drive bays), the
    # desktop when an ECC workstation would put the build over budget; never a rule that breaks the budget.
    if asm.unsatisfied and not need_ecc or need_ecc and asm.total_cny > ctx.budget_cny:
        other = _with_gpu(asm, room)
        other_fed = _assemble_host(ctx, other, gpu, not need_ecc, ram_floor)
        # Up: the workstation keeps every rule the desktop broke (what then breaks follows from the job itself).
        better = not set(asm.unsatisfied) & set(other.unsatisfied) if not need_ecc else not other.unsatisfied
        if better and other.total_cny <= max(ctx.budget_cny, asm.total_cny if not need_ecc else 0):
            why = (f"the desktop platform breaks a rule ({asm.unsatisfied[0]}): the ECC workstation platform holds "
                   "the job") if not need_ecc else (
                f"ECC: {ctx.gpu_count} GPUs prefer an ECC workstation platform, but it puts the build over budget: "
                "the desktop platform that holds the job is chosen")
            other.reasons["cpu"].insert(0, why)
            asm, fed, need_ecc = other, other_fed, not need_ecc
    if fed != FED and ctx.gpu_count > 2 and server_chassis_allowed(ctx, gpu):
        # More than two ATX units would be needed: a tower takes two (dual-PSU case and adapter), not more. Fed on
        # the adapters in the cards' boxes, the tower stays where the server costs more (review ZT).
        server = _with_gpu(asm, room)
        assemble_barebone(ctx, server, gpu, ram_floor, why=(
            "no pair of ATX PSUs in the catalog feeds them (power and native 16-pin leads; a tower holds at most "
            "two units, joined by a dual-PSU adapter): the server chassis brings its own PSUs" if not fed else
            "a tower's pair of ATX PSUs feeds them only on the adapters in the cards' boxes, and costs more: the "
            "server chassis brings its own PSUs and leads"))
        if not fed or not server.unsatisfied and server.total_cny < asm.total_cny:
            return server
    if (ctx.tier == "datacenter" or _shared(ctx)) and not need_ecc:
        asm.reasons["memory_kit"].append(ECC_PREFERENCE_LINE)
    return asm


# The guide's high tier and shared servers prefer ECC (§6.1); for one or two GPUs that is a choice, not a rule.
ECC_PREFERENCE_LINE = ("ECC: preferred by the high budget tier and for shared servers (guide §6.1); it needs a "
                       "workstation platform; the desktop platform holds this job and is chosen: swap the CPU and "
                       "board for a workstation pair if a silent bit flip in a weeks-long run matters to you")


def _shared(ctx: Context) -> bool:
    return ctx.answers.scenario in ("team_training", "inference_server")


def _assemble_host(ctx: Context, asm: Assembly, gpu: Part | None, need_ecc: bool, ram_floor: Floor) -> str:
    """CPU, board, RAM, storage, cooler and ATX PSUs; how they feed the cards (power.choose_psu), "" where none
    does."""
    cpu = _choose_cpu(ctx, asm, gpu, need_ecc, ram_floor.value)
    board = _choose_board(ctx, asm, gpu, cpu, need_ecc, ram_floor.value)
    choose_ram(ctx, asm, board, need_ecc, ram_floor)
    choose_storage(ctx, asm, board)
    cooler = _choose_cooler(ctx, asm, cpu)
    if gpu is not None and on_risers(ctx, board, gpu, ctx.gpu_count):
        choose_mount(ctx, asm, board, gpu)
    elif gpu is not None and ducts_for(ctx, gpu):
        choose_ducts(ctx, asm, gpu)
    fed = choose_psu(ctx, asm, gpu, cpu, cooler)
    if "frame" not in asm.chosen and "psu" in asm.chosen and offered(ctx, "case"):
        choose_case(ctx, asm, board, gpu)
    if "frame" in asm.chosen:
        mount_problems(ctx, asm)
    elif gpu is not None:
        problem = slot_fit_problem(ctx, board, gpu, ctx.gpu_count)
        if problem:
            asm.unsatisfied_add(problem)
    for problem in compatibility_blockers(asm.chosen, asm.psu_required_w, gpu_link_lanes(ctx)):
        asm.unsatisfied_add(problem)
    return fed


def _assemble_cpu_only(ctx: Context, asm: Assembly) -> Assembly:
    """No GPU: the model's whole working memory (weights, and for training grads, optimizer, activations) is RAM."""
    model_gib = ctx.memory.total_bytes / GIB
    base = ram_floor_gib(ctx.answers.data.dataset_size_gb, 0.0, 0.0, ctx.rules, table_in_ram=trees(ctx))
    # The estimator's margin, as a GPU gets it: a model that fills RAM to the byte is paged out by the first browser.
    margin = ctx.rules.gpu.estimate_margin_fraction
    need = max(base.value, model_gib * (1 + margin) + ctx.rules.ram.os_reserve_gib)
    floor = Floor(need, f"CPU-only: {base.reason}, and >= the model's {model_gib:.1f} GiB working memory x "
                        f"{1 + margin:g} (the estimate's {margin:.0%} margin) + {ctx.rules.ram.os_reserve_gib} GiB "
                        f"for the OS: {need:.1f} GiB")
    _assemble_host(ctx, asm, None, ecc_required(ctx), floor)
    asm.reasons["cpu"].insert(0, "CPU-only build: no GPU; the CPU's cores and memory bandwidth set the speed")
    return asm


def _boards_for(ctx: Context, gpu: Part | None, cpu: Part, need_ecc: bool, ram_floor_gib: float) -> list[Part]:
    return [
        board for board in offered(ctx, "motherboard")
        if runs_on(cpu, board) and board["memory_type"] in cpu["memory_types"]
        and gpus_held(ctx, board, gpu) >= ctx.gpu_count and (board["memory_ecc"] or not need_ecc)
        and board["max_memory_gib"] >= ram_floor_gib and board["cpu_sockets_count"] == 1
    ]


def drives_a_display(ctx: Context, cpu: Part) -> bool:
    """With no graphics card the CPU drives the display (BIOS, installer): desktop CPUs need integrated graphics.

    Workstation/server CPUs stay (ECC needs them; the display line says what to add), and so does a pinned CPU.
    """
    pinned = ctx.pins.get("cpu", ("", 0))[0] == cpu.id
    return bool(cpu.get("integrated_graphics")) or cpu["platform"] != "desktop" or pinned


def best_cpu_build(ctx: Context, gpu: Part | None, cheapest: Assembly, score: Callable[[Assembly], float],
                   desktop_only: bool = True) -> Assembly:
    """Of the builds on each CPU with its board (a desktop one where `desktop_only`, with integrated graphics where no
    GPU drives the screen) that the budget buys, the one `score` rates highest, the cheaper among equals; `cheapest`
    where none rates higher."""
    best, best_key = cheapest, (score(cheapest), -cheapest.total_cny)
    for cpu in offered(ctx, "cpu"):
        if desktop_only and (cpu["platform"] != "desktop" or (gpu is None and not cpu.get("integrated_graphics"))):
            continue
        trial = assemble(dataclasses.replace(ctx, pins={**ctx.pins, "cpu": (cpu.id, 1)}), gpu)
        key = (score(trial), -trial.total_cny)
        if not trial.unsatisfied and trial.total_cny <= ctx.budget_cny and key > best_key:
            best, best_key = trial, key
    if best is not cheapest:
        best.alternatives["cpu"] = cheapest.alternatives.get("cpu", ())
    return best


def decodes_from_ram(ctx: Context) -> bool:
    """A language model run on the CPU alone decodes at the RAM's bandwidth (every weight read once a token), not the
    cores' count; a server's prompts, an encoder's or a CNN's passes are compute-bound and keep the guide's tiers."""
    a = ctx.answers
    return a.task.mode == "inference" and a.scenario != "inference_server" and ctx.shape.kind == "transformer" \
        and not forward_only(ctx.shape) and not ctx.shape.denoising_steps


def _choose_cpu(ctx: Context, asm: Assembly, gpu: Part | None, need_ecc: bool, ram_floor: float) -> Part:
    a = ctx.answers
    cpu_inference = gpu is None and decodes_from_ram(ctx)
    # A CPU-only server's cores serve its inputs: the job's size, not the scenario, sets them (audit YG2: an 8c/16t
    # PC with a 240 mm cooler priced a 22M-parameter embedding server over CNY 5,000, where a 6-core PC serves it).
    cpu_serves = gpu is None and a.task.mode == "inference"
    complex_work = not cpu_inference and (
        ctx.gpu_count > 1 or a.data.dataset_size_gb >= ctx.rules.ram.large_dataset_gb
        or (a.scenario in ("team_training", "inference_server") and not cpu_serves)
    )
    cores, threads, clock, reason = cpu_floor(ctx.gpu_count, complex_work, ctx.rules)
    if cpu_inference:
        reason += ("; CPU-only inference: decode reads every weight from RAM once a token, so the memory bandwidth "
                   "sets its speed, not the cores (more cores speed up only the prompt)")
    decode, decode_line = decode_cores_floor(a.data.kind, ctx.gpu_count, ctx.rules)
    if decode > cores:
        cores, threads = decode, max(threads, decode)
    else:
        decode_line = ""
    link_lanes = gpu_link_lanes(ctx)
    lanes = link_lanes * ctx.gpu_count
    cpus = [cpu for cpu in offered(ctx, "cpu") if gpu is not None or drives_a_display(ctx, cpu)]
    able = [
        cpu for cpu in cpus
        if cpu["cores_count"] >= cores and cpu["threads_count"] >= threads and cpu["boost_clock_ghz"] >= clock
        and cpu["l3_cache_mb"] >= ctx.rules.cpu.min_l3_cache_mb and cpu["pcie_lanes_count"] >= lanes
        and (cpu["ecc"] or not need_ecc)
    ]
    candidates = [(cost, cpu, 1) for cpu in able
                  if (cost := _platform_cost(ctx, gpu, cpu, need_ecc, ram_floor)) is not None]
    why = "; ".join(filter(None, (reason, decode_line))) + f"; >= {lanes} PCIe lanes" if not able else (
        f"a board for {ctx.gpu_count} GPU(s) on any CPU with >= {cores} cores and >= {lanes} PCIe lanes")
    boards = offered(ctx, "motherboard")

    def most_gpus(part: Part) -> int:
        return max((gpus_held(ctx, board, gpu) for board in boards if runs_on(part, board)
                    and board["cpu_sockets_count"] == 1), default=0)

    cpu, _ = rank(ctx, asm, "cpu", candidates, able or cpus, why,
                  closest=lambda part: (-most_gpus(part), -part["pcie_lanes_count"], part_price(ctx, part), part.id))
    lines = [reason, decode_line] if decode_line else [reason]
    if ctx.gpu_count:
        lines.append(
            f"PCIe: {ctx.gpu_count} GPU(s) need >= {lanes} lanes at x{link_lanes}; {cpu.name} has "
            f"{cpu['pcie_lanes_count']}"
        )
    if need_ecc:
        lines.append("ECC memory needs a workstation/server platform (guide §6.1 high tier, §8.1)")
    if ctx.gpu_count:
        work = "training" if ctx.answers.task.mode == "training" else "inference"
        lines.append(f"cheapest CPU meeting these, with its board and RAM; the GPU does the {work}, the CPU feeds it "
                     "(guide §9.2: upgrade the GPU first)")
    else:
        lines.append(f"cheapest CPU with these cores ({cpu['cores_count']}c/{cpu['threads_count']}t), with its board "
                     "and RAM; it runs the model itself, " + ("its RAM's channels and MT/s set the decode speed"
                                                              if cpu_inference else "so more cores buy speed directly"))
    lines.extend(cpu.notes_for(ctx.market))
    asm.reasons["cpu"] = lines
    return cpu


def _platform_cost(ctx: Context, gpu: Part | None, cpu: Part, need_ecc: bool, ram_floor_gib: float) -> float | None:
    """The CPU with its cheapest board and the cheapest RAM that board takes for the floor: a CPU is bought with its
    platform (2026 DDR5 kits cost more than the CPU difference); None when no board takes it."""
    boards = _boards_for(ctx, gpu, cpu, need_ecc, ram_floor_gib)
    if not boards:
        return None
    return part_price(ctx, cpu) + min(board_with_ram_cost(ctx, board, need_ecc, ram_floor_gib, cpu)
                                      + mount_cost(ctx, board, gpu, ctx.gpu_count) for board in boards)


def _choose_board(ctx: Context, asm: Assembly, gpu: Part | None, cpu: Part, need_ecc: bool, ram_floor: float) -> Part:
    # Ranked with the RAM it takes, as the CPU was (a DDR5 board a little cheaper than a DDR4 one is not).
    candidates = [(board_with_ram_cost(ctx, board, need_ecc, ram_floor, cpu)
                   + mount_cost(ctx, board, gpu, ctx.gpu_count), board, 1)
                  for board in _boards_for(ctx, gpu, cpu, need_ecc, ram_floor)]
    all_boards = offered(ctx, "motherboard")
    boards_it_runs_on = [board for board in all_boards if runs_on(cpu, board)] or all_boards
    board, _ = rank(ctx, asm, "motherboard", candidates, boards_it_runs_on,
                    f"socket {cpu['socket']}, room for {ctx.gpu_count} x {card_width(gpu)}-slot GPU(s), "
                    f"{'ECC' if need_ecc else 'any'} memory, >= {ram_floor:.0f} GiB, one CPU socket (a 2-socket "
                    "board with one CPU has dead slots and DIMMs)",
                    closest=lambda part: (-gpus_held(ctx, part, gpu), part_price(ctx, part), part.id))
    link, held = gpu_link_lanes(ctx), gpu_slots(ctx, board)
    slots = f"{held} GPU slot(s) at x{link}+ for {ctx.gpu_count} GPU(s); " if ctx.gpu_count else ""
    chipset = chipset_slot_cards(int(board["gpu_slots_count"]), ctx.gpu_count)
    if chipset and ctx.gpu_count <= held:
        why = _chipset_link_reason(ctx)
        slots += f"{chipset} card(s) on the chipset's PCIe {chipset_generation(board)}.0 x{link} link: {why}; "
    board_gen, card_gen = board.get("pcie_generation") or 0, (gpu.get("pcie_generation") or 0) if gpu else 0
    if 0 < board_gen < card_gen:
        slots += f"PCIe Gen{board_gen} slots: the card's Gen{card_gen} link runs at Gen{board_gen}; "
    lines = [
        f"socket {cpu['socket']} and {board['memory_type']} match the CPU; {slots}"
        f"{board['m2_slots_count']} M.2 (guide §5.1: check PCIe slot version and lanes)",
    ]
    lines += [line for line in [hanging_card_line(ctx, board, gpu)] if line]
    lines.extend(board.notes_for(ctx.market))
    asm.reasons["motherboard"] = lines
    return board


def _chipset_link_reason(ctx: Context) -> str:
    """Why a card on the chipset's narrow link costs this job little."""
    if ctx.answers.scale.sharding == "layers" and ctx.answers.task.mode == "training":
        return "the GPUs pass only a layer's activations on to the next, one at a time (a layer split)"
    if little_crosses_the_link(ctx):
        return "the GPUs exchange only the trained adapters' or head's gradients, timed below at that link"
    return ("the GPUs take turns on whole layers or serve alone, so little crosses it (llama.cpp's layer split lost "
            "~3 % of decode at x8/x4/x4, PR #4766)")


def _choose_cooler(ctx: Context, asm: Assembly, cpu: Part) -> Part:
    quiet = ctx.answers.budget.noise == "quiet"
    candidates = [
        (part_price(ctx, cooler), cooler, 1) for cooler in offered(ctx, "cooler")
        if cpu["socket"] in cooler["sockets"] and cooler["max_cpu_power_w"] >= cpu["turbo_power_w"]
        and (not quiet or cooler["noise"] == "quiet")
    ]
    all_coolers = offered(ctx, "cooler")
    fallback = [cooler for cooler in all_coolers if cpu["socket"] in cooler["sockets"]] or all_coolers
    cooler, _ = rank(ctx, asm, "cooler", candidates, fallback, f"socket {cpu['socket']}, >= {cpu['turbo_power_w']} W")
    asm.reasons["cooler"] = [
        f"CPU turbo power {cpu['turbo_power_w']} W <= cooler rating {cooler['max_cpu_power_w']} W, "
        f"socket {cpu['socket']}: "
        "air (e.g. PA120) for mid/low power, 240 mm AIO or big air for high-end (guide §4.1)",
    ]
    return cooler

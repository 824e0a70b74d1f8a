"""What holds the cards on a desktop board: its slot spacing, or PCIe x16 risers in an open frame when the cards
are too wide for it and its slots with the lanes the job needs are enough."""

from __future__ import annotations

from pth_top.configs import stacks
from pth_top.configs.assembly import Assembly, Context, chosen_by_you, offered, part_price, rank
from pth_top.configs.compat import chipset_slot_cards, gpu_slots_at
from pth_top.configs.memory_methods import ADAPTER_METHODS, HEAD_METHODS
from pth_top.configs.parts import Part

# The roles an open frame brings; a pin of either is a desktop build's, as a board's is.
MOUNT_ROLES = ("frame", "riser")
# Passive cards a desktop case takes with a fan duct each: two, as a tower's two bottom-to-top x16 slots leave room
# for a shroud and blower behind each; more share a server's fan wall (platforms).
DUCTED_CARDS_MAX = 2


def gpu_link_lanes(ctx: Context) -> int:
    """The PCIe lanes each GPU needs for the job: x8 to train or split each layer (tensor parallel); x4 where the
    GPUs take turns on whole layers (llama.cpp, generate()) or each serve alone, or train adapters with whole weights
    on each GPU (little_crosses_the_link)."""
    task = ctx.answers.task
    turns = stacks.takes_turns(task.mode, task.serving_engine, ctx.answers.scenario, task.precision)
    cpu_rules = ctx.rules.cpu
    small = turns or little_crosses_the_link(ctx)
    return cpu_rules.layer_split_lanes_per_gpu_count if small else cpu_rules.min_lanes_per_gpu_count


def little_crosses_the_link(ctx: Context) -> bool:
    """Training whose GPUs exchange little: a layer split's activations, or the small gradients of adapters or a head
    (the base frozen) with its weights whole on each GPU (no ZeRO-3 gathers). Llama-3-8B's LoRA r16 on every linear
    layer is 42M parameters, 168 MB in PEFT's fp32: ~21 ms over PCIe 4.0 x4 (7.9 GB/s) a step (audit AG41:
    InternVL2-4B's LoRA on two owned RTX 3090s was priced a EUR 531 x8/x8 board, EUR 63 over the buyer's EUR 1,500)."""
    answers = ctx.answers
    adapters = answers.task.method in (*ADAPTER_METHODS, *HEAD_METHODS)
    layer_split = answers.scale.sharding == "layers"  # only activations cross between its GPUs
    return answers.task.mode == "training" and (layer_split or adapters
                                                and answers.scale.sharding in ("none", "zero1", "zero2"))


def gpu_slots(ctx: Context, board: Part) -> int:
    """The board's GPU slots that give a card the lanes this job needs."""
    return gpu_slots_at(board, gpu_link_lanes(ctx))


def ecc_required(ctx: Context) -> bool:
    """The platform by need, not budget: 3+ GPUs at x8 need a workstation's lanes and slots, whose ECC memory comes
    with it (at x4 a desktop board's chipset slot holds a third card); RAM beyond a desktop board's follows from the
    boards' limits (configs.assemble._boards_for)."""
    return ctx.gpu_count >= 3 and gpu_link_lanes(ctx) >= ctx.rules.cpu.min_lanes_per_gpu_count


def gpus_that_fit(board: Part, card_width_slots: int, slots: int | None = None) -> int:
    """Cards of this width the board takes without risers, in its `slots` (default: its x8+ slots).

    Slots in consecutive positions: a card covering w positions blocks the next w - 1; the last card may
    hang one bracket below the board (an EEB case has one more bracket than a 7-slot board has slots).
    """
    slots = int(board["gpu_slots_count"]) if slots is None else slots
    positions = board.get("slot_positions_count", 0)
    if not positions or card_width_slots <= 1:
        return slots
    return int(min(slots, (positions + 1) // card_width_slots))


def slots_hanging_below(ctx: Context, board: Part, gpu: Part | None) -> int:
    """The expansion slots the cards cover where the last hangs a bracket below the board (gpus_that_fit allows
    one), which the case must have; 0 where none hangs (or they stand on risers)."""
    if gpu is None or on_risers(ctx, board, gpu, ctx.gpu_count):
        return 0
    covered = ctx.gpu_count * card_width(gpu)
    positions = int(board.get("slot_positions_count", 0) or 0)
    return covered if positions and covered > positions else 0


def hanging_card_line(ctx: Context, board: Part, gpu: Part | None) -> str:
    """The case the cards need when the last one hangs a bracket below the board, else ""."""
    slots = slots_hanging_below(ctx, board, gpu)
    if not slots:
        return ""
    return (f"case: the last card hangs below the board's {board['slot_positions_count']} slot positions, so the case "
            f"needs {slots} expansion slots (a full tower or an EEB case; most ATX cases have 7)")


def slot_fit_problem(ctx: Context, board: Part, gpu: Part, gpu_count: int) -> str:
    """One sentence when the cards are too wide for the board's slot spacing, else ""."""
    width = int(gpu["slot_width_count"])
    slots = gpu_slots(ctx, board)
    fit = gpus_that_fit(board, width, slots)
    if gpu_count <= fit or gpu_count > slots:  # too few slots at all: a compatibility problem
        return ""
    positions = board.get("slot_positions_count", 0)
    where = f"the {positions} slot positions of {board.name}" if positions else f"{board.name}'s {slots} GPU slot(s)"
    return (f"slots: {gpu_count} x {width}-slot {gpu.name} do not fit {where} ({fit} fit): use PCIe risers in an "
            "open frame, 2-slot blower cards, or a server chassis")


def open_frames_for(ctx: Context, board: Part, gpu_count: int) -> list[Part]:
    """Open frames with standoffs for this board and a position for each card."""
    return [frame for frame in offered(ctx, "frame") if board["form_factor"] in frame["board_form_factors"]
            and frame["gpu_positions_count"] >= gpu_count]


def card_width(gpu: Part | None) -> int:
    return int(gpu["slot_width_count"]) if gpu is not None else 1


def gpus_held(ctx: Context, board: Part, gpu: Part | None) -> int:
    """Cards like this the board holds: within its slot spacing, or, for open-air cards, one in each slot with the
    job's lanes on riser cables in an open frame (where the catalog has a frame for the board and a riser). Blower
    and passive cards are built for a chassis's front-to-back airflow: a server barebone takes them, not a frame."""
    slots = gpu_slots(ctx, board)
    fit = gpus_that_fit(board, card_width(gpu), slots)
    if gpu is None or gpu["cooling"] != "fans" or fit >= slots or not offered(ctx, "riser"):
        return fit
    positions = max((frame["gpu_positions_count"] for frame in open_frames_for(ctx, board, 1)), default=0)
    return max(fit, min(slots, positions))


def on_risers(ctx: Context, board: Part, gpu: Part, gpu_count: int) -> bool:
    """The cards go on risers in an open frame: open-air, too wide for the board's slot spacing, held by its slots."""
    return gpus_that_fit(board, card_width(gpu), gpu_slots(ctx, board)) < gpu_count <= gpus_held(ctx, board, gpu)


def _riser_candidates(ctx: Context, gpu: Part) -> tuple[list[Part], int]:
    """Risers at the card's PCIe generation, else the fastest the catalog has; and the generation the link runs at."""
    risers = offered(ctx, "riser")
    fastest = max((riser["pcie_generation"] for riser in risers), default=0)
    generation = min(int(gpu["pcie_generation"]), fastest)
    return [riser for riser in risers if riser["pcie_generation"] >= generation], generation


def mount_cost(ctx: Context, board: Part, gpu: Part | None, gpu_count: int) -> float:
    """The open frame and a riser per card where the cards go on risers on this board, or a fan duct per passive card,
    else 0."""
    if gpu is None or not on_risers(ctx, board, gpu, gpu_count):
        return duct_cost(ctx, gpu)
    risers, _ = _riser_candidates(ctx, gpu)
    return (min(part_price(ctx, frame) for frame in open_frames_for(ctx, board, gpu_count))
            + gpu_count * min(part_price(ctx, riser) for riser in risers))


def ducts_for(ctx: Context, gpu: Part | None) -> list[Part]:
    """The fan ducts that cool these passive cards in a desktop case: one or two that you have or pinned (a DIY
    duct is a tinkerer's choice, not a default), each no hotter than a duct's rating; none for more cards, or
    open-air or blower ones (their own fans). Quiet answers get one too, warned: a server's fan wall is louder."""
    if (gpu is None or gpu["cooling"] != "passive" or ctx.gpu_count > DUCTED_CARDS_MAX
            or not chosen_by_you(ctx, gpu)):
        return []
    return [duct for duct in offered(ctx, "gpu_duct") if duct["max_gpu_power_w"] >= gpu["board_power_w"]]


def duct_cost(ctx: Context, gpu: Part | None) -> float:
    """A fan duct per passive card in a desktop case, else 0."""
    ducts = ducts_for(ctx, gpu)
    return ctx.gpu_count * min(part_price(ctx, duct) for duct in ducts) if ducts else 0.0


PASSIVE_POWER_INPUT = ("check the card's power input: many passive cards take a CPU/EPS 8-pin, fed from two PCIe "
                       "8-pin leads by an adapter")


def choose_ducts(ctx: Context, asm: Assembly, gpu: Part) -> None:
    """A fan duct on each passive card: a desktop case has no server's fan wall to push air through its fins."""
    ducts = ducts_for(ctx, gpu)
    duct, _ = rank(ctx, asm, "gpu_duct", [(part_price(ctx, part), part, ctx.gpu_count) for part in ducts],
                   offered(ctx, "gpu_duct"), f"a fan duct for a {gpu['board_power_w']:g} W passive card")
    asm.reasons["gpu_duct"] = [
        f"{gpu.name} is passively cooled: its fins need a server's front-to-back airflow, which a desktop case does "
        f"not give; one {duct.name} a card ({duct['max_gpu_power_w']:g} W rated) gives it, in a desktop PC rather "
        "than an 8-GPU server barebone",
        *duct.notes_for(ctx.market),
        *([PASSIVE_POWER_INPUT] if gpu["power_connector_count"] else []),  # a 70 W T4 draws from the slot alone
    ]
    if ctx.answers.budget.noise == "quiet":
        asm.warnings.append(f"budget.noise = \"quiet\": {gpu.name} is passive and has no quiet cooling; its fan duct's "
                            "blower is loud, if less so than a server's fan wall: an open-air card is the quiet one")


def choose_mount(ctx: Context, asm: Assembly, board: Part, gpu: Part) -> None:
    """An open frame and one PCIe x16 riser per card, when the cards are too wide for the board's slot spacing."""
    count = ctx.gpu_count
    width = int(gpu["slot_width_count"])
    frames = open_frames_for(ctx, board, count)
    frame, _ = rank(ctx, asm, "frame", [(part_price(ctx, part), part, 1) for part in frames],
                    offered(ctx, "frame"), f"an open frame for a {board['form_factor']} board and {count} cards")
    risers, generation = _riser_candidates(ctx, gpu)
    riser, _ = rank(ctx, asm, "riser", [(part_price(ctx, part), part, count) for part in risers],
                    offered(ctx, "riser"), f"a PCIe Gen{generation} x16 riser")
    slots = gpu_slots(ctx, board)
    fit = gpus_that_fit(board, width, slots)
    asm.reasons["frame"] = [
        f"{count} x {width}-slot {gpu.name}: {fit} fit the slot positions of {board.name}, all {count} fit its "
        f"{slots} x{gpu_link_lanes(ctx)}+ slots on riser cables: the board lies in an open frame, the cards stand "
        "above it in a row with a gap between them (the usual multi-GPU rig of used consumer cards)",
        f"{frame.name}: {frame['gpu_positions_count']} GPU positions, {frame['psu_positions_count']} PSU positions; "
        "not rack-mountable and no dust filter: for a lab or home, not a data centre",
        *frame.notes_for(ctx.market),
    ]
    link = ("at the card's full generation" if riser["pcie_generation"] >= gpu["pcie_generation"] else
            f"the link runs at Gen{riser['pcie_generation']} (the catalog has no faster riser)")
    chipset = chipset_slot_cards(int(board["gpu_slots_count"]), count)
    if chipset:
        link += f", {chipset} of them in the chipset's slot at x{gpu_link_lanes(ctx)}"
    asm.reasons["riser"] = [
        f"one per card: {count} x {riser.name}, PCIe Gen{riser['pcie_generation']} x{riser['lanes_count']}, "
        f"{riser['length_mm']:g} mm, {link}; not a USB x1 mining riser, which would cut the card to one lane",
        *riser.notes_for(ctx.market),
    ]


def mount_problems(ctx: Context, asm: Assembly) -> None:
    """The PSUs need places on the frame (its brackets, as a tower's bays), and every card a riser."""
    frame, _ = asm.chosen["frame"]
    psu, units = asm.chosen["psu"]
    if units > frame["psu_positions_count"]:
        asm.unsatisfied_add(f"{units} x {psu.name} for {frame['psu_positions_count']} PSU position(s) on {frame.name}")
    riser, risers = asm.chosen["riser"]
    if risers < ctx.gpu_count:
        asm.unsatisfied_add(f"{risers} x {riser.name} for {ctx.gpu_count} cards: each card needs its own riser")

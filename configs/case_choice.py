"""The case a desktop PC's parts go in: one with standoffs for its board, room for its cards' length, the expansion
slots they cover (the last card may hang a bracket below the board) and its ATX units; an open frame, a server
chassis or an edge module needs none."""

from __future__ import annotations

from pth_top.configs.assembly import Assembly, Context, offered, part_price, rank
from pth_top.configs.parts import Part
from pth_top.configs.slots import card_width, on_risers, slots_hanging_below


def choose_case(ctx: Context, asm: Assembly, board: Part, gpu: Part | None) -> None:
    """The cheapest case that holds the board, the cards and the PSUs chosen; its reasons."""
    form = board["form_factor"]
    length = float(gpu.get("length_mm", 0) or 0) if gpu is not None else 0.0
    slots = slots_hanging_below(ctx, board, gpu)
    _, units = asm.chosen["psu"]
    needs = [f"standoffs for a{'n' if form[0] in 'AE' else ''} {form} board"]
    needs += [f"cards up to {length:,.0f} mm"] if length else []
    needs += [f"{slots} expansion slots (the last card hangs below the board's {board['slot_positions_count']})"] \
        if slots else []
    needs += [f"{units} ATX PSUs (a dual-PSU case)"] if units > 1 else []
    candidates = [(part_price(ctx, case), case, 1) for case in offered(ctx, "case")
                  if form in case["board_form_factors"] and case["gpu_length_max_mm"] >= length
                  and case["expansion_slots_count"] >= slots and case["psu_positions_count"] >= units]
    case, _ = rank(ctx, asm, "case", candidates, offered(ctx, "case"), ", ".join(needs))
    fans = int(case.get("fans_included_count", 0) or 0)
    line = stacked_open_air_line(ctx, board, gpu)
    asm.warnings.extend([line] if line else [])
    asm.reasons["case"] = [
        f"case: {', '.join(needs)}: the cheapest case in the catalog that has them",
        f"{case['expansion_slots_count']} expansion slots, cards up to {case['gpu_length_max_mm']:,.0f} mm, "
        f"{case['psu_positions_count']} PSU position(s), {fans} fan(s) included",
        *case.notes_for(ctx.market),
    ]


# Open-air cards back to back in a tower take in each other's exhaust: Puget Systems built its four-RTX 3090
# workstation on blower cards (GIGABYTE's RTX 3090 TURBO), and held four 3090s to 280 W (nvidia-smi -pl) for over 95 %
# of their rate (pugetsystems.com/labs/hpc, "Quad RTX3090 GPU Wattage Limited MaxQ", 2020). Audit DI68: 4 x RTX 5080.
STACKED_OPEN_AIR_CARDS = 3
STACKED_OPEN_AIR_CARD_W = 250  # review r76: three 145 W RTX 5060s are no such heat


def stacked_open_air_line(ctx: Context, board: Part, gpu: Part | None) -> str:
    """The warning for STACKED_OPEN_AIR_CARDS or more open-air cards of STACKED_OPEN_AIR_CARD_W or more in adjacent
    slots of a tower, else ""; cards the buyer has are told what can be done with them."""
    watts = float(gpu["board_power_w"]) if gpu is not None else 0.0
    if gpu is None or gpu["cooling"] != "fans" or ctx.gpu_count < STACKED_OPEN_AIR_CARDS \
            or watts < STACKED_OPEN_AIR_CARD_W or on_risers(ctx, board, gpu, ctx.gpu_count):
        return ""
    owned = ctx.answers.budget.owned_gpu == gpu.id
    levers = ("space them on PCIe risers or cap their power (nvidia-smi -pl)" if owned else
              f"buy {card_width(gpu)}-slot blower cards where they are sold, as Puget Systems' four-RTX 3090 "
              "workstation has, space them on risers, or cap their power (nvidia-smi -pl)")
    return (f"cooling: {ctx.gpu_count} open-air {gpu.name} cards ({watts:g} W each) in adjacent "
            f"slots take in each other's exhaust under a sustained load and throttle: {levers}; four RTX 3090s held "
            "to 280 W kept over 95 % of their rate")

"""The PSU set and what a build asks of the wall: leads per card, ATX units that do not share load, circuits.

ATX PSUs do not load-share: with two or more, each GPU takes all its leads from one unit and each unit is
sized for its own GPUs (the first also feeds the board and CPU). Server chassis bring their own redundant
CRPS units (see configs/platforms.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pth_top.configs.assembly import Assembly, Context, offered, part_price, rank
from pth_top.configs.compat import adapter_pcie_8pin_count
from pth_top.configs.mains import largest, mains_of, outlets, sockets_text
from pth_top.configs.parts import Part
from pth_top.configs.rules import Rules


def case_fans_count(heat_w: float, rules: Rules) -> int:
    c = rules.cooling
    return int(min(c.max_case_fans_count, max(c.min_case_fans_count, math.ceil(heat_w / c.watts_per_case_fan_w))))


@dataclass(frozen=True, slots=True)
class PowerEstimate:
    sustained_w: float
    peak_w: float
    psu_required_w: float
    lines: tuple[str, ...]


def power_estimate(
    *, gpu_board_power_w: float, gpu_transient_peak_w: float, gpu_count: int, gpu_recommended_psu_w: float,
    cpu_turbo_power_w: float, dimm_count: int, drive_count: int, fan_count: int, rules: Rules,
) -> PowerEstimate:
    """Sustained = GPUs + CPU turbo + board + DIMMs + drives + fans; PSU >= max(vendor, load/0.8, transient peak):
    a card's millisecond spikes (RTX 3090: 350 W sustained, ~2x in 1 ms) trip a PSU's over-current protection."""
    p = rules.power
    rest_w = p.board_w + p.per_dimm_w * dimm_count + p.per_drive_w * drive_count + p.per_fan_w * fan_count
    sustained = gpu_board_power_w * gpu_count + cpu_turbo_power_w + rest_w
    headroom = p.multi_gpu_transient_headroom_fraction if gpu_count > 1 else 0.0
    peak = gpu_transient_peak_w * gpu_count * (1 + headroom) + cpu_turbo_power_w + rest_w
    from_load = sustained / p.psu_max_load_fraction
    # The vendor figure assumes one card in a typical PC; extra cards add their board power.
    vendor = gpu_recommended_psu_w + gpu_board_power_w * (gpu_count - 1) if gpu_recommended_psu_w else 0
    required = max(from_load, vendor, peak if gpu_count else 0)
    lines = [
        f"sustained {sustained:,.0f} W = {gpu_count} x {gpu_board_power_w:g} W GPU + "
        f"{cpu_turbo_power_w:g} W CPU turbo + "
        f"{p.board_w} W board + {dimm_count} DIMM x {p.per_dimm_w} W + {drive_count} drive x {p.per_drive_w} W + "
        f"{fan_count} fan x {p.per_fan_w} W",
        f"PSU >= max(sustained / {p.psu_max_load_fraction} = {from_load:,.0f} W"
        + (f", vendor recommendation {vendor:,.0f} W" if vendor else "")
        + ((", multi-GPU" if gpu_count > 1 else ", GPU") + f" transient peak {peak:,.0f} W" if gpu_count else "")
        + f") = {required:,.0f} W (guide §{p.guide_section})",
    ]
    return PowerEstimate(sustained, peak, required, tuple(lines))


def standard_psu_size(required_w: float, rules: Rules) -> tuple[int, int]:
    """(size of one PSU, how many) for a requirement; above the largest size, several of the largest."""
    sizes: Sequence[int] = rules.power.standard_psu_sizes_w
    for size in sizes:
        if size >= required_w:
            return size, 1
    biggest = sizes[-1]
    return biggest, math.ceil(required_w / biggest)


def wall_draw_w(sustained_w: float, efficiency: str, rules: Rules) -> float:
    return sustained_w / getattr(rules.power.efficiency_at_half_load, efficiency)


@dataclass(frozen=True, slots=True)
class Leads:
    """Power leads one GPU takes from a PSU."""

    native_16pin_count: int  # 12VHPWR / 12V-2x6, one cable from the PSU
    pcie_8pin_count: int
    adapter_8pin_count: int = 0  # a 16-pin card on the adapter in its box: the PCIe 8-pin leads it takes; 0: none

    def text(self) -> str:
        if self.native_16pin_count:
            return f"{self.native_16pin_count} native 12V-2x6/12VHPWR lead"
        if not self.pcie_8pin_count:
            return "no power lead (powered from the slot)"
        return f"{self.pcie_8pin_count} PCIe 8-pin lead(s)"


# Modules with their own power brick, not a PC PSU lead (Jetson, Raspberry Pi).
OWN_SUPPLY_CONNECTORS = ("dc_barrel", "usb_c")


def gpu_leads(gpu: Part) -> Leads:
    """A data-centre card's CPU (EPS) 8-pin input takes two PCIe 8-pin leads through NVIDIA's adapter."""
    connector, count = gpu["power_connector"], gpu["power_connector_count"]
    if connector == "12vhpwr":
        return Leads(count, 0, adapter_pcie_8pin_count(gpu))
    return Leads(0, {"8pin": 1, "eps8pin": 2}.get(connector, 0) * count)


def gpus_per_unit(gpu_count: int, units_count: int) -> list[int]:
    """GPUs on each ATX unit, as even as can be; the first unit (which also feeds the board) gets the fewest."""
    base, extra = divmod(gpu_count, units_count)
    return sorted([base + 1] * extra + [base] * (units_count - extra))


@dataclass(frozen=True, slots=True)
class UnitLoad:
    gpu_count: int
    sustained_w: float
    required_w: float  # of an ATX 2.x unit; a 3.x unit carries the transient peak over its rating (unit_required_w)
    peak_w: float = 0.0  # several units' each; one unit's peak is in required_w


# An ATX 3.x unit's 10-20 ms GPU peaks against its rating: 1.2, well inside ATX 3.0's power excursion table (200 % for
# 100 us: AnandTech's MSI MEG Ai1300P review), so 2 x 1,600 W units feed 4 x RTX 4090 as open-frame rigs run them.
ATX3_TRANSIENT_OVER_RATING = 1.2


def unit_loads(gpu: Part | None, gpu_count: int, units_count: int, host_w: float, single_required_w: float,
               rules: Rules) -> list[UnitLoad]:
    """Each unit's load and the size it needs: sustained / max load fraction, or its GPUs' transient peaks."""
    if units_count == 1:
        board = gpu["board_power_w"] if gpu else 0.0
        return [UnitLoad(gpu_count, board * gpu_count + host_w, single_required_w)]
    assert gpu is not None
    headroom = 1 + rules.power.multi_gpu_transient_headroom_fraction
    loads = []
    for index, count in enumerate(gpus_per_unit(gpu_count, units_count)):
        host = host_w if index == 0 else 0.0
        sustained = gpu["board_power_w"] * count + host
        peak = gpu["transient_peak_w"] * count * headroom + host
        loads.append(UnitLoad(count, sustained, max(sustained / rules.power.psu_max_load_fraction, peak), peak))
    return loads


def adapted_cards(psu: Part, leads: Leads, gpu_count: int) -> int:
    """The 16-pin cards on this unit beyond its native leads: on the adapter in their box, where `leads` allows it."""
    if not leads.native_16pin_count:
        return 0
    return max(0, gpu_count - psu["connectors_12vhpwr_count"] // leads.native_16pin_count)


def _pcie_8pin_needed(psu: Part, leads: Leads, gpu_count: int) -> int:
    return leads.pcie_8pin_count * gpu_count + leads.adapter_8pin_count * adapted_cards(psu, leads, gpu_count)


def unit_required_w(psu: Part, load: UnitLoad, rules: Rules) -> float:
    """The rating this unit needs for its load: its sustained load at the load fraction and, an ATX 3.x unit, its
    GPUs' peak over ATX3_TRANSIENT_OVER_RATING."""
    if psu["atx_version"] == "2.x" or not load.peak_w:
        return load.required_w
    return max(load.sustained_w / rules.power.psu_max_load_fraction, load.peak_w / ATX3_TRANSIENT_OVER_RATING)


def _unit_fits(psu: Part, load: UnitLoad, leads: Leads, cpu_eps_count: int, is_first: bool, rules: Rules) -> bool:
    if psu["capacity_w"] < unit_required_w(psu, load, rules):
        return False
    if leads.native_16pin_count and (psu["atx_version"] == "2.x" or psu["connectors_12vhpwr_count"] < 1
                                     or adapted_cards(psu, leads, load.gpu_count) and not leads.adapter_8pin_count):
        return False
    if psu["pcie_8pin_count"] < _pcie_8pin_needed(psu, leads, load.gpu_count):
        return False
    return not is_first or psu["eps_8pin_count"] >= cpu_eps_count


# A tower holds at most two ATX units (a dual-PSU workstation case, the two joined by a dual-PSU adapter).
MAX_ATX_UNITS_COUNT = 2


# How a set of ATX units feeds the cards: with a native lead each, or some on the adapters in their boxes ("": not).
FED, FED_ON_ADAPTERS = "native", "adapters"


def choose_psu(ctx: Context, asm: Assembly, gpu: Part | None, cpu: Part, cooler: Part) -> str:
    """The cheapest set of one or two identical ATX units, each feeding whole GPUs; lines on leads, units and
    circuit. How they feed the cards (FED, FED_ON_ADAPTERS), or "" where no such set does (it then needs a server
    chassis with CRPS units)."""
    rules = ctx.rules
    gpu_count = ctx.gpu_count if gpu else 0
    ram, ram_qty = asm.chosen["memory_kit"]
    _, storage_qty = asm.chosen["storage"]
    board_power = gpu["board_power_w"] if gpu else 0.0
    framed = "frame" in asm.chosen  # an open frame: no case to ventilate (configs.slots.choose_mount)
    case_fans = 0 if framed else case_fans_count(board_power * gpu_count + cpu["turbo_power_w"], rules)
    fans = case_fans + cooler["fans_count"]
    estimate = power_estimate(
        gpu_board_power_w=board_power, gpu_transient_peak_w=gpu["transient_peak_w"] if gpu else 0.0,
        gpu_count=gpu_count, gpu_recommended_psu_w=gpu["recommended_psu_w"] if gpu else 0.0,
        cpu_turbo_power_w=cpu["turbo_power_w"], dimm_count=ram["modules_count"] * ram_qty, drive_count=storage_qty,
        fan_count=fans, rules=rules,
    )
    host_w = estimate.sustained_w - board_power * gpu_count
    leads = gpu_leads(gpu) if gpu else Leads(0, 0)
    size, _ = standard_psu_size(estimate.psu_required_w, rules)
    pinned = ctx.pins.get("psu")
    unit_counts = [pinned[1]] if pinned and pinned[1] else list(range(1, min(max(gpu_count, 1),
                                                                               MAX_ATX_UNITS_COUNT) + 1))
    loads_by_units = {units: unit_loads(gpu, gpu_count, units, host_w, estimate.psu_required_w, rules)
                      for units in unit_counts}
    # Fewer units first (a second ATX unit needs a dual-PSU case and adapter: only where no one unit feeds the build),
    # and at each count a native lead a card before the adapter in the card's box (reviews ZS, ZT).
    sets = [(units, allowed, [(part_price(ctx, psu) * units, psu, units) for psu in offered(ctx, "psu") if all(
                 _unit_fits(psu, load, allowed, cpu["eps_8pin_count"], i == 0, rules)
                 for i, load in enumerate(loads_by_units[units]))])
            for units in unit_counts for allowed in dict.fromkeys((replace(leads, adapter_8pin_count=0), leads))]
    candidates: list[tuple[float, Part, int]] = []
    if pinned:
        candidates = [candidate for _, allowed, found in sets if allowed == leads for candidate in found]
    else:
        found_set = next(((allowed, found) for _, allowed, found in sets if found), None)
        if found_set is not None:
            leads, candidates = found_set
    rule = f">= {size} W" if estimate.psu_required_w <= size else (
        f"{estimate.psu_required_w:,.0f} W over at most {MAX_ATX_UNITS_COUNT} ATX units "
        f"({'the open frame has two brackets' if framed else 'a tower holds two'})")
    adapter = f" (or the boxed adapter from {leads.adapter_8pin_count} PCIe 8-pin)" if leads.adapter_8pin_count else ""
    psu, units = rank(ctx, asm, "psu", candidates, offered(ctx, "psu"), f"{rule} with {leads.text()}{adapter} per GPU",
                      closest=lambda part: (-part["capacity_w"], part_price(ctx, part), part.id))
    loads = loads_by_units.get(units) or unit_loads(gpu, gpu_count, units, host_w, estimate.psu_required_w, rules)
    for index, load in enumerate(loads):
        if not _unit_fits(psu, load, leads, cpu["eps_8pin_count"], index == 0, rules):
            asm.unsatisfied_add(
                f"PSU {index + 1} ({psu.name}, {psu['capacity_w']:,.0f} W, {psu['connectors_12vhpwr_count']} native "
                f"16-pin, {psu['pcie_8pin_count']} PCIe 8-pin) cannot feed its {load.gpu_count} GPU(s): needs "
                f"{unit_required_w(psu, load, rules):,.0f} W and {leads.text()}{adapter} each"
            )
            break
    efficiency = psu["efficiency"]
    asm.sustained_w, asm.peak_w, asm.psu_required_w = estimate.sustained_w, estimate.peak_w, estimate.psu_required_w
    asm.psu_capacity_w = psu["capacity_w"] * units
    asm.wall_w = wall_draw_w(estimate.sustained_w, efficiency, rules)
    rounded = ""
    if units == 1:
        rounded = (f", rounded up to a standard {size} W" if estimate.psu_required_w <= size else
                   f", above the largest standard size ({size} W)")
        if psu["capacity_w"] > size and not pinned:
            why = _larger_unit_reason(ctx, psu, size, loads[0], leads, cpu)
            rounded += f"; {psu['capacity_w']:,.0f} W fitted: {why}"
    lines = [
        f"{estimate.psu_required_w:,.0f} W required{rounded}",
        f"80 PLUS {efficiency}: ~{asm.wall_w:,.0f} W from the wall at sustained load",
    ]
    adapted = sum(adapted_cards(psu, leads, load.gpu_count) for load in loads) if candidates and gpu else 0
    if gpu and gpu["power_connector"] in OWN_SUPPLY_CONNECTORS:
        lines.append(f"leads: {gpu.name} runs from its own supply ({gpu['power_connector']}), no lead from the PSU")
    elif gpu and not leads.native_16pin_count and not leads.pcie_8pin_count:
        lines.append(f"leads: {gpu.name} is powered from the slot ({gpu['board_power_w']:g} W), no PCIe power lead")
    elif gpu:
        has = (f"{psu.name} has {psu['connectors_12vhpwr_count']} native 16-pin and {psu['pcie_8pin_count']} PCIe "
               "8-pin")
        if adapted:
            line = (f"leads: {adapted} of the {gpu_count} cards take the 16-pin adapter in their box from "
                    f"{leads.adapter_8pin_count} separate PCIe 8-pin leads each (no daisy-chained pigtails), the "
                    f"rest {leads.text()}: seat each 16-pin plug fully and bend no cable within 35 mm of it; {has}")
            asm.warnings.append(line)
        else:
            line = f"leads: {gpu.name} takes {leads.text()} (no adapters or splitters); {has}"
        lines.append(line)
    if units > 1:
        split = " + ".join(f"{load.gpu_count} GPU" for load in loads)
        lines.append(
            f"{units} ATX PSUs ({split}, the first also feeds board and CPU): ATX units do not share load, so each "
            "GPU takes all its leads from one unit and each unit is sized for its own GPUs "
            f"(largest unit needs {max(unit_required_w(psu, load, rules) for load in loads):,.0f} W"
            + (f", its GPUs' peaks up to {ATX3_TRANSIENT_OVER_RATING:g}x an ATX 3 unit's rating"
               if psu["atx_version"] != "2.x" else "") + "); join them with a dual-PSU "
            "adapter so they switch on together, " + ("on the open frame's PSU brackets" if framed else
                                                      "in a case with two PSU bays (a dual-PSU workstation case)")
        )
    units_wall = [wall_draw_w(load.sustained_w, efficiency, rules) for load in loads]
    lines.extend(_circuit_lines(ctx, asm, gpu, gpu_count, units_wall, efficiency))
    asm.power_lines = estimate.lines + tuple(lines[2:])
    asm.reasons["psu"] = lines
    asm.heat_line = (f"cooling: ~{estimate.sustained_w:,.0f} W of heat into the room: an open frame has no case to "
                     "ventilate, each card's own fans cool it; keep the room's air moving") if framed else (
        heat_line(estimate.sustained_w, case_fans, rules))
    return "" if not candidates and not pinned else FED_ON_ADAPTERS if adapted else FED


def _larger_unit_reason(ctx: Context, fitted: Part, size_w: int, load: UnitLoad, leads: Leads, cpu: Part) -> str:
    """Why a unit above the standard size was fitted: what the smaller catalog units with the watts lack."""
    smaller = [psu for psu in offered(ctx, "psu")
               if load.required_w <= psu["capacity_w"] < fitted["capacity_w"]]
    if not smaller:
        return f"the catalog has no unit of {load.required_w:,.0f}-{fitted['capacity_w'] - 1:,.0f} W"
    if any(_unit_fits(psu, load, leads, cpu["eps_8pin_count"], True, ctx.rules) for psu in smaller):
        return "the smaller units that would do cost more"
    lacks = []
    for psu in smaller:
        native = 1 if leads.adapter_8pin_count else leads.native_16pin_count * load.gpu_count
        if leads.native_16pin_count and (psu["atx_version"] == "2.x" or psu["connectors_12vhpwr_count"] < native):
            lacks.append("the native 16-pin (12V-2x6) lead the card takes" if native == 1 else
                         f"the {native} native 16-pin (12V-2x6) leads the cards take")
        elif psu["pcie_8pin_count"] < (pcie_8pin := _pcie_8pin_needed(psu, leads, load.gpu_count)):
            lacks.append(f"the {pcie_8pin} PCIe 8-pin leads the cards take")
        else:
            lacks.append(f"the {cpu['eps_8pin_count']} CPU (EPS) 8-pin leads the board takes")
    sizes = " and ".join(f"{capacity:,.0f} W" for capacity in sorted({psu["capacity_w"] for psu in smaller}))
    return f"the catalog's {sizes} unit(s) lack " + " or ".join(dict.fromkeys(lacks))


def heat_line(heat_w: float, case_fans: int, rules: Rules) -> str:
    return (f"cooling: ~{heat_w:,.0f} W of heat -> {case_fans} case fans "
            f"(1 per {rules.cooling.watts_per_case_fan_w} W, positive pressure: more intake than exhaust, guide §4.1)")


def _circuit_lines(ctx: Context, asm: Assembly, gpu: Part | None, gpu_count: int, units_wall_w: list[float],
                   efficiency: str) -> list[str]:
    """Which of the market's wall sockets the build needs (configs.mains), and a power limit that helps."""
    supply = mains_of(ctx.rules.power.mains, ctx.market)
    ordinary, *larger = outlets(supply)
    wall = sum(units_wall_w)
    socket = sockets_text(supply)
    if wall <= ordinary.continuous_w:
        return [f"circuit: ~{wall:,.0f} W fits one {ordinary.name} socket; {socket}"]
    lines = []
    fitting = next((outlet for outlet in larger if wall <= outlet.continuous_w), None)
    if fitting is not None:
        plan = f"one {fitting.name} socket on its own circuit"
        if _split_in_two(units_wall_w, ordinary.continuous_w):
            plan += (f", or two separate {ordinary.name} circuits with the PSUs split between them (each circuit "
                     f"<= {ordinary.continuous_w:,.0f} W; two sockets of one circuit are still one circuit)")
        line = f"circuit: ~{wall:,.0f} W is above one {ordinary.name} socket: needs {plan}; {socket}"
    else:
        biggest = largest(supply)
        per_unit = max(units_wall_w)
        line = (f"circuit: ~{wall:,.0f} W needs more than one {biggest.name} circuit: give each PSU its own circuit "
                f"(largest unit ~{per_unit:,.0f} W), or a rack PDU on a dedicated supply; {socket}")
        if per_unit > biggest.continuous_w:
            asm.unsatisfied_add(
                f"one PSU draws ~{per_unit:,.0f} W from the wall, more than a {biggest.name} socket gives"
            )
    lines.append(line)
    asm.warnings.append(line)
    limit = power_limit_line(gpu, gpu_count, wall, ordinary.continuous_w, efficiency, ctx.rules)
    if limit:
        lines.append(limit)
    return lines


def _split_in_two(loads_w: list[float], limit_w: float) -> bool:
    """Whether the PSUs' wall draws split into two groups each within `limit_w` (largest first, onto the lighter)."""
    if len(loads_w) < 2:
        return False
    groups = [0.0, 0.0]
    for load in sorted(loads_w, reverse=True):
        groups[groups.index(min(groups))] += load
    return max(groups) <= limit_w


def power_limit_line(gpu: Part | None, gpu_count: int, wall_w: float, circuit_limit_w: float, efficiency: str,
                     rules: Rules, purpose: str = "stay on one socket") -> str:
    """`nvidia-smi -pl` per GPU that brings the wall draw under one socket (or a limit), when that limit is a
    measured one."""
    if not gpu or not gpu_count:
        return ""
    p = rules.power
    cut_dc_w = (wall_w - circuit_limit_w) * getattr(p.efficiency_at_half_load, efficiency)
    limit_w = gpu["board_power_w"] - cut_dc_w / gpu_count
    fraction = limit_w / gpu["board_power_w"]
    if fraction < p.power_limit_min_fraction:  # no measured throughput cost below that: no proposal
        return ""
    return (f"or set `sudo nvidia-smi -pl {int(limit_w)}` on each GPU ({fraction:.0%} of {gpu['board_power_w']:g} W) "
            f"to {purpose}: at {p.power_limit_min_fraction:.0%} power, 4 x RTX 3090 kept over "
            f"{p.power_limit_throughput_kept_fraction:.0%} of training throughput ({p.power_limit_source})")

"""Plain-text views of a build (for `pth-top build show` and the wizard's review step), terminal-safe."""

from __future__ import annotations

from pth_top.configs.assembly import FLOOR_ONLY, TIGHT_FIT, floor_only
from pth_top.configs.build import ROLE_LABELS, Build
from pth_top.configs.market import MARKET_NAMES, SYMBOLS
from pth_top.configs.part_types import DESKTOP_SYSTEM
from pth_top.text import printable
from pth_top.units import GIB

# The role column: the longest label and a space, so a name never runs into it.
ROLE_COLUMN_WIDTH = max(len(label) for label in ROLE_LABELS.values()) + 1


def memory_lines(build: Build) -> list[str]:
    lines = []
    for label, value in build.memory.terms():
        lines.append(f"  {label:<17}{value / GIB:>9.2f} GiB")
    total = build.memory.total_bytes / GIB
    if build.cpu_only:
        lines.append(f"  {'total':<17}{total:>9.2f} GiB, held in system RAM (CPU-only build)")
        return lines
    usable = build.gpu_usable_per_gpu_bytes / GIB
    tight = any(line.startswith(TIGHT_FIT) for line in build.warnings)  # in usable memory, short of the margin
    fits = f"fits {FLOOR_ONLY}" if floor_only(build.answers) else "fits"
    verdict = ("fits TIGHT (short of the estimator's margin)" if tight else fits) if build.memory_fits else \
        "DOES NOT FIT"
    card = build.gpu_memory_per_gpu_bytes / GIB
    gpu = build.component("gpu")
    shared = gpu is not None and gpu.spec.get("memory_kind") == "shared"
    label, holder = ("total", f"{card:g} GiB shared with the CPU") if shared else (
        "total per GPU", f"{card:.4g} GiB card")
    lines.append(f"  {label:<17}{total:>9.2f} GiB of {usable:.1f} GiB usable ({holder}): {verdict}")
    return lines


def memory_heading(build: Build) -> str:
    if build.cpu_only:
        return "Memory (CPU-only)"
    gpu = build.component("gpu")
    return "Memory (shared with the CPU)" if gpu is not None and gpu.spec.get("memory_kind") == "shared" else (
        "Memory per GPU")


def power_lines(build: Build) -> list[str]:
    p = build.power
    if not p.psu_capacity_w:
        gpu = build.component("gpu")
        own = "system's own adapter" if gpu is not None and gpu.spec.get("form") == DESKTOP_SYSTEM else (
            "module's own supply")
        return [f"  sustained {p.sustained_w:,.0f} W, peak {p.peak_w:,.0f} W ({own})"]
    return [
        f"  sustained {p.sustained_w:,.0f} W, peak {p.peak_w:,.0f} W, wall ~{p.wall_draw_w:,.0f} W",
        f"  PSU required {p.psu_required_w:,.0f} W, fitted {p.psu_capacity_w:,.0f} W",
    ]


def speed_lines(build: Build, with_formula: bool = False) -> list[str]:
    """The speed prediction: 1-3 summary lines, then (for `build show`) each step of the formula."""
    speed = build.speed
    if not speed.summary:
        return ["  not predicted (a build file written before speed predictions: run the wizard on it again)"]
    lines = [f"  {line}" for line in speed.summary]
    if build.blockers and build.component("gpu") is not None \
            and build.memory.total_bytes > build.gpu_usable_per_gpu_bytes:  # audit CB58: a rate for a build that OOMs
        lines.insert(0, "  the rate its GPUs would run the job at, had they the memory: they do not hold it")
    if with_formula:
        lines.extend(f"      - {line}" for line in speed.formula)
    return lines


def money(build: Build, amount_cny: float) -> str:
    """An amount in the build's (the budget's) currency."""
    return f"{SYMBOLS.get(build.currency, build.currency + ' ')}{amount_cny / build.cny_per_unit:,.0f}"


def price_line(build: Build) -> str:
    delta = build.budget_cny - build.total_price_cny
    state = f"{money(build, delta)} under budget" if delta >= 0 else f"{money(build, -delta)} OVER budget"
    return f"  {money(build, build.total_price_cny)} of {money(build, build.budget_cny)}: {state}"


def component_line(role: str, build: Build, with_id: bool = True) -> str:
    component = build.component(role)
    if component is None:
        return ""
    count = f"{component.quantity} x " if component.quantity > 1 else ""
    # An SXM module is bought with its server (whole server price, 0 on the GPU line): say so, not "¥0".
    system = build.component("system")
    in_server = role == "gpu" and not component.total_price_cny and system is not None \
        and system.spec.get("gpu_id") == component.part_id
    price = "in the server's price" if in_server else money(build, component.total_price_cny)
    line = f"{ROLE_LABELS[role]:<{ROLE_COLUMN_WIDTH}}{count}{component.name}  {price}"
    return printable(line + f"  [{component.part_id}]" if with_id else line)


def feasibility_lines(build: Build) -> list[str]:
    """What leads a review: why this is no recommendation, then what is feasible instead (empty when it is fine)."""
    if build.feasible:
        return []
    lines = ["NOT A RECOMMENDATION: " + build.blockers[0], *(f"  ! {line}" for line in build.blockers[1:])]
    if build.feasible_alternatives:
        lines.append("Feasible instead (best first):")
        lines.extend(f"  {rank}. {line}" for rank, line in enumerate(build.feasible_alternatives, 1))
    else:
        lines.append("Nothing feasible found in the catalog for this budget: raise the budget or shrink the workload.")
    lines.append("The parts below are the closest build, shown for reference only.")
    return lines


def market_line(build: Build) -> str:
    """Whose prices and availability these are, said before anything else ("" for yuan in China)."""
    if build.market == "cn" and build.currency == "CNY":
        return ""
    return (f"Prices and availability are the {MARKET_NAMES.get(build.market, build.market)} market's "
            f"(its export rules and SKUs), shown in {build.currency}; a part without a price there is converted "
            "at rules.toml's rate and says so in its reasoning and the warnings")


def render_build_text(build: Build) -> str:
    out: list[str] = []
    if build.title:
        out += [build.title, ""]
    if market_line(build):
        out += [market_line(build), ""]
    if not build.feasible:
        out += [*feasibility_lines(build), ""]
    out.append("Components")
    for component in build.components:
        out.append("  " + component_line(component.role, build))
        out.extend(f"      - {line}" for line in component.reasoning)
    out += ["", memory_heading(build), *memory_lines(build)]
    out += ["", "Speed", *speed_lines(build, with_formula=True)]
    out += ["", "Power", *power_lines(build)]
    out += ["", "Price", price_line(build)]
    out += ["", "Reasoning", *(f"  - {line}" for line in build.reasoning)]
    if build.comments:
        out += ["", "Comments on this preset", *(f"  - {line}" for line in build.comments)]
    out += ["", "Warnings", *(f"  ! {line}" for line in build.warnings or ("none",))]
    # Names, reasons and comments come from files: each line is made terminal-safe (an embedded newline included).
    return "\n".join(printable(line) for line in out) + "\n"

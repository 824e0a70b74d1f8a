"""A recommended (or preset) machine: components, memory vs GPU, power, price, reasoning, warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pth_top.configs.answers import Answers
from pth_top.configs.memory_terms import MemoryBreakdown

Role = Literal["gpu", "cpu", "motherboard", "memory_kit", "storage", "cooler", "psu", "case", "system", "frame",
               "riser", "gpu_duct"]
ROLES: tuple[str, ...] = get_args(Role)
ROLE_LABELS = {
    "gpu": "GPU", "cpu": "CPU", "motherboard": "Motherboard", "memory_kit": "RAM", "storage": "Storage",
    "cooler": "CPU cooler", "psu": "PSU", "case": "Case", "system": "Server", "frame": "Open frame",
    "riser": "PCIe riser", "gpu_duct": "GPU fan duct",
}


@dataclass(frozen=True, slots=True)
class Component:
    role: str
    part_id: str
    name: str
    quantity: int
    unit_price_cny: float
    spec: dict[str, Any]
    reasoning: tuple[str, ...] = ()

    @property
    def total_price_cny(self) -> float:
        return self.unit_price_cny * self.quantity


@dataclass(frozen=True, slots=True)
class Power:
    sustained_w: float
    peak_w: float
    psu_required_w: float
    psu_capacity_w: float
    wall_draw_w: float


@dataclass(frozen=True, slots=True)
class Speed:
    """How fast the job runs on the build's GPUs (configs.speed): what the review shows, and how it was reckoned."""

    summary: tuple[str, ...] = ()  # 1-3 lines
    formula: tuple[str, ...] = ()  # each step with its inputs
    figures: dict[str, float] = field(default_factory=dict)  # e.g. decode_tokens_per_s_per_stream
    inputs: dict[str, float | str] = field(default_factory=dict)  # the numbers the formula used
    ceilings: str = ""  # "datasheet", or the bench run whose measured ceilings were used


@dataclass(frozen=True, slots=True)
class Build:
    answers: Answers
    components: tuple[Component, ...]
    memory: MemoryBreakdown
    gpu_memory_per_gpu_bytes: int
    gpu_usable_per_gpu_bytes: int
    power: Power
    total_price_cny: float
    budget_cny: float
    reasoning: tuple[str, ...]
    warnings: tuple[str, ...]
    # role -> catalog ids in recommendation order, for "swap to the next-best".
    alternatives: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # role -> (id, quantity or 0 for "as the rules say"): what the user or a preset fixed.
    pins: dict[str, tuple[str, int]] = field(default_factory=dict)
    title: str = ""
    comments: tuple[str, ...] = ()
    # Why this build cannot be recommended (memory, budget, power limit, a rule it breaks), the plainest first.
    blockers: tuple[str, ...] = ()
    # What is feasible instead, best first: each line names the change, its memory per GPU, the card and the price.
    feasible_alternatives: tuple[str, ...] = ()
    # For the wizard's "apply" key: (line, answers, pins) of each alternative that is a build. Not saved to files.
    applicable_alternatives: tuple[tuple[str, Answers, dict[str, tuple[str, int]]], ...] = field(
        default=(), compare=False, repr=False)
    speed: Speed = field(default_factory=Speed)
    # Where the parts are priced: the market, the budget's currency, and its rules.toml rate (amounts are in yuan).
    market: str = "cn"
    currency: str = "CNY"
    cny_per_unit: float = 1.0
    # The bench run's measured ceilings (configs.speed.MeasuredCeilings) the speed used, kept for swaps. Not saved.
    measured: Any = field(default=None, compare=False, repr=False)

    def component(self, role: str) -> Component | None:
        for component in self.components:
            if component.role == role:
                return component
        return None

    @property
    def feasible(self) -> bool:
        return not self.blockers

    @property
    def cpu_only(self) -> bool:
        return self.component("gpu") is None

    @property
    def memory_fits(self) -> bool:
        """GPU memory holds the workload; a CPU-only build's RAM is sized to it (a shortfall is a blocker)."""
        return self.cpu_only or self.memory.total_bytes <= self.gpu_usable_per_gpu_bytes

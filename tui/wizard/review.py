"""The review step: the build with reasoning per component, memory vs GPU, power, price, warnings."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from pth_top.configs.build import ROLE_LABELS, Build
from pth_top.configs.render import (
    ROLE_COLUMN_WIDTH,
    component_line,
    feasibility_lines,
    memory_lines,
    power_lines,
    price_line,
    speed_lines,
)
from pth_top.tui.wizard.steps import STEPS

SWAP_KEYS = (
    ("1", "gpu"), ("2", "cpu"), ("3", "motherboard"), ("4", "memory_kit"),
    ("5", "storage"), ("6", "cooler"), ("7", "psu"), ("8", "case"),
)


def build_text(build: Build | None, error: str | None = None) -> Text:
    """The whole review as one Text (user and catalog strings are never parsed as markup)."""
    text = Text()
    if error:
        text.append(error + "\n", style="bold red")
        return text
    if build is None:
        return text
    if build.title:
        text.append(build.title + "\n\n", style="bold")
    for index, line in enumerate(feasibility_lines(build)):
        text.append(line + "\n", style="bold red" if index == 0 else "")
    if not build.feasible:
        text.append("\n")
    keys = {role: key for key, role in SWAP_KEYS}
    text.append("Components (key: swap for the next-best)\n", style="bold")
    if build.cpu_only and build.alternatives.get("gpu"):
        text.append(f" [{keys['gpu']}] ", style="bold cyan")
        text.append(f"{ROLE_LABELS['gpu']:<{ROLE_COLUMN_WIDTH}}none: a CPU-only build (1 swaps to a GPU)\n")
    for component in build.components:
        text.append(f" [{keys.get(component.role, ' ')}] ", style="bold cyan")
        text.append(component_line(component.role, build, with_id=False))
        options = build.alternatives.get(component.role, ())
        if component.part_id in options and len(options) > 1:
            text.append(f"  ({options.index(component.part_id) + 1}/{len(options)})", style="dim")
        text.append("\n")
    text.append("\nMemory (CPU-only)\n" if build.cpu_only else "\nMemory per GPU\n", style="bold")
    for line in memory_lines(build):
        text.append(line + "\n", style="bold red" if "DOES NOT FIT" in line else "")
    text.append("\nSpeed\n", style="bold")
    for line in speed_lines(build):
        text.append(line + "\n")
    text.append("\nPower\n", style="bold")
    for line in power_lines(build):
        text.append(line + "\n")
    text.append("\nPrice\n", style="bold")
    line = price_line(build)
    text.append(line + "\n", style="bold red" if "OVER" in line else "green")
    text.append("\nWarnings\n", style="bold")
    for warning in build.warnings or ("none",):
        text.append(f"  ! {warning}\n", style="yellow")
    if build.comments:
        text.append("\nComments on this preset\n", style="bold")
        for comment in build.comments:
            text.append(f"  - {comment}\n")
    text.append("\nWhy each part\n", style="bold")
    for component in build.components:
        text.append(f"  {ROLE_LABELS[component.role]}: {component.name}\n")
        for reason in component.reasoning:
            text.append(f"    - {reason}\n", style="dim")
    text.append("\nReasoning\n", style="bold")
    for reason in build.reasoning:
        text.append(f"  - {reason}\n", style="dim")
    return text


class ReviewStep(VerticalScroll):
    DEFAULT_CSS = """
    ReviewStep { height: 1fr; padding: 0 1; }
    ReviewStep .step-help { color: $text-muted; }
    ReviewStep #save-row { height: auto; margin-top: 1; }
    ReviewStep #save-row Label { width: 9; }
    ReviewStep #save-path { width: 1fr; }
    ReviewStep .step-nav { height: auto; margin-top: 1; }
    ReviewStep .step-nav Button { margin-right: 2; min-width: 10; }
    """

    def __init__(self) -> None:
        super().__init__(id="step-review")

    def compose(self) -> ComposeResult:
        yield Static(Text(STEPS[-1].help), classes="step-help")
        with Horizontal(classes="step-nav"):
            yield Button("< Back", id="back-review", classes="nav-back", compact=True)
            yield Button("Save", id="save-build", variant="primary", compact=True)
        with Horizontal(id="save-row"):
            yield Label("Save to")
            yield Input(id="save-path", compact=True)
        yield Static("", id="review-body")

    def show(self, build: Build | None, error: str | None = None) -> None:
        self.query_one("#review-body", Static).update(build_text(build, error))

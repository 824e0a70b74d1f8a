"""The fleet screen's heat grid: what its cells show of each host, and the keys that zoom and expand it.

Packed (a big fleet, or `z`), each host is one cell coloured by its worst GPU for the grid's metric (the
idlest for utilization, the fullest or hottest for memory and temperature), "!" when it has errors or a
throttled GPU, in the host table's order (worst first); `x` shows the highlighted host's GPUs below its cell.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from textual.binding import Binding

from pth_top.fleet.model import HostRow
from pth_top.text import printable
from pth_top.widgets.heat_grid import HeatGrid, HeatRow

# Grid colouring: what a cell's fraction is, per metric (temperature: 100 C is full scale).
GRID_METRICS: dict[str, Callable[[Any], float | None]] = {
    "utilization": lambda gpu: gpu.utilization_ratio,
    "memory": lambda gpu: gpu.memory_used_ratio,
    "temperature": lambda gpu: None if gpu.temperature_celsius is None else gpu.temperature_celsius / 100,
}
# A host's one packed cell: its worst GPU by the metric (an idle GPU holds a data-parallel job back).
GRID_WORST: dict[str, Callable[[Iterable[float]], float]] = {"utilization": min, "memory": max, "temperature": max}
GRID_BINDINGS = [
    Binding("x", "expand_host", "GPUs of host", id="fleet.grid_expand"),
    Binding("z", "zoom_grid", "Grid: hosts/GPUs", id="fleet.grid_zoom"),
]


def age_text(age_s: float | None) -> str:
    if age_s is None:
        return "-"
    if age_s < 120:
        return f"{age_s:.0f}s"
    return f"{age_s / 60:.0f}m" if age_s < 7200 else f"{age_s / 3600:.0f}h"


def grid_note(host: HostRow) -> str:
    """After a host's grid cells: nothing when up, else its state and the age of its last good data."""
    if host.state.value == "up":
        return ""
    note = host.state.value if host.age_s is None else f"{host.state.value}, data {age_text(host.age_s)} old"
    return f"{note}: {printable(host.reason)}" if host.reason else note


def heat_rows(hosts: Iterable[HostRow], labels: dict[str, str], metric_name: str, stale: bool) -> list[HeatRow]:
    """One grid row per host, in the given order."""
    metric, worst = GRID_METRICS[metric_name], GRID_WORST[metric_name]
    rows = []
    for host in hosts:
        values = tuple(metric(gpu) for gpu in host.gpus)
        readings = [value for value in values if value is not None]
        rows.append(HeatRow(label=labels[host.instance], values=values, greyed=host.state.greyed or stale,
                            note=grid_note(host), key=host.instance, worst=worst(readings) if readings else None,
                            alert=bool(host.errors or host.throttled_gpus)))
    return rows


def toggle_expanded(grid: HeatGrid, instance: str | None) -> None:
    """`x`: show the host's GPUs below its packed cell (packing the grid if it was not), or fold them."""
    if instance is None:
        return
    if not grid.packed:
        grid.set_zoom("hosts")
    grid.expand_row(None if grid.expanded == instance else instance)


def toggle_zoom(grid: HeatGrid) -> None:
    """`z`: one cell per host <-> one line of GPU cells per host."""
    grid.set_zoom("gpus" if grid.packed else "hosts")

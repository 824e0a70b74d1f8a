"""The top line: host, uptime, load, CPU counts, NVIDIA driver; refresh interval and the view's state flush right.

The state (paused, filter, GPU-only, tree, follow, sort column) is never cut: the host part gives way.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from pth_top.sensors.model import HostInfo
from pth_top.text import printable
from pth_top.tui.format import format_number, format_uptime
from pth_top.tui.process_view import COLUMN_BY_KEY, ProcessView

FILTER_SHOWN_MAX_CHARS = 12


def header_text(host: HostInfo) -> Text:
    """Host facts: name, uptime, load, CPU counts, NVIDIA driver."""
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    text.append(printable(host.hostname), style="bold")
    text.append(f"  up {format_uptime(host.uptime_s)}")
    loads = " ".join(
        format_number(value, digits=2) for value in (host.load_average_1m, host.load_average_5m, host.load_average_15m)
    )
    text.append(f"  load {loads}")
    text.append(f"  CPUs {host.logical_cpu_count}/{host.physical_cpu_count}")
    if host.nvml_unavailable_reason:
        text.append(f"  {printable(host.nvml_unavailable_reason)}", style="yellow")
    else:
        text.append(printable(f"  driver {host.nvidia_driver_version} CUDA {host.cuda_driver_version}"))
    return text


def state_text(interval_s: float, paused: bool, view: ProcessView, lead: str | None = None,
               recording: bool = False) -> Text:
    """The compact state indicator: REC, refresh interval or PAUSED (or `lead`: the replay's cursor), filter,
    GPU-only, tree, follow, sort column."""
    badges: list[tuple[str, str]] = []
    if recording:
        badges.append(("● REC", "bold red"))
    if lead is not None:
        badges.append((lead, "bold reverse cyan"))
    elif paused:
        badges.append(("PAUSED", "bold reverse yellow"))
    else:
        badges.append((f"every {interval_s:g}s", ""))
    if view.filter_text:
        shown = printable(view.filter_text)
        if len(shown) > FILTER_SHOWN_MAX_CHARS:
            shown = shown[:FILTER_SHOWN_MAX_CHARS - 1] + "…"
        badges.append((f"/{shown}", "bold yellow"))
    if view.gpu_only:
        badges.append(("GPU-only", "bold magenta"))
    if view.tree:
        badges.append(("tree", "bold"))
    if view.follow:
        badges.append(("follow", "bold cyan"))
    column = COLUMN_BY_KEY[view.sort_column]
    badges.append((f"{column.label}{'▼' if view.descending else '▲'}", "bold"))
    text = Text(no_wrap=True, end="")
    for position, (words, style) in enumerate(badges):
        if position:
            text.append(" ")
        text.append(words, style=style)
    return text


class HeaderBar(Widget):
    """One line: host facts, cut with an ellipsis when narrow, then the state indicator, never cut."""

    DEFAULT_CSS = """
    HeaderBar {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.info = Text("starting…", end="")
        self.state = Text(end="")

    def show(self, host: HostInfo, interval_s: float, paused: bool, view: ProcessView,
             lead: str | None = None, recording: bool = False) -> None:
        info, state = header_text(host), state_text(interval_s, paused, view, lead, recording)
        # Repainted only when something changed: a quiet screen writes nothing.
        if (info, state) != (self.info, self.state):
            self.info, self.state = info, state
            self.refresh()

    def render(self) -> Text:
        width = self.content_size.width
        room = max(0, width - self.state.cell_len - 2)
        line = self.info.copy()
        line.truncate(room, overflow="ellipsis")
        line.pad_right(max(0, width - line.cell_len - self.state.cell_len))
        line.append_text(self.state)
        line.no_wrap = True
        return line

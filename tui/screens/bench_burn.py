"""The Bench screen's live burn view: one line per device, redrawn as each second's sample arrives."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from pth_top.benches.client.burn import BurnLog, attach_burn_log
from pth_top.text import printable


class BurnView(Static):
    """The latest second of every device in the burn (rate, SM clock, power, temperature, clock events)."""

    DEFAULT_CSS = "BurnView { height: auto; color: $text; }"

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.burn_log = BurnLog()
        self.report: list[str] = []  # the finished burn's report, shown below the last live lines

    def add_sample(self, fields: dict) -> None:
        self.burn_log.add(fields)
        self._draw()

    def show_report(self, lines: list[str]) -> None:
        self.report = [printable(line, 600) for line in lines]
        self._draw()

    def _draw(self) -> None:
        live = [burn.live_line() for burn in self.burn_log.devices.values()]
        self.update(Text("\n".join(live + ([""] + self.report if self.report else [])), no_wrap=True,
                         overflow="ellipsis"))


def burn_summary(container: VerticalScroll) -> str:
    """A cancelled burn's partial report in one line (slowest and throttled devices); "" when no burn ran."""
    views = container.query(BurnView)
    if not views:
        return ""
    log = views.first().burn_log
    throttled = "; ".join(f"{device} ({', '.join(f'{word} {count} s' for word, count in reasons.items())})"
                          for device, reasons in log.throttled().items())
    slowest = log.slowest()
    return (f" Burn so far: {len(log.devices)} device(s)" + (f", slowest {slowest}" if slowest else "")
            + f", throttled: {throttled or 'none'}.")


def show_burn_sample(container: VerticalScroll, fields: dict) -> BurnView:
    """Add a sample to the container's burn view, mounting the view at the first sample of a run."""
    views = container.query(BurnView)
    view = views.first() if views else BurnView()
    if not views:
        container.mount(view, before=0) if container.children else container.mount(view)
    view.add_sample(fields)
    return view


def conclude_burn(container: VerticalScroll, record: Any) -> bool:
    """A finished burn: its report (as the CLI prints it) under the live lines, its curve put in the run to save."""
    views = container.query(BurnView)
    if not views:
        return False
    view = views.first()
    view.show_report(attach_burn_log(record, view.burn_log))
    return True

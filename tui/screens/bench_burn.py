"""The Bench screen's live burn view: one line per device, redrawn as each second's sample arrives."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from pth_top.benches.client.burn import BurnLog


class BurnView(Static):
    """The latest second of every device in the burn (rate, SM clock, power, temperature, clock events)."""

    DEFAULT_CSS = "BurnView { height: auto; color: $text; }"

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.burn_log = BurnLog()

    def add_sample(self, fields: dict) -> None:
        self.burn_log.add(fields)
        self.update(Text("\n".join(burn.live_line() for burn in self.burn_log.devices.values()), no_wrap=True,
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

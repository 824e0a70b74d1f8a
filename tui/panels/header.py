"""The top line: host, uptime, load, CPU counts, NVIDIA driver, refresh interval, paused state."""

from __future__ import annotations

from rich.text import Text

from pth_top.sensors.model import HostInfo
from pth_top.text import printable
from pth_top.tui.format import format_number, format_uptime
from pth_top.widgets.quiet_static import QuietStatic


def header_text(host: HostInfo, interval_s: float, paused: bool) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
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
    text.append(f"  every {interval_s:g}s")
    if paused:
        text.append("  PAUSED", style="bold reverse yellow")
    return text


class HeaderBar(QuietStatic):
    DEFAULT_CSS = """
    HeaderBar {
        height: 1;
        background: $panel;
        padding: 0 1;
    }
    """

    def show(self, host: HostInfo, interval_s: float, paused: bool) -> None:
        # One line by CSS: a relayout would only repaint the screen's scrollbars, every refresh.
        self.update(header_text(host, interval_s, paused), layout=False)

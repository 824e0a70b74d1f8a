"""Disk I/O rates, filesystem usage and network rates, as compact text blocks."""

from __future__ import annotations

from typing import Sequence

from rich.text import Text

from pth_top.sensors.model import DiskIoRate, FilesystemUsage, NetworkRate
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.format import format_bytes, format_percent, format_rate
from pth_top.widgets.quiet_static import QuietStatic


def disks_text(disks: Sequence[DiskIoRate], filesystems: Sequence[FilesystemUsage]) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("Disk         read      write   r/s   w/s\n", style="bold")
    for disk in disks:
        read, write = format_rate(disk.read_bytes_per_s), format_rate(disk.write_bytes_per_s)
        text.append(f"{printable(disk.device)[:10]:<10} {read:>8} {write:>9}")
        text.append(f" {disk.read_iops:>5.0f} {disk.write_iops:>5.0f}\n")
    for filesystem in filesystems:
        used_percent = filesystem.used_percent
        style = ""
        if not is_na(used_percent):
            style = "bold red" if used_percent >= 90 else ("yellow" if used_percent >= 75 else "")
        text.append(f"{printable(filesystem.mountpoint)[:16]:<16}", style="dim")
        text.append(f" {format_percent(used_percent):>4}", style=style)
        text.append(f" {format_bytes(filesystem.used_bytes)}/{format_bytes(filesystem.total_bytes)}\n")
    text.rstrip()
    return text


def network_text(networks: Sequence[NetworkRate]) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append("Network        rx         tx\n", style="bold")
    if not networks:
        text.append("no interfaces", style="dim")
    for network in networks:
        received, sent = format_rate(network.rx_bytes_per_s), format_rate(network.tx_bytes_per_s)
        text.append(f"{printable(network.interface)[:10]:<10} {received:>9} {sent:>10}\n")
    text.rstrip()
    return text


class _LinesPanel(QuietStatic):
    """A Static that relayouts only when its line count changes (a relayout repaints every scrollbar)."""

    _line_count: int | None = None

    def show_text(self, text: Text) -> None:
        line_count = text.plain.count("\n")
        self.update(text, layout=line_count != self._line_count)
        self._line_count = line_count


class DisksPanel(_LinesPanel):
    DEFAULT_CSS = "DisksPanel { width: 1fr; height: auto; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, disks: Sequence[DiskIoRate], filesystems: Sequence[FilesystemUsage]) -> None:
        self.show_text(disks_text(disks, filesystems))


class NetworkPanel(_LinesPanel):
    DEFAULT_CSS = "NetworkPanel { width: 1fr; height: auto; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }"

    def show(self, networks: Sequence[NetworkRate]) -> None:
        self.show_text(network_text(networks))

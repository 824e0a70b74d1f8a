"""CPU (one meter per core, htop colours) and memory/swap meters."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from pth_top.sensors.model import CpuSample, MemorySample
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.format import format_bytes, format_number
from pth_top.widgets.core_grid import CoreGrid, CoreReading
from pth_top.widgets.meter import Meter, MeterSegment
from pth_top.widgets.quiet_static import QuietStatic

# htop's colours: user green, system red, iowait grey; memory used green, buffers/cache blue/yellow.
USER_STYLE, SYSTEM_STYLE, IOWAIT_STYLE = "green", "red", "bright_black"
MEMORY_USED_STYLE, MEMORY_CACHE_STYLE, SWAP_STYLE = "green", "yellow", "red"


def core_readings(cpu: CpuSample) -> tuple[CoreReading, ...]:
    return tuple(
        CoreReading(
            label=str(core.index),
            segments=(
                MeterSegment(core.user_percent / 100, USER_STYLE),
                MeterSegment(core.system_percent / 100, SYSTEM_STYLE),
                MeterSegment(core.iowait_percent / 100, IOWAIT_STYLE),
            ),
            busy_fraction=core.total_percent / 100,
        )
        for core in cpu.cores
    )


def cpu_title(cpu: CpuSample, model_name: str) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"CPU {cpu.total_percent:5.1f}%", style="bold")
    text.append(f"  {format_number(cpu.frequency_mhz / 1000, ' GHz', 2)}")
    if is_na(cpu.package_temperature_c):
        # psutil found no CPU package sensor (none exposed, as in most VMs and containers).
        text.append("  temp N/A (no sensor)", style="dim")
    else:
        text.append(f"  {format_number(cpu.package_temperature_c, '°C')}")
    text.append(f"  {printable(model_name)}", style="dim")
    text.append("   ", style="")
    text.append("usr", style=USER_STYLE)
    text.append(" sys", style=SYSTEM_STYLE)
    text.append(" io", style=IOWAIT_STYLE)
    return text


def memory_segments(memory: MemorySample) -> tuple[tuple[MeterSegment, ...], str]:
    total = memory.total_bytes or 1
    segments = (
        MeterSegment(memory.used_bytes / total, MEMORY_USED_STYLE),
        MeterSegment(memory.buffers_cache_bytes / total, MEMORY_CACHE_STYLE),
    )
    return segments, f"{format_bytes(memory.used_bytes)}/{format_bytes(memory.total_bytes)}"


def swap_segments(memory: MemorySample) -> tuple[tuple[MeterSegment, ...], str]:
    if not memory.swap_total_bytes:
        return (), "no swap"
    segments = (MeterSegment(memory.swap_used_bytes / memory.swap_total_bytes, SWAP_STYLE),)
    return segments, f"{format_bytes(memory.swap_used_bytes)}/{format_bytes(memory.swap_total_bytes)}"


class CpuMemoryPanel(Vertical):
    DEFAULT_CSS = """
    CpuMemoryPanel {
        height: auto;
        padding: 0 1;
    }
    CpuMemoryPanel #cpu-title { height: 1; }
    CpuMemoryPanel #memory-meters { height: 1; layout: horizontal; }
    CpuMemoryPanel #memory-meters Meter { margin-right: 1; }
    """

    def compose(self) -> ComposeResult:
        yield QuietStatic(id="cpu-title")
        yield CoreGrid(id="cores")
        with Vertical(id="memory-meters"):
            yield Meter("Mem", id="memory")
            yield Meter("Swp", id="swap")

    def show(self, cpu: CpuSample, memory: MemorySample, model_name: str) -> None:
        self.query_one("#cpu-title", QuietStatic).update(cpu_title(cpu, model_name), layout=False)
        self.query_one(CoreGrid).cores = core_readings(cpu)
        self.query_one("#memory", Meter).update(*memory_segments(memory))
        self.query_one("#swap", Meter).update(*swap_segments(memory))

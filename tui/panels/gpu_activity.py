"""What a GPU row and its detail line say of real activity (GPM) beside NVML's "util", and of flags."""

from __future__ import annotations

from rich.text import Text

from pth_top.sensors.gpu_flags import STUCK, GpuFlag
from pth_top.sensors.model import GpuSample
from pth_top.sensors.na import is_na
from pth_top.tui.format import format_percent

# Busy this much with SM activity under this share of it: the GPU waits (spins), it does not compute.
WAITING_UTIL_PERCENT = 50.0
WAITING_SHARE_OF_UTIL = 0.25
KERNEL_TIME_HINT = "time any kernel ran; no SM activity counters on this GPU"


def _percent(ratio: float) -> str:
    return format_percent(ratio if is_na(ratio) else 100.0 * ratio)


def activity_cell(gpu: GpuSample) -> Text:
    """"SM/Tens" column: SM active / tensor active in %; N/A where GPM is missing (never guessed)."""
    if gpu.gpm_supported is not True:
        return Text("N/A", style="dim", justify="right")
    sm, tensor = gpu.sm_active_ratio, gpu.tensor_active_ratio
    if is_na(sm):
        return Text("...", style="dim", justify="right")
    tensor_text = "-" if is_na(tensor) else f"{100 * tensor:.0f}"
    style = "yellow" if is_waiting(gpu) else ""
    return Text(f"{100 * sm:.0f}/{tensor_text}", style=style, justify="right")


def is_waiting(gpu: GpuSample) -> bool:
    """NVML says busy while few SMs work: a kernel spins (a collective waiting on a peer, a busy-wait)."""
    util, sm = gpu.utilization_percent, gpu.sm_active_ratio
    if is_na(util) or is_na(sm) or util < WAITING_UTIL_PERCENT:
        return False
    return 100.0 * sm < WAITING_SHARE_OF_UTIL * util


def activity_text(gpu: GpuSample) -> Text:
    """The detail line's words on activity: busy vs SM active, or what NVML's figure is where that is all."""
    text = Text()
    util = format_percent(gpu.utilization_percent)
    if gpu.gpm_supported is False:
        text.append(f"  kernel time {util}", style="bold")
        text.append(f" ({KERNEL_TIME_HINT})", style="dim")
        return text
    if gpu.gpm_supported is not True:
        return text
    if is_na(gpu.sm_active_ratio):
        text.append(f"  busy {util}, SM activity from the next sample", style="dim")
        return text
    text.append(f"  busy {util}, SM active {_percent(gpu.sm_active_ratio)}, tensor {_percent(gpu.tensor_active_ratio)}")
    if not is_na(gpu.dram_bandwidth_active_ratio):
        text.append(f", DRAM {_percent(gpu.dram_bandwidth_active_ratio)}")
    if is_waiting(gpu):
        text.append(": waiting, not computing", style="bold yellow")
    return text


def flag_text(flag: GpuFlag | None) -> Text:
    if flag is None:
        return Text()
    return Text(f"  {flag.reason}", style="bold red" if flag.kind == STUCK else "yellow")


def flag_mark(flag: GpuFlag) -> tuple[str, str]:
    """The row's word and style for a flag."""
    return ("STUCK", "bold red") if flag.kind == STUCK else ("SLOW", "yellow")

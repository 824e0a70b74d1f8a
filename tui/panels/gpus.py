"""GPUs: one table row per GPU (MIG instances under their parent), details of the highlighted one."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message

from pth_top.sensors.gpu_flags import FlagTracker, GpuFlag
from pth_top.sensors.model import GpuSample, ProcessSample
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.format import format_bytes, format_number, format_percent, format_rate
from pth_top.tui.panels.gpu_activity import activity_cell, activity_text, flag_mark, flag_text
from pth_top.tui.panels.gpu_efficiency import MatmulCeiling, efficiency_text, load_matmul_ceiling
from pth_top.widgets.quiet_static import QuietStatic
from pth_top.widgets.row_table import RowTable, TableColumn

GPU_COLUMNS = (
    ("gpu", "#", 4), ("name", "Name", 14), ("util", "Util", 4), ("activity", "SM/Tens", 7), ("memory", "Memory", 12),
    ("temp", "Temp", 4), ("fan", "Fan", 4), ("power", "Power", 9), ("clocks", "SM/Mem MHz", 10),
    ("pstate", "P", 3), ("pcie", "PCIe", 8),
)
LEFT_ALIGNED_COLUMNS = ("gpu", "name", "pstate", "pcie")
NAME_WIDTH = GPU_COLUMNS[1][2]


def _level_style(percent: float, warn: float = 60, alert: float = 90) -> str:
    if is_na(percent):
        return "dim"
    return "bold red" if percent >= alert else ("yellow" if percent >= warn else "green")


def is_idle(gpu: GpuSample) -> bool:
    """Nothing runs: the driver says so, or utilisation is 0 (real idle A40s reported "power cap", not idle)."""
    return "idle" in gpu.throttle_reasons or gpu.utilization_percent == 0


def pcie_text(gpu: GpuSample) -> Text:
    current = f"{format_number(gpu.pcie_generation_current)}x{format_number(gpu.pcie_width_current)}"
    if gpu.pcie_link_degraded and not is_idle(gpu):
        return Text(f"{current}!", style="yellow")
    # An idle link trains down to save power (Gen1 on every idle PCIe card seen): not worth a flag.
    return Text(current, style="dim" if gpu.pcie_link_degraded else "")


def marked_name(name: str, mark: str, style: str) -> Text:
    """The name cut so that a mark ("LOST", "STUCK") still fits the column."""
    return Text(f"{name[:NAME_WIDTH - len(mark) - 1]} {mark}", style=style)


def gpu_cells(gpu: GpuSample, flag: GpuFlag | None = None) -> tuple[Text, ...]:
    name = printable(gpu.name.removeprefix("NVIDIA "))
    if gpu.lost:
        return (
            Text(str(gpu.index)),
            marked_name(name, "LOST", "bold red"),
            *(Text("") for _ in GPU_COLUMNS[2:]),
        )
    power = f"{format_number(gpu.power_draw_w)}/{format_number(gpu.power_limit_w, 'W')}"
    temperature_style = "bold red" if not is_na(gpu.temperature_c) and gpu.temperature_c >= 85 else ""
    memory = f"{format_bytes(gpu.memory_used_bytes)}/{format_bytes(gpu.memory_total_bytes)}"
    return (
        # A GPU with health problems (Xid errors, row remaps, retired pages) is flagged by its number.
        Text(f"{gpu.index}!", style="bold red") if gpu.health_problems else Text(str(gpu.index)),
        marked_name(name, *flag_mark(flag)) if flag is not None else Text(name[:NAME_WIDTH]),
        Text(format_percent(gpu.utilization_percent), style=_level_style(gpu.utilization_percent), justify="right"),
        activity_cell(gpu),
        Text(memory, style=_level_style(gpu.memory_percent, 80, 95), justify="right"),
        Text(format_number(gpu.temperature_c, "C"), style=temperature_style, justify="right"),
        Text(format_percent(gpu.fan_speed_percent), justify="right"),
        Text(power, justify="right"),
        Text(f"{format_number(gpu.sm_clock_mhz)}/{format_number(gpu.memory_clock_mhz)}", justify="right"),
        Text(str(gpu.pstate)),
        pcie_text(gpu),
    )


def gpu_rows(
    gpus: Sequence[GpuSample], flags: Mapping[int, GpuFlag] | None = None
) -> list[tuple[str, tuple[Text, ...]]]:
    rows = []
    for gpu in gpus:
        rows.append((str(gpu.index), gpu_cells(gpu, (flags or {}).get(gpu.index))))
        for instance in gpu.mig_instances:
            key = f"{gpu.index}:{instance.gpu_instance_id}"
            memory = f"{format_bytes(instance.memory_used_bytes)}/{format_bytes(instance.memory_total_bytes)}"
            cells = (
                Text(key, style="dim"),
                Text(f"└ MIG {printable(instance.name)}"[:NAME_WIDTH], style="dim"),
                Text("N/A", style="dim", justify="right"),
                Text("N/A", style="dim", justify="right"),
                Text(memory, justify="right"),
                *(Text("") for _ in GPU_COLUMNS[5:]),
            )
            rows.append((key, cells))
    return rows


def gpu_detail_text(gpu: GpuSample, flag: GpuFlag | None = None, ceiling: MatmulCeiling | None = None) -> Text:
    """Everything the row has no room for, in one or two lines."""
    text = Text(overflow="fold")
    text.append(f"GPU {gpu.index} {printable(gpu.name)}", style="bold")
    text.append(f"  bus {gpu.bus_id}")
    if gpu.lost:
        text.append("  lost: the GPU stopped answering NVML (check dmesg for Xid errors)", style="bold red")
        return text
    link = (
        f"  PCIe Gen{format_number(gpu.pcie_generation_current)} x{format_number(gpu.pcie_width_current)}"
        f" (max Gen{format_number(gpu.pcie_generation_max)} x{format_number(gpu.pcie_width_max)})"
    )
    if gpu.health_problems:
        # First, so that a narrow terminal still shows it.
        text.append("  health: " + ", ".join(gpu.health_problems), style="bold red")
    text.append_text(flag_text(flag))
    text.append_text(activity_text(gpu))
    text.append_text(efficiency_text(gpu, ceiling))
    text.append(link)
    if gpu.pcie_link_degraded:
        # Idle links train down to save power (Gen1 on every idle PCIe card seen); under load it means the slot.
        if is_idle(gpu):
            text.append(" idle", style="dim")
        else:
            text.append(" below max: check the slot", style="yellow")
    text.append(f"  RX {format_rate(gpu.pcie_rx_bytes_per_s)} TX {format_rate(gpu.pcie_tx_bytes_per_s)}")
    if is_na(gpu.ecc_enabled):
        text.append("  ECC N/A")
    else:
        errors = gpu.ecc_volatile_uncorrected_errors
        text.append(f"  ECC {'on' if gpu.ecc_enabled else 'off'}")
        if gpu.ecc_enabled:
            style = "bold red" if not is_na(errors) and errors > 0 else ""
            text.append(f", {format_number(errors)} uncorrected", style=style)
    if is_na(gpu.nvlink_active_links):
        text.append("  no NVLink", style="dim")
    else:
        text.append(f"  NVLink {gpu.nvlink_active_links} active")
    # "idle" is the driver resting the clocks, not a limit: said apart from the reasons that hold a busy GPU back.
    limits = [reason for reason in gpu.throttle_reasons if reason != "idle"]
    if limits:
        text.append("  throttled: " + ", ".join(limits), style="yellow")
    if "idle" in gpu.throttle_reasons:
        text.append("  clocks idle", style="dim")
    elif not limits:
        text.append("  not throttled", style="dim")
    if gpu.mig_enabled is True:
        text.append(f"  MIG on, {len(gpu.mig_instances)} instances")
    if is_na(gpu.temperature_c):
        text.append(f"  temperature N/A ({gpu.temperature_missing_reason})" if not is_na(gpu.temperature_missing_reason)
                    else "  temperature N/A")
    if not gpu.health_problems:
        text.append(healthy_text(gpu), style="dim")
    return text


def healthy_text(gpu: GpuSample) -> str:
    """What was checked and found fine (Xid errors, row remapping, retired pages), in words."""
    known = []
    if not is_na(gpu.xid_errors):
        known.append("no Xid errors since start")
    if not is_na(gpu.remapped_rows_pending):
        rows = gpu.remapped_rows
        known.append(f"{format_number(rows)} remapped row{'' if rows == 1 else 's'}, none pending")
    if not is_na(gpu.retired_pages):
        known.append("no retired pages")
    return "  health: " + ", ".join(known) if known else ""


class MatmulCeilingLoaded(Message):
    """The last bench run's matmul ceiling (or None), read by the panel's worker."""

    bubble = False

    def __init__(self, ceiling: MatmulCeiling | None) -> None:
        super().__init__()
        self.ceiling = ceiling


class GpuPanel(Vertical):
    """The GPU table, or one line saying why there is none."""

    DEFAULT_CSS = """
    GpuPanel {
        height: auto;
        padding: 0 1;
    }
    GpuPanel #gpu-table {
        height: auto;
        max-height: 11;
        width: 1fr;
    }
    GpuPanel #gpu-detail {
        height: auto;
        max-height: 2;
        color: $text-muted;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._gpus: dict[str, GpuSample] = {}
        self._row_count = 0
        self.flag_tracker = FlagTracker()
        self._flags: dict[int, GpuFlag] = {}
        self._ceiling: MatmulCeiling | None = None
        # True once the worker has answered (with a ceiling or None).
        self.ceiling_read = False

    def compose(self) -> ComposeResult:
        table = RowTable(id="gpu-table")
        table.set_columns([
            TableColumn(key, Text(label, justify="left" if key in LEFT_ALIGNED_COLUMNS else "right"), width)
            for key, label, width in GPU_COLUMNS
        ])
        yield table
        yield QuietStatic(id="gpu-detail")

    def load_matmul_ceiling(self) -> None:
        """Read the last bench run's matmul ceiling once, on a worker thread, for the efficiency estimate."""
        self.run_worker(self._read_matmul_ceiling, thread=True, exit_on_error=False, group="matmul-ceiling")

    def _read_matmul_ceiling(self) -> None:
        try:
            ceiling = load_matmul_ceiling()
        except Exception:  # a broken catalog or run file leaves the estimate out, not the dashboard
            ceiling = None
        self.post_message(MatmulCeilingLoaded(ceiling))

    def on_matmul_ceiling_loaded(self, message: MatmulCeilingLoaded) -> None:
        self._ceiling, self.ceiling_read = message.ceiling, True
        if self._gpus:
            self._show_detail()

    @property
    def flags(self) -> Mapping[int, GpuFlag]:
        """GPU index -> its flag as last judged."""
        return self._flags

    def track_flags(self, gpus: Sequence[GpuSample], processes: Iterable[ProcessSample],
                    timestamp_s: float) -> Mapping[int, GpuFlag]:
        """Add a sample to the flags' history without drawing (another screen shows); the flags now."""
        self._flags = self.flag_tracker.update(gpus, processes, timestamp_s)
        return self._flags

    @property
    def row_count(self) -> int:
        return self._row_count

    def show(
        self, gpus: Sequence[GpuSample], processes: Iterable[ProcessSample] = (), timestamp_s: float | None = None
    ) -> None:
        """Draw the GPUs; with the sample's time, its history also says which look stuck or slow."""
        self._gpus = {str(gpu.index): gpu for gpu in gpus}
        self.display = bool(gpus)
        if timestamp_s is not None:
            self.track_flags(gpus, processes, timestamp_s)
        if gpus:
            rows = dict(gpu_rows(gpus, self._flags))
            self._row_count = len(rows)
            self.query_one(RowTable).sync_rows(list(rows), rows.__getitem__)
            self._show_detail()

    def on_row_table_highlighted(self, event: RowTable.Highlighted) -> None:
        event.stop()
        self._show_detail()

    def _show_detail(self) -> None:
        key = self.query_one(RowTable).highlighted_key
        gpu = self._gpus.get((key or "0").split(":")[0])
        detail = gpu_detail_text(gpu, self._flags.get(gpu.index), self._ceiling) if gpu else ""
        self.query_one("#gpu-detail", QuietStatic).update(detail)

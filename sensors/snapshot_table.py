"""`pth-top snapshot` without --json: the sample as plain-text tables (no colour, no rich)."""

from __future__ import annotations

from typing import AbstractSet, Sequence

from pth_top.sensors.model import GpuSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.sensors.snapshot_json import top_processes_by_cpu
from pth_top.sensors.units import format_bytes, format_duration, format_number, format_rate
from pth_top.text import printable


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right_aligned: AbstractSet[int] = frozenset(),
                 width: int | None = None) -> list[str]:
    """Columns padded to their widest cell; the last column is cut to fit `width` when given.

    Cells are made printable first (process names and mount points are anyone's text), so they align.
    """
    table = [[printable(cell) for cell in row] for row in (headers, *rows)]
    widths = [max(len(cell) for cell in column) for column in zip(*table, strict=True)]
    lines = []
    for row in table:
        cells = []
        for position, text in enumerate(row):
            if position in right_aligned:
                cells.append(text.rjust(widths[position]))
            elif position == len(row) - 1:
                cells.append(text)
            else:
                cells.append(text.ljust(widths[position]))
        line = "  " + "  ".join(cells).rstrip()
        if width is not None and len(line) > width:
            line = line[:max(0, width - 1)] + "…"
        lines.append(line)
    return lines


def _host_lines(snapshot: Snapshot) -> list[str]:
    host = snapshot.host
    loads = " ".join(format_number(load, 2) for load in
                     (host.load_average_1m, host.load_average_5m, host.load_average_15m))
    physical = "?" if is_na(host.physical_cpu_count) else host.physical_cpu_count
    if host.nvml_unavailable_reason:
        gpu_line = f"GPU     {host.nvml_unavailable_reason}"
    else:
        gpu_line = f"NVIDIA  driver {host.nvidia_driver_version}  CUDA {host.cuda_driver_version}"
    return [
        f"Host    {host.hostname}  up {format_duration(host.uptime_s)}  load {loads}  {host.kernel}",
        f"CPU     {host.cpu_model_name}  {host.logical_cpu_count} logical / {physical} physical",
        gpu_line,
    ]


def _cpu_lines(snapshot: Snapshot) -> list[str]:
    cpu = snapshot.cpu
    lines = [
        f"CPU use {cpu.total_percent:.1f} %  frequency {format_number(cpu.frequency_mhz, 0, ' MHz')}  "
        f"package {format_number(cpu.package_temperature_c, 0, ' °C')}"
    ]
    cells = [f"{core.index:>3}:{core.total_percent:5.1f}%" for core in cpu.cores]
    for start in range(0, len(cells), 8):
        lines.append("  " + " ".join(cells[start:start + 8]))
    return lines


def _memory_lines(snapshot: Snapshot) -> list[str]:
    memory = snapshot.memory
    return [
        f"Memory  used {format_bytes(memory.used_bytes)} / {format_bytes(memory.total_bytes)}  "
        f"buffers+cache {format_bytes(memory.buffers_cache_bytes)}  "
        f"available {format_bytes(memory.available_bytes)}",
        f"Swap    used {format_bytes(memory.swap_used_bytes)} / {format_bytes(memory.swap_total_bytes)}",
    ]


def _io_lines(snapshot: Snapshot) -> list[str]:
    lines = []
    if snapshot.disks:
        lines.append("Disks")
        lines += render_table(
            ("DEVICE", "READ", "WRITE", "READ IOPS", "WRITE IOPS"),
            [(disk.device, format_rate(disk.read_bytes_per_s), format_rate(disk.write_bytes_per_s),
              f"{disk.read_iops:.0f}", f"{disk.write_iops:.0f}") for disk in snapshot.disks],
            right_aligned={1, 2, 3, 4},
        )
    if snapshot.filesystems:
        lines.append("Filesystems")
        lines += render_table(
            ("MOUNT", "TYPE", "USED", "SIZE", "USE%", "DEVICE"),
            [(fs.mountpoint, fs.fstype, format_bytes(fs.used_bytes), format_bytes(fs.total_bytes),
              format_number(fs.used_percent, 0, "%"), fs.device)
             for fs in snapshot.filesystems],
            right_aligned={2, 3, 4},
        )
    if snapshot.networks:
        lines.append("Network")
        lines += render_table(
            ("INTERFACE", "RX", "TX"),
            [(net.interface, format_rate(net.rx_bytes_per_s), format_rate(net.tx_bytes_per_s))
             for net in snapshot.networks],
            right_aligned={1, 2},
        )
    return lines


def _pcie_text(gpu: GpuSample) -> str:
    text = (f"Gen{gpu.pcie_generation_current}x{gpu.pcie_width_current}"
            f"/Gen{gpu.pcie_generation_max}x{gpu.pcie_width_max}")
    return text + (" (below max)" if gpu.pcie_link_degraded else "")


def _gpu_row(gpu: GpuSample) -> tuple[str, ...]:
    if gpu.lost:
        return (str(gpu.index), gpu.name, "LOST", "", "", "", "", "", "", "", "", gpu.bus_id)
    memory = f"{format_bytes(gpu.memory_used_bytes)} / {format_bytes(gpu.memory_total_bytes)}"
    power = f"{format_number(gpu.power_draw_w)} / {format_number(gpu.power_limit_w, 0, ' W')}"
    ecc = "off" if gpu.ecc_enabled is False else (
        "N/A" if is_na(gpu.ecc_enabled) else f"{gpu.ecc_volatile_uncorrected_errors} err")
    return (
        str(gpu.index), gpu.name, format_number(gpu.utilization_percent, 0, "%"), memory,
        format_number(gpu.temperature_c, 0, "°C"), format_number(gpu.fan_speed_percent, 0, "%"), power,
        f"{format_number(gpu.sm_clock_mhz)}/{format_number(gpu.memory_clock_mhz)}", str(gpu.pstate),
        _pcie_text(gpu), f"{format_rate(gpu.pcie_rx_bytes_per_s)} / {format_rate(gpu.pcie_tx_bytes_per_s)}",
        f"{gpu.bus_id}  ECC {ecc}  NVLink {gpu.nvlink_active_links}",
    )


def _gpu_lines(snapshot: Snapshot) -> list[str]:
    if not snapshot.gpus:
        return []
    lines = ["GPUs"]
    lines += render_table(
        ("GPU", "NAME", "UTIL", "MEMORY", "TEMP", "FAN", "POWER", "SM/MEM MHz", "P", "PCIE NOW/MAX",
         "PCIE RX / TX", "BUS  ECC  NVLINK"),
        [_gpu_row(gpu) for gpu in snapshot.gpus],
        right_aligned={2, 3, 4, 5, 6, 7},
    )
    for gpu in snapshot.gpus:
        if gpu.throttle_reasons:
            lines.append(f"  GPU {gpu.index} clocks held by: {', '.join(gpu.throttle_reasons)}")
        for instance in gpu.mig_instances:
            lines.append(
                f"  GPU {gpu.index} MIG {instance.gpu_instance_id}: {instance.name}  "
                f"{format_bytes(instance.memory_used_bytes)} / {format_bytes(instance.memory_total_bytes)}"
            )
    return lines


def _process_lines(snapshot: Snapshot, top_processes: int, width: int | None) -> list[str]:
    chosen = top_processes_by_cpu(snapshot.processes, top_processes)
    if not chosen:
        return []
    show_container = any(process.container for process in chosen)
    rows = []
    for process in chosen:
        gpu = ""
        if process.has_gpu_context:
            gpu = f"{format_bytes(process.gpu_memory_used_bytes)} @" + ",".join(map(str, process.gpu_indices))
            if not is_na(process.gpu_sm_util_percent):
                gpu += f" SM {process.gpu_sm_util_percent:.0f}%"
        # TIME+ is CPU time, as in top and the dashboard; ELAPSED is wall time since the process started.
        row = [
            str(process.pid), process.user[:12], f"{process.cpu_percent:.1f}", f"{process.memory_percent:.1f}",
            format_bytes(process.rss_bytes), gpu, process.state, format_duration(process.cpu_time_s),
            format_duration(process.running_time_s(snapshot.timestamp_s)),
        ]
        rows.append((*row, *((process.container,) if show_container else ()), process.command))
    headers = ("PID", "USER", "CPU%", "MEM%", "RSS", "GPU", "STATE", "TIME+", "ELAPSED")
    lines = [f"Processes (top {len(chosen)} of {len(snapshot.processes)} by CPU)"]
    lines += render_table(
        (*headers, *(("CONTAINER",) if show_container else ()), "COMMAND"), rows,
        right_aligned={0, 2, 3, 4, 5, 7, 8}, width=width,
    )
    return lines


def format_snapshot_table(snapshot: Snapshot, top_processes: int = 15, width: int | None = 160) -> str:
    """Host, CPU, memory, disks, network, GPUs and the busiest processes as aligned plain text.

    Every line is made printable: no control character from a name or a file reaches the terminal.
    """
    sections = [
        _host_lines(snapshot), _cpu_lines(snapshot), _memory_lines(snapshot), _io_lines(snapshot),
        _gpu_lines(snapshot), _process_lines(snapshot, top_processes, width),
    ]
    return "\n\n".join("\n".join(map(printable, section)) for section in sections if section) + "\n"

"""What one interval puts in the recording: the processes that matter, the sample's JSON, its numeric columns."""

from __future__ import annotations

import dataclasses
import heapq
import json
import zlib
from typing import Any, Collection

from pth_top.recorder.events import BENIGN_THROTTLE_REASONS
from pth_top.sensors.model import GpuSample, ProcessSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.sensors.snapshot_json import snapshot_to_dict

ZLIB_LEVEL = 9
# Left out of a recorded sample: derived from what it keeps (sample_from_json puts it back).
DERIVED_KEY = "running_time_s"
# Digits kept of fields finer than a replay shows, by part of the sample: their noise was most of its bytes.
_PERCENT = 1
DIGITS = {
    "processes": {"cpu_percent": _PERCENT, "memory_percent": 3, "start_time_s": 2},
    "cpu": {"total_percent": _PERCENT},
    "cores": {"user_percent": _PERCENT, "system_percent": _PERCENT, "iowait_percent": _PERCENT,
              "total_percent": _PERCENT},
    "disks": {"read_bytes_per_s": 0, "write_bytes_per_s": 0, "read_iops": 1, "write_iops": 1},
    "networks": {"rx_bytes_per_s": 0, "tx_bytes_per_s": 0},
}


def processes_that_matter(snapshot: Snapshot, top: int,
                          among: Collection[int] | None = None) -> tuple[ProcessSample, ...]:
    """Every GPU process, plus the `top` busiest by CPU and the `top` largest by memory (of the PIDs `among`,
    where given); in PID order."""
    processes = snapshot.processes
    if among is not None:
        processes = tuple(process for process in processes if process.pid in among or process.gpu_uses)
    chosen = {process.pid: process for process in processes if process.gpu_uses}
    if top > 0:
        by_cpu = heapq.nsmallest(top, processes, key=lambda process: (-process.cpu_percent, process.pid))
        by_memory = heapq.nsmallest(top, processes, key=lambda process: (-process.rss_bytes, process.pid))
        for process in (*by_cpu, *by_memory):
            chosen.setdefault(process.pid, process)
    return tuple(sorted(chosen.values(), key=lambda process: process.pid))


def without_arguments(process: ProcessSample) -> ProcessSample:
    """The process with its command line cut to its name (`--no-cmdline`: arguments can hold secrets)."""
    return dataclasses.replace(process, command=process.name or process.command.split(" ", 1)[0])


def recorded_snapshot(snapshot: Snapshot, top: int, include_cmdline: bool,
                      chosen: tuple[ProcessSample, ...] | None = None) -> Snapshot:
    """The sample as recorded: its processes_that_matter only (`chosen`, where the caller has them already)."""
    if chosen is None:
        chosen = processes_that_matter(snapshot, top)
    if not include_cmdline:
        chosen = tuple(without_arguments(process) for process in chosen)
    return dataclasses.replace(snapshot, processes=chosen)


def snapshot_json_bytes(snapshot: Snapshot) -> bytes:
    """The JSON of `pth-top snapshot --json` (schema pth-top.snapshot), compact, UTF-8, as recorded: without
    running_time_s, percentages, rates and process start times rounded (DIGITS)."""
    data = snapshot_to_dict(snapshot)
    for row in (*data["processes"], *data["jobs"]):
        del row[DERIVED_KEY]
    for part, rows in (("processes", data["processes"]), ("cpu", (data["cpu"],)), ("cores", data["cpu"]["cores"]),
                       ("disks", data["disks"]), ("networks", data["networks"])):
        digits = DIGITS[part]
        for row in rows:
            for name, places in digits.items():
                value = row.get(name)
                if isinstance(value, float):
                    row[name] = round(value, places)
    return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()


def sample_from_json(body: bytes) -> dict[str, Any]:
    """A recorded sample as `pth-top snapshot --json` data: running_time_s put back."""
    data: dict[str, Any] = json.loads(body)
    at_s = data.get("timestamp_s", 0.0)
    for row in (*data.get("processes", ()), *data.get("jobs", ())):
        if DERIVED_KEY not in row and isinstance(row.get("start_time_s"), (int, float)):
            row[DERIVED_KEY] = max(0.0, at_s - row["start_time_s"])
    return data


def compress(data: bytes, dictionary: bytes | None) -> bytes:
    """zlib, with the keyframe's JSON as preset dictionary (most of a sample repeats its keyframe)."""
    compressor = zlib.compressobj(ZLIB_LEVEL, zdict=dictionary) if dictionary else zlib.compressobj(ZLIB_LEVEL)
    return compressor.compress(data) + compressor.flush()


def decompress(data: bytes, dictionary: bytes | None) -> bytes:
    decompressor = zlib.decompressobj(zdict=dictionary) if dictionary else zlib.decompressobj()
    return decompressor.decompress(data) + decompressor.flush()


def _number(value: Any) -> Any:
    return None if is_na(value) else value


def host_columns(snapshot: Snapshot) -> tuple[Any, ...]:
    """cpu_percent .. process_count of the samples table, in its column order."""
    memory = snapshot.memory
    return (
        snapshot.cpu.total_percent, _number(snapshot.host.load_average_1m),
        memory.used_bytes, memory.available_bytes, memory.total_bytes, memory.swap_used_bytes,
        sum(disk.read_bytes_per_s for disk in snapshot.disks), sum(disk.write_bytes_per_s for disk in snapshot.disks),
        sum(net.rx_bytes_per_s for net in snapshot.networks), sum(net.tx_bytes_per_s for net in snapshot.networks),
        len(snapshot.processes),
    )


GPU_COLUMNS = (
    "time_s", "gpu_index", "lost", "utilization_percent", "memory_utilization_percent", "memory_used_bytes",
    "memory_total_bytes", "temperature_c", "power_draw_w", "power_limit_w", "sm_clock_mhz", "memory_clock_mhz",
    "pcie_rx_bytes_per_s", "pcie_tx_bytes_per_s", "throttle_reasons", "ecc_volatile_uncorrected_errors", "xid_errors",
)


def gpu_row(time_s: float, gpu: GpuSample) -> tuple[Any, ...]:
    """One gpu_samples row; throttle_reasons holds only the slowdowns (not idle or set clocks), comma-joined."""
    throttle = ",".join(reason for reason in gpu.throttle_reasons if reason not in BENIGN_THROTTLE_REASONS)
    return (
        time_s, gpu.index, int(gpu.lost), *(_number(getattr(gpu, name)) for name in GPU_COLUMNS[3:14]), throttle,
        _number(gpu.ecc_volatile_uncorrected_errors), _number(gpu.xid_errors),
    )


def process_row(time_s: float, process: ProcessSample) -> tuple[Any, ...]:
    """One processes row as first seen (pid, start_time_s, user, container, name, command, seen, peaks, gpus)."""
    gpu_memory = process.gpu_memory_used_bytes
    return (
        process.pid, round(process.start_time_s, 2), process.user, process.container, process.name, process.command,
        time_s, time_s, process.cpu_percent, process.rss_bytes, None if is_na(gpu_memory) else gpu_memory,
        ",".join(str(index) for index in process.gpu_indices),
    )

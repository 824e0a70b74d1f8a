"""Events from consecutive snapshots: Xid, ECC and row remaps, throttling, lost GPUs, limits, GPU processes, disks,
stuck and straggler GPUs (recorder/flag_events.py).

`EventDetector.feed(snapshot)` compares each snapshot with the one before and returns what changed as Events.
The first snapshot is the baseline: nothing that was already so when watching began is an event.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Protocol

from pth_top.recorder.event import Event
from pth_top.recorder.flag_events import FlagEvents
from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.sensors.model import FilesystemUsage, GpuSample, ProcessSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.sensors.xid_meanings import xid_meaning
from pth_top.text import printable
from pth_top.units import GIB

# Clock reasons that are no slowdown worth an event (an idle GPU, clocks someone set on purpose).
BENIGN_THROTTLE_REASONS = frozenset({"idle", "applications clocks", "display clocks", "sync boost"})
SEVERE_THROTTLE_REASONS = frozenset({"thermal (SW)", "thermal (HW)", "HW slowdown", "power brake (HW)"})
# Xid codes that mean the GPU or its memory needs attention (not an application's own fault).
CRITICAL_XIDS = frozenset({48, 62, 64, 74, 79, 92, 95, 119, 120, 140})
COMMAND_LIMIT = 300


@dataclass(frozen=True, slots=True)
class Limits:
    """Where the limit events fire, and where they re-arm (hysteresis, so a GPU at its cap is one event)."""

    power_fraction: float = 0.98  # of the enforced power limit
    power_rearm_fraction: float = 0.90
    temperature_c: float = 85.0
    temperature_rearm_c: float = 80.0
    # A filesystem is full below min(disk_floor_bytes, disk_floor_fraction of its size) free.
    disk_floor_bytes: int = 1 * GIB
    disk_floor_fraction: float = 0.02


class EventSource(Protocol):
    """Events from outside the snapshots (the OOM watcher); polled once per snapshot."""

    def poll(self, snapshot: Snapshot) -> list[Event]: ...


@dataclass
class _GpuProcess:
    process: ProcessSample
    first_seen_s: float
    peak_gpu_memory_bytes: int = 0
    gpus: set[int] = field(default_factory=set)


def disk_floor_bytes(filesystem: FilesystemUsage, limits: Limits) -> float:
    return min(limits.disk_floor_bytes, limits.disk_floor_fraction * (filesystem.used_bytes + filesystem.free_bytes))


def process_command(process: ProcessSample, include_cmdline: bool) -> str:
    """The command line as recorded: the full one, or the process name only (no arguments, so no secrets)."""
    text = process.command if include_cmdline else (process.name or process.command.split(" ", 1)[0])
    return printable(text, COMMAND_LIMIT)


class EventDetector:
    """Stateful: feed it every snapshot in order, from one thread."""

    def __init__(self, limits: Limits | None = None, include_cmdline: bool = True,
                 sources: tuple[EventSource, ...] = (), flags: FlagThresholds | None = None) -> None:
        self.limits = limits or Limits()
        self.include_cmdline = include_cmdline
        # The stuck and straggler flags over the same snapshots ([flags] thresholds).
        self.sources = (*sources, FlagEvents(flags))
        self._gpus: dict[int, GpuSample] | None = None
        self._xid: dict[tuple[int, str], int] = {}
        self._throttle_since: dict[tuple[int, str], float] = {}
        self._over_power: set[int] = set()
        self._over_temperature: set[int] = set()
        self._gpu_processes: dict[tuple[int, float], _GpuProcess] = {}
        self._full_disks: set[str] = set()

    def feed(self, snapshot: Snapshot, xid_counts: Mapping[tuple[int, str], int] | None = None) -> list[Event]:
        """The events since the previous snapshot; `xid_counts` (GPU, Xid label) -> count gives Xid codes."""
        baseline = self._gpus is None
        now = snapshot.timestamp_s
        events: list[Event] = []
        previous = self._gpus or {}
        current = {gpu.index: gpu for gpu in snapshot.gpus}
        for index, gpu in current.items():
            before = previous.get(index)
            events += self._limit_events(now, gpu, baseline)
            events += self._throttle_events(now, gpu, baseline)
            if before is not None:
                events += self._health_events(now, before, gpu)
        for index, gone in previous.items():
            if index not in current and not gone.lost:
                events.append(Event(now, "gpu_lost", "critical", f"GPU {index} disappeared from NVML",
                                    index, gone.uuid, evidence={"name": gone.name, "bus_id": gone.bus_id}))
        events += self._xid_events(now, current, xid_counts, previous)
        events += self._process_events(now, snapshot, baseline)
        events += self._disk_events(now, snapshot.filesystems, baseline)
        for source in self.sources:
            events += source.poll(snapshot)
        self._gpus = current
        return events

    def _health_events(self, now: float, before: GpuSample, gpu: GpuSample) -> list[Event]:
        index, uuid = gpu.index, gpu.uuid
        events = []
        if gpu.lost and not before.lost:
            events.append(Event(now, "gpu_lost", "critical", f"GPU {index} stopped answering NVML (lost)", index, uuid,
                                evidence={"name": gpu.name, "bus_id": gpu.bus_id}))
        elif before.lost and not gpu.lost:
            events.append(Event(now, "gpu_lost", "info", f"GPU {index} answers NVML again", index, uuid,
                                evidence={"name": gpu.name, "bus_id": gpu.bus_id, "recovered": True}))
        for name, what, kind in (
            ("ecc_volatile_uncorrected_errors", "uncorrected ECC errors", "ecc"),
            ("retired_pages", "retired pages", "ecc"),
            ("remapped_rows", "remapped rows", "row_remap"),
        ):
            old, new = getattr(before, name), getattr(gpu, name)
            if not is_na(old) and not is_na(new) and new > old:
                severity = "critical" if name == "ecc_volatile_uncorrected_errors" else "warning"
                events.append(Event(now, kind, severity, f"GPU {index}: {what} {old} -> {new}", index, uuid,
                                    evidence={"counter": name, "before": old, "after": new}))
        for name, what, severity in (
            ("remapped_rows_pending", "row remap pending (reset the GPU)", "warning"),
            ("remapped_rows_failed", "row remapping failed (the GPU needs service)", "critical"),
        ):
            if getattr(gpu, name) is True and getattr(before, name) is not True:
                events.append(Event(now, "row_remap", severity, f"GPU {index}: {what}", index, uuid,
                                    evidence={"counter": name, "before": False, "after": True}))
        return events

    def _xid_events(self, now: float, gpus: dict[int, GpuSample], xid_counts: Mapping[tuple[int, str], int] | None,
                    previous: dict[int, GpuSample]) -> list[Event]:
        if xid_counts is None:  # no codes: the per-GPU totals of the samples
            xid_counts = {(index, "?"): gpu.xid_errors for index, gpu in gpus.items() if not is_na(gpu.xid_errors)}
        events = []
        for (index, label), count in sorted(xid_counts.items()):
            seen = self._xid.get((index, label), 0)
            if count <= seen:
                continue
            code = int(label) if label.isdigit() else None
            meaning = xid_meaning(code) if code is not None else "Xid code not known"
            gpu = gpus.get(index) or previous.get(index)
            severity = "critical" if code in CRITICAL_XIDS else "warning"
            times = f" x{count - seen}" if count - seen > 1 else ""
            events.append(Event(now, "xid", severity, f"GPU {index}: Xid {label}{times}: {meaning}", index,
                                gpu.uuid if gpu else "",
                                evidence={"xid": code, "label": label, "meaning": meaning,
                                          "count_before": seen, "count_after": count}))
        self._xid = dict(xid_counts)
        return events

    def _throttle_events(self, now: float, gpu: GpuSample, baseline: bool) -> list[Event]:
        index = gpu.index
        reasons = set(gpu.throttle_reasons) - BENIGN_THROTTLE_REASONS
        active = {reason for (gpu_index, reason) in self._throttle_since if gpu_index == index}
        started = sorted(reasons - active)
        ended = sorted(active - reasons)
        events = []
        for reason in started:
            self._throttle_since[(index, reason)] = now
        if started and not baseline:
            severe = SEVERE_THROTTLE_REASONS.intersection(started)
            events.append(Event(now, "throttle_start", "warning" if severe else "info",
                                f"GPU {index} throttling: {', '.join(started)}", index, gpu.uuid,
                                evidence={"reasons": started, "all_reasons": list(gpu.throttle_reasons),
                                          "sm_clock_mhz": _value(gpu.sm_clock_mhz),
                                          "temperature_c": _value(gpu.temperature_c),
                                          "power_draw_w": _value(gpu.power_draw_w)}))
        if ended:
            durations = {reason: round(now - self._throttle_since.pop((index, reason)), 3) for reason in ended}
            events.append(Event(now, "throttle_end", "info", f"GPU {index} no longer throttling: {', '.join(ended)}",
                                index, gpu.uuid, evidence={"reasons": ended, "duration_s": durations,
                                                           "sm_clock_mhz": _value(gpu.sm_clock_mhz)}))
        return events

    def _limit_events(self, now: float, gpu: GpuSample, baseline: bool) -> list[Event]:
        limits, index = self.limits, gpu.index
        events = []
        draw, cap = gpu.power_draw_w, gpu.power_limit_w
        if not is_na(draw) and not is_na(cap) and cap > 0:
            if draw >= limits.power_fraction * cap and index not in self._over_power:
                self._over_power.add(index)
                if not baseline:
                    events.append(Event(now, "power_limit", "info", f"GPU {index} at its power limit: "
                                        f"{draw:.0f} W of {cap:.0f} W", index, gpu.uuid,
                                        evidence={"power_draw_w": draw, "power_limit_w": cap}))
            elif draw < limits.power_rearm_fraction * cap:
                self._over_power.discard(index)
        temperature = gpu.temperature_c
        if not is_na(temperature):
            if temperature >= limits.temperature_c and index not in self._over_temperature:
                self._over_temperature.add(index)
                if not baseline:
                    events.append(Event(now, "temperature_limit", "warning",
                                        f"GPU {index} at {temperature:.0f} °C (limit {limits.temperature_c:.0f} °C)",
                                        index, gpu.uuid, evidence={"temperature_c": temperature,
                                                                   "limit_c": limits.temperature_c}))
            elif temperature < limits.temperature_rearm_c:
                self._over_temperature.discard(index)
        return events

    def _process_events(self, now: float, snapshot: Snapshot, baseline: bool) -> list[Event]:
        events = []
        holding: set[tuple[int, float]] = set()
        for process in snapshot.processes:
            if not process.gpu_uses:
                continue
            key = (process.pid, round(process.start_time_s, 2))
            holding.add(key)
            tracked = self._gpu_processes.get(key)
            if tracked is None:
                tracked = self._gpu_processes[key] = _GpuProcess(process, now)
                if not baseline:
                    events.append(self._process_event("gpu_process_start", now, process, {
                        "gpus": list(process.gpu_indices), "gpu_memory_used_bytes": _value(
                            process.gpu_memory_used_bytes)}))
            tracked.process = process
            tracked.gpus.update(process.gpu_indices)
            memory = process.gpu_memory_used_bytes
            if not is_na(memory):
                tracked.peak_gpu_memory_bytes = max(tracked.peak_gpu_memory_bytes, memory)
        released = [key for key in self._gpu_processes if key not in holding]
        # Whether they still run is looked up only when some process let go of its GPUs (rare).
        alive = {(process.pid, round(process.start_time_s, 2)) for process in snapshot.processes} if released else set()
        for key in released:
            tracked = self._gpu_processes.pop(key)
            process = tracked.process
            events.append(self._process_event("gpu_process_exit", now, process, {
                "gpus": sorted(tracked.gpus), "peak_gpu_memory_bytes": tracked.peak_gpu_memory_bytes,
                "run_time_s": round(process.running_time_s(now), 3), "first_seen_s": tracked.first_seen_s,
                "still_running": key in alive}))
        return events

    def _process_event(self, kind: str, now: float, process: ProcessSample, evidence: dict[str, object]) -> Event:
        command = process_command(process, self.include_cmdline)
        gpus = evidence["gpus"]
        where = f"GPU {','.join(str(gpu) for gpu in gpus)}" if isinstance(gpus, list) else "GPU"
        if kind == "gpu_process_start":
            message = f"{where}: process {process.pid} ({process.user}) started: {command}"
        elif evidence.get("still_running"):
            message = f"{where}: process {process.pid} ({process.user}) released the GPU: {command}"
        else:
            peak_gib = int(evidence["peak_gpu_memory_bytes"]) / GIB  # type: ignore[call-overload]
            message = (f"{where}: process {process.pid} ({process.user}) exited after {evidence['run_time_s']:.0f} s, "
                       f"peak {peak_gib:.1f} GiB: {command}")
        first_gpu = gpus[0] if isinstance(gpus, list) and gpus else None
        return Event(now, kind, "info", printable(message, 400), first_gpu, pid=process.pid, evidence={
            **evidence, "command": command, "user": process.user, "container": process.container,
            "start_time_s": process.start_time_s})

    def _disk_events(self, now: float, filesystems: tuple[FilesystemUsage, ...], baseline: bool) -> list[Event]:
        events = []
        for filesystem in filesystems:
            floor = disk_floor_bytes(filesystem, self.limits)
            mountpoint = filesystem.mountpoint
            if filesystem.free_bytes < floor and mountpoint not in self._full_disks:
                self._full_disks.add(mountpoint)
                events.append(Event(now, "disk_full", "warning" if baseline else "critical",
                                    f"{printable(mountpoint, 200)} is full: {filesystem.free_bytes / GIB:.2f} GiB free",
                                    evidence={"mountpoint": mountpoint, "device": filesystem.device,
                                              "free_bytes": filesystem.free_bytes, "floor_bytes": int(floor),
                                              "total_bytes": filesystem.total_bytes}))
            elif filesystem.free_bytes > 1.5 * floor:
                self._full_disks.discard(mountpoint)
        return events


def _value(value: object) -> object:
    return None if is_na(value) else value

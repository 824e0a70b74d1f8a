"""The process table: one ProcessSample per process, with its GPU use attached.

On Linux the table comes from /proc directly (sensors/procfs.py, several times cheaper than psutil);
elsewhere from psutil. Either way a process that exits or hides mid-sample never raises.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterable

import psutil

from sensors.gpu_processes import NvmlProcess
from sensors.model import GpuProcessUse, ProcessSample
from sensors.pidns import NamespacePidMapper
from sensors.procfs import STATE_WORDS, ProcfsReader, UserNames

PSUTIL_ATTRS = (
    "pid", "ppid", "username", "cpu_percent", "memory_percent", "memory_info", "status", "create_time",
    "cmdline", "name",
)


@dataclass(frozen=True, slots=True)
class ProcessRow:
    """A process before its GPU use is known; `start` tells a reused PID apart."""

    pid: int
    ppid: int
    user: str
    cpu_percent: float
    memory_percent: float
    rss_bytes: int
    state: str
    running_time_s: float
    command: str
    start: float


class ProcfsProcessSource:
    """Rows from /proc; CPU % is the change in CPU ticks since the previous call over elapsed time."""

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> None:
        self.procfs = ProcfsReader(proc_root)
        self._clock = clock
        self._ticks_per_s = os.sysconf("SC_CLK_TCK")
        self._page_bytes = os.sysconf("SC_PAGE_SIZE")
        self._user_names = UserNames()
        self._previous_ticks: dict[int, tuple[int, int]] = {}
        self._previous_time: float | None = None

    def rows(self, memory_total_bytes: int) -> list[ProcessRow]:
        now = self._clock()
        elapsed_s = now - self._previous_time if self._previous_time is not None else 0.0
        self._previous_time = now
        uptime_s = self.procfs.uptime_s()
        ticks_per_s = self._ticks_per_s
        previous = self._previous_ticks
        current: dict[int, tuple[int, int]] = {}
        rows = []
        for pid in self.procfs.pids():
            entry = self.procfs.read(pid)
            if entry is None:
                continue
            stat = entry.stat
            current[pid] = (stat.start_ticks, stat.cpu_ticks)
            before = previous.get(pid)
            cpu_percent = 0.0
            if before is not None and before[0] == stat.start_ticks and elapsed_s > 0:
                cpu_percent = max(0.0, 100.0 * (stat.cpu_ticks - before[1]) / ticks_per_s / elapsed_s)
            rss_bytes = stat.rss_pages * self._page_bytes
            rows.append(ProcessRow(
                pid=pid,
                ppid=stat.ppid,
                user=self._user_names(entry.uid),
                cpu_percent=cpu_percent,
                memory_percent=100.0 * rss_bytes / memory_total_bytes if memory_total_bytes else 0.0,
                rss_bytes=rss_bytes,
                state=STATE_WORDS.get(stat.state, stat.state),
                running_time_s=max(0.0, uptime_s - stat.start_ticks / ticks_per_s),
                command=self.procfs.command(stat),
                start=float(stat.start_ticks),
            ))
        self._previous_ticks = current
        self.procfs.forget_except(set(current))
        return rows


class PsutilProcessSource:
    """Rows from psutil (non-Linux); psutil keeps each Process between calls for its CPU %."""

    def rows(self, memory_total_bytes: int) -> list[ProcessRow]:
        now = time.time()
        rows = []
        for process in psutil.process_iter():
            try:
                info = process.as_dict(PSUTIL_ATTRS, ad_value=None)
            except psutil.ZombieProcess:
                info = {"pid": process.pid, "status": psutil.STATUS_ZOMBIE}
            except psutil.NoSuchProcess:
                continue
            except psutil.AccessDenied:
                info = {"pid": process.pid}
            rows.append(_row_from_psutil(info, now))
        return rows


def _row_from_psutil(info: dict, now: float) -> ProcessRow:
    memory_info = info.get("memory_info")
    create_time = info.get("create_time") or 0.0
    name = info.get("name") or ""
    cmdline = info.get("cmdline")
    return ProcessRow(
        pid=info["pid"],
        ppid=info.get("ppid") or 0,
        user=info.get("username") or "?",
        cpu_percent=info.get("cpu_percent") or 0.0,
        memory_percent=info.get("memory_percent") or 0.0,
        rss_bytes=getattr(memory_info, "rss", 0) or 0,
        state=info.get("status") or "?",
        running_time_s=max(0.0, now - create_time) if create_time else 0.0,
        command=" ".join(cmdline) if cmdline else (f"[{name}]" if name else "?"),
        start=create_time,
    )


def attach_gpu_uses(
    rows: Iterable[ProcessRow],
    gpu_processes: list[NvmlProcess],
    mapper: NamespacePidMapper | None,
) -> tuple[ProcessSample, ...]:
    """ProcessSamples sorted by PID; NVML PIDs not visible here are mapped through NSpid first."""
    rows = list(rows)
    uses: dict[int, list[GpuProcessUse]] = {}
    for gpu_process in gpu_processes:
        uses.setdefault(gpu_process.pid, []).append(GpuProcessUse(
            gpu_index=gpu_process.gpu_index,
            gpu_memory_used_bytes=gpu_process.gpu_memory_used_bytes,
            kind=gpu_process.kind,
        ))
    visible = {row.pid: row.start for row in rows}
    foreign = [pid for pid in uses if pid not in visible]
    if foreign and mapper is not None:
        for foreign_pid, local_pid in mapper.map(foreign, visible).items():
            uses.setdefault(local_pid, []).extend(uses.pop(foreign_pid))
    samples = [
        ProcessSample(
            pid=row.pid,
            ppid=row.ppid,
            user=row.user,
            cpu_percent=row.cpu_percent,
            memory_percent=row.memory_percent,
            rss_bytes=row.rss_bytes,
            state=row.state,
            running_time_s=row.running_time_s,
            command=row.command,
            gpu_uses=tuple(uses.get(row.pid, ())),
        )
        for row in rows
    ]
    samples.sort(key=lambda sample: sample.pid)
    return tuple(samples)


class ProcessReader:
    """Samples every process; `use_procfs=None` picks /proc on Linux and psutil elsewhere."""

    def __init__(
        self,
        proc_root: str = "/proc",
        clock: Callable[[], float] = time.monotonic,
        use_procfs: bool | None = None,
    ) -> None:
        if use_procfs is None:
            use_procfs = sys.platform.startswith("linux") and os.path.isdir(proc_root)
        self.source: ProcfsProcessSource | PsutilProcessSource = (
            ProcfsProcessSource(proc_root, clock) if use_procfs else PsutilProcessSource()
        )
        self.mapper = NamespacePidMapper(proc_root) if use_procfs else None

    def sample(self, memory_total_bytes: int, gpu_processes: list[NvmlProcess]) -> tuple[ProcessSample, ...]:
        return attach_gpu_uses(self.source.rows(memory_total_bytes), gpu_processes, self.mapper)

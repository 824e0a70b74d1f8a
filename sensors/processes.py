"""The process table: one ProcessSample per process, with its GPU use attached.

On Linux the table comes from /proc directly (sensors/procfs.py, several times cheaper than psutil);
elsewhere from psutil. Either way a process that exits or hides mid-sample never raises.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import signal
import sys
import time
from typing import Callable, Collection, NamedTuple

import psutil

from pth_top.sensors.gpu_processes import NvmlProcess
from pth_top.sensors.model import GpuProcessUse, ProcessSample
from pth_top.sensors.pidns import NamespacePidMapper
from pth_top.sensors.procfs import (
    KERNEL_THREAD_FLAG,
    STATE_WORDS,
    ProcfsReader,
    ProcStat,
    UserNames,
    boot_time_s,
    parse_stat,
    read_small_file,
)

PSUTIL_ATTRS = (
    "pid", "ppid", "username", "cpu_percent", "memory_percent", "memory_info", "status", "create_time",
    "cmdline", "name", "cpu_times",
)


class ProcessRows(NamedTuple):
    """Processes without their GPU use yet, and each PID's start time (tells a reused PID apart)."""

    processes: list[ProcessSample]
    start_of: dict[int, float]


class _Known(NamedTuple):
    """What the previous sample saw of one process: its raw stat line, parsed, and the row built from it."""

    raw_stat: bytes
    stat: ProcStat
    process: ProcessSample


class ProcfsProcessSource:
    """Rows from /proc; CPU % is the change in CPU ticks since the previous call over elapsed time.

    A process whose stat line has not changed since the previous sample (most of them, on an idle
    machine) keeps its row object: no parsing, and the table can tell it apart from a changed row.
    """

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> None:
        self.procfs = ProcfsReader(proc_root)
        self._clock = clock
        self._ticks_per_s = os.sysconf("SC_CLK_TCK")
        self._page_bytes = os.sysconf("SC_PAGE_SIZE")
        self._user_names = UserNames()
        self._boot_time_s = boot_time_s(proc_root)
        self._known: dict[int, _Known] = {}
        self._known_memory_total_bytes = 0
        # When every row was last read, and the rows read since by a partial read (CPU % is over the time since).
        self._full_read_at: float | None = None
        self._read_at: dict[int, float] = {}

    def rows(self, memory_total_bytes: int, only: Collection[int] | None = None) -> ProcessRows:
        """Every process's row; with `only`, just those PIDs are read (new ones added, gone ones dropped) and the
        other rows are the last ones read (a process that exited stays until the next full read)."""
        now = self._clock()
        # Rows carry memory % of the total: a changed total (memory hot-plug) rebuilds every row.
        reuse_rows = memory_total_bytes == self._known_memory_total_bytes
        self._known_memory_total_bytes = memory_total_bytes
        known = self._known
        read = self._read
        current: dict[int, _Known] = {}
        if only is None:
            for pid in self.procfs.pids():
                entry = read(pid, known.get(pid), now, memory_total_bytes, reuse_rows)
                if entry is not None:
                    current[pid] = entry
            self._full_read_at = now
            self._read_at = {}
        else:
            current = dict(known)
            gone = []
            for pid in only:
                entry = read(pid, known.get(pid), now, memory_total_bytes, reuse_rows)
                if entry is None:
                    if current.pop(pid, None) is not None:
                        gone.append(pid)
                    continue
                if pid not in known:
                    current = dict(sorted({**current, pid: entry}.items()))
                current[pid] = entry
                self._read_at[pid] = now
            if gone:
                self.procfs.forget_except(current)
        self._known = current
        if only is None:
            self.procfs.forget_except(current)
        return ProcessRows([entry.process for entry in current.values()],
                           {pid: entry.stat.start_ticks for pid, entry in current.items()})

    def _read(self, pid: int, before: _Known | None, now: float, memory_total_bytes: int,
              reuse_rows: bool) -> _Known | None:
        raw = self.procfs.read_stat_line(pid)
        if raw is None:
            return None
        if reuse_rows and before is not None and before.raw_stat == raw:
            if before.process.cpu_percent:
                return before._replace(process=dataclasses.replace(before.process, cpu_percent=0.0))
            return before
        last_s = self._read_at.get(pid, self._full_read_at)
        since_s = now - last_s if last_s is not None else 0.0
        cpu_scale = 100.0 / self._ticks_per_s / since_s if since_s > 0 else 0.0
        return self._parse(pid, raw, before, memory_total_bytes, cpu_scale)

    def _parse(
        self, pid: int, raw: bytes, before: _Known | None, memory_total_bytes: int, cpu_scale: float
    ) -> _Known | None:
        try:
            stat = parse_stat(raw)
        except (ValueError, IndexError):
            return None
        uid = self.procfs.owner_uid(stat)
        if uid is None:
            return None
        cpu_percent = 0.0
        if before is not None and before.stat.start_ticks == stat.start_ticks:
            cpu_percent = max(0.0, (stat.cpu_ticks - before.stat.cpu_ticks) * cpu_scale)
        ticks_per_s = self._ticks_per_s
        rss_bytes = stat.rss_pages * self._page_bytes
        process = ProcessSample(
            pid=pid,
            ppid=stat.ppid,
            user=self._user_names(uid),
            cpu_percent=cpu_percent,
            memory_percent=100.0 * rss_bytes / memory_total_bytes if memory_total_bytes else 0.0,
            rss_bytes=rss_bytes,
            state=STATE_WORDS.get(stat.state, stat.state),
            start_time_s=self._boot_time_s + stat.start_ticks / ticks_per_s,
            cpu_time_s=stat.cpu_ticks / ticks_per_s,
            command=self.procfs.command(stat),
            is_kernel_thread=bool(stat.flags & KERNEL_THREAD_FLAG),
            container=self.procfs.container(stat),
            name=stat.comm,
        )
        return _Known(raw, stat, process)

    def close(self) -> None:
        self.procfs.close()


class PsutilProcessSource:
    """Rows from psutil (non-Linux); psutil keeps each Process between calls for its CPU %."""

    def rows(self, memory_total_bytes: int) -> ProcessRows:
        now = time.time()
        rows = ProcessRows([], {})
        for process in sorted(psutil.process_iter(), key=lambda process: process.pid):
            try:
                info = process.as_dict(PSUTIL_ATTRS, ad_value=None)
            except psutil.ZombieProcess:
                info = {"pid": process.pid, "status": psutil.STATUS_ZOMBIE}
            except psutil.NoSuchProcess:
                continue
            except psutil.AccessDenied:
                info = {"pid": process.pid}
            rows.processes.append(_sample_from_psutil(info, now))
            rows.start_of[process.pid] = info.get("create_time") or 0.0
        return rows


def _sample_from_psutil(info: dict, now: float) -> ProcessSample:
    memory_info = info.get("memory_info")
    create_time = info.get("create_time") or 0.0
    name = info.get("name") or ""
    cmdline = info.get("cmdline")
    cpu_times = info.get("cpu_times")
    return ProcessSample(
        pid=info["pid"],
        ppid=info.get("ppid") or 0,
        user=info.get("username") or "?",
        cpu_percent=info.get("cpu_percent") or 0.0,
        memory_percent=info.get("memory_percent") or 0.0,
        rss_bytes=getattr(memory_info, "rss", 0) or 0,
        state=info.get("status") or "?",
        start_time_s=create_time or now,
        cpu_time_s=cpu_times.user + cpu_times.system if cpu_times else 0.0,
        command=" ".join(cmdline) if cmdline else (f"[{name}]" if name else "?"),
        name=name,
    )


def attach_gpu_uses(
    rows: ProcessRows,
    gpu_processes: list[NvmlProcess],
    mapper: NamespacePidMapper | None,
) -> tuple[ProcessSample, ...]:
    """The processes (in the order given) with their GPU use; NVML PIDs not visible here go through NSpid."""
    uses: dict[int, list[GpuProcessUse]] = {}
    for gpu_process in gpu_processes:
        uses.setdefault(gpu_process.pid, []).append(GpuProcessUse(
            gpu_index=gpu_process.gpu_index,
            gpu_memory_used_bytes=gpu_process.gpu_memory_used_bytes,
            kind=gpu_process.kind,
            sm_util_percent=gpu_process.sm_util_percent,
        ))
    foreign = [pid for pid in uses if pid not in rows.start_of]
    if foreign and mapper is not None:
        for foreign_pid, local_pid in mapper.map(foreign, rows.start_of).items():
            uses.setdefault(local_pid, []).extend(uses.pop(foreign_pid))
    processes = rows.processes
    if uses:
        processes = [
            dataclasses.replace(process, gpu_uses=tuple(uses[process.pid])) if process.pid in uses else process
            for process in processes
        ]
    return tuple(processes)


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
        self._gpu_pids: set[int] = set()
        self._local_gpu_pids: set[int] = set()
        self.last_read_was_full = True
        self._read_before = False

    def sample(
        self, memory_total_bytes: int, gpu_processes: list[NvmlProcess], only: Collection[int] | None = None,
    ) -> tuple[ProcessSample, ...]:
        """The table; with `only` (from /proc), just those PIDs and the GPU processes are read, the other rows are
        the last read. A GPU process NVML did not list last time makes it a full read (its PID may need mapping)."""
        gpu_pids = {gpu_process.pid for gpu_process in gpu_processes}
        partial = (only is not None and isinstance(self.source, ProcfsProcessSource) and self._read_before
                   and gpu_pids <= self._gpu_pids)
        self._gpu_pids = gpu_pids
        if partial and only is not None and isinstance(self.source, ProcfsProcessSource):
            rows = self.source.rows(memory_total_bytes, {*only, *gpu_pids, *self._local_gpu_pids})
        else:
            rows = self.source.rows(memory_total_bytes)
        processes = attach_gpu_uses(rows, gpu_processes, self.mapper)
        if only is not None:
            self._local_gpu_pids = {process.pid for process in processes if process.gpu_uses}
        self.last_read_was_full = not partial
        self._read_before = True
        return processes

    def close(self) -> None:
        """Close the files kept open between samples."""
        close = getattr(self.source, "close", None)
        if close is not None:
            close()


class SignalOutcome(enum.Enum):
    SENT = "sent"
    EXITED = "exited"
    # The PID now names another process (started later): nothing was sent.
    REPLACED = "replaced"
    DENIED = "denied"


# Two reads of the boot time (the dashboard's forked first sample, then this process) differ by at most
# /proc/uptime's 10 ms resolution; a reused PID starts after its old process exited, far later than that.
START_TIME_TOLERANCE_S = 0.05


def process_start_time_s(pid: int, proc_root: str = "/proc") -> float | None:
    """When `pid` started, as the process table shows it (Unix time); None when it is gone."""
    if os.path.isdir(proc_root):
        try:
            stat = parse_stat(read_small_file(f"{proc_root}/{pid}/stat"))
        except (OSError, ValueError, IndexError):
            return None
        return boot_time_s(proc_root) + stat.start_ticks / os.sysconf("SC_CLK_TCK")
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _open_pidfd(pid: int) -> int | None:
    """A pidfd naming the process that holds `pid` now; None where the kernel (or seccomp) has none."""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return None
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        raise
    except OSError:
        return None


def signal_process(pid: int, start_time_s: float, signal_number: int, proc_root: str = "/proc") -> SignalOutcome:
    """Send `signal_number` to `pid` only if it is still the process that started at `start_time_s`.

    A PID is reused once its process exits; the start time tells the chosen process from a newcomer.
    With a pidfd, opened before the check, the signal reaches the checked process or none: no race.
    """
    if pid <= 0:
        return SignalOutcome.EXITED
    try:
        pidfd = _open_pidfd(pid)
    except ProcessLookupError:
        return SignalOutcome.EXITED
    try:
        started_s = process_start_time_s(pid, proc_root)
        if started_s is None:
            return SignalOutcome.EXITED
        if abs(started_s - start_time_s) > START_TIME_TOLERANCE_S:
            return SignalOutcome.REPLACED
        if pidfd is None:
            os.kill(pid, signal_number)
        else:
            signal.pidfd_send_signal(pidfd, signal_number)
    except ProcessLookupError:
        return SignalOutcome.EXITED
    except PermissionError:
        return SignalOutcome.DENIED
    finally:
        if pidfd is not None:
            os.close(pidfd)
    return SignalOutcome.SENT

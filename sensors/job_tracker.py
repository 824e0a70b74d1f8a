"""The job step of a sample, on the sampler's thread: environment tags, grouping and energy together."""

from __future__ import annotations

import operator
import os
import time
from typing import Callable, Mapping

from pth_top.sensors.job_energy import JobEnergy
from pth_top.sensors.job_environ import NO_TAGS, EnvironTags, JobTags
from pth_top.sensors.jobs import JobsPlan, job_samples, plan_jobs
from pth_top.sensors.model import GpuProcessUse, GpuSample, JobSample, MaybeFloat, ProcessSample
from pth_top.sensors.procfs import (
    KERNEL_THREAD_FLAG,
    STATE_WORDS,
    ProcfsReader,
    UserNames,
    boot_time_s,
    parse_stat,
    read_small_file,
)

# What a process's job depends on, besides its GPU placement: its identity, parent, name, command and cgroup.
_SHAPE = operator.attrgetter("start_time_s", "ppid", "name", "command", "container", "user", "is_kernel_thread")


class JobTracker:
    """Groups each sample's processes into jobs and keeps their energy; reads environ once per new process.

    The grouping is kept while the GPU placement holds and no process that joins, leaves or changes (exec,
    new parent) can be in a listed job: one with no job variables, no cgroup job, no GPU and a parent outside
    the listed jobs cannot. Then only the jobs' GPU figures and energy are computed again.
    """

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> None:
        self.environ = EnvironTags(proc_root)
        self.energy = JobEnergy()
        self._clock = clock
        self._rows: dict[int, ProcessSample] = {}
        self._placement: dict[int, tuple[int, ...]] = {}
        self._plan: JobsPlan | None = None
        self._members: frozenset[int] = frozenset()
        self.plans_made = 0

    def sample(
        self, processes: tuple[ProcessSample, ...], gpus: tuple[GpuSample, ...],
        counters_j: Mapping[int, MaybeFloat], wall_s: float,
    ) -> tuple[JobSample, ...]:
        rows, changed = self._changes(processes)
        holders = {process.pid: process for process in processes if process.gpu_uses}
        placement = {pid: tuple(use.gpu_index for use in process.gpu_uses) for pid, process in holders.items()}
        plan = self._plan
        gone = [pid for pid in self._rows if pid not in rows] if len(rows) - len(changed) < len(self._rows) else []
        self._rows = rows
        if plan is None or placement != self._placement or not self._plan_holds(changed, gone):
            plan = self._plan = plan_jobs(processes, self._tags(processes))
            self._members = frozenset(pid for job in plan.jobs for pid in job.pids)
            self._placement = placement
            self.plans_made += 1
        accounts = self.energy.update(((job.key, job.gpu_indices) for job in plan.jobs), gpus, counters_j,
                                      self._clock(), wall_s)
        return job_samples(plan, holders, gpus, accounts)

    def _changes(self, processes: tuple[ProcessSample, ...]) -> tuple[dict[int, ProcessSample], list[ProcessSample]]:
        """PID -> row of this sample, and the rows new or changed in shape since the last (an unchanged row
        is often the same object: the process source keeps rows whose stat line did not change)."""
        before = self._rows
        rows: dict[int, ProcessSample] = {}
        changed = []
        for process in processes:
            pid = process.pid
            rows[pid] = process
            old = before.get(pid)
            if old is not process and (old is None or _SHAPE(old) != _SHAPE(process)):
                changed.append(process)
        return rows, changed

    def _plan_holds(self, changed: list[ProcessSample], gone: list[int]) -> bool:
        """Whether the processes that came, went or changed since the last sample leave every listed job as it was."""
        members = self._members
        if any(pid in members for pid in gone):
            return False
        for process in changed:
            if process.is_kernel_thread and process.pid not in members:
                continue
            if (process.pid in members or process.container or process.ppid in members
                    or self.environ.tags(process.pid, process.start_time_s) is not NO_TAGS):
                return False
        known = self.environ.known
        for pid in gone:
            known.pop(pid, None)
        return True

    def _tags(self, processes: tuple[ProcessSample, ...]) -> dict[int, JobTags]:
        tags_of: dict[int, JobTags] = {}
        environ = self.environ
        known = environ.known
        for process in processes:
            if not process.is_kernel_thread:
                cached = known.get(process.pid)
                if cached is not None and cached[0] == process.start_time_s:
                    tags_of[process.pid] = cached[1]
                else:
                    tags_of[process.pid] = environ.tags(process.pid, process.start_time_s)
        if len(known) != len(tags_of):
            environ.forget_except(tags_of)
        return tags_of


class GpuProcessTree:
    """The GPU processes and their ancestors only, for the exporter: a few stat reads, not the whole table."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self.procfs = ProcfsReader(proc_root, max_open_files=0)
        self._user_names = UserNames()
        self._ticks_per_s = os.sysconf("SC_CLK_TCK")

    def processes(self, uses: Mapping[int, tuple[GpuProcessUse, ...]]) -> tuple[ProcessSample, ...]:
        """ProcessSamples of the PIDs in `uses` (PIDs of this namespace) with their GPU use, and their ancestors."""
        found: dict[int, ProcessSample] = {}
        stack = list(uses)
        while stack:
            pid = stack.pop()
            if pid <= 0 or pid in found:
                continue
            try:
                stat = parse_stat(read_small_file(f"{self.proc_root}/{pid}/stat"))
            except (OSError, ValueError, IndexError):
                continue
            uid = self.procfs.owner_uid(stat)
            found[pid] = ProcessSample(
                pid=pid, ppid=stat.ppid, user=self._user_names(uid) if uid is not None else "", cpu_percent=0.0,
                memory_percent=0.0, rss_bytes=0, state=STATE_WORDS.get(stat.state, stat.state),
                start_time_s=boot_time_s(self.proc_root) + stat.start_ticks / self._ticks_per_s,
                command=self.procfs.command(stat), gpu_uses=uses.get(pid, ()),
                is_kernel_thread=bool(stat.flags & KERNEL_THREAD_FLAG), container=self.procfs.container(stat),
                name=stat.comm,
            )
            stack.append(stat.ppid)
        self.procfs.forget_except(found)
        return tuple(found.values())

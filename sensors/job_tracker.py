"""The job step of a sample, on the sampler's thread: environment tags, grouping and energy together."""

from __future__ import annotations

import os
import time
from typing import Callable, Mapping

from pth_top.sensors.job_energy import JobEnergy
from pth_top.sensors.job_environ import EnvironTags, JobTags
from pth_top.sensors.jobs import group_jobs
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


class JobTracker:
    """Groups each sample's processes into jobs and keeps their energy; reads environ once per new process."""

    def __init__(self, proc_root: str = "/proc", clock: Callable[[], float] = time.monotonic) -> None:
        self.environ = EnvironTags(proc_root)
        self.energy = JobEnergy()
        self._clock = clock

    def sample(
        self, processes: tuple[ProcessSample, ...], gpus: tuple[GpuSample, ...],
        counters_j: Mapping[int, MaybeFloat], wall_s: float,
    ) -> tuple[JobSample, ...]:
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
        jobs = group_jobs(processes, gpus, tags_of)
        return self.energy.update(jobs, gpus, counters_j, self._clock(), wall_s)


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

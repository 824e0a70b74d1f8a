"""The job step of a sample, on the sampler's thread: environment tags, grouping and energy together."""

from __future__ import annotations

import time
from typing import Callable, Mapping

from pth_top.sensors.job_energy import JobEnergy
from pth_top.sensors.job_environ import EnvironTags, JobTags
from pth_top.sensors.jobs import group_jobs
from pth_top.sensors.model import GpuSample, JobSample, MaybeFloat, ProcessSample


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
        tags = self.environ.tags
        for process in processes:
            if not process.is_kernel_thread:
                tags_of[process.pid] = tags(process.pid, process.start_time_s)
        self.environ.forget_except(tags_of)
        jobs = group_jobs(processes, gpus, tags_of)
        return self.energy.update(jobs, gpus, counters_j, self._clock(), wall_s)

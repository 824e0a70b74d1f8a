"""Benchmark (not a test): what job grouping and energy add to a dashboard sample, 8 GPUs and ~1000 processes.

    .venv/bin/python tests/perf/jobs_cost.py [--idle 1000] [--repeats 30]

Starts --idle sleeping children (a quarter with TORCHELASTIC_RUN_ID, a quarter with SLURM_JOB_ID), puts 16 of
them on 8 scripted GPUs, and times Sampler.sample() with and without the job step side by side, alternating,
plus the job step alone and the first sample (which skips it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pth_top.sensors.nvml import NvmlSession  # noqa: E402
from pth_top.sensors.procfs import raise_open_file_limit  # noqa: E402
from pth_top.sensors.sampler import Sampler  # noqa: E402
from tests.fakes.gpu_fixtures import make_fake_gpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    raise_open_file_limit()
    children = []
    try:
        for number in range(args.idle):
            env = dict(os.environ)
            if number % 4 == 0:
                env["TORCHELASTIC_RUN_ID"] = f"run{number % 40}"
            elif number % 4 == 1:
                env["SLURM_JOB_ID"] = str(number % 40)
            children.append(subprocess.Popen(["sleep", "600"], env=env))
        pids = [child.pid for child in children]
        fake = make_fake_gpus(8, process_pids={index: pids[2 * index:2 * index + 2] for index in range(8)})
        for index, device in enumerate(fake.devices):
            device.values["nvmlDeviceGetTotalEnergyConsumption"] = lambda index=index: int(time.time() * 1000) + index
        with_jobs = Sampler(nvml=NvmlSession(fake))
        without = Sampler(nvml=NvmlSession(make_fake_gpus(8, process_pids={
            index: pids[2 * index:2 * index + 2] for index in range(8)})), group_jobs=False)
        first_start = time.perf_counter()
        with_jobs.sample()
        first_ms = 1000 * (time.perf_counter() - first_start)
        without.sample()
        with_jobs.sample()  # the job step's first run reads every environment once
        times: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.repeats):
            for name, sampler in (("without", without), ("with", with_jobs)):
                start = time.perf_counter()
                snapshot = sampler.sample()
                times[name].append(time.perf_counter() - start)
        job_count = len(snapshot.jobs)
        process_count = len(snapshot.processes)
        environ_reads = with_jobs._jobs.environ.reads if with_jobs._jobs else 0
        step_start = time.perf_counter()
        tracker = with_jobs._jobs
        assert tracker is not None
        for _ in range(args.repeats):
            tracker.sample(snapshot.processes, snapshot.gpus, {}, time.time())
        step_ms = 1000 * (time.perf_counter() - step_start) / args.repeats
        with_ms = 1000 * statistics.median(times["with"])
        without_ms = 1000 * statistics.median(times["without"])
        print(f"{process_count} processes, 8 GPUs, {job_count} jobs listed, {environ_reads} environ reads in all")
        print(f"sample without jobs: {without_ms:.2f} ms (median of {args.repeats})")
        print(f"sample with jobs:    {with_ms:.2f} ms  (+{with_ms - without_ms:.2f} ms, "
              f"{100 * (with_ms - without_ms) / without_ms:+.1f} %)")
        print(f"job step alone (tags from cache, grouping, energy): {step_ms:.2f} ms")
        print(f"first sample (no job step): {first_ms:.1f} ms")
        with_jobs.close()
        without.close()
    finally:
        for child in children:
            child.kill()
        for child in children:
            child.wait()


if __name__ == "__main__":
    main()

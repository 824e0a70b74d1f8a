"""Benchmark (not a test): how long one `sensors` sample takes, and a process-churn run.

    /work/venv/bin/python tests/perf/sensor_sample.py [--idle 1000] [--churn-seconds 30] [--churn 2000]

Prints the median time of a full Sampler.sample() and of the process table alone (the /proc reader
and, for comparison, the psutil one) with the current processes and with --idle extra `sleep`
children; then samples every 0.25 s while --churn short-lived processes start and exit, and reports
crashes and stale rows (a row for a child that had already been reaped when the sample began).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import psutil  # noqa: E402

from pth_top.sensors.processes import ProcessReader  # noqa: E402
from pth_top.sensors.procfs import raise_open_file_limit  # noqa: E402
from pth_top.sensors.sampler import Sampler  # noqa: E402

CHURN_COMMAND = re.compile(r"^sleep 0\.05(\d{4})$")


def median_ms(function, repeats: int) -> float:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1000.0 * statistics.median(times)


def read_every_stat_file() -> None:
    """The floor: list /proc and read each /proc/PID/stat once, doing nothing with it."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                descriptor = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            except OSError:
                continue
            try:
                os.read(descriptor, 65536)
            except OSError:
                pass
            finally:
                os.close(descriptor)


def measure(label: str, repeats: int) -> None:
    sampler = Sampler()
    total = psutil.virtual_memory().total
    procfs = ProcessReader(use_procfs=True)
    via_psutil = ProcessReader(use_procfs=False)
    count = len(sampler.sample().processes)
    full = median_ms(sampler.sample, repeats)
    table = median_ms(lambda: procfs.sample(total, []), repeats)
    table_psutil = median_ms(lambda: via_psutil.sample(total, []), max(3, repeats // 3))
    floor = median_ms(read_every_stat_file, repeats)
    sampler.close()
    print(f"{label}: {count} processes  full sample {full:.1f} ms  process table {table:.1f} ms "
          f"(psutil-based {table_psutil:.1f} ms; bare /proc/*/stat reads {floor:.1f} ms)  medians of {repeats}")


def with_idle_children(count: int, repeats: int) -> None:
    children = [subprocess.Popen(["sleep", "120"]) for _ in range(count)]
    try:
        time.sleep(0.5)
        measure(f"+{count} idle", repeats)
    finally:
        for child in children:
            child.kill()
        for child in children:
            child.wait()


def churn(total_children: int, seconds: float) -> None:
    reaped_at: dict[int, float] = {}
    running: dict[int, subprocess.Popen] = {}
    lock = threading.Lock()
    done = threading.Event()

    def spawn() -> None:
        gap = seconds / total_children
        start = time.monotonic()
        for number in range(total_children):
            delay = start + number * gap - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            child = subprocess.Popen(["sleep", f"0.05{number:04d}"])
            with lock:
                running[number] = child
        done.set()

    def reap() -> None:
        while not (done.is_set() and not running):
            with lock:
                finished = [number for number, child in running.items() if child.poll() is not None]
                for number in finished:
                    del running[number]
                    reaped_at[number] = time.monotonic()
            time.sleep(0.005)

    spawner = threading.Thread(target=spawn)
    reaper = threading.Thread(target=reap)
    spawner.start()
    reaper.start()
    sampler = Sampler()
    samples = stale = churn_rows = 0
    durations = []
    errors: list[str] = []
    while not done.is_set() or reaper.is_alive():
        began = time.monotonic()
        try:
            snapshot = sampler.sample()
        except Exception as error:  # the point of the run is to see whether anything escapes
            errors.append(repr(error))
            continue
        durations.append(time.monotonic() - began)
        samples += 1
        with lock:
            gone = dict(reaped_at)
        for process in snapshot.processes:
            match = CHURN_COMMAND.match(process.command)
            if match:
                churn_rows += 1
                if gone.get(int(match.group(1)), float("inf")) < began:
                    stale += 1
        time.sleep(0.25)
    spawner.join()
    reaper.join()
    sampler.close()
    print(f"churn: {total_children} processes over {seconds:.0f} s, {samples} samples "
          f"(median {1000 * statistics.median(durations):.1f} ms), {churn_rows} rows of churn children, "
          f"{stale} stale rows, {len(errors)} errors {errors[:3]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--churn", type=int, default=2000)
    parser.add_argument("--churn-seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    raise_open_file_limit()  # as the dashboard does
    measure("current", args.repeats)
    with_idle_children(args.idle, args.repeats)
    if args.churn:
        churn(args.churn, args.churn_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

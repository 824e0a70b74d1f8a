"""What the flight recorder costs, beside atop's own recorder and a minimal SQLite logger (the floor), in one run.

Usage: python tests/perf/record_cost.py [--seconds S] [--processes N]
Starts N sleeping processes (default 1000), then runs side by side for S seconds (default 300), each at 1 s:
`pth-top record` on the scripted 8-GPU NVML (tests/recorder/record_main.py), `atop -w FILE 1` (skipped with a
reason when atop is absent) and `--floor` (this script: the same host, GPU and top-process fields, one SQLite row
set per second). Prints CPU % of one core, peak RSS and disk bytes per day (growth over the window, extrapolated).
The disk figure is the growth of the pages in use: SQLite grows a 16 KiB page at a time, so over 60 s (~100 KB)
a page more or less moves it by 15 %; 300 s keeps that under 5 %.
Targets for pth-top record: <= 1 % of one core, <= 60 MiB RSS, <= 200 MB/day before downsampling.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
WARM_UP_S = 20.0
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def disk_bytes(files: list[Path]) -> int:
    """atop's file size; for SQLite, its pages in use (WAL included, free pages not), read beside the writer."""
    if files[0].suffix != ".sqlite":
        return sum(path.stat().st_size for path in files if path.exists())
    connection = sqlite3.connect(files[0], timeout=10)
    try:
        pages, free, size = (connection.execute(f"PRAGMA {name}").fetchone()[0]
                             for name in ("page_count", "freelist_count", "page_size"))
    finally:
        connection.close()
    return (pages - free) * size


def floor_logger(out: Path, seconds: float) -> None:
    """The floor: the same fields, read as plainly as can be, one commit a second."""
    from tests.fleet.fixtures import make_exporter_gpus

    nvml = make_exporter_gpus(8)
    nvml.nvmlInit()
    connection = sqlite3.connect(out, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = NORMAL")
    connection.execute("CREATE TABLE host (t REAL, cpu TEXT, mem TEXT)")
    connection.execute("CREATE TABLE gpu (t REAL, i INT, util INT, mem INT, temp INT, power INT, reasons INT)")
    connection.execute("CREATE TABLE proc (t REAL, pid INT, name TEXT, ticks INT, rss INT)")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        now = time.time()
        cpu = Path("/proc/stat").read_text().split("\n", 1)[0]
        memory = Path("/proc/meminfo").read_text()[:200]
        processes = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    fields = Path(f"/proc/{name}/stat").read_text().rpartition(")")[2].split()
                    processes.append((int(fields[11]) + int(fields[12]), int(fields[21]), int(name)))
                except (OSError, IndexError):
                    pass
        top = sorted(processes, reverse=True)[:20]
        connection.execute("BEGIN")
        connection.execute("INSERT INTO host VALUES (?, ?, ?)", (now, cpu, memory))
        for index in range(8):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            connection.execute("INSERT INTO gpu VALUES (?, ?, ?, ?, ?, ?, ?)", (
                now, index, nvml.nvmlDeviceGetUtilizationRates(handle).gpu, nvml.nvmlDeviceGetMemoryInfo(handle).used,
                nvml.nvmlDeviceGetTemperature(handle, 0), nvml.nvmlDeviceGetPowerUsage(handle),
                nvml.nvmlDeviceGetCurrentClocksEventReasons(handle)))
        connection.executemany("INSERT INTO proc VALUES (?, ?, '', ?, ?)",
                               [(now, pid, ticks, rss) for ticks, rss, pid in top])
        connection.execute("COMMIT")
        time.sleep(max(0.0, 1.0 - (time.time() - now)))
    connection.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--processes", type=int, default=1000)
    parser.add_argument("--floor", metavar="FILE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        floor_logger(Path(args.floor), args.seconds)
        return 0
    work = Path(tempfile.mkdtemp(prefix="record-cost-"))
    sleepers = [subprocess.Popen(["sleep", "3600"]) for _ in range(args.processes)]
    runners: dict[str, tuple[subprocess.Popen, list[Path]]] = {}
    skipped: dict[str, str] = {}
    total_s = args.seconds + WARM_UP_S + 5
    try:
        pth = work / "pth.sqlite"
        runners["pth-top record"] = (subprocess.Popen(
            [sys.executable, str(REPO / "tests/recorder/record_main.py"), "--out", str(pth), "--interval", "1",
             "--min-free", "0", "--duration", str(total_s)], stderr=subprocess.DEVNULL),
            [pth, Path(f"{pth}-wal"), Path(f"{pth}-shm")])
        if shutil.which("atop"):
            raw = work / "atop.raw"
            runners["atop -w FILE 1"] = (subprocess.Popen(["atop", "-w", str(raw), "1"], stdout=subprocess.DEVNULL,
                                                          stderr=subprocess.DEVNULL), [raw])
        else:
            skipped["atop -w FILE 1"] = "atop not installed (make install-test installs it as root)"
        floor = work / "floor.sqlite"
        runners["floor (minimal SQLite logger)"] = (subprocess.Popen(
            [sys.executable, __file__, "--floor", str(floor), "--seconds", str(total_s)]),
            [floor, Path(f"{floor}-wal")])
        time.sleep(WARM_UP_S)
        start = {name: (cpu_seconds(child.pid), disk_bytes(files)) for name, (child, files) in runners.items()}
        began = time.monotonic()
        peak = dict.fromkeys(runners, 0)
        while time.monotonic() - began < args.seconds:
            time.sleep(1.0)
            for name, (child, _) in runners.items():
                peak[name] = max(peak[name], rss_bytes(child.pid))
        elapsed = time.monotonic() - began
        end = {name: (cpu_seconds(child.pid), disk_bytes(files)) for name, (child, files) in runners.items()}
    finally:
        for child, _ in runners.values():
            child.send_signal(signal.SIGTERM)
        for child, _ in runners.values():
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
        for sleeper in sleepers:
            sleeper.kill()
        for sleeper in sleepers:
            sleeper.wait()
    print(f"{args.processes} extra processes, 8 scripted GPUs, {elapsed:.0f} s measured after {WARM_UP_S:.0f} s "
          f"warm-up on {os.cpu_count()} cores (loaded by whatever else runs)")
    print(f"{'recorder':<32} {'CPU % of 1 core':>16} {'peak RSS MiB':>13} {'disk MB/day':>12}")
    for name in runners:
        cpu_percent = 100.0 * (end[name][0] - start[name][0]) / elapsed
        per_day = (end[name][1] - start[name][1]) / elapsed * 86400 / 1e6
        print(f"{name:<32} {cpu_percent:>16.2f} {peak[name] / 2**20:>13.1f} {per_day:>12.1f}")
    for name, why in skipped.items():
        print(f"{name:<32} skipped: {why}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

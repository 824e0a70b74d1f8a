"""Wall time of `pth-top doctor` as a user runs it (a subprocess, torch probe included); target <= 3 s.

Usage: python tests/perf/doctor_time.py [--runs N] [--python PATH]
Prints one line per run, then the median and whether it meets the target; exit 1 when it does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 3.0
REPO_ROOT = Path(__file__).resolve().parents[2]


def time_one_run(python: str, probe_python: str) -> float:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    started = time.perf_counter()
    completed = subprocess.run(
        [python, "-m", "pth_top.tui", "doctor", "--json", "--python", probe_python],
        capture_output=True, text=True, cwd=REPO_ROOT, env=environment, timeout=120,
    )
    elapsed = time.perf_counter() - started
    if completed.returncode not in (0, 1):
        raise SystemExit(f"pth-top doctor exited {completed.returncode}: {completed.stderr.strip()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="interpreter whose torch the probe checks")
    args = parser.parse_args()
    time_one_run(sys.executable, args.python)  # warm the page cache, as a second run by a user would be
    timings = []
    for run in range(1, args.runs + 1):
        timings.append(time_one_run(sys.executable, args.python))
        print(f"run {run}: {timings[-1]:.2f} s")
    median = statistics.median(timings)
    verdict = "meets" if median <= TARGET_S else "misses"
    print(f"pth-top doctor median {median:.2f} s over {args.runs} runs ({verdict} the {TARGET_S:g} s target)")
    return 0 if median <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

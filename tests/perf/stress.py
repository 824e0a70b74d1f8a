"""Stress run: the Pilot and pty tests, N times, with busy loops eating CPU beside them.

Usage: python tests/perf/stress.py [--runs N] [--busy-loops K] [--run-timeout-s S] [--log-dir DIR]
Prints one line per run (passed, or the failing test ids), then "K/N runs green"; exit 1 when any run
failed, 2 on bad arguments, 130 on Ctrl-C. The busy loops are killed by PID however the script ends.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
# A test file that contains one of these drives the app through Pilot, a snapshot or a pseudo-terminal.
PILOT_OR_PTY_MARKERS = ("run_test(", "snap_compare", "pexpect", "openpty", "import pty")
# `while True: pass` that also ends when this script dies without its finally (SIGKILL): never orphaned.
BUSY_LOOP_CODE = "import os\nparent = os.getppid()\nwhile os.getppid() == parent: pass"
# pytest's short summary ("-ra"): "FAILED tests/x.py::test_y[param] - reason" or "ERROR tests/x.py::test_y".
SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+)")


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr and exit 2, without the usage block."""

    def error(self, message: str) -> None:
        self.exit(2, f"stress: {message}\n")


def whole_number_at_least(minimum: int):
    """An argparse type: a whole number no smaller than `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse


def pilot_and_pty_test_files() -> list[str]:
    """Every test file outside tests/perf that uses Pilot, a snapshot or a pty, relative to the repo root."""
    found = []
    for path in sorted((REPO_ROOT / "tests").rglob("test_*.py")):
        if "perf" in path.relative_to(REPO_ROOT / "tests").parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(marker in text for marker in PILOT_OR_PTY_MARKERS):
            found.append(str(path.relative_to(REPO_ROOT)))
    return found


def start_busy_loops(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP_CODE]) for _ in range(count)]


def stop_busy_loops(loops: list[subprocess.Popen]) -> None:
    for loop in loops:
        if loop.poll() is None:
            loop.kill()
        loop.wait()


def failing_test_ids(output: str) -> list[str]:
    return [match.group(2) for match in map(SUMMARY_LINE.match, output.splitlines()) if match]


def last_line(output: str) -> str:
    lines = [line.strip("= ") for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def run_pytest_once(test_files: list[str], log_path: Path, timeout_s: float) -> tuple[bool, list[str], str]:
    """One pytest run of `test_files`; returns (green, failing ids, pytest's last line). Output goes to `log_path`."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *test_files]
    # Its own session, so a timeout ends pytest and every child it started (pexpect's dashboards, probes).
    process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, errors="replace", start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        log_path.write_text(output, encoding="utf-8")
        return False, failing_test_ids(output) or ["(the run timed out)"], f"timed out after {timeout_s:g} s"
    except BaseException:  # Ctrl-C: end this run's whole group before going on.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise
    log_path.write_text(output, encoding="utf-8")
    failed = failing_test_ids(output)
    green = process.returncode == 0
    if not green and not failed:
        failed = [f"(pytest exited {process.returncode})"]
    return green, failed, last_line(output)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=whole_number_at_least(1), default=10, help="how many pytest runs (default 10)")
    parser.add_argument("--busy-loops", type=whole_number_at_least(0), default=2,
                        help="busy Python loops beside the tests (default 2)")
    parser.add_argument("--run-timeout-s", type=whole_number_at_least(1), default=1800,
                        help="a run that takes longer is killed and counts as failed (default 1800)")
    parser.add_argument("--log-dir", type=Path, default=None, help="where each run's output goes (default: a temp dir)")
    args = parser.parse_args(argv)

    test_files = pilot_and_pty_test_files()
    if not test_files:
        print("stress: no Pilot or pty test files found under tests/", file=sys.stderr)
        return 2
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="pth-top-stress-"))
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        print(f"stress: cannot use --log-dir {str(log_dir)!r}: {error.strerror}", file=sys.stderr)
        return 2
    print(f"{len(test_files)} test files: {' '.join(test_files)}")
    print(f"{args.runs} runs beside {args.busy_loops} busy loops; each run's output in {log_dir}/")

    green_runs = 0
    failures: collections.Counter[str] = collections.Counter()
    # SIGTERM ends the script through its finally too, so the busy loops are killed.
    signal.signal(signal.SIGTERM, lambda signal_number, frame: sys.exit(128 + signal_number))
    loops = start_busy_loops(args.busy_loops)
    try:
        print(f"busy loops: PIDs {' '.join(str(loop.pid) for loop in loops) or '(none)'}", flush=True)
        for run_number in range(1, args.runs + 1):
            log_path = log_dir / f"run-{run_number:02d}.log"
            green, failed, summary = run_pytest_once(test_files, log_path, args.run_timeout_s)
            green_runs += green
            failures.update(failed)
            verdict = "green" if green else "FAILED " + ", ".join(failed)
            print(f"run {run_number}/{args.runs}: {verdict}  ({summary})", flush=True)
    except KeyboardInterrupt:
        print(f"interrupted: {green_runs} green runs so far", file=sys.stderr)
        return 130
    finally:
        stop_busy_loops(loops)

    print(f"{green_runs}/{args.runs} runs green")
    for test_id, count in failures.most_common():
        print(f"  failed in {count} run{'s' if count > 1 else ''}: {test_id}")
    return 0 if green_runs == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark (not a test): pth-top's overhead side by side with its peers, each in a 120x40 pty.

    /work/venv/bin/python tests/perf/dashboard_overhead.py [--seconds 60] [--launches 5]
        [--glances /work/peers/glances-venv/bin/glances] [--tsm /work/peers/tsm-venv/bin/tsm]
        [--tools pth-top,minimal,glances,tsm,htop,btop] [--json-out FILE]
        [--soak-seconds 600 --soak-interval 0.25]

Tools run one after another, never in parallel, each at a 1 s refresh (pth-top `--interval 1`,
glances `-t 1`, htop `-d 10`, btop `update_ms=1000` via a temporary config); a missing tool is
skipped with a note. For each tool:
- first frame: median over --launches launches of the time from spawn until a tool-specific
  marker (a regex on the output with escape sequences stripped, chosen to appear only once data is
  drawn) shows up; when a tool has no marker, until the output has been quiet for 0.2 s. Launches go
  round-robin across the tools after one untimed warm-up launch each (which also writes Python
  bytecode caches: children run without PYTHONDONTWRITEBYTECODE, as an installed tool would).
- CPU % of one core over a --seconds window (after a 3 s warm-up): user+system time of the process
  and its descendants (psutil, per PID, sampled every 0.5 s), divided by the wall time.
- the same with +1000 idle `sleep` children of this script (they exit on their own after the run
  and are always killed in a finally block).
- peak RSS: the largest summed RSS of the process tree seen during each window, MiB.
- bytes to the terminal: bytes read from the pty master during the (~70 process) window, per second.
--soak-seconds runs pth-top alone at --soak-interval and reports its RSS at start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.perf.pty_run import COLUMNS, FIRST_FRAME_TIMEOUT_S, ROWS, PtyRun, Tool  # noqa: E402

WARMUP_S = 3.0
SAMPLE_EVERY_S = 0.5
IDLE_PROCESSES = 1000


@dataclass
class Result:
    tool: str
    first_frame_s: list[float] = field(default_factory=list)
    cpu_percent: float | None = None
    cpu_percent_idle: float | None = None
    peak_rss_mib: float | None = None
    peak_rss_mib_idle: float | None = None
    terminal_bytes_per_s: float | None = None
    process_count: int | None = None
    process_count_idle: int | None = None
    note: str = ""

    @property
    def first_frame_median_s(self) -> float | None:
        return statistics.median(self.first_frame_s) if self.first_frame_s else None


def measure_window(run: PtyRun, seconds: float) -> tuple[float, float, float, int]:
    """(CPU % of one core, peak RSS MiB, bytes/s to the terminal, processes on the machine) over `seconds`."""
    cpu_at_start: dict[int, float] = {}
    cpu_last: dict[int, float] = {}
    peak_rss = 0
    bytes_at_start = run.bytes_read
    started = time.monotonic()
    deadline = started + seconds
    while True:
        rss = 0
        for process in run.tree():
            try:
                with process.oneshot():
                    times = process.cpu_times()
                    rss += process.memory_info().rss
            except psutil.Error:
                continue
            cpu_s = times.user + times.system
            cpu_at_start.setdefault(process.pid, cpu_s if time.monotonic() - started < SAMPLE_EVERY_S else 0.0)
            cpu_last[process.pid] = cpu_s
        peak_rss = max(peak_rss, rss)
        now = time.monotonic()
        if now >= deadline or run.process.poll() is not None:
            break
        time.sleep(min(SAMPLE_EVERY_S, deadline - now))
    elapsed = time.monotonic() - started
    cpu_s = sum(cpu_last[pid] - cpu_at_start[pid] for pid in cpu_last)
    bytes_per_s = (run.bytes_read - bytes_at_start) / elapsed
    return 100.0 * cpu_s / elapsed, peak_rss / 2**20, bytes_per_s, len(psutil.pids())


def spawn_idle_processes(count: int, lifetime_s: float) -> list[subprocess.Popen]:
    sleepers = []
    try:
        for _ in range(count):
            sleepers.append(subprocess.Popen(
                ["sleep", f"{lifetime_s:.0f}"], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
    except BaseException:
        reap(sleepers)
        raise
    return sleepers


def reap(sleepers: list[subprocess.Popen]) -> None:
    for sleeper in sleepers:
        if sleeper.poll() is None:
            try:
                sleeper.kill()
            except OSError:
                pass
    for sleeper in sleepers:
        sleeper.wait()
    sleepers.clear()


def window_run(tool: Tool, seconds: float, result: Result) -> tuple[float, float, float, int] | None:
    run = PtyRun(tool)
    try:
        if run.wait_first_frame() is None:
            result.note = (result.note + "; " if result.note else "") + "no first frame in the window run"
            return None
        time.sleep(WARMUP_S)
        return measure_window(run, seconds)
    finally:
        run.stop()


def launch_once(tool: Tool) -> float | None:
    run = PtyRun(tool)
    try:
        return run.wait_first_frame()
    finally:
        run.stop()
        time.sleep(0.3)


def measure_first_frames(tools: list[Tool], results: dict[str, Result], launches: int) -> None:
    """Launches round-robin across tools, after one untimed warm-up each, so a slow spell hits all alike."""
    for tool in tools:
        launch_once(tool)
    for _ in range(launches):
        for tool in tools:
            first_frame = launch_once(tool)
            if first_frame is None:
                results[tool.name].note = "no first frame (marker never seen)"
            else:
                results[tool.name].first_frame_s.append(first_frame)


def bench_tool(tool: Tool, args: argparse.Namespace, result: Result) -> Result:
    measured = window_run(tool, args.seconds, result)
    if measured is not None:
        result.cpu_percent, result.peak_rss_mib, result.terminal_bytes_per_s, result.process_count = measured
    if args.idle_processes:
        sleepers: list[subprocess.Popen] = []
        try:
            lifetime_s = args.seconds + WARMUP_S + FIRST_FRAME_TIMEOUT_S + 30
            sleepers = spawn_idle_processes(args.idle_processes, lifetime_s)
            time.sleep(1.0)
            measured = window_run(tool, args.seconds, result)
            if measured is not None:
                result.cpu_percent_idle, result.peak_rss_mib_idle, _, result.process_count_idle = measured
        finally:
            reap(sleepers)
    return result


def tree_rss_mib(run: PtyRun) -> float:
    rss = 0
    for process in run.tree():
        try:
            rss += process.memory_info().rss
        except psutil.Error:
            continue
    return rss / 2**20


def soak(tool: Tool, seconds: float) -> dict:
    """RSS of `tool` (a pth-top run) after its first frame and at the end of `seconds`."""
    run = PtyRun(tool)
    try:
        run.wait_first_frame()
        time.sleep(WARMUP_S)
        rss_start = tree_rss_mib(run)
        samples = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and run.process.poll() is None:
            time.sleep(min(30.0, max(0.0, deadline - time.monotonic())))
            samples.append(round(tree_rss_mib(run), 1))
        rss_end = samples[-1] if samples else rss_start
        return {"seconds": seconds, "rss_start_mib": round(rss_start, 1), "rss_end_mib": rss_end,
                "rss_growth_mib": round(rss_end - rss_start, 1), "rss_every_30s_mib": samples,
                "alive_at_end": run.process.poll() is None}
    finally:
        run.stop()


def pth_top_argv(interval: float) -> list[str]:
    script = Path(sys.executable).with_name("pth-top")
    if script.exists():
        return [str(script), "--interval", str(interval)]
    return [sys.executable, "-m", "pth_top.tui", "--interval", str(interval)]


def btop_config_dir(scratch_dir: str) -> str:
    """An XDG config so btop refreshes every 1 s (its default is 2 s) and keeps no state."""
    Path(scratch_dir, "btop").mkdir(exist_ok=True)
    Path(scratch_dir, "btop", "btop.conf").write_text("update_ms = 1000\n")
    return scratch_dir


def build_tools(args: argparse.Namespace, scratch_dir: str) -> tuple[list[Tool], list[str]]:
    wanted = args.tools.split(",")
    tools, skipped = [], []
    candidates = {
        "pth-top": lambda: Tool("pth-top", pth_top_argv(1.0), re.compile(rb"[1-9]\d*/\d+ processes"), b"q"),
        "minimal": lambda: Tool(
            "minimal Textual htop", [sys.executable, str(Path(__file__).with_name("minimal_textual_htop.py"))],
            re.compile(rb"Tasks: \d+ total"), b"q",
        ),
        "glances": lambda: Tool("glances -t 1", [args.glances, "-t", "1"], re.compile(rb"TASKS"), b"q")
        if _executable(args.glances) else None,
        "tsm": lambda: Tool("textual-system-monitor", [args.tsm], re.compile(rb"Total Memory: \d"), b"q")
        if _executable(args.tsm) else None,
        "htop": lambda: Tool("htop -d 10", [shutil.which("htop"), "-d", "10"], re.compile(rb"Tasks: \d+"), b"q")
        if shutil.which("htop") else None,
        "btop": lambda: Tool("btop (1 s)", [shutil.which("btop")], re.compile(rb"Used:"), b"q",
                             env={"XDG_CONFIG_HOME": btop_config_dir(scratch_dir)})
        if shutil.which("btop") else None,
    }
    for name in wanted:
        make = candidates.get(name)
        tool = make() if make else None
        if tool is None:
            skipped.append(name)
        else:
            tools.append(tool)
    return tools, skipped


def _executable(path: str | None) -> bool:
    return bool(path) and os.access(path, os.X_OK)


def markdown_table(results: list[Result], seconds: float, idle_processes: int) -> str:
    def number(value: float | None, digits: int = 1) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    processes = next((r.process_count for r in results if r.process_count), None)
    lines = [
        f"| tool | first frame, median (s) | CPU % of one core (~{processes} processes) "
        f"| CPU % with +{idle_processes} idle | peak RSS (MiB) | peak RSS +{idle_processes} (MiB) "
        "| to terminal (KB/s) | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.tool} | {number(r.first_frame_median_s, 2)} | {number(r.cpu_percent)} "
            f"| {number(r.cpu_percent_idle)} | {number(r.peak_rss_mib, 0)} | {number(r.peak_rss_mib_idle, 0)} "
            f"| {number(None if r.terminal_bytes_per_s is None else r.terminal_bytes_per_s / 1000)} | {r.note} |"
        )
    lines.append(f"\n{seconds:.0f} s windows at 1 s refresh, {COLUMNS}x{ROWS} pty, tools run one after another.")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="CPU window per tool and case (default 60)")
    parser.add_argument("--launches", type=int, default=5, help="launches for the first-frame median (default 5)")
    parser.add_argument("--idle-processes", type=int, default=IDLE_PROCESSES, help="0 skips the idle case")
    parser.add_argument("--tools", default="pth-top,minimal,glances,tsm,htop,btop")
    parser.add_argument("--glances", default="/work/peers/glances-venv/bin/glances")
    parser.add_argument("--tsm", default="/work/peers/tsm-venv/bin/tsm", help="textual-system-monitor's `tsm`")
    parser.add_argument("--json-out", help="also write the figures as JSON here")
    parser.add_argument("--soak-seconds", type=float, default=0.0, help="then run pth-top alone this long")
    parser.add_argument("--soak-interval", type=float, default=0.25)
    return parser.parse_args()


def _interrupt(signal_number: int, frame: object) -> None:
    """SIGTERM unwinds like Ctrl-C so every finally block kills what this script started."""
    raise KeyboardInterrupt


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGTERM, _interrupt)
    with tempfile.TemporaryDirectory(prefix="dashboard-overhead-") as scratch_dir:
        return run_benchmark(args, scratch_dir)


def run_benchmark(args: argparse.Namespace, scratch_dir: str) -> int:
    tools, skipped = build_tools(args, scratch_dir)
    for name in skipped:
        print(f"skipped {name}: not found (see --help for its path option)", file=sys.stderr)
    results = [Result(tool.name) for tool in tools]
    print(f"first frames: {args.launches} launches of each tool, round-robin ...", file=sys.stderr, flush=True)
    measure_first_frames(tools, {result.tool: result for result in results}, args.launches)
    for tool, result in zip(tools, results, strict=True):
        print(f"measuring {tool.name} ...", file=sys.stderr, flush=True)
        bench_tool(tool, args, result)
    report: dict = {"results": [dict(asdict(r), first_frame_median_s=r.first_frame_median_s) for r in results],
                    "seconds": args.seconds, "skipped": skipped, "cpu_count": psutil.cpu_count()}
    if results:
        print(markdown_table(results, args.seconds, args.idle_processes))
    if args.soak_seconds > 0:
        print(f"soak: pth-top at {args.soak_interval} s for {args.soak_seconds:.0f} s ...", file=sys.stderr, flush=True)
        tool = Tool("pth-top", pth_top_argv(args.soak_interval), re.compile(rb"[1-9]\d*/\d+ processes"), b"q")
        report["soak"] = soak(tool, args.soak_seconds)
        print(f"soak: {json.dumps(report['soak'])}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

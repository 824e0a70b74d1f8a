"""Benchmark figures for the benchmark runner (issue 3). Run: python tests/perf/bench_harness_vs_timer.py

1. Harness CPU GEMM GFLOP/s vs torch.utils.benchmark blocked_autorange, same shapes and threads (target 5 %).
2. Quick suite wall time through the launcher (target <= 60 s) and the parent's CPU use while reading events.
3. Dashboard CPU use while the Bench screen runs a suite headless (target < 10 % of one core).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def harness_vs_timer(sizes: list[int], thread_counts: list[int], min_run_time_s: float, rounds: int = 5) -> list[dict]:
    import torch
    from torch.utils.benchmark import Timer

    from pth_top.benches.child.harness import measure

    rows = []
    for threads in thread_counts:
        torch.set_num_threads(threads)
        for size in sizes:
            a, b = torch.randn(size, size), torch.randn(size, size)
            out = torch.empty(size, size)
            flop = 2 * size**3
            timer = Timer("torch.matmul(a, b, out=out)", globals={"torch": torch, "a": a, "b": b, "out": out},
                          num_threads=threads)
            ours, theirs = [], []
            for _ in range(rounds):  # alternate, so load from other processes hits both alike
                ours.append(measure(lambda a=a, b=b, out=out: torch.matmul(a, b, out=out),
                                    max_time_s=min_run_time_s).median_s)
                theirs.append(timer.blocked_autorange(min_run_time=min_run_time_s).median)
            ours_s, theirs_s = statistics.median(ours), statistics.median(theirs)
            rows.append({
                "threads": threads, "size": size,
                "harness_gflops": flop / ours_s / 1e9, "timer_gflops": flop / theirs_s / 1e9,
                "ratio": theirs_s / ours_s,
            })
    return rows


async def quick_suite_via_launcher(disk_dir: str) -> dict:
    from pth_top.benches.client.bench_process import BenchProcess
    from pth_top.benches.run_request import RunRequest

    process = BenchProcess.for_request(None, RunRequest(suite="quick", disk_dir=disk_dir))
    cpu_before, wall_before = time.process_time(), time.monotonic()
    await process.start()
    events = 0
    async for _ in process.events():
        events += 1
    code = await process.wait()
    wall = time.monotonic() - wall_before
    cpu = time.process_time() - cpu_before
    return {"exit_code": code, "wall_s": wall, "events": events, "parent_cpu_s": cpu,
            "parent_cpu_percent_of_one_core": 100 * cpu / wall}


async def bench_screen_cpu(disk_dir: str) -> dict:
    from textual.app import App

    from pth_top.benches.run_request import RunRequest
    from pth_top.tui.screens.bench import BenchScreen

    screen = BenchScreen(RunRequest(disk_dir=disk_dir))

    class BenchApp(App):
        def on_mount(self) -> None:
            self.push_screen(screen)

    app = BenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        while "Found" not in str(screen.query_one("#status").content):
            await pilot.pause(0.1)
        cpu_before, wall_before = time.process_time(), time.monotonic()
        await pilot.press("enter")
        while screen.running or screen.last_saved is None:
            await asyncio.sleep(0.5)
        wall = time.monotonic() - wall_before
        cpu = time.process_time() - cpu_before
    return {"wall_s": wall, "dashboard_cpu_s": cpu, "dashboard_cpu_percent_of_one_core": 100 * cpu / wall,
            "rows": len(screen.record.rows) if screen.record else 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-screen", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ.setdefault("PTH_TOP_DATA_DIR", str(Path(scratch) / "data"))
        cores = os.cpu_count() or 1
        report = {"gemm": harness_vs_timer([256, 512, 1024], sorted({1, cores}), 0.5)}
        report["quick_suite"] = asyncio.run(quick_suite_via_launcher(scratch))
        if not args.skip_screen:
            report["bench_screen"] = asyncio.run(bench_screen_cpu(scratch))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print("GEMM: harness vs torch.utils.benchmark blocked_autorange (same shape, same threads)")
    print(f"{'threads':>7} {'size':>5} {'harness GFLOP/s':>16} {'Timer GFLOP/s':>14} {'harness/Timer':>14}")
    for row in report["gemm"]:
        print(f"{row['threads']:>7} {row['size']:>5} {row['harness_gflops']:>16.1f} {row['timer_gflops']:>14.1f} "
              f"{row['ratio']:>14.3f}")
    quick = report["quick_suite"]
    print(f"quick suite: {quick['wall_s']:.1f} s wall (exit {quick['exit_code']}, {quick['events']} events); "
          f"launcher parent CPU {quick['parent_cpu_percent_of_one_core']:.2f} % of one core")
    if "bench_screen" in report:
        screen = report["bench_screen"]
        print(f"bench screen: quick suite {screen['wall_s']:.1f} s, {screen['rows']} rows; dashboard CPU "
              f"{screen['dashboard_cpu_percent_of_one_core']:.2f} % of one core")
    return 0


if __name__ == "__main__":
    sys.exit(main())

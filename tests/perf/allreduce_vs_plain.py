"""gloo all-reduce busbw: the allreduce kernel vs a plain `dist.all_reduce` timing loop, same run (issue 13).

Run: python tests/perf/allreduce_vs_plain.py [--ranks 2] [--rounds 3] [--sizes-mib 1,4,16]
The plain loop is written apart from the kernel (its own rank code, run count and timing). Rounds alternate
kernel and plain loop so load from other processes hits both alike; the median busbw of each per size is
compared (target: within 10 %), the best is shown too. Prints JSON; exit 1 when a size misses the target.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TARGET_RATIO_DEVIATION = 0.10
PLAIN_WARMUP_CALLS = 5
PLAIN_PROBE_CALLS = 10
PLAIN_TRIAL_S = 1.0  # each trial times one long back-to-back run of about this long
PLAIN_TRIALS = 3


def plain_rank(rank: int, world_size: int, init_file: str, sizes: list[int], result_file: str) -> None:
    """A textbook loop written apart from the kernel: gloo over a file store; per payload, rank 0 sizes a ~1 s
    run from 10 probe calls and broadcasts the count; 3 trials of that run, the slowest rank's mean per call
    in each, the median trial."""
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size,
                            timeout=timedelta(seconds=300))
    results = {}
    for nbytes in sizes:
        tensor = torch.rand(nbytes // 4)
        for _ in range(PLAIN_WARMUP_CALLS):
            dist.all_reduce(tensor)
        started = time.perf_counter()
        for _ in range(PLAIN_PROBE_CALLS):
            dist.all_reduce(tensor)
        count = torch.tensor([max(1, round(PLAIN_TRIAL_S / ((time.perf_counter() - started) / PLAIN_PROBE_CALLS)))])
        dist.broadcast(count, src=0)
        trials = []
        for _ in range(PLAIN_TRIALS):
            dist.barrier()
            started = time.perf_counter()
            for _ in range(int(count.item())):
                dist.all_reduce(tensor)
            mean_s = torch.tensor([(time.perf_counter() - started) / int(count.item())], dtype=torch.float64)
            dist.all_reduce(mean_s, op=dist.ReduceOp.MAX)
            trials.append(mean_s.item())
        results[nbytes] = nbytes / statistics.median(trials) / 1e9 * 2 * (world_size - 1) / world_size
    dist.destroy_process_group()
    if rank == 0:
        Path(result_file).write_text(json.dumps(results))


def plain_busbw(world_size: int, sizes: list[int]) -> dict[int, float]:
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory(prefix="pth-top-plain-allreduce-") as folder:
        result_file = os.path.join(folder, "result.json")
        mp.spawn(plain_rank, args=(world_size, os.path.join(folder, "store"), sizes, result_file),
                 nprocs=world_size, join=True)
        return {int(key): value for key, value in json.loads(Path(result_file).read_text()).items()}


def kernel_busbw(world_size: int, sizes: list[int]) -> dict[int, float]:
    from pth_top.benches.child.kernels.allreduce_sweep import run_sweep

    return {record["bytes"]: record["busbw_gbps"] for record in run_sweep(world_size, "gloo", sizes)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes-mib", default="1,4,16")
    args = parser.parse_args()
    sizes = [int(float(text) * 2**20) for text in args.sizes_mib.split(",")]
    kernel_runs: list[dict[int, float]] = []
    plain_runs: list[dict[int, float]] = []
    started = time.monotonic()
    for _ in range(args.rounds):
        kernel_runs.append(kernel_busbw(args.ranks, sizes))
        plain_runs.append(plain_busbw(args.ranks, sizes))
    rows = []
    for nbytes in sizes:
        kernel = max(run[nbytes] for run in kernel_runs)
        plain = max(run[nbytes] for run in plain_runs)
        kernel_median = statistics.median(run[nbytes] for run in kernel_runs)
        plain_median = statistics.median(run[nbytes] for run in plain_runs)
        rows.append({"bytes": nbytes, "kernel_median_busbw_gbps": round(kernel_median, 4),
                     "plain_median_busbw_gbps": round(plain_median, 4),
                     "ratio_median": round(kernel_median / plain_median, 3), "ratio_best": round(kernel / plain, 3),
                     "within_target": abs(kernel_median / plain_median - 1) <= TARGET_RATIO_DEVIATION,
                     "kernel_rounds": [round(run[nbytes], 4) for run in kernel_runs],
                     "plain_rounds": [round(run[nbytes], 4) for run in plain_runs]})
    print(json.dumps({"ranks": args.ranks, "rounds": args.rounds, "wall_s": round(time.monotonic() - started, 1),
                      "target": f"within {TARGET_RATIO_DEVIATION:.0%}", "sizes": rows}, indent=1))
    return 0 if all(row["within_target"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

"""All-reduce's bench child side: start the ranks (allreduce.py, run by path), watch them, read rank 0's records.

Ranks meet on a file rendezvous in a temp folder; a rank that exits with an error stops the others at once,
and ranks that outlive a generous deadline are stopped. Every rank is reaped and the folder removed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Callable

from pth_top.benches.child.kernels.allreduce import (
    BLOCKS,
    MIN_BLOCK_S,
    RANK_SCRIPT,
    TIMED_CALLS,
    WARMUP_CALLS,
    size_label,
)

STARTUP_ALLOWANCE_S = 120.0  # torch import and rendezvous in every rank
SLOWEST_BYTES_PER_S = {"gloo": 50e6, "nccl": 2e9}  # floors that size the deadline, far below real links
RANK_STOP_GRACE_S = 2.0
STDERR_TAIL_CHARS = 600
# Runs a rank from allreduce.py by path, without the cwd or the script's folder on sys.path.
RANK_BOOTSTRAP = ("import os, runpy, sys\n"
                  "sys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]\n"
                  "sys.argv.pop(0)\n"
                  "runpy.run_path(sys.argv[0], run_name='__main__')\n")


class RankFailed(RuntimeError):
    """A rank exited with an error, or the ranks outlived their deadline."""


def sweep_timeout_s(sizes: list[int], backend: str, warmup: int = WARMUP_CALLS, iterations: int = TIMED_CALLS,
                    blocks: int = BLOCKS, min_block_s: float = MIN_BLOCK_S) -> float:
    """A deadline no healthy run reaches: startup allowance, every call at a floor bandwidth, every block's floor."""
    calls = warmup + (blocks + 1) * iterations
    return (STARTUP_ALLOWANCE_S + calls * 2 * sum(sizes) / SLOWEST_BYTES_PER_S[backend]
            + 2 * (blocks + 1) * min_block_s * len(sizes))


def default_rank_argv(rank: int, world_size: int, init_file: str, backend: str, sizes: list[int],
                      timeout_s: float, min_block_s: float = MIN_BLOCK_S) -> list[str]:
    return [sys.executable, "-c", RANK_BOOTSTRAP, RANK_SCRIPT, f"--init-file={init_file}",
            f"--rank={rank}", f"--world-size={world_size}", f"--backend={backend}",
            f"--sizes={','.join(map(str, sizes))}", f"--timeout-s={timeout_s:g}", f"--min-block-s={min_block_s!r}"]


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-3:])[-STDERR_TAIL_CHARS:]


def _read_records(path: str) -> list[dict]:
    records = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a partial last line, or a library's print
                if isinstance(record, dict) and isinstance(record.get("bytes"), int):
                    records.append(record)
    except OSError:
        pass
    return records


def _stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM every rank still running, SIGKILL after a grace, and reap them all (no zombie, no orphan)."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + RANK_STOP_GRACE_S
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_sweep(world_size: int, backend: str, sizes: list[int], *, timeout_s: float | None = None,
              progress: Callable[[float, str], None] = lambda fraction, message: None,
              rank_argv: Callable[[int, str], list[str]] | None = None, poll_s: float = 0.05,
              min_block_s: float = MIN_BLOCK_S) -> list[dict]:
    """Start `world_size` ranks on a file rendezvous and return rank 0's records, one per size.

    RankFailed when a rank exits non-zero (the others are stopped at once) or the deadline passes.
    """
    timeout_s = timeout_s if timeout_s is not None else sweep_timeout_s(sizes, backend, min_block_s=min_block_s)
    workdir = tempfile.mkdtemp(prefix="pth-top-allreduce-")
    init_file = os.path.join(workdir, "rendezvous")
    processes: list[subprocess.Popen] = []
    try:
        for rank in range(world_size):
            argv = (rank_argv(rank, init_file) if rank_argv is not None else
                    default_rank_argv(rank, world_size, init_file, backend, sizes, timeout_s, min_block_s))
            with open(os.path.join(workdir, f"rank{rank}.out"), "wb") as out, \
                    open(os.path.join(workdir, f"rank{rank}.err"), "wb") as err:
                processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err))
        deadline = time.monotonic() + timeout_s
        rank0_out = os.path.join(workdir, "rank0.out")
        reported = -1
        while True:
            codes = [process.poll() for process in processes]
            failures = [f"rank {rank} of {world_size} exited with code {code}"
                        + (f": {detail}" if (detail := _tail(os.path.join(workdir, f"rank{rank}.err"))) else "")
                        for rank, code in enumerate(codes) if code not in (None, 0)]
            if failures:
                raise RankFailed("; ".join(failures))
            if all(code == 0 for code in codes):
                break
            if time.monotonic() > deadline:
                raise RankFailed(f"all-reduce ranks still running after {timeout_s:g} s (a rank hung?); stopped")
            done = len(_read_records(rank0_out))
            if done != reported:
                reported = done
                progress(done / len(sizes), f"all-reduce {size_label(sizes[min(done, len(sizes) - 1)])}")
            time.sleep(poll_s)
        records = _read_records(rank0_out)
        missing = sorted(set(sizes) - {record["bytes"] for record in records})
        if missing:
            raise RankFailed(f"rank 0 reported no result for {', '.join(map(size_label, missing))}")
        return records
    finally:
        _stop(processes)
        shutil.rmtree(workdir, ignore_errors=True)

"""Workloads whose GPM activity gpu_check.sh records as fixtures (gpm_capture.py samples them).

  python gpm_workloads.py gemm|idle|spin|allreduce      (allreduce under torchrun: one rank is enough)
gemm: a bf16 matmul loop; idle: a CUDA context held, nothing launched; spin: torch.cuda._sleep kernels back to
back (busy by NVML, one block resident: the hang signature); allreduce: all_reduce in a loop (nccl on CUDA,
gloo on the CPU). Env: DEVICE (cuda:0; cpu = dry run, tiny sizes), GPM_READY_FILE (written once warm),
GPM_STOP_FILE (the loop ends, rc 0, once it exists), GPM_WORKLOAD_MAX_S (60: the loop ends by itself).
Needs torch only.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

MODES = ("gemm", "idle", "spin", "allreduce")
GEMM_SIZE = {"cuda": 8192, "cpu": 256}
ALLREDUCE_FLOATS = {"cuda": 64 * 1024 * 1024, "cpu": 1024}
SPIN_CYCLES = 200_000_000  # ~0.1 s a kernel at H100 clocks


def ready() -> None:
    path = os.environ.get("GPM_READY_FILE")
    if path:
        Path(path).write_text(f"{os.getpid()}\n")


def running(end: float) -> bool:
    stop = os.environ.get("GPM_STOP_FILE")
    return time.monotonic() < end and not (stop and Path(stop).exists())


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(mode: str) -> int:
    device = torch.device(os.environ.get("DEVICE", "cuda:0"))
    if device.type == "cuda" and "LOCAL_RANK" in os.environ:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    end = time.monotonic() + float(os.environ.get("GPM_WORKLOAD_MAX_S", "60"))
    if mode == "allreduce":
        import torch.distributed as dist

        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
        tensor = torch.ones(ALLREDUCE_FLOATS[device.type], device=device)
        dist.all_reduce(tensor)
        synchronize(device)
        ready()
        while running(end):
            for _ in range(10):
                dist.all_reduce(tensor)
            synchronize(device)
        dist.destroy_process_group()
        return 0
    if mode == "gemm":
        size = GEMM_SIZE[device.type]
        a, b = (torch.randn(size, size, device=device, dtype=torch.bfloat16) for _ in range(2))
        (a @ b).sum().item()
        ready()
        while running(end):
            for _ in range(20):
                c = a @ b
            synchronize(device)
        del c
        return 0
    torch.zeros(1, device=device).sum().item()  # the context (and, on CUDA, the driver's share of memory)
    ready()
    while running(end):
        if mode == "spin" and device.type == "cuda":
            for _ in range(10):
                torch.cuda._sleep(SPIN_CYCLES)
            synchronize(device)
        else:
            time.sleep(0.1)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODES:
        print(f"usage: gpm_workloads.py {'|'.join(MODES)}", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))

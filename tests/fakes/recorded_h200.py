"""This repository's own recording of a real NVIDIA H200 (tests/fakes/recorded/h200/, see its README.md).

One H200 (driver 580.159.04, CUDA 13.0, torch 2.11.0+cu130) passed through to a Firecracker VM, 2026-12-04,
recorded by tests/perf/gpu_check.sh. The GPM captures (tests/perf/gpm_capture.py) hold the GPU fields of
`pth-top snapshot --json` once a second while a workload ran: "gemm" (a bf16 GEMM), "idle-context" (a held CUDA
context), "spin-kernel" (torch.cuda._sleep), "torchrun-allreduce" (one rank's all_reduce). The figures quoted in
tests are each capture's last sample (the first GEMM sample is still ramping up).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pth_top.sensors.model import GpuSample
from pth_top.sensors.snapshot_json import snapshot_from_dict, snapshot_to_dict
from tests.fakes.snapshots import make_snapshot

H200_DIR = Path(__file__).with_name("recorded") / "h200"
SCENARIOS = ("gemm", "idle-context", "spin-kernel", "torchrun-allreduce")


@cache
def _capture_text(scenario: str) -> str:
    return (H200_DIR / "gpm" / f"{scenario}.json").read_text()


def gpm_capture(scenario: str) -> dict[str, Any]:
    """One GPM capture as recorded (a fresh copy: tests may change it)."""
    capture = json.loads(_capture_text(scenario))
    if capture.get("fixture") != "pth-top.gpm-capture" or capture.get("version") != 1:
        raise ValueError(f"{scenario}: not a pth-top.gpm-capture version 1 file")
    return capture


def recorded_gpu(scenario: str, sample: int = -1) -> dict[str, Any]:
    """The H200's `snapshot --json` GPU fields in one sample of a capture (the last by default)."""
    return gpm_capture(scenario)["samples"][sample]["gpus"][0]


def gpu_samples(gpus: list[dict[str, Any]]) -> tuple[GpuSample, ...]:
    """Recorded `snapshot --json` GPU dicts as GpuSamples, decoded by snapshot_from_dict (null -> NA, lists ->
    tuples) inside an otherwise fixed snapshot."""
    document = snapshot_to_dict(make_snapshot(gpu_count=0, process_count=0))
    return snapshot_from_dict({**document, "gpus": gpus}).gpus


def recorded_gpu_sample(scenario: str, sample: int = -1) -> GpuSample:
    return gpu_samples([recorded_gpu(scenario, sample)])[0]

"""Helpers for the benchmark tests: run kernels in-process at tiny sizes and collect their events."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from pth_top.benches.catalog import KERNELS_BY_NAME, KernelSpec  # noqa: E402
from pth_top.benches.protocol import decode_line, encode_event  # noqa: E402
from pth_top.benches.runner import plan, run_suite  # noqa: E402

TINY_SCALE = 0.01
TINY_TIME_CAP_S = 0.05


def run_in_process(specs: list[KernelSpec], tmp_path, devices=("cpu",)) -> tuple[int, list]:
    events = []

    def emit(kind: str, **fields) -> None:
        events.append(decode_line(encode_event(kind, **fields)))  # through the wire format

    options = {"disk_dir": str(tmp_path), "disk_size_mib": 8, "cpu_memory_budget_mib": 16}
    code = run_suite(plan(specs, list(devices)), emit, scale=TINY_SCALE, time_cap_s=TINY_TIME_CAP_S,
                     options=options, devices=list(devices))
    return code, events


@pytest.fixture
def run_kernels(tmp_path):
    def run(*names: str, devices=("cpu",)):
        return run_in_process([KERNELS_BY_NAME[name] for name in names], tmp_path, devices)
    return run

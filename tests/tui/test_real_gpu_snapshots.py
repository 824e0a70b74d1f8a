"""Snapshot tests of the Monitor screen on GPUs as real `nvidia-smi -q` outputs report them
(tests/fakes/real_gpus.py): idle H100 SXM and A100 SXM4 servers, ten A40s, one A10, RTX A6000s with fans."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.gpu_health import GpuHealthReader
from pth_top.sensors.nvml import NvmlSession
from tests.fakes.real_gpus import make_real_machine
from tests.fakes.snapshots import make_snapshot
from tests.sensors.helpers import FakeClock
from tests.tui.test_snapshots import fixed_app, wait_for_first_sample


def real_gpu_snapshot(name: str):
    """The fixed test machine (host, CPU, processes) with the GPUs of the real machine `name`."""
    session = NvmlSession(make_real_machine(name), clock=FakeClock())
    reader = GpuReader(session, health=GpuHealthReader(session))
    reader.sample()
    gpus = reader.sample()  # the second: GPM activity needs an interval, as the live dashboard has from then on
    driver, cuda = reader.driver_versions()
    snapshot = make_snapshot(gpu_count=0)
    host = replace(snapshot.host, nvidia_driver_version=driver, cuda_driver_version=cuda, nvml_unavailable_reason=None)
    return replace(snapshot, host=host, gpus=gpus)


@pytest.mark.parametrize("name, size", [
    ("h100_sxm_x8", (120, 40)), ("a100_sxm4_x4", (120, 40)), ("a40_x10", (120, 40)), ("a10", (80, 24)),
    ("rtx_a6000_first3", (100, 30)),
])
def test_monitor_on_real_gpus(snap_compare, name, size):
    assert snap_compare(fixed_app(real_gpu_snapshot(name)), terminal_size=size, run_before=wait_for_first_sample)

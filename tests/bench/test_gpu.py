"""CUDA paths of the kernels and the event timer (skipped without an NVIDIA GPU)."""

from __future__ import annotations

import pytest

from pth_top.benches.catalog import KERNELS_BY_NAME
from pth_top.benches.client.runs import RunRecord
from tests.bench.conftest import run_in_process

pytestmark = pytest.mark.gpu


def _record(events) -> RunRecord:
    record = RunRecord()
    for event in events:
        record.apply(event)
    return record


def test_cuda_kernels_return_plausible_values_with_telemetry_and_peaks(tmp_path):
    names = ("gemm", "conv2d", "membw", "h2d", "amp_step", "max_batch", "cpu_vs_gpu")
    code, events = run_in_process([KERNELS_BY_NAME[name] for name in names], tmp_path, devices=("cuda:0",))
    record = _record(events)
    assert code == 0, record.errors
    assert record.metadata["cuda_devices"]["cuda:0"]["name"]
    rows = {(row["kernel"], row["variant"]): row for row in record.rows}
    assert {variant for kernel, variant in rows if kernel == "gemm"} == {"fp32 (tf32 off)", "tf32", "fp16", "bf16"}
    assert rows[("gemm", "fp32 (tf32 off)")]["details"]["cuda_matmul_allow_tf32"] is False
    assert {variant for kernel, variant in rows if kernel == "h2d"} == {
        "h2d pinned", "h2d pageable", "d2h pinned", "d2h pageable"}
    assert rows[("h2d", "h2d pinned")]["details"]["bytes"] >= 256 * 2**20
    assert rows[("amp_step", "cnn fp16")]["details"]["grad_scaler"] is True
    assert rows[("cpu_vs_gpu", "cnn fp32")]["value"] > 0
    for row in record.rows:
        if row["device"].startswith("cuda") and row.get("value") is not None:
            assert row["value"] > 0
            assert "telemetry" in row or "median_s" not in row  # a timed row carries its window's telemetry
    known_gpu = record.metadata["cuda_devices"]["cuda:0"]["name"]
    from pth_top.benches.client.peaks import gpu_peaks

    if gpu_peaks(known_gpu):
        assert rows[("gemm", "bf16")]["percent_of_peak"] > 1
        assert rows[("membw", "copy")]["percent_of_peak"] > 1


def test_cuda_event_timer_times_the_kernel_not_the_launch():
    torch = pytest.importorskip("torch")
    from pth_top.benches.child.harness import HostTimer, measure, measure_repetitions
    from pth_top.benches.child.kernels._common import CudaRepetitionTimer

    a = torch.randn(8192, 8192, device="cuda")
    b = torch.randn(8192, 8192, device="cuda")
    synced = measure_repetitions(lambda: torch.mm(a, b), timer=CudaRepetitionTimer("cuda:0"), warmup_s=0.5,
                                 max_time_s=1.0)
    launch_only = measure(lambda: torch.mm(a, b), timer=HostTimer(), max_time_s=0.2, single_call=True)
    torch.cuda.synchronize()
    host_synced = measure(lambda: torch.mm(a, b), timer=HostTimer(torch.cuda.synchronize), max_time_s=1.0)
    assert synced.median_s == pytest.approx(host_synced.median_s, rel=0.25)
    assert launch_only.median_s < synced.median_s

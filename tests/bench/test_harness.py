"""The harness times finished work, settles, stops adaptively, and agrees with torch.utils.benchmark."""

from __future__ import annotations

import statistics
import threading
import time

import pytest

from pth_top.benches.harness import HostTimer, iqr, measure


def test_async_work_is_timed_to_completion_not_launch():
    pending: list[threading.Thread] = []

    def launch() -> None:  # returns at once, like a CUDA kernel launch
        worker = threading.Thread(target=time.sleep, args=(0.02,))
        worker.start()
        pending.append(worker)

    def device_sync() -> None:
        while pending:
            pending.pop().join()

    synced = measure(launch, timer=HostTimer(device_sync), max_time_s=0.5, min_samples=3)
    assert synced.median_s >= 0.018
    unsynced = measure(launch, timer=HostTimer(), max_time_s=0.2, min_samples=3)
    device_sync()
    assert unsynced.median_s < 0.005 < synced.median_s


def test_fast_calls_are_batched_and_statistics_are_consistent():
    calls = []
    measurement = measure(lambda: calls.append(1), max_time_s=0.3, min_sample_s=0.005)
    assert measurement.calls_per_sample > 1
    assert measurement.median_s == statistics.median(measurement.samples_s)
    assert measurement.iqr_s == iqr(measurement.samples_s) >= 0
    assert len(calls) >= measurement.calls_per_sample * len(measurement.samples_s)


def test_repeats_stop_at_the_time_cap_and_noisy_results_are_flagged():
    durations = iter([0.001, 0.02] * 1000)
    measurement = measure(lambda: time.sleep(next(durations)), max_time_s=0.4, single_call=True, min_samples=5)
    assert measurement.noisy
    assert measurement.rel_iqr > 0.05
    assert 5 <= len(measurement.samples_s) < 100


def test_before_sample_runs_outside_the_timed_region():
    measurement = measure(lambda: None, before_sample=lambda: time.sleep(0.01), single_call=True,
                          max_time_s=0.3, min_samples=3)
    assert measurement.median_s < 0.005


def test_harness_agrees_with_torch_utils_benchmark_on_a_gemm():
    torch = pytest.importorskip("torch")
    from torch.utils.benchmark import Timer

    threads = 1
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a, b = torch.randn(256, 256), torch.randn(256, 256)
        timer = Timer("torch.mm(a, b)", globals={"torch": torch, "a": a, "b": b}, num_threads=threads)
        ratios = []
        for _ in range(4):  # the machine is shared: interleave both tools, retry a few times
            ours, theirs = [], []
            for _ in range(5):
                ours.append(measure(lambda: torch.mm(a, b), max_time_s=0.2).median_s)
                theirs.append(timer.blocked_autorange(min_run_time=0.2).median)
            ratios.append(statistics.median(ours) / statistics.median(theirs))
            if abs(ratios[-1] - 1) <= 0.10:
                break
    finally:
        torch.set_num_threads(previous)
    assert min(abs(ratio - 1) for ratio in ratios) <= 0.10, ratios

"""The harness's statistics and stop rules, on a fake clock whose every reading is known.

The agreement with torch.utils.benchmark is a timing target: tests/perf/bench_harness_vs_timer.py.
"""

from __future__ import annotations

import statistics
from itertools import chain, repeat

import pytest

from pth_top.benches.child.harness import HostTimer, iqr, measure


class FakeClock:
    """A clock that only moves when the code under test 'works' (advance) or a hook says so."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s

    def advance(self, seconds: float) -> None:
        self.now_s += seconds


def calls_taking(clock: FakeClock, durations_s):
    durations = iter(durations_s)
    return lambda: clock.advance(next(durations))


def test_async_work_is_timed_to_completion_not_launch():
    clock = FakeClock()
    pending_s: list[float] = []

    def launch() -> None:  # returns at once, like a CUDA kernel launch; the work is done at sync
        pending_s.append(0.02)

    def device_sync() -> None:
        clock.advance(sum(pending_s))
        pending_s.clear()

    synced = measure(launch, timer=HostTimer(device_sync, clock=clock), clock=clock, max_time_s=0.5, min_samples=3)
    assert synced.median_s == pytest.approx(0.02)
    unsynced = measure(launch, timer=HostTimer(clock=clock), clock=clock, max_time_s=0.5, min_samples=3,
                       single_call=True)
    assert unsynced.median_s == 0.0


def test_fast_calls_are_batched_until_a_sample_lasts_min_sample_s():
    clock = FakeClock()
    measurement = measure(calls_taking(clock, repeat(1e-4)), clock=clock, max_time_s=1.0, min_sample_s=0.005)
    # 1e-4 s a call: 1, 2, then 0.005 / 1e-4 * 1.2 = 60 calls, whose 6 ms sample is long enough.
    assert measurement.calls_per_sample == 60
    assert measurement.median_s == pytest.approx(1e-4)
    assert measurement.iqr_s == pytest.approx(0.0, abs=1e-12)
    assert not measurement.noisy
    assert len(measurement.samples_s) == 5  # steady from the first: stops at min_samples


def test_warm_up_ends_when_two_samples_agree():
    clock = FakeClock()
    # Cold calls slow down the first samples, then the times settle at 10 ms.
    durations = chain([0.05, 0.03, 0.02, 0.0101], repeat(0.01))
    measurement = measure(calls_taking(clock, durations), clock=clock, max_time_s=10.0, single_call=True)
    # Calibration sample (0.05), then 0.03, 0.02, 0.0101, 0.01: the last two agree within 10 %.
    assert measurement.warmup_samples == 5
    assert measurement.samples_s == pytest.approx((0.01,) * 5)


def test_statistics_are_the_median_and_inclusive_iqr_of_the_samples():
    clock = FakeClock()
    timed = [0.010, 0.012, 0.011, 0.013, 0.030, 0.011, 0.012]
    durations = chain([0.011, 0.011], timed, repeat(0.011))
    measurement = measure(calls_taking(clock, durations), clock=clock, max_time_s=10.0, single_call=True,
                          min_samples=7, target_rel_iqr=0.5)
    assert measurement.samples_s == pytest.approx(tuple(timed))
    assert measurement.median_s == pytest.approx(statistics.median(timed)) == pytest.approx(0.012)
    assert measurement.iqr_s == pytest.approx(iqr(timed))
    assert measurement.rel_iqr == pytest.approx(iqr(timed) / 0.012)
    assert measurement.best_s == pytest.approx(0.010)


def test_repeats_stop_at_the_time_cap_and_noisy_results_are_flagged():
    clock = FakeClock()
    durations = chain([0.001, 0.001], *repeat((0.001, 0.02), 1000))
    measurement = measure(calls_taking(clock, durations), clock=clock, max_time_s=0.4, single_call=True,
                          min_samples=5)
    assert measurement.noisy and measurement.rel_iqr > 0.05
    spent_s = sum(measurement.samples_s)
    assert 0.4 - 0.05 <= clock.now_s and spent_s <= 0.4 + 0.02
    assert len(measurement.samples_s) < 1000


def test_a_steady_kernel_stops_at_min_samples_long_before_the_cap():
    clock = FakeClock()
    measurement = measure(calls_taking(clock, repeat(0.02)), clock=clock, max_time_s=100.0, single_call=True,
                          min_samples=5)
    assert len(measurement.samples_s) == 5 and clock.now_s < 1.0


def test_max_samples_bounds_the_repeats():
    clock = FakeClock()
    measurement = measure(calls_taking(clock, chain([0.01, 0.01], *repeat((0.01, 0.05), 100))), clock=clock,
                          max_time_s=1e9, single_call=True, min_samples=3, max_samples=20)
    assert len(measurement.samples_s) == 20 and measurement.noisy


def test_before_sample_runs_outside_the_timed_region():
    clock = FakeClock()
    measurement = measure(calls_taking(clock, repeat(0.001)), before_sample=lambda: clock.advance(0.01),
                          clock=clock, single_call=True, max_time_s=1.0, min_samples=3)
    assert measurement.median_s == pytest.approx(0.001)

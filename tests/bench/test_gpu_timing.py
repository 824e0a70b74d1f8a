"""GPU timing (events per repetition, sustained warm-up, timed-window telemetry) on a simulated CUDA stream.

The stream runs on a fake clock: the host pays `launch_s` per launch and may run ahead; the device runs the
work in order; an event takes the device time at which the stream reaches it, as a CUDA event does.
The last tests (marked gpu) compare the harness with a plain-events loop on a real GPU.
"""

from __future__ import annotations

import statistics
from typing import Callable

import pytest

from pth_top.benches.child.harness import HostTimer, measure, measure_repetitions
from tests.bench.test_harness import FakeClock
from tests.waiting import wait_for


class FakeStream:
    def __init__(self, clock: FakeClock, launch_s: float) -> None:
        self.clock = clock
        self.launch_s = launch_s
        self.free_at_s = 0.0  # device time when the queued work is done
        self.launches = 0
        self.syncs = 0

    def launch(self, work_s: float) -> None:
        self.clock.advance(self.launch_s)
        self.free_at_s = max(self.free_at_s, self.clock.now_s) + work_s
        self.launches += 1

    def record(self) -> float:
        return max(self.free_at_s, self.clock.now_s)

    def synchronize(self) -> None:
        self.syncs += 1
        self.clock.now_s = max(self.clock.now_s, self.free_at_s)


class FakeEventTimer:
    """The RepetitionTimer protocol over a FakeStream, as CudaRepetitionTimer does over CUDA events."""

    def __init__(self, stream: FakeStream) -> None:
        self.stream = stream
        self.starts: list[float] = []
        self.ends: list[float] = []
        self.collects = 0

    def prepare(self, count: int) -> None:
        self.starts, self.ends = [0.0] * count, [0.0] * count

    def start(self, index: int) -> None:
        self.starts[index] = self.stream.record()

    def stop(self, index: int) -> None:
        self.ends[index] = self.stream.record()

    def collect(self) -> list[float]:
        self.collects += 1
        self.stream.synchronize()
        return [end - start for start, end in zip(self.starts, self.ends, strict=True)]


def kernel(stream: FakeStream, work_s: Callable[[], float]) -> Callable[[], None]:
    return lambda: stream.launch(work_s())


def test_launch_latency_is_outside_the_events_and_no_wait_between_repetitions():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=0.0005)
    timer = FakeEventTimer(stream)
    measurement = measure_repetitions(kernel(stream, lambda: 0.001), timer=timer, warmup_s=0.05, max_time_s=0.3,
                                      clock=clock)
    assert measurement.median_s == pytest.approx(0.001) and not measurement.noisy
    assert stream.syncs == timer.collects < len(measurement.samples_s) / 10  # one wait per batch, not per rep
    # The old way (host sync before each sample, one call) reads launch + work.
    host_synced = measure(kernel(stream, lambda: 0.001), timer=HostTimer(stream.synchronize, clock=clock),
                          single_call=True, max_time_s=0.3, clock=clock)
    assert host_synced.median_s == pytest.approx(0.0015)


def test_repetitions_are_calibrated_after_warm_up_not_on_the_cold_call():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    durations = iter([0.2])  # cuDNN autotune: the first call takes 200 ms, then 1 ms
    measurement = measure_repetitions(kernel(stream, lambda: next(durations, 0.001)), timer=FakeEventTimer(stream),
                                      warmup_s=0.1, max_time_s=0.3, min_reps=10, clock=clock)
    assert measurement.calls_per_sample == 1
    assert len(measurement.samples_s) == 100  # the first batch fills max_time_s / 3 at 1 ms, not min_reps
    # Only a batch's first rep, launched onto an idle stream, carries one launch (1e-5 s); the median none.
    assert measurement.median_s == max(measurement.samples_s[1:]) == pytest.approx(0.001)


def test_warm_up_is_sustained_until_the_power_limit_bites():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)

    def throttled_work_s() -> float:  # boost clock for 0.8 s, then 20 % slower at the power limit
        return 0.010 if stream.free_at_s < 0.8 else 0.012

    measurement = measure_repetitions(kernel(stream, throttled_work_s), timer=FakeEventTimer(stream),
                                      warmup_s=1.5, max_time_s=0.6, clock=clock)
    assert measurement.extra["warmup_s"] >= 1.5
    assert measurement.median_s == pytest.approx(0.012) and min(measurement.samples_s) >= 0.012
    # The old warm-up stopped at the first two agreeing samples and measured the boost clock.
    old_stream = FakeStream(FakeClock(), launch_s=1e-5)
    old = measure(kernel(old_stream, lambda: 0.010 if old_stream.free_at_s < 0.8 else 0.012),
                  timer=HostTimer(old_stream.synchronize, clock=old_stream.clock), clock=old_stream.clock,
                  max_time_s=0.6, single_call=True)
    assert old.median_s == pytest.approx(0.010, rel=0.01)


def test_l2_flush_runs_before_each_repetition_outside_its_events():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    flushes = []

    def flush() -> None:  # zeroing 256 MB is device work too, queued just before the start event
        flushes.append(clock.now_s)
        stream.launch(0.002)

    measurement = measure_repetitions(kernel(stream, lambda: 0.0002), timer=FakeEventTimer(stream), warmup_s=0.01,
                                      max_time_s=0.1, before_rep=flush, single_call=True, clock=clock)
    assert measurement.median_s == pytest.approx(0.0002) and measurement.calls_per_sample == 1
    assert len(flushes) == measurement.warmup_samples + len(measurement.samples_s)
    assert measurement.extra["l2_flush"] is True


def test_short_calls_share_a_repetition_unless_each_needs_its_own():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-6)
    grouped = measure_repetitions(kernel(stream, lambda: 1e-4), timer=FakeEventTimer(stream), warmup_s=0.01,
                                  max_time_s=0.1, min_rep_s=1e-3, clock=clock)
    assert grouped.calls_per_sample == 10 and grouped.median_s == pytest.approx(1e-4)
    single = measure_repetitions(kernel(stream, lambda: 1e-4), timer=FakeEventTimer(stream), warmup_s=0.01,
                                 max_time_s=0.1, min_rep_s=1e-3, single_call=True, clock=clock)
    assert single.calls_per_sample == 1


def test_noisy_work_repeats_until_the_time_cap_and_is_flagged():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    flip = iter(range(10**6))
    measurement = measure_repetitions(kernel(stream, lambda: 0.001 if next(flip) % 2 else 0.002),
                                      timer=FakeEventTimer(stream), warmup_s=0.01, max_time_s=0.3, clock=clock)
    assert measurement.noisy
    timed_s = sum(measurement.samples_s)
    assert 0.3 - 0.003 <= timed_s <= 0.3 + 0.003  # the first batch (a third), then the rest of the cap


class RecordingWindow:
    """Stands in for GpuTelemetry: notes when it is entered and left, on the fake clock and the stream."""

    def __init__(self, stream: FakeStream) -> None:
        self.stream = stream
        self.entered_after_launches: int | None = None
        self.left_at_s: float | None = None

    def __enter__(self) -> "RecordingWindow":
        self.entered_after_launches = self.stream.launches
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.left_at_s = self.stream.clock.now_s

    def summary(self) -> dict:
        return {"window": "timed", "samples": 3}


def test_telemetry_window_covers_the_timed_repetitions_only():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    window = RecordingWindow(stream)
    measurement = measure_repetitions(kernel(stream, lambda: 0.001), timer=FakeEventTimer(stream), warmup_s=0.05,
                                      max_time_s=0.3, window=window, clock=clock)
    assert window.entered_after_launches == measurement.warmup_samples  # after every warm-up call
    assert window.left_at_s == pytest.approx(stream.free_at_s)  # after the device finished the last rep
    assert measurement.extra["telemetry"] == {"window": "timed", "samples": 3}


def test_gpu_telemetry_samples_only_inside_the_window_and_summarises(torch):
    from pth_top.benches.child.kernels._common import GpuTelemetry, summarize_telemetry

    telemetry = GpuTelemetry("cuda:0", interval_s=0.001, first_sample_s=0.0)
    readings = {"sm_clock_mhz": iter(range(1000, 10**6)), "power_w": iter(range(500, 10**6)),
                "temperature_c": iter(range(60, 10**6))}
    telemetry._readers = {name: (lambda values=values: next(values)) for name, values in readings.items()}
    with telemetry:
        wait_for(lambda: len(telemetry._samples["power_w"]) >= 3, "three telemetry samples")
    count = len(telemetry._samples["power_w"])
    assert telemetry.summary()["samples"] == count
    assert len(telemetry._samples["power_w"]) == count  # nothing sampled after leaving the window
    summary = summarize_telemetry({"sm_clock_mhz": [1980.0, 1755.0, 1830.0], "power_w": [690.0, 700.0],
                                   "temperature_c": [61.0, 66.0, 64.0]})
    assert summary == {"window": "timed", "samples": 3, "sm_clock_mhz_median": 1830.0, "sm_clock_mhz_min": 1755.0,
                       "power_w_mean": 695.0, "temperature_c_max": 66.0}
    assert summarize_telemetry({"sm_clock_mhz": [], "power_w": [], "temperature_c": []}) == {
        "window": "timed", "samples": 0}


@pytest.mark.gpu
def test_harness_agrees_with_a_plain_events_loop_on_a_real_gemm(torch):
    from pth_top.benches.child.kernels._common import KernelContext, timed

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    measurement = timed(KernelContext(device="cuda:0", scale=1.0, time_cap_s=3.0), lambda: torch.mm(a, b))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(100)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(100)]
    for start, end in zip(starts, ends, strict=True):
        start.record()
        torch.mm(a, b)
        end.record()
    torch.cuda.synchronize()
    reference_s = statistics.median(start.elapsed_time(end) / 1000 for start, end in zip(starts, ends, strict=True))
    assert measurement.median_s == pytest.approx(reference_s, rel=0.03)
    assert measurement.extra["warmup_s"] >= 1.0 and measurement.extra["telemetry"]["window"] == "timed"


def test_batches_are_sized_by_the_whole_repetition_flush_included():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    measurement = measure_repetitions(kernel(stream, lambda: 0.0002), timer=FakeEventTimer(stream), warmup_s=0.01,
                                      max_time_s=0.3, before_rep=lambda: stream.launch(0.0018), single_call=True,
                                      clock=clock, min_reps=10)
    # A repetition lasts 2 ms with its flush: the first batch fills 0.1 s with 50 of them, not 500 kernel times.
    assert len(measurement.samples_s) == 50

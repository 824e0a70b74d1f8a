"""Timing harness: `measure` (host clock, CPU work) and `measure_repetitions` (device events, GPU work).

Imports no torch: the caller passes a timer (host clock + device sync, or CUDA events) and hooks; a
`clock` can be injected so the statistics and stop rules are tested on known values. `mark_progress` is
called each time the device finished a sample or batch, so a long measurement never looks stalled and a
hung one (a batch that never completes) does.
"""

from __future__ import annotations

import math
import statistics
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Callable, Protocol


class Timer(Protocol):
    """Times a block of calls; `stop` returns seconds after the device finished the block's work."""

    def start(self) -> None: ...

    def stop(self) -> float: ...


Clock = Callable[[], float]


class HostTimer:
    """`clock` around the block; `sync` (e.g. a device synchronize) runs before reading the clock."""

    def __init__(self, sync: Callable[[], None] | None = None, clock: Clock = time.perf_counter) -> None:
        self._sync = sync
        self._clock = clock
        self._started = 0.0

    def start(self) -> None:
        if self._sync is not None:
            self._sync()
        self._started = self._clock()

    def stop(self) -> float:
        if self._sync is not None:
            self._sync()
        return self._clock() - self._started


@dataclass(frozen=True)
class Measurement:
    median_s: float
    iqr_s: float
    samples_s: tuple[float, ...]
    calls_per_sample: int
    warmup_samples: int
    noisy: bool
    target_rel_iqr: float
    extra: dict = field(default_factory=dict)

    @property
    def rel_iqr(self) -> float:
        return self.iqr_s / self.median_s if self.median_s > 0 else float("inf")

    @property
    def best_s(self) -> float:
        return min(self.samples_s)


def iqr(values: list[float] | tuple[float, ...]) -> float:
    if len(values) < 2:
        return 0.0
    quartiles = statistics.quantiles(values, n=4, method="inclusive")
    return quartiles[2] - quartiles[0]


def measure(
    fn: Callable[[], object],
    *,
    timer: Timer | None = None,
    before_sample: Callable[[], None] | None = None,
    max_time_s: float = 1.0,
    min_sample_s: float = 0.01,
    target_rel_iqr: float = 0.05,
    min_samples: int = 5,
    max_samples: int = 1000,
    settle_tolerance: float = 0.1,
    single_call: bool = False,
    clock: Clock = time.perf_counter,
    mark_progress: Callable[[], None] | None = None,
) -> Measurement:
    """Time `fn` and return per-call statistics.

    Each sample times `calls_per_sample` back-to-back calls (grown until a sample lasts `min_sample_s`,
    so timer overhead is negligible) unless `single_call` (e.g. a cache flush must precede every call).
    `before_sample` runs outside the timed region before every sample (an L2 flush, say). `clock`
    reads the deadlines (and times the calls when no `timer` is given).
    """
    timer = timer or HostTimer(clock=clock)
    deadline = clock() + max_time_s

    def sample(calls: int) -> float:
        if before_sample is not None:
            before_sample()
        timer.start()
        for _ in range(calls):
            fn()
        elapsed_s = timer.stop()
        if mark_progress is not None:
            mark_progress()
        return elapsed_s / calls

    # Calibrate the inner loop; these first calls also serve as warm-up.
    calls = 1
    per_call = sample(calls)
    warmup_samples = 1
    while not single_call and per_call * calls < min_sample_s and calls < 1_000_000:
        calls = max(calls * 2, int(min_sample_s / max(per_call, 1e-9) * 1.2) if per_call > 0 else calls * 2)
        per_call = sample(calls)
        warmup_samples += 1

    # Warm up until two consecutive samples agree, spending at most a quarter of the budget.
    warmup_deadline = clock() + max_time_s / 4
    previous = per_call
    while clock() < warmup_deadline:
        current = sample(calls)
        warmup_samples += 1
        if abs(current - previous) <= settle_tolerance * min(current, previous):
            break
        previous = current

    samples: list[float] = []
    while len(samples) < max_samples:
        samples.append(sample(calls))
        if len(samples) >= min_samples:
            median = statistics.median(samples)
            if iqr(samples) <= target_rel_iqr * median or clock() >= deadline:
                break
        elif clock() >= deadline and len(samples) >= 2:
            break
    return _measurement(samples, calls, warmup_samples, target_rel_iqr)


class RepetitionTimer(Protocol):
    """Device timestamps around each repetition (CUDA events): recorded without waiting, read in one wait."""

    def prepare(self, count: int) -> None: ...

    def start(self, index: int) -> None: ...

    def stop(self, index: int) -> None: ...

    def collect(self) -> list[float]:
        """Wait once for the device; seconds between start(i) and stop(i) for each prepared repetition."""
        ...


class TimedWindow(Protocol):
    """Entered around the timed repetitions only (after warm-up); e.g. samples clocks, power, temperature."""

    def __enter__(self) -> object: ...

    def __exit__(self, *exc_info: object) -> object: ...

    def summary(self) -> dict: ...


WARMUP_ROUND_S = 0.25  # warm-up runs in rounds this long, each ending in one wait, to re-estimate the rep time


def measure_repetitions(
    fn: Callable[[], object],
    *,
    timer: RepetitionTimer,
    warmup_s: float,
    max_time_s: float = 1.0,
    before_rep: Callable[[], None] | None = None,
    window: TimedWindow | None = None,
    target_rel_iqr: float = 0.05,
    min_reps: int = 10,
    max_reps: int = 10_000,
    min_rep_s: float = 1e-3,
    single_call: bool = False,
    clock: Clock = time.perf_counter,
    mark_progress: Callable[[], None] | None = None,
) -> Measurement:
    """Time device work as triton's do_bench and mamf-finder do: one event pair per repetition, no wait between
    repetitions (the host stays ahead, so launch latency is hidden), one wait at the end of each batch.

    Warm-up is by time (`warmup_s`, so clocks settle at the power limit) and always more than the cold first
    call; the repetition count is calibrated on the last warm-up round. `before_rep` (an L2 flush) runs
    before each repetition outside its events. A repetition holds several calls when one call is shorter
    than `min_rep_s`, unless `single_call`. Timed batches repeat until IQR/median <= target or `max_time_s`.
    """

    rep_wall_s = 0.0  # host time per repetition, flush included: sizes batches to the time cap

    def run_reps(count: int, calls: int) -> list[float]:
        nonlocal rep_wall_s
        started = clock()
        timer.prepare(count)
        for index in range(count):
            if before_rep is not None:
                before_rep()
            timer.start(index)
            for _ in range(calls):
                fn()
            timer.stop(index)
        per_call_s = [elapsed / calls for elapsed in timer.collect()]
        if mark_progress is not None:  # the device finished this batch: progress, however long the measurement
            mark_progress()
        rep_wall_s = (clock() - started) / count
        return per_call_s

    warmup_started = clock()
    calls = 1
    per_call = run_reps(1, calls)[0]  # cold: cuBLAS handle, cuDNN autotune, allocator growth
    warmup_reps = 1
    while True:
        if not single_call and 0 < per_call * calls < min_rep_s:
            calls = min(1_000_000, math.ceil(min_rep_s / per_call))
        remaining_s = warmup_s - (clock() - warmup_started)
        if warmup_reps > 1 and remaining_s <= 0:
            break
        round_s = min(max(remaining_s, 0.0), WARMUP_ROUND_S)
        count = _reps_for(round_s, per_call * calls, 1, max_reps)
        per_call = statistics.median(run_reps(count, calls))
        warmup_reps += count
    warmup_spent_s = clock() - warmup_started

    samples: list[float] = []
    timed_started = clock()
    with window if window is not None else nullcontext():
        while True:
            elapsed_s = clock() - timed_started
            batch_s = max_time_s / 3 if not samples else max_time_s - elapsed_s
            rep_s = max(per_call * calls, rep_wall_s)
            count = _reps_for(batch_s, rep_s, min_reps if not samples else 1, max_reps - len(samples))
            samples.extend(run_reps(count, calls))
            median = statistics.median(samples)
            if (iqr(samples) <= target_rel_iqr * median or len(samples) >= max_reps
                    or clock() - timed_started + rep_s >= max_time_s):
                break
    extra: dict = {"timing": "device events per repetition", "warmup_s": warmup_spent_s,
                   "reps": len(samples), "l2_flush": before_rep is not None}
    if window is not None:
        extra["telemetry"] = window.summary()
    return _measurement(samples, calls, warmup_reps, target_rel_iqr, extra)


def _measurement(samples: list[float], calls: int, warmup_samples: int, target_rel_iqr: float,
                 extra: dict | None = None) -> Measurement:
    """The median and spread of the samples, noisy when the spread is over the target."""
    median = statistics.median(samples)
    spread = iqr(samples)
    return Measurement(
        median_s=median, iqr_s=spread, samples_s=tuple(samples), calls_per_sample=calls,
        warmup_samples=warmup_samples, noisy=spread > target_rel_iqr * median, target_rel_iqr=target_rel_iqr,
        extra=extra or {},
    )


def _reps_for(span_s: float, rep_s: float, at_least: int, at_most: int) -> int:
    """Repetitions of `rep_s` that fill `span_s`, within [at_least, at_most] (at_most wins)."""
    wanted = math.ceil(span_s / rep_s) if rep_s > 0 else at_least
    return max(1, min(at_most, max(at_least, wanted)))

"""Timing harness: warm-up until times settle, adaptive repeats until IQR/median <= target or a time cap.

Imports no torch: the caller passes a timer (host clock + device sync, or CUDA events) and hooks; a
`clock` can be injected so the statistics and stop rules are tested on known values.
"""

from __future__ import annotations

import statistics
import time
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
        return timer.stop() / calls

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
    median = statistics.median(samples)
    spread = iqr(samples)
    return Measurement(
        median_s=median,
        iqr_s=spread,
        samples_s=tuple(samples),
        calls_per_sample=calls,
        warmup_samples=warmup_samples,
        noisy=spread > target_rel_iqr * median,
        target_rel_iqr=target_rel_iqr,
    )

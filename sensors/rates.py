"""Per-second rates from monotonically increasing counters sampled at two times."""

from __future__ import annotations

from typing import Callable, Generic, Mapping, TypeVar

Key = TypeVar("Key")


class CounterRates(Generic[Key]):
    """Remembers the last counters per key; `rates()` returns per-second deltas (0 on the first call,
    for a new key, or when a counter went backwards after a reset or wrap)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._previous: dict[Key, tuple[float, ...]] = {}
        self._previous_time: float | None = None

    def rates(self, counters: Mapping[Key, tuple[float, ...]]) -> dict[Key, tuple[float, ...]]:
        now = self._clock()
        elapsed_s = now - self._previous_time if self._previous_time is not None else 0.0
        result = {}
        for key, values in counters.items():
            before = self._previous.get(key)
            if before is None or elapsed_s <= 0 or len(before) != len(values):
                result[key] = tuple(0.0 for _ in values)
                continue
            result[key] = tuple(
                (value - old) / elapsed_s if value >= old else 0.0 for value, old in zip(values, before, strict=True)
            )
        self._previous = dict(counters)
        self._previous_time = now
        return result

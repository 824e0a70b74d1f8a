"""Shared helpers for the sensors tests: a hand-driven clock and a Sampler wired to a fake NVML."""

from __future__ import annotations

from sensors.nvml import NvmlSession
from sensors.sampler import Sampler


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def sampler_with(fake, clock: FakeClock | None = None) -> Sampler:
    clock = clock or FakeClock()
    return Sampler(nvml=NvmlSession(fake, clock=clock), clock=clock)

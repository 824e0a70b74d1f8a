"""Shared helpers for the sensors tests: a hand-driven clock and a Sampler wired to a fake NVML."""

from __future__ import annotations

import os
from pathlib import Path

from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.sampler import Sampler
from tests.sensors.proc_tree import add_process, make_proc_root


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def sampler_with(fake, clock: FakeClock | None = None, proc_root: str = "/proc") -> Sampler:
    clock = clock or FakeClock()
    return Sampler(nvml=NvmlSession(fake, clock=clock), clock=clock, proc_root=proc_root)


def small_proc_root(directory: Path) -> str:
    """A /proc-style tree holding init and this test process, so samples cost the same on any machine."""
    root = make_proc_root(directory)
    add_process(root, 1, "init", ["/sbin/init"], ppid=0)
    add_process(root, os.getpid(), "python", ["python", "-m", "pytest"])
    return str(root)

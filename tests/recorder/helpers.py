"""Shared helpers for the recorder tests: a recorder on the scripted 8-GPU NVML, stepped by hand."""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

from pth_top.recorder.recorder import Recorder, RecorderOptions
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.sampler import Sampler
from tests.sensors.helpers import FakeClock

REPO = Path(__file__).resolve().parents[2]
RECORD_MAIN = [sys.executable, str(REPO / "tests" / "recorder" / "record_main.py")]
PTH_TOP = [sys.executable, "-m", "pth_top.tui.cli"]


class SteppedClock(FakeClock):
    """Wall time that moves only when told: starts now, so process run times stay sensible."""

    def __init__(self) -> None:
        super().__init__(time.time())


def make_recorder(fake, path: Path, clock=None, **options) -> tuple[Recorder, FakeClock]:
    """A Recorder on `fake` NVML with the real /proc; NVML's cache clock advances 10 s per `step` of the test."""
    nvml_clock = FakeClock()
    sampler = Sampler(nvml=NvmlSession(fake, clock=nvml_clock))
    options.setdefault("min_free_bytes", 0)
    options.setdefault("read_kernel_log", False)
    recorder = Recorder(RecorderOptions(path=path, **options), sampler=sampler, clock=clock or SteppedClock())
    return recorder, nvml_clock


def step(recorder: Recorder, nvml_clock: FakeClock) -> list:
    nvml_clock.advance(10.0)
    if isinstance(recorder.clock, FakeClock):
        recorder.clock.advance(1.0)
    return recorder.step()


def stored_events(path: Path) -> list[tuple]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT kind, severity, gpu_index, pid, message, evidence FROM events "
                                  "ORDER BY id").fetchall()
    finally:
        connection.close()

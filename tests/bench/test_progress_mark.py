"""The progress mark behind the stall watchdog: set as work finishes (a timing batch, a sweep shape, a burn second),
so a long measurement never looks stalled and a hung one does. Fake clocks throughout."""

from __future__ import annotations

import io
import threading
from itertools import repeat

from pth_top.benches.child.harness import measure, measure_repetitions
from pth_top.benches.child.kernels._common import KernelContext
from pth_top.benches.child.runner import EventWriter
from pth_top.benches.protocol import stall_limit_s
from tests.bench.test_gpu_timing import FakeEventTimer, FakeStream, kernel
from tests.bench.test_harness import FakeClock, calls_taking


class WatchedTimer(FakeEventTimer):
    """Reads the progress age as each batch completes, before the harness marks it (what a heartbeat would carry);
    the batch numbered `hang_at` takes `hang_s` more, as a kernel that never ends."""

    def __init__(self, stream: FakeStream, writer: EventWriter, hang_at: int = -1, hang_s: float = 0.0) -> None:
        super().__init__(stream)
        self.writer = writer
        self.hang_at, self.hang_s = hang_at, hang_s
        self.ages_s: list[float] = []

    def collect(self) -> list[float]:
        if self.collects == self.hang_at:
            self.stream.clock.advance(self.hang_s)
        spans = super().collect()
        self.ages_s.append(self.writer.progress_age_s())
        return spans


def noisy_work_s():
    return iter([0.01, 0.013] * 1_000_000)  # never settles: the measurement runs to its time cap


def test_a_long_gpu_measurement_marks_progress_each_batch():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    writer = EventWriter(io.StringIO(), clock=clock)
    timer = WatchedTimer(stream, writer)
    work = noisy_work_s()
    measure_repetitions(kernel(stream, lambda: next(work)), timer=timer, clock=clock, warmup_s=30.0, max_time_s=60.0,
                        mark_progress=writer.mark_progress)
    assert clock.now_s >= 90.0 and len(timer.ages_s) >= 100  # 30 s warm-up in 0.25 s rounds, then 60 s timed
    assert max(timer.ages_s) <= 60.0 * 2 / 3 + 1.0, "no more than one batch (at most the time cap) between marks"
    assert writer.progress_age_s() == 0.0


def test_a_hung_batch_lets_the_progress_age_pass_the_stall_limit():
    clock = FakeClock()
    stream = FakeStream(clock, launch_s=1e-5)
    writer = EventWriter(io.StringIO(), clock=clock)
    limit_s = stall_limit_s(1.0)
    timer = WatchedTimer(stream, writer, hang_at=5, hang_s=limit_s + 1.0)
    work = noisy_work_s()
    measure_repetitions(kernel(stream, lambda: next(work)), timer=timer, clock=clock, warmup_s=1.0, max_time_s=1.0,
                        mark_progress=writer.mark_progress)
    assert max(timer.ages_s[:5]) < 1.0 and timer.ages_s[5] > limit_s  # the hung batch, and only it


def test_a_host_timed_measurement_marks_progress_each_sample():
    clock = FakeClock()
    writer = EventWriter(io.StringIO(), clock=clock)
    ages_s: list[float] = []
    durations = calls_taking(clock, repeat(0.5))

    def call() -> None:
        durations()
        ages_s.append(writer.progress_age_s())

    measure(call, clock=clock, max_time_s=100.0, single_call=True, target_rel_iqr=-1.0,
            mark_progress=writer.mark_progress)
    assert clock.now_s >= 100.0 and max(ages_s) == 0.5


def test_a_burn_sample_is_not_progress_but_any_other_event_or_mark_is():
    clock = FakeClock()
    writer = EventWriter(io.StringIO(), clock=clock)
    clock.advance(10.0)
    writer("sample", kernel="burn", device="cuda:0", t_s=10.0, tflops=0.0)  # sent each second, hung GPU or not
    writer("heartbeat", pid=1)
    assert writer.progress_age_s() == 10.0
    writer.mark_progress()
    assert writer.progress_age_s() == 0.0
    clock.advance(3.0)
    writer("result", kernel="gemm", device="cpu", status="ok", variant="v", value=1.0, unit="GFLOP/s")
    assert writer.progress_age_s() == 0.0


class ScriptedWorker(threading.Thread):
    """Stands for a burn GemmWorker: its FLOP count grows on each reading, or never (a hung GPU)."""

    def __init__(self, device: str, size: int, stop: threading.Event, *, hung: bool) -> None:
        super().__init__(daemon=True)
        self.device, self.size, self.stop, self.hung = device, size, stop, hung
        self.dtype, self.error, self._flop = "float32", None, 0.0

    @property
    def flop_done(self) -> float:
        if not self.hung:
            self._flop += 1e9
        return self._flop

    def run(self) -> None:
        self.stop.wait()


def burn_marks(monkeypatch, *, hung: bool) -> int:
    from pth_top.benches.child.kernels import burn

    monkeypatch.setattr(burn, "GemmWorker", lambda device, size, stop: ScriptedWorker(device, size, stop, hung=hung))
    clock = FakeClock()
    marks = []
    ctx = KernelContext(device="host", scale=1.0, time_cap_s=1.0, mark_progress=lambda: marks.append(clock.now_s))

    def ticking() -> float:
        clock.advance(0.5)
        return clock.now_s

    burn.run_burn(ctx, ["cpu"], 10.0, lambda kind, **fields: None, clock=ticking)
    return len(marks)


def test_a_burn_marks_progress_each_second_its_gemms_advance_and_not_while_they_hang(monkeypatch):
    assert burn_marks(monkeypatch, hung=False) >= 5
    assert burn_marks(monkeypatch, hung=True) == 0


def test_the_mamf_sweep_marks_progress_for_each_shape_and_through_its_warm_up(monkeypatch):
    import torch

    from pth_top.benches.child.harness import Measurement
    from pth_top.benches.child.kernels import mamf

    marks = []
    ctx = KernelContext(device="cpu", scale=0.05, time_cap_s=0.02, mark_progress=lambda: marks.append(1))
    one_ms = Measurement(median_s=1e-3, iqr_s=0.0, samples_s=(1e-3,) * 5, calls_per_sample=1, warmup_samples=1,
                         noisy=False, target_rel_iqr=0.05)
    monkeypatch.setattr(mamf, "timed", lambda *args, **kwargs: one_ms)  # a measurement that marks nothing itself
    sweep = mamf.sweep(ctx, budget_s=0.05)
    assert len(marks) == sweep["details"]["shapes_measured"] >= 1
    marks.clear()
    mamf.warm_up(ctx, 0.05, 64, torch.float32)
    assert marks, "each round of warm-up matmuls is progress"

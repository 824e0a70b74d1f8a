"""Start-up: the first sample taken on its own thread, and garbage collection paused until the first frame."""

from __future__ import annotations

import gc
import os
import threading
import weakref
from dataclasses import replace

from pth_top.tui import startup_gc
from pth_top.tui.app import PthTopApp
from pth_top.tui.first_sample import FirstSample
from pth_top.tui.screens.monitor import MonitorScreen
from tests.fakes.snapshots import FailingSource, FixedSource, make_processes, make_snapshot
from tests.waiting import WAIT_TIMEOUT_S, wait_until


class Cyclic:
    """An object that only a collection can free: it refers to itself."""

    def __init__(self) -> None:
        self.me = self


class GatedSource(FixedSource):
    """A source whose first sample waits until the test opens the gate."""

    def __init__(self, *snapshots) -> None:
        super().__init__(*snapshots)
        self.gate = threading.Event()
        self.sampled_on: list[str] = []

    def sample(self):
        self.sampled_on.append(threading.current_thread().name)
        self.gate.wait(10)
        return super().sample()


def test_the_first_sample_is_taken_off_the_calling_thread():
    source = GatedSource(make_snapshot(gpu_count=1))
    first = FirstSample.on_thread(lambda: source)
    assert not first.wait(0.05)
    source.gate.set()
    assert first.wait(WAIT_TIMEOUT_S)
    assert first.snapshot is not None and first.error is None and first.source is source
    assert source.sampled_on == ["first-sample"]


def test_a_failing_factory_or_sample_becomes_an_error_line():
    def no_factory():
        raise PermissionError("no /proc here")

    first = FirstSample.on_thread(no_factory)
    assert first.wait(WAIT_TIMEOUT_S)
    assert first.source is None and first.snapshot is None
    assert first.error == "PermissionError: no /proc here"

    first = FirstSample.on_thread(lambda: FailingSource(OSError("read failed")))
    assert first.wait(WAIT_TIMEOUT_S)
    assert first.source is not None and first.error == "OSError: read failed"


class PidsSource:
    """Sees the process that samples and its parent, as a real sampler in a forked child would."""

    def sample(self):
        template = make_processes(2, gpu_count=0)[1]
        return replace(make_snapshot(process_count=1), processes=(
            replace(template, pid=os.getpid(), ppid=os.getppid()), replace(template, pid=os.getppid(), ppid=1)))


def test_a_forked_first_sample_comes_back_without_the_child_itself():
    first = FirstSample.in_child_process(PidsSource)
    assert first.wait(30)
    assert first.error is None and first.source is None
    assert [process.pid for process in first.snapshot.processes] == [os.getpid()]
    assert first.snapshot.memory == make_snapshot().memory


def test_a_forked_first_sample_reports_a_failure_or_a_crash_in_one_line():
    def failing_factory():
        raise PermissionError("no /proc here")

    def crashing_factory():
        os._exit(3)

    failed = FirstSample.in_child_process(failing_factory)
    crashed = FirstSample.in_child_process(crashing_factory)
    assert failed.wait(30) and crashed.wait(30)
    assert failed.snapshot is None and failed.error == "PermissionError: no /proc here"
    assert crashed.snapshot is None and crashed.error == "the first-sample process ended with status 3"


def test_without_a_pipe_or_a_fork_the_first_sample_is_taken_on_a_thread(monkeypatch):
    def no_fork():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    source = FixedSource(make_snapshot(process_count=4))
    first = FirstSample.in_child_process(lambda: source)
    assert first.wait(WAIT_TIMEOUT_S)
    assert first.source is source and len(first.snapshot.processes) == 4


def test_closing_kills_a_child_that_hangs_and_reaps_it():
    def hanging_factory():
        threading.Event().wait()

    first = FirstSample.in_child_process(hanging_factory)
    child_pid = first._child_pid
    assert not first.wait(0.2)
    first.close()
    assert first.wait(0) and first.error == "the first-sample process ended with status -9"
    try:
        os.kill(child_pid, 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError("the hung child is still there after close()")


def record_shown_process_counts(monkeypatch) -> list[int]:
    """The process count of every snapshot the Monitor screen takes from now on."""
    counts: list[int] = []
    take = MonitorScreen.take_snapshot

    def recording_take(screen, snapshot) -> None:
        counts.append(len(snapshot.processes))
        take(screen, snapshot)

    monkeypatch.setattr(MonitorScreen, "take_snapshot", recording_take)
    return counts


async def test_after_a_forked_first_sample_the_worker_primes_its_own_source_without_showing_that_sample(monkeypatch):
    first = FirstSample.in_child_process(lambda: FixedSource(make_snapshot(process_count=7)))
    own_source = FixedSource(make_snapshot(process_count=3), make_snapshot(process_count=5))
    app = PthTopApp(interval_s=0.25, source_factory=lambda: own_source, first_sample=first)
    shown = record_shown_process_counts(monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: 5 in shown, what="the second sample of the worker's own source")
        assert shown[:2] == [7, 5], "the priming sample (3 processes) is never shown"
        assert own_source.calls >= 2


async def test_a_first_sample_slower_than_the_first_frame_fills_in_when_it_comes():
    source = GatedSource(make_snapshot(gpu_count=1, process_count=7))
    app = PthTopApp(interval_s=3600, source_factory=lambda: source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#process-table")
        assert table.row_count == 0
        source.gate.set()
        await wait_until(pilot, lambda: table.row_count, what="the first sample in the table")
        assert table.row_count == 7
        assert source.calls == 1


async def test_a_first_sample_that_does_not_come_is_reported_and_cleared_when_it_does():
    source = GatedSource(make_snapshot(gpu_count=1, process_count=7))
    app = PthTopApp(interval_s=3600, source_factory=lambda: source)
    app.first_sample_slow_s = 0.3
    async with app.run_test(size=(120, 40)) as pilot:
        error = app.screen.query_one("#sampler-error")
        await wait_until(pilot, lambda: error.display, what="the slow first sample reported")
        assert "no first sample after 0.3 s" in str(error.render())
        source.gate.set()
        table = app.screen.query_one("#process-table")
        await wait_until(pilot, lambda: table.row_count, what="the first sample in the table")
        assert table.row_count == 7 and not error.display


async def test_a_first_sample_error_is_shown_once_the_screen_is_up():
    app = PthTopApp(interval_s=3600, source_factory=lambda: FailingSource(OSError("cannot read /proc/stat")))
    async with app.run_test(size=(100, 30)) as pilot:
        error = app.screen.query_one("#sampler-error")
        await wait_until(pilot, lambda: error.display and "cannot read /proc/stat" in str(error.render()),
                         what="the first sample's error on screen")


def test_gc_pause_and_resume_free_start_up_garbage_and_freeze_the_rest():
    assert gc.isenabled()
    frozen_before = gc.get_freeze_count()
    try:
        startup_gc.pause()
        assert not gc.isenabled()
        cycle_ref = weakref.ref(Cyclic())
        assert cycle_ref() is not None, "no collection while paused"
        startup_gc.resume()
        assert cycle_ref() is None, "start-up garbage is collected, not frozen"
        assert gc.isenabled()
        assert gc.get_freeze_count() > frozen_before
        startup_gc.resume()
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_gc_resume_leaves_collection_alone_when_pause_did_not_turn_it_off():
    gc.disable()
    try:
        startup_gc.pause()
        startup_gc.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()


async def test_the_app_turns_collection_back_on_after_its_first_frame():
    app = PthTopApp(interval_s=3600, source_factory=lambda: FixedSource(make_snapshot(gpu_count=1)))
    startup_gc.pause()
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, gc.isenabled, what="garbage collection back on")
    finally:
        gc.unfreeze()
        gc.enable()

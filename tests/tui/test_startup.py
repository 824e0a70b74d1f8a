"""Start-up: the first sample taken on its own thread, and garbage collection paused until the first frame."""

from __future__ import annotations

import gc
import threading
import weakref

from tests.fakes.snapshots import FixedSource, make_snapshot
from tui import startup_gc
from tui.app import FIRST_SAMPLE_WAIT_S, PthTopApp
from tui.first_sample import FirstSample


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
    first = FirstSample(lambda: source)
    assert not first.wait(0.05)
    source.gate.set()
    assert first.wait(5)
    assert first.snapshot is not None and first.error is None and first.source is source
    assert source.sampled_on == ["first-sample"]


def test_a_failing_factory_or_sample_becomes_an_error_line():
    def no_factory():
        raise PermissionError("no /proc here")

    first = FirstSample(no_factory)
    assert first.wait(5)
    assert first.source is None and first.snapshot is None
    assert first.error == "PermissionError: no /proc here"

    class Failing:
        def sample(self):
            raise OSError("read failed")

    first = FirstSample(Failing)
    assert first.wait(5)
    assert first.source is not None and first.error == "OSError: read failed"


async def test_a_first_sample_slower_than_the_first_frame_fills_in_when_it_comes():
    source = GatedSource(make_snapshot(gpu_count=1, process_count=7))
    app = PthTopApp(interval_s=3600, source_factory=lambda: source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#process-table")
        assert table.row_count == 0
        source.gate.set()
        for _ in range(60):
            await pilot.pause(0.05)
            if table.row_count:
                break
        assert table.row_count == 7
        assert source.calls == 1
    assert FIRST_SAMPLE_WAIT_S <= 0.5


async def test_a_first_sample_error_is_shown_once_the_screen_is_up():
    class Broken:
        def sample(self):
            raise OSError("cannot read /proc/stat")

    app = PthTopApp(interval_s=3600, source_factory=Broken)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        error = app.screen.query_one("#sampler-error")
        assert error.display and "cannot read /proc/stat" in str(error.render())


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
            for _ in range(40):
                await pilot.pause(0.05)
                if gc.isenabled():
                    break
            assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()

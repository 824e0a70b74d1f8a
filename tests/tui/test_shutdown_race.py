"""A sample (or a sampler error) that lands while the app shuts down is dropped, never an exception."""

from __future__ import annotations

import asyncio
import threading

import pytest

from pth_top.tui.app import PthTopApp
from pth_top.tui.first_sample import FirstSample
from tests.fakes.snapshots import FailingSource, FixedSource, make_snapshot


class InFlightSource(FixedSource):
    """After the first sample, each sample waits at the gate: the test decides when it lands."""

    def __init__(self, failing: bool = False) -> None:
        super().__init__(make_snapshot(gpu_count=1, process_count=5))
        self.failing = failing
        self.waiting = threading.Event()
        self.gate = threading.Event()
        self.returned = threading.Event()

    def sample(self):
        if self.calls >= 1:
            self.waiting.set()
            self.gate.wait(20)
            self.returned.set()
            if self.failing:
                self.calls += 1
                raise RuntimeError("sensor broke during shutdown")
        return super().sample()


async def wait_for(event: threading.Event, what: str, timeout_s: float = 20.0) -> None:
    if not await asyncio.to_thread(event.wait, timeout_s):
        raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.parametrize("failing", [False, True], ids=["snapshot", "sampler-error"])
async def test_a_message_that_lands_while_the_screens_close_is_dropped(failing):
    source = InFlightSource(failing)
    app = PthTopApp(interval_s=0.25, source_factory=lambda: source,
                    first_sample=FirstSample.on_thread(lambda: source))
    close_all = app._close_all

    async def close_screens_with_a_sample_in_flight() -> None:
        # Exactly what run_test and a real exit do: the screens close while the app loop still runs.
        await close_all()
        source.gate.set()
        await wait_for(source.returned, "the in-flight sample to come back")
        await asyncio.sleep(0.1)

    app._close_all = close_screens_with_a_sample_in_flight
    async with app.run_test(size=(120, 40)):
        await wait_for(source.waiting, "the sampler to start its second sample")
    assert app._exception is None
    assert app.return_code in (None, 0)


async def test_the_sampler_stops_once_the_monitor_screen_is_gone():
    source = InFlightSource()
    app = PthTopApp(interval_s=0.25, source_factory=lambda: source,
                    first_sample=FirstSample.on_thread(lambda: source))
    async with app.run_test(size=(120, 40)):
        await wait_for(source.waiting, "the sampler to start its second sample")
        (worker,) = [w for w in app.workers if w.group == "sampler"]
    source.gate.set()
    deadline = asyncio.get_running_loop().time() + 20
    while not worker.is_finished and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.05)
    assert worker.is_finished and not isinstance(worker.error, Exception)


async def test_a_failing_source_during_exit_raises_nothing():
    app = PthTopApp(interval_s=0.25, source_factory=lambda: FailingSource(OSError("gone")),
                    first_sample=FirstSample.on_thread(lambda: FailingSource(OSError("gone"))))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("q")
    assert app._exception is None

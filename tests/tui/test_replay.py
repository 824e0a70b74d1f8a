"""Replay in the dashboard: a recording of the scripted NVML with injected faults comes back frame by frame
(GPU table and header at the cursor), step/jump/e/E/event list/`/`/play move the cursor; the live dashboard
scrubs back over its memory with `r` and starts a recorder with `R`."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import pynvml as real_pynvml
import pytest

from pth_top.recorder.frames import FileFrames
from pth_top.recorder.writer_lock import writer_pid
from pth_top.tui.app import PthTopApp
from pth_top.tui.recording import recording_path
from pth_top.tui.replay_app import ReplayApp
from pth_top.tui.screens.monitor import MonitorScreen
from pth_top.tui.screens.replay import ReplayScreen, moment_text
from pth_top.tui.screens.replay_events import EventListScreen, JumpScreen
from pth_top.widgets.row_table import RowTable
from tests.fakes.gpu_fixtures import by_argument
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.fleet.fixtures import make_exporter_gpus
from tests.recorder.helpers import make_recorder, step
from tests.waiting import wait_for, wait_until

SAMPLES = 60
HOT_AT, LOST_AT = 20, 40


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    """60 one-second samples of 8 scripted GPUs: GPU 3 at 91 °C from sample 20, GPU 6 lost from sample 40."""
    fake = make_exporter_gpus(8)
    path = tmp_path_factory.mktemp("replay") / "r.sqlite"
    recorder, nvml_clock = make_recorder(fake, path)
    times = []
    try:
        for position in range(SAMPLES):
            if position == HOT_AT:
                fake.devices[3].values["nvmlDeviceGetTemperature"] = by_argument({0: 91})
            if position == LOST_AT:
                fake.fail("nvmlDeviceGetUtilizationRates", real_pynvml.NVMLError_GpuIsLost, device_index=6)
            step(recorder, nvml_clock)
            times.append(recorder.clock())
    finally:
        recorder.close()
    return path, times


def gpu_row(screen, index: int) -> str:
    table = screen.query_one("#gpu-table", RowTable)
    key = next(key for key in table.row_keys if key.endswith(str(index)))
    return " ".join(cell.plain for cell in table.get_row(key))


def header(screen) -> str:
    return screen.query_one("#header").render().plain


async def at(pilot, screen, index: int, what: str) -> None:
    await wait_until(pilot, lambda: screen.shown_index == index, what=what)


async def test_replay_shows_the_recorded_frames_and_moves_between_them(recording):
    path, times = recording
    app = ReplayApp(FileFrames(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay")
        screen = app.screen
        await at(pilot, screen, SAMPLES - 1, "the last sample first")
        assert "REPLAY" in header(screen) and moment_text(times[-1]) in header(screen)
        assert f"{SAMPLES}/{SAMPLES}" in header(screen)
        await pilot.press("home")
        await at(pilot, screen, 0, "Home: the first sample")
        assert "91" not in gpu_row(screen, 3)
        await pilot.press("right")
        await at(pilot, screen, 1, "right: one sample on")
        await pilot.press("e")
        await at(pilot, screen, HOT_AT, "e: the temperature event")
        assert "91" in gpu_row(screen, 3) and moment_text(times[HOT_AT]) in header(screen)
        await pilot.press("left")
        await at(pilot, screen, HOT_AT - 1, "left: one sample back")
        assert "91" not in gpu_row(screen, 3), "the frame before the event"
        await pilot.press("pagedown")
        await at(pilot, screen, SAMPLES - 1, "PgDn: a minute on (clamped to the end)")
        await pilot.press("E")
        await wait_until(pilot, lambda: screen.shown_index in (LOST_AT, LOST_AT + 1), what="E: the lost GPU")
        assert "lost" in gpu_row(screen, 6).lower()
        await pilot.press("pageup")
        await at(pilot, screen, 0, "PgUp: a minute back (clamped to the start)")

        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, EventListScreen), what="the event list")
        events = app.screen
        table = events.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count >= 2, what="the events")
        lost = next(key for key in table.row_keys if "gpu_lost" in " ".join(c.plain for c in table.get_row(key)))
        table.move_cursor_to_key(lost)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back on the replay")
        await wait_until(pilot, lambda: screen.shown_index in (LOST_AT, LOST_AT + 1), what="Enter: the lost GPU")

        await pilot.press("slash")
        await wait_until(pilot, lambda: isinstance(app.screen, JumpScreen), what="the jump prompt")
        await pilot.press("minus", "3", "0", "s", "enter")
        await at(pilot, screen, SAMPLES - 1 - 30, "/-30s: 30 s before the last sample")

        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert screen.speed == 10
        await pilot.press("space")
        assert "▶10x" in header(screen)
        await wait_until(pilot, lambda: screen.shown_index > SAMPLES - 1 - 30, what="play moves the cursor on")
        await pilot.press("k")
        await pilot.press("w")
        assert isinstance(app.screen, ReplayScreen), "kill and the wizard are refused in a replay"


def test_replay_at_80x24(snap_compare, recording_for_snapshot):
    async def at_the_end(pilot):
        await wait_until(pilot, lambda: getattr(pilot.app.screen, "shown_index", -1) == 9, what="the last frame")
        await pilot.pause()

    assert snap_compare(ReplayApp(FileFrames(recording_for_snapshot)), terminal_size=(80, 24), run_before=at_the_end)


@pytest.fixture
def recording_for_snapshot(tmp_path, monkeypatch):
    """Ten fixed samples (no /proc, no clock) at a fixed time, shown in UTC."""
    import time

    from pth_top.recorder.store import Retention
    from tests.recorder.test_retention import START_S, recorder_at
    from tests.sensors.helpers import FakeClock

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    path = tmp_path / "r.sqlite"
    clock = FakeClock(START_S)
    recorder = recorder_at(path, clock, Retention())
    try:
        for _ in range(10):
            recorder.step()
            clock.advance(1.0)
    finally:
        recorder.close()
    yield path
    monkeypatch.undo()
    time.tzset()


def changing_source():
    base = make_snapshot(gpu_count=1, process_count=10)
    return FixedSource(*(replace(base, cpu=replace(base.cpu, total_percent=float(position)))
                         for position in range(30)))


async def scrub_after_live_samples(pilot, app) -> ReplayScreen:
    """`r` once the live dashboard has kept a few samples: the scrub screen over its memory."""
    await wait_until(pilot, lambda: len(app.monitor_screen.recent) >= 5, what="a few live samples")
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="scrub mode")
    return app.screen


async def test_r_scrubs_back_over_what_the_live_dashboard_kept():
    source = changing_source()
    app = PthTopApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(80, 24)) as pilot:
        scrub = await scrub_after_live_samples(pilot, app)
        await wait_until(pilot, lambda: scrub.shown_index >= 4, what="the newest kept frame")
        newest = scrub._snapshot
        assert "SCRUB" in header(scrub)
        await pilot.press("left", "left")
        await wait_until(pilot, lambda: scrub._snapshot is not None and scrub._snapshot.timestamp_s
                         < newest.timestamp_s, what="an older frame")
        assert scrub._snapshot.cpu.total_percent < newest.cpu.total_percent
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, MonitorScreen) and not isinstance(
            app.screen, ReplayScreen), what="back to live")


async def test_R_starts_a_recorder_and_the_header_says_so():
    source = FixedSource(make_snapshot(gpu_count=1, process_count=10))
    app = PthTopApp(interval_s=0.5, source_factory=lambda: source)
    path = recording_path()
    pid = None
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            monitor = app.monitor_screen
            await wait_until(pilot, lambda: monitor._snapshot is not None, what="the first sample")
            assert "REC" not in header(monitor)
            await pilot.press("R")
            await wait_until(pilot, lambda: monitor.recording.pid, timeout_s=90, what="the recorder started")
            pid = monitor.recording.pid
            assert path.exists() and writer_pid(path) == pid
            await wait_until(pilot, lambda: "● REC" in header(monitor), what="REC in the header")
            await pilot.press("R")
            await wait_until(pilot, lambda: any("already recording" in n.message for n in app._notifications),
                             what="a second R says it records already")
    finally:
        if pid:
            os.kill(pid, signal.SIGTERM)
            wait_for(lambda: writer_pid(path) is None, what="the recorder stopped", timeout_s=60)

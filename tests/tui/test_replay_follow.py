"""Replay follows a recording that is still written, and a scrub over memory follows the live dashboard: End,
→, play and e reach samples and events written after the replay opened; a scrub opened with `r` (no recorder)
steps on to frames the dashboard keeps afterwards, and stays on its frame while the oldest ones drop."""

from __future__ import annotations

import pytest

from pth_top.recorder.frames import FileFrames, MemoryFrames
from pth_top.tui.app import PthTopApp
from pth_top.tui.replay_app import ReplayApp
from pth_top.tui.screens.replay import ReplayScreen
from tests.fakes.gpu_fixtures import by_argument
from tests.fakes.snapshots import make_snapshot
from tests.fleet.fixtures import make_exporter_gpus
from tests.recorder.helpers import make_recorder, step
from tests.tui.test_replay import changing_source, scrub_after_live_samples
from tests.waiting import wait_until

OPENED_WITH = 5


def header(screen) -> str:
    return screen.query_one("#header").render().plain


def shown_time_s(screen) -> float | None:
    return None if screen._snapshot is None else screen._snapshot.timestamp_s


async def test_end_step_play_and_e_reach_what_a_recorder_writes_after_the_replay_opened(tmp_path):
    fake = make_exporter_gpus(2)
    recorder, nvml_clock = make_recorder(fake, tmp_path / "r.sqlite")
    try:
        for _ in range(OPENED_WITH):
            step(recorder, nvml_clock)
        app = ReplayApp(FileFrames(tmp_path / "r.sqlite"))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay")
            screen = app.screen
            await wait_until(pilot, lambda: screen.shown_index == OPENED_WITH - 1, what="the last sample at open")
            assert f"{OPENED_WITH}/{OPENED_WITH}" in header(screen)

            written_s = []
            for _ in range(3):  # the recorder goes on writing the file the replay has open
                step(recorder, nvml_clock)
                written_s.append(recorder.clock())
            await pilot.press("end")
            await wait_until(pilot, lambda: screen.shown_index == OPENED_WITH + 2, what="End: the newest sample")
            assert shown_time_s(screen) == pytest.approx(written_s[-1], abs=1e-3)
            assert f"{OPENED_WITH + 3}/{OPENED_WITH + 3}" in header(screen)

            step(recorder, nvml_clock)
            await pilot.press("right")
            await wait_until(pilot, lambda: screen.shown_index == OPENED_WITH + 3, what="→ past the end read at End")
            assert shown_time_s(screen) == pytest.approx(recorder.clock(), abs=1e-3)
            await pilot.press("right")
            await pilot.press("left")
            await wait_until(pilot, lambda: screen.shown_index == OPENED_WITH + 2, what="← one back: nothing new")

            fake.devices[1].values["nvmlDeviceGetTemperature"] = by_argument({0: 91})
            step(recorder, nvml_clock)
            hot_s = recorder.clock()
            await pilot.press("e")
            await wait_until(pilot, lambda: shown_time_s(screen) == pytest.approx(hot_s, abs=1e-3),
                             what="e: the temperature event written after the events were read")

            for _ in range(4):
                step(recorder, nvml_clock)
            newest_s = recorder.clock()
            await pilot.press("home")
            await wait_until(pilot, lambda: screen.shown_index == 0, what="Home")
            await pilot.press(*["right_square_bracket"] * 5, "space")  # play at 60x
            await wait_until(pilot, lambda: not screen.playing and shown_time_s(screen) == pytest.approx(
                newest_s, abs=1e-3), what="play on to the newest sample, then stop")
            assert screen.shown_index == len(screen.times) - 1 == OPENED_WITH + 8
    finally:
        recorder.close()


async def test_a_scrub_over_memory_steps_on_to_frames_kept_after_r():
    source = changing_source()
    app = PthTopApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(80, 24)) as pilot:
        monitor = app.monitor_screen
        scrub = await scrub_after_live_samples(pilot, app)
        await wait_until(pilot, lambda: scrub.shown_index >= 0, what="the newest kept frame")
        at_r_s, count_at_r = scrub.times[-1], len(scrub.times)
        await wait_until(pilot, lambda: monitor.recent[-1].timestamp_s >= at_r_s + 3, what="live samples after r")
        assert scrub.times[-1] == monitor.recent[-1].timestamp_s, "the scrub keeps what the dashboard keeps"
        assert len(scrub.times) > count_at_r and f"/{len(scrub.times)}" in header(scrub)
        await pilot.press("end")
        await wait_until(pilot, lambda: (shown_time_s(scrub) or 0) >= at_r_s + 3, what="End: a frame kept after r")
        newest_s = shown_time_s(scrub) or 0.0
        await pilot.press("left")
        await wait_until(pilot, lambda: (shown_time_s(scrub) or newest_s) < newest_s, what="← an older frame")
        await pilot.press("right")
        await wait_until(pilot, lambda: shown_time_s(scrub) == newest_s, what="→ back to it")


async def test_a_scrub_over_memory_stays_on_its_frame_while_the_oldest_drop():
    frames = [make_snapshot(process_count=3, timestamp_s=1000.0 + second) for second in range(8)]
    app = ReplayApp(MemoryFrames(frames[:5], capacity=5))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay")
        screen = app.screen
        await wait_until(pilot, lambda: shown_time_s(screen) == 1004.0, what="the newest frame")
        await pilot.press("home", "right", "right")
        await wait_until(pilot, lambda: shown_time_s(screen) == 1002.0, what="the third frame")
        screen.live = True  # as `r` opens it; frames come as the Monitor keeps them
        screen.add_live_frame(frames[5])
        screen.add_live_frame(frames[6])
        await wait_until(pilot, lambda: screen.shown_index == 0, what="the cursor's frame now the oldest")
        assert shown_time_s(screen) == 1002.0 and screen.times == (1002.0, 1003.0, 1004.0, 1005.0, 1006.0)
        assert "1/5" in header(screen)
        screen.add_live_frame(frames[7])
        await wait_until(pilot, lambda: shown_time_s(screen) == 1003.0, what="its frame dropped: the oldest left")
        assert screen.index == screen.shown_index == 0
        await pilot.press("end")
        await wait_until(pilot, lambda: shown_time_s(screen) == 1007.0, what="End: the newest")
        assert "5/5" in header(screen)

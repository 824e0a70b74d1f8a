"""Retention over a simulated week and more (an injected clock): 1 s rows for a day, one per 10 s for a week,
one a minute beyond, nothing past the age limit; the size cap drops the oldest samples first."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from pth_top.recorder.database import used_bytes
from pth_top.recorder.recorder import Recorder, RecorderOptions
from pth_top.recorder.replay import snapshots
from pth_top.recorder.store import DAY_S, Retention
from tests.fakes.snapshots import make_snapshot
from tests.sensors.helpers import FakeClock

HOUR_S = 3600.0
START_S = 1_700_000_000.0  # a whole minute


class StubSampler:
    """The same machine every time, its CPU % moving so each sample differs."""

    def __init__(self, gpu_count: int = 8, process_count: int = 30) -> None:
        self.base = make_snapshot(gpu_count=gpu_count, process_count=process_count)
        self.calls = 0

    def sample(self):
        self.calls += 1
        return replace(self.base, cpu=replace(self.base.cpu, total_percent=float(self.calls % 100)))

    def close(self) -> None:
        pass


def recorder_at(path, clock, retention: Retention, **options) -> Recorder:
    return Recorder(RecorderOptions(path=path, retention=retention, min_free_bytes=0, read_kernel_log=False,
                                    **options), sampler=StubSampler(), clock=clock)


def gaps(times: list[float]) -> list[float]:
    return [later - earlier for earlier, later in zip(times, times[1:], strict=False)]


def test_a_simulated_week_and_more_is_thinned_by_age_and_expired(tmp_path):
    path = tmp_path / "r.sqlite"
    clock = FakeClock(START_S)
    recorder = recorder_at(path, clock, Retention(max_age_s=8 * DAY_S, max_bytes=1 << 40))
    try:
        for hour in range(9 * 24):  # nine days: each hour, a 15 s burst at 1 s
            clock.now = START_S + hour * HOUR_S
            for _ in range(15):
                recorder.step()
                clock.advance(1.0)
            recorder.note("hourly marker", hour=hour)
        now = clock.now
        recorder.store.apply_retention(now)
        connection = recorder.connection
        rows = connection.execute("SELECT time_s, resolution_s FROM samples ORDER BY time_s").fetchall()
        events = [row[0] for row in connection.execute("SELECT time_s FROM events")]
        gpu_times = {row[0] for row in connection.execute("SELECT DISTINCT time_s FROM gpu_samples")}
        decoded = list(snapshots(connection, 0, now))
    finally:
        recorder.close()
    assert min(time_s for time_s, _ in rows) >= now - 8 * DAY_S, "samples past the age limit are gone"
    assert min(events) >= now - 8 * DAY_S, "events past the age limit are gone"
    newest = [time_s for time_s, resolution in rows if time_s >= now - DAY_S + 60]
    week = [time_s for time_s, resolution in rows if now - 7 * DAY_S + 60 <= time_s < now - DAY_S - 60]
    oldest = [time_s for time_s, resolution in rows if time_s < now - 7 * DAY_S - 60]
    assert newest and week and oldest
    assert min(gaps(newest)) == 1.0, "the last day keeps every 1 s sample"
    assert {int(time_s // 10) for time_s in week} and len(week) == len({int(time_s // 10) for time_s in week})
    assert len(oldest) == len({int(time_s // 60) for time_s in oldest}), "beyond a week: one per minute"
    assert {resolution for time_s, resolution in rows if time_s in oldest} == {60.0}
    assert {resolution for time_s, resolution in rows if time_s in week} == {10.0}
    assert gpu_times == {time_s for time_s, _ in rows}, "GPU rows go with their samples"
    assert len(decoded) == len(rows) and all(len(body["gpus"]) == 8 for body in decoded)


def test_the_size_cap_drops_the_oldest_samples_and_keeps_the_newest(tmp_path):
    path = tmp_path / "r.sqlite"
    clock = FakeClock(START_S)
    cap = 512 * 1024
    recorder = recorder_at(path, clock, Retention(max_bytes=cap))
    try:
        for _ in range(3000):
            recorder.step()
            clock.advance(1.0)
        last = clock.now - 1.0
        assert used_bytes(recorder.connection) > cap, "the test writes past the cap"
        recorder.store.apply_retention(clock.now)
        held = used_bytes(recorder.connection)
        first, newest = recorder.connection.execute("SELECT min(time_s), max(time_s) FROM samples").fetchone()
    finally:
        recorder.close()
    assert held <= cap
    assert newest == last and first > START_S + 60, "the oldest went, the newest stayed"
    assert held >= cap // 2, "no more went than the cap asks"
    assert path.stat().st_size <= 2 * cap, "freed pages are given back to the filesystem"
    connection = sqlite3.connect(path)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        connection.close()

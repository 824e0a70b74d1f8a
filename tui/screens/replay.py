"""Replay: the Monitor's panels drawn from recorded samples, with a time cursor, events and play.

`pth-top replay` shows a recording; in the live dashboard `r` shows what it recorded (or kept in memory).
The samples are read on a worker thread (FrameSource), which posts each frame to this screen; a recording still
written is read again at its end (End, →, play, e), a scrub over memory gets new frames from the Monitor.
"""

from __future__ import annotations

import bisect
import datetime as dt
import time
from typing import Any

from textual import work
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.worker import get_current_worker

from pth_top.recorder.frames import FrameSource, MemoryFrames
from pth_top.recorder.replay import TimeRefused, parse_time
from pth_top.sensors.history import History
from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.text import printable
from pth_top.tui.panels.header import HeaderBar
from pth_top.tui.panels.history import HistoryPanel
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.monitor import MonitorScreen
from pth_top.tui.screens.replay_events import EventListScreen, JumpScreen

SPEEDS = (1, 2, 5, 10, 30, 60)
PAGE_S, LONG_PAGE_S = 60.0, 600.0
PLAY_TICK_S = 0.25
NOT_IN_REPLAY = "{what} does not apply to a recording"
# Cursor keys taken before the process table's own (which has PgUp/PgDn/Home/End); the filter keeps them.
CURSOR_ACTIONS = frozenset({"step", "jump_by", "edge", "toggle_play", "jump_to"})

REPLAY_BINDINGS = [
    Binding("left", "step(-1)", "Step back", id="replay.step_back", key_display="←", priority=True),
    Binding("right", "step(1)", "Step on", id="replay.step_on", key_display="→", show=False, priority=True),
    Binding("pageup", "jump_by(-60)", "Back 1 minute", id="replay.page_back", show=False, priority=True),
    Binding("pagedown", "jump_by(60)", "On 1 minute", id="replay.page_on", show=False, priority=True),
    Binding("shift+pageup,ctrl+pageup", "jump_by(-600)", "Back 10 minutes", id="replay.long_back",
            show=False, priority=True),
    Binding("shift+pagedown,ctrl+pagedown", "jump_by(600)", "On 10 minutes", id="replay.long_on",
            show=False, priority=True),
    Binding("home", "edge(0)", "First sample", id="replay.first", show=False, priority=True),
    Binding("end", "edge(1)", "Last sample", id="replay.last", show=False, priority=True),
    Binding("space", "toggle_play", "Play", id="replay.play", priority=True),
    Binding("right_square_bracket,plus,equals_sign", "speed(1)", "Faster (1x-60x)", id="replay.faster",
            key_display="]", show=False),
    Binding("left_square_bracket,minus", "speed(-1)", "Slower", id="replay.slower", key_display="[", show=False),
    Binding("e", "event(1)", "Next event", id="replay.next_event"),
    Binding("E", "event(-1)", "Previous event", id="replay.previous_event", show=False),
    Binding("l", "event_list", "Events", id="replay.events"),
    Binding("slash", "jump_to", "Jump to a time", id="replay.jump", key_display="/", priority=True),
    Binding("escape", "leave", "Back to live (scrub) / clear filter", id="replay.leave", show=False),
    Binding("k,f9", "refuse('kill')", "Kill (not in replay)", id="replay.kill", show=False),
    Binding("b,d,w,R,r", "refuse('this key')", "Bench, Doctor, Wizard, record (not in replay)",
            id="replay.refused", show=False),
]
_REPLAY_KEYS = {key.strip() for binding in REPLAY_BINDINGS for key in binding.key.split(",")}


class ReplayLoaded(Message):
    bubble = False

    def __init__(self, times: tuple[float, ...], events: list[dict[str, Any]], index: int) -> None:
        super().__init__()
        self.times, self.events, self.index = times, events, index


class ReplayReread(Message):
    """The source's sample times and events read again, and the move that asked for it."""

    bubble = False

    def __init__(self, times: tuple[float, ...], events: list[dict[str, Any]], then: str) -> None:
        super().__init__()
        self.times, self.events, self.then = times, events, then


class ReplayFrame(Message):
    bubble = False

    def __init__(self, index: int, snapshot: Snapshot, history: History, generation: int) -> None:
        super().__init__()
        self.index, self.snapshot, self.history, self.generation = index, snapshot, history, generation


class ReplayFailed(Message):
    bubble = False

    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


def moment_text(time_s: float) -> str:
    return dt.datetime.fromtimestamp(time_s).strftime("%m-%d %H:%M:%S")


class ReplayScreen(MonitorScreen, inherit_bindings=False):
    """The Monitor over `source`; `live` when it scrubs the running dashboard's past (Esc goes back)."""

    ESTIMATES_EFFICIENCY = False

    # Declared whole (the replay keys first, so the key bar shows them), for the key bar and the help alike.
    BINDINGS = [*REPLAY_BINDINGS, *(
        binding for binding in (*MonitorScreen.BINDINGS, *Screen.BINDINGS)
        if isinstance(binding, Binding) and not {key.strip() for key in binding.key.split(",")} & _REPLAY_KEYS)]

    def __init__(self, source: FrameSource, at_s: float | None = None, live: bool = False) -> None:
        super().__init__()
        self.source = source
        self.live = live
        self._at_s = at_s
        self.times: tuple[float, ...] = ()
        self.events: list[dict[str, Any]] = []
        self.index = -1  # the sample asked for
        self.shown_index = -1  # the sample on screen
        self.speed = SPEEDS[0]
        self.playing = False
        self._play_from: tuple[float, float] = (0.0, 0.0)  # (recorded time, monotonic time) play started from
        # Bumped when the source's samples move (older ones thinned or dropped): frames read before are stale.
        self._generation = 0
        self._rereading = False

    def on_mount(self) -> None:
        super().on_mount()
        self._player = self.set_interval(PLAY_TICK_S, self._play_tick, pause=True)
        self._load(self._at_s)

    def on_unmount(self) -> None:
        self.source.close()

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay")
    def _load(self, at_s: float | None) -> None:
        try:
            times = self.source.times()
            events = self.source.events()
        except Exception as error:  # a file gone bad since the CLI checked it: said on screen
            self.post_message(ReplayFailed(f"cannot read {printable(self.source.label, 200)}: {error}"))
            return
        index = len(times) - 1 if at_s is None else max(0, bisect.bisect_right(times, at_s) - 1)
        self.post_message(ReplayLoaded(times, events, index))
        self._read_frames(index, 0)

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay")
    def _read(self, index: int, generation: int) -> None:
        self._read_frames(index, generation)

    def _reread(self, then: str) -> None:
        self._rereading = True
        self._read_times(then)

    @work(thread=True, exclusive=True, exit_on_error=False, group="replay-reread")
    def _read_times(self, then: str) -> None:
        """Read the times and events again (a recorder may still be writing), then make the move `then`."""
        try:
            times = self.source.times()
            events = self.source.events()
        except Exception as error:
            self.post_message(ReplayFailed(f"cannot read {printable(self.source.label, 200)}: {error}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(ReplayReread(times, events, then))

    def _read_frames(self, index: int, generation: int) -> None:
        """Post the frame at `index` with the history up to it (what the charts show)."""
        worker = get_current_worker()
        history = History()
        frame = None
        try:
            for position in range(max(0, index - history.capacity + 1), index + 1):
                if worker.is_cancelled:
                    return
                frame = self.source.frame(position)
                if frame is not None:
                    history.append(frame)
        except Exception as error:
            self.post_message(ReplayFailed(f"cannot read sample {index + 1}: {error}"))
            return
        if frame is not None and not worker.is_cancelled:
            self.post_message(ReplayFrame(index, frame, history, generation))

    def on_replay_loaded(self, message: ReplayLoaded) -> None:
        self.times, self.events, self.index = message.times, message.events, message.index
        if not self.times:
            self.notify("no samples to replay yet", severity="warning", markup=False)

    def on_replay_frame(self, message: ReplayFrame) -> None:
        if message.generation != self._generation:
            return
        self.history = message.history
        self.shown_index = message.index
        self.show_snapshot(message.snapshot)

    def on_replay_failed(self, message: ReplayFailed) -> None:
        self._rereading = False
        self.show_sampler_error(message.reason)

    def add_live_frame(self, frame: Snapshot) -> None:
        """A frame the live dashboard just kept: a scrub over its memory can step on to it."""
        if not isinstance(self.source, MemoryFrames):
            return
        self.source.append(frame)
        if self.index >= 0:  # loaded; before that, the load reads the times itself
            try:
                self._take_times(self.source.times())
            except NoMatches:  # one that lands while the app tears the screen down
                return

    def _take_times(self, times: tuple[float, ...]) -> None:
        """The source's sample times now (newer ones added, older ones thinned or dropped): the cursor stays on
        its sample (or the oldest left), and a frame read for the old order is read again."""
        old = self.times

        def time_at(index: int) -> float | None:
            return old[index] if 0 <= index < len(old) else None

        cursor_s, shown_s = time_at(self.index), time_at(self.shown_index)
        self.times = times
        index = self._index_at(cursor_s) if cursor_s is not None and times else -1
        shown = self._index_at(shown_s) if shown_s is not None and times else -1
        if (index, shown) != (self.index, self.shown_index) or (index >= 0 and times[index] != cursor_s):
            self._generation += 1
            self.index, self.shown_index = index, shown
            if index >= 0:
                self._read(index, self._generation)
        self._show_header()

    def on_replay_reread(self, message: ReplayReread) -> None:
        self._rereading = False
        self.events = message.events
        self._take_times(message.times)
        if message.then == "end":
            self.move_to(len(self.times) - 1)
        elif message.then == "step":
            self.move_to(self.index + 1)
        elif message.then == "event":
            self._next_event(1, reread=False)
        elif message.then == "play" and self.playing and self.index >= len(self.times) - 1:
            self.action_toggle_play()
            self.notify("end of the recording", timeout=3)

    def _show_header(self) -> None:
        if self._snapshot is None or not self.times:
            return
        word = "SCRUB" if self.live else "REPLAY"
        lead = f"{word} {moment_text(self._snapshot.timestamp_s)} {self.shown_index + 1}/{len(self.times)}"
        if self.playing:
            lead += f" ▶{self.speed}x"
        self.query_one(HeaderBar).show(self._snapshot.host, 0.0, False, self.process_view, lead=lead)

    def _show_history_panel(self) -> None:
        panel = self.query_one(HistoryPanel)
        panel.display = self._show_history
        if self._show_history and self._snapshot is not None:
            panel.show(self.history, self._step_s(), bool(self._snapshot.gpus), self.settings.gpu_history)

    def _step_s(self) -> float:
        times, index = self.times, max(1, self.shown_index)
        return times[index] - times[index - 1] if len(times) > index else 1.0

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in CURSOR_ACTIONS and self.query_one(ProcessPanel).filter_has_focus:
            return False  # typed into the process filter
        return True

    def move_to(self, index: int) -> None:
        """Put the cursor on sample `index` (clamped) and read it."""
        if not self.times:
            return
        index = min(max(0, index), len(self.times) - 1)
        if index != self.index:
            self.index = index
            self._read(index, self._generation)

    def move_to_time(self, time_s: float) -> None:
        """The cursor on the last sample at or before `time_s` (the first sample when it is earlier)."""
        self.move_to(bisect.bisect_right(self.times, time_s) - 1)

    def _cursor_time(self) -> float:
        return self.times[self.index] if self.times else 0.0

    def action_step(self, step: int) -> None:
        if step > 0 and self.index >= len(self.times) - 1:
            self._reread("step")  # at the end: a recorder may have written more since
        else:
            self.move_to(self.index + step)

    def action_jump_by(self, seconds: float) -> None:
        if self.times:
            self.move_to_time(self._cursor_time() + seconds)

    def action_edge(self, end: int) -> None:
        if end:
            self._reread("end")
        else:
            self.move_to(0)

    def action_toggle_play(self) -> None:
        if not self.playing and self.index >= len(self.times) - 1:
            self.move_to(0)  # at the end: play from the start
        self.playing = not self.playing
        self._play_from = (self._cursor_time(), time.monotonic())
        if self.playing:
            self._player.resume()
        else:
            self._player.pause()
        self._show_header()

    def action_speed(self, step: int) -> None:
        position = SPEEDS.index(self.speed) + step
        self.speed = SPEEDS[min(max(0, position), len(SPEEDS) - 1)]
        self._play_from = (self._cursor_time(), time.monotonic())
        self._show_header()
        self.notify(f"play speed {self.speed}x", timeout=2)

    def _play_tick(self) -> None:
        if not self.playing or not self.times:
            return
        recorded_s, wall_s = self._play_from
        target = bisect.bisect_right(self.times, recorded_s + self.speed * (time.monotonic() - wall_s)) - 1
        if target >= len(self.times) - 1:
            self.move_to(len(self.times) - 1)
            if not self._rereading:  # play on over what was written since, else stop there
                self._reread("play")
        elif target > self.index:
            self.move_to(target)

    def action_event(self, step: int) -> None:
        self._next_event(step, reread=True)

    def _next_event(self, step: int, reread: bool) -> None:
        now = self._cursor_time()
        if step > 0:
            found = next((event for event in self.events if event["time_s"] > now), None)
        else:
            found = next((event for event in reversed(self.events)
                          if event["time_s"] < now and self._index_at(event["time_s"]) < self.index), None)
        if found is None and step > 0 and reread:
            self._reread("event")  # one written since the events were read
            return
        if found is None:
            self.notify(f"no {'later' if step > 0 else 'earlier'} event", timeout=3)
            return
        self.jump_to_event(found)

    def _index_at(self, time_s: float) -> int:
        return max(0, bisect.bisect_right(self.times, time_s) - 1)

    def jump_to_event(self, event: dict[str, Any]) -> None:
        self.move_to(self._index_at(event["time_s"]))
        where = f" GPU {event['gpu_index']}" if event["gpu_index"] is not None else ""
        self.notify(printable(f"{moment_text(event['time_s'])} {event['kind']}{where}: {event['message']}", 300),
                    severity="error" if event["severity"] == "critical" else "warning", timeout=6, markup=False)

    def action_event_list(self) -> None:
        def jump(event: dict[str, Any] | None) -> None:
            if event is not None:
                self.jump_to_event(event)

        self.app.push_screen(EventListScreen(self.events), jump)

    def action_jump_to(self) -> None:
        def jump(text: str | None) -> None:
            if not text or not self.times:
                return
            try:
                time_s = parse_time(text, self.times[-1])
            except TimeRefused as error:
                self.notify(str(error), severity="error", markup=False)
                return
            if not self.times[0] <= time_s <= self.times[-1]:
                self.notify("outside the recording: the nearest sample is shown", severity="warning", timeout=4)
            self.move_to_time(max(time_s, self.times[0]))

        self.app.push_screen(JumpScreen(), jump)

    def action_leave(self) -> None:
        panel = self.query_one(ProcessPanel)
        if panel.has_class("-filtering") or panel.view.filter_text:
            self.action_clear_filter()
        elif self.live:
            self.app.pop_screen()
        else:
            self.notify("a recording: q quits", timeout=2)

    def action_refuse(self, what: str) -> None:
        self.notify(NOT_IN_REPLAY.format(what=what.capitalize()), severity="warning", markup=False)

    def action_kill(self) -> None:
        self.action_refuse("kill")

    def _send_signal(self, process: ProcessSample, signal_number: int) -> None:
        self.action_refuse("kill")

"""The Monitor screen: header, CPU/memory, GPUs, disks/network, history, processes."""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static

from pth_top.sensors.history import History
from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.tui import recording
from pth_top.tui.messages import AlertRaised, SamplerFailed, SnapshotReady
from pth_top.tui.panels.cpu_memory import CpuMemoryPanel
from pth_top.tui.panels.gpus import GpuPanel
from pth_top.tui.panels.header import HeaderBar
from pth_top.tui.panels.history import HistoryPanel
from pth_top.tui.panels.io import DisksPanel, NetworkPanel
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.process_view import COLUMN_BY_KEY, ProcessView
from pth_top.tui.screens.jobs import JobsScreen
from pth_top.tui.screens.process_signal import send_signal, signal_refusal
from pth_top.tui.settings import NOT_SAVED_WHILE_REFUSED, DashboardSettings, load_settings, save_settings
from pth_top.widgets.core_grid import CoreGrid
from pth_top.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from pth_top.tui.app import PthTopApp

CHARTS_HEIGHT = 12
MIN_PROCESS_ROWS = 8
IO_PANEL_MIN_HEIGHT = 30
# An alert's banner stays this long (a notice of the dashboard's own goes after a few seconds).
ALERT_BANNER_S = 30
INTERVAL_LADDER_S = (0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


def next_interval_s(interval_s: float, step: int) -> float:
    """The next refresh interval up (step 1) or down (step -1) the ladder."""
    if step > 0:
        return next((value for value in INTERVAL_LADDER_S if value > interval_s), INTERVAL_LADDER_S[-1])
    return next((value for value in reversed(INTERVAL_LADDER_S) if value < interval_s), INTERVAL_LADDER_S[0])


class MonitorScreen(Screen):
    """Live view of the machine; the app feeds it snapshots through `show_snapshot`."""

    AUTO_FOCUS = "#process-table"
    # Live GPUs against this machine's last bench run (a replay shows the past, not today's run).
    ESTIMATES_EFFICIENCY = True

    BINDINGS = [
        Binding("space", "toggle_pause", "Pause", id="monitor.pause"),
        Binding("plus,equals_sign", "change_interval(1)", "Slower", id="monitor.slower", key_display="+"),
        Binding("minus", "change_interval(-1)", "Faster", id="monitor.faster", key_display="-"),
        # A priority binding runs before the next key is routed, so keys typed right after "/" reach the filter.
        Binding("slash", "filter('/')", "Filter", id="monitor.filter", key_display="/", priority=True),
        Binding("f4", "filter", "Filter (as /)", id="monitor.filter_f4", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="monitor.clear_filter", show=False),
        Binding("t,f5", "toggle_tree", "Tree", id="monitor.tree"),
        Binding("k,f9", "kill", "Kill", id="monitor.kill"),
        Binding("P", "sort('cpu')", "Sort CPU%", id="monitor.sort_cpu", show=False),
        Binding("M", "sort('mem')", "Sort MEM%", id="monitor.sort_mem", show=False),
        Binding("T", "sort('time')", "Sort TIME+", id="monitor.sort_time", show=False),
        Binding("N", "sort('pid')", "Sort PID", id="monitor.sort_pid", show=False),
        Binding("G", "sort('gpu_mem')", "Sort GPU memory", id="monitor.sort_gpu_mem", show=False),
        Binding("I", "invert_sort", "Invert sort", id="monitor.invert_sort", show=False),
        Binding("greater_than_sign,full_stop", "cycle_sort(1)", "Next sort column",
                id="monitor.sort_next", show=False, key_display=">"),
        Binding("less_than_sign,comma", "cycle_sort(-1)", "Previous sort column",
                id="monitor.sort_previous", show=False, key_display="<"),
        Binding("K", "toggle_kernel_threads", "Show/hide kernel threads", id="monitor.kernel_threads", show=False),
        Binding("g", "toggle_gpu_only", "GPU only", id="monitor.gpu_only"),
        Binding("F", "toggle_follow", "Follow the selected process", id="monitor.follow", show=False),
        Binding("tab", "app.focus_next", "Move between the GPU and process tables",
                id="monitor.next_table", show=False),
        Binding("j", "jobs", "Jobs", id="monitor.jobs"),
        Binding("h", "toggle_history", "History", id="monitor.history"),
        Binding("i", "toggle_io", "Disk/Net", id="monitor.io"),
        Binding("r", "rewind", "Rewind", id="monitor.rewind"),
        Binding("R", "record", "Record this host (pth-top record)", id="monitor.record", show=False),
        Binding("c", "cycle_gpu_history", "GPU charts: util+mem, power+temp, ...",
                id="monitor.gpu_history", show=False),
    ]

    DEFAULT_CSS = """
    MonitorScreen { overflow: hidden hidden; }
    MonitorScreen #io-row { height: auto; max-height: 8; }
    MonitorScreen.-short #io-row { max-height: 5; }
    MonitorScreen #sampler-error { height: auto; color: $error; padding: 0 1; display: none; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._snapshot: Snapshot | None = None
        self.history = History()
        # Panels shown and GPU charts, as the user left them (one line on screen if the file is broken).
        self.settings, self._settings_problem = load_settings()
        # A file refused at start is the user's to fix: never overwritten by a key press.
        self._settings_file_refused = self._settings_problem is not None
        self._show_history = self.settings.history_shown
        self._show_io: bool | None = self.settings.io_shown
        self._sampler_error_shown = False
        # The last samples (recorded processes only) for `r` to scrub back over when nothing records this host.
        self.recent: deque[Snapshot] = deque(maxlen=self.history.capacity)
        self.recording = recording.RecordingState(None, None)

    def compose(self) -> ComposeResult:
        yield HeaderBar(id="header")
        yield CpuMemoryPanel(id="cpu-memory")
        yield GpuPanel(id="gpus")
        with Horizontal(id="io-row"):
            yield DisksPanel(id="disks")
            yield NetworkPanel(id="network")
        yield HistoryPanel(id="history")
        yield Static(id="sampler-error")
        yield ProcessPanel(id="processes")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(ProcessPanel).set_view(ProcessView())
        self.query_one(GpuPanel).flag_tracker.thresholds = self.settings.flags
        if self.ESTIMATES_EFFICIENCY:
            self.query_one(GpuPanel).load_matmul_ceiling()
        # Size-dependent settings before the first layout: changed during it, a stale height can stick.
        self._fit_to_height(self.app.size.height)
        if self._settings_problem:
            self.notify(self._settings_problem, severity="warning", timeout=10, markup=False)
        self.set_interval(recording.PROBE_EVERY_S, self._probe_recording)
        self._probe_recording()

    def on_screen_resume(self) -> None:
        if self._snapshot is not None:
            self.show_snapshot(self._snapshot)

    def on_resize(self) -> None:
        self._fit_to_height(self.size.height)

    def _fit_to_height(self, height: int) -> None:
        tall = height >= 40
        self.set_class(not tall, "-short")
        self.query_one(CoreGrid).max_meter_rows = 8 if tall else 3
        self._apply_io_visibility(height)
        self.call_after_refresh(self._fit_history)

    def _fit_history(self) -> None:
        """Charts only where they leave the process table its rows; sparklines otherwise."""
        fixed_ids = ("#header", "#cpu-memory", "#gpus", "#io-row")
        used = sum(self.query_one(widget_id).outer_size.height for widget_id in fixed_ids)
        spare = self.size.height - used - 2 - MIN_PROCESS_ROWS
        self.query_one(HistoryPanel).set_class(spare >= CHARTS_HEIGHT, "-charts")
        if self._snapshot is not None:
            self._show_history_panel()

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self.take_snapshot(message.snapshot)

    def on_sampler_failed(self, message: SamplerFailed) -> None:
        self.show_sampler_error(message.reason)

    def on_alert_raised(self, message: AlertRaised) -> None:
        """An alert: one banner, and the terminal bell."""
        self.notify(message.text, title="Alert", severity=message.severity,
                    timeout=ALERT_BANNER_S, markup=False)
        if message.bell:
            self.app.bell()

    def take_snapshot(self, snapshot: Snapshot) -> None:
        """Add a new sample to the history and draw it."""
        from pth_top.tui.screens.replay import ReplayScreen

        self.history.append(snapshot)
        kept = recording.kept_frame(snapshot)
        self.recent.append(kept)
        for screen in self.app.screen_stack:  # an open scrub over memory (`r`) can step on to it
            if isinstance(screen, ReplayScreen) and screen.live:
                screen.add_live_frame(kept)
        self.show_snapshot(snapshot)

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Draw a sample; one that comes while another screen shows is drawn on resume."""
        self._snapshot = snapshot
        # Textual counts the screen under the top one as current (a "background screen"): the Jobs view is asked.
        jobs = self.app.screen_stack[-1] if self.app.screen_stack else None
        if isinstance(jobs, JobsScreen):
            jobs.show(snapshot, self.query_one(GpuPanel).track_flags(
                snapshot.gpus, snapshot.processes, snapshot.timestamp_s))
            return
        if not self.is_current:
            return
        try:
            self._draw(snapshot)
        except NoMatches:
            # A sample that lands while the app tears the screen down has nowhere to go.
            return

    def _draw(self, snapshot: Snapshot) -> None:
        if self._sampler_error_shown:
            self.query_one("#sampler-error").display = False
            self._sampler_error_shown = False
        self._show_header()
        self.query_one(CpuMemoryPanel).show(snapshot.cpu, snapshot.memory, snapshot.host.cpu_model_name)
        gpu_panel = self.query_one(GpuPanel)
        gpu_rows_before = gpu_panel.row_count
        gpu_panel.show(snapshot.gpus, snapshot.processes, snapshot.timestamp_s)
        if gpu_panel.row_count != gpu_rows_before:
            self.call_after_refresh(self._fit_history)
        self.query_one(DisksPanel).show(snapshot.disks, snapshot.filesystems)
        self.query_one(NetworkPanel).show(snapshot.networks)
        self._show_history_panel()
        self.query_one(ProcessPanel).show(snapshot.processes, show_gpu_columns=bool(snapshot.gpus))

    def show_sampler_error(self, reason: str) -> None:
        error = self.query_one("#sampler-error", Static)
        error.update(f"sampling failed: {reason} (retrying)")
        error.display = True
        self._sampler_error_shown = True

    def _show_header(self) -> None:
        if self._snapshot is not None:
            app = self.dashboard
            self.query_one(HeaderBar).show(self._snapshot.host, app.interval_s, app.paused, self.process_view,
                                           recording=self.recording.pid is not None)

    def _show_history_panel(self) -> None:
        panel = self.query_one(HistoryPanel)
        panel.display = self._show_history
        if self._show_history and self._snapshot is not None:
            panel.show(self.history, self.dashboard.interval_s, bool(self._snapshot.gpus), self.settings.gpu_history)

    def _set_view(self, view: ProcessView) -> None:
        self.query_one(ProcessPanel).set_view(view)
        self._show_header()

    @property
    def dashboard(self) -> PthTopApp:
        """The app, typed: this screen runs inside PthTopApp."""
        return cast("PthTopApp", self.app)

    @property
    def process_view(self) -> ProcessView:
        return self.query_one(ProcessPanel).view

    def on_process_panel_view_changed(self, event: ProcessPanel.ViewChanged) -> None:
        self._set_view(event.view)

    def action_toggle_pause(self) -> None:
        self.dashboard.set_paused(not self.dashboard.paused)
        self._show_header()
        self.notify("paused: press space to resume" if self.dashboard.paused else "resumed", timeout=2)

    def action_change_interval(self, step: int) -> None:
        self.dashboard.set_interval_s(next_interval_s(self.dashboard.interval_s, step))
        self._show_header()

    async def action_filter(self, typed: str = "") -> None:
        panel = self.query_one(ProcessPanel)
        if panel.filter_has_focus:  # "/" typed into the filter itself (a path, say)
            panel.type_into_filter(typed)
            return
        await panel.start_filter()

    def action_clear_filter(self) -> None:
        panel = self.query_one(ProcessPanel)
        if panel.clear_filter():
            self._set_view(replace(panel.view, filter_text=""))

    def action_toggle_tree(self) -> None:
        self._set_view(replace(self.process_view, tree=not self.process_view.tree))

    def action_toggle_kernel_threads(self) -> None:
        self._set_view(replace(self.process_view, show_kernel_threads=not self.process_view.show_kernel_threads))

    def action_toggle_gpu_only(self) -> None:
        self._set_view(replace(self.process_view, gpu_only=not self.process_view.gpu_only))

    def action_toggle_follow(self) -> None:
        follow = not self.process_view.follow
        self._set_view(replace(self.process_view, follow=follow))
        self.notify("following the selected process (F stops)" if follow else "cursor keeps its row", timeout=2)

    def action_sort(self, column_key: str) -> None:
        panel = self.query_one(ProcessPanel)
        if all(column.key != column_key for column in panel.columns):
            # Sorting only moves over what is shown: no GPU column without a GPU.
            label = COLUMN_BY_KEY[column_key].label
            self.notify(f"no {label} column: no NVIDIA GPU here", severity="warning", timeout=3)
            return
        self._set_view(self.process_view.sorted_by(column_key))

    def action_invert_sort(self) -> None:
        self._set_view(replace(self.process_view, descending=not self.process_view.descending))

    def action_cycle_sort(self, step: int) -> None:
        self._set_view(self.process_view.cycled(step, self.query_one(ProcessPanel).columns))

    def _apply_io_visibility(self, height: int) -> None:
        shown = self._show_io if self._show_io is not None else height >= IO_PANEL_MIN_HEIGHT
        self.query_one("#io-row").display = shown

    def action_toggle_io(self) -> None:
        self._show_io = not self.query_one("#io-row").display
        self._remember(replace(self.settings, io_shown=self._show_io))
        self._apply_io_visibility(self.size.height)
        self.call_after_refresh(self._fit_history)

    def action_toggle_history(self) -> None:
        self._show_history = not self._show_history
        self._remember(replace(self.settings, history_shown=self._show_history))
        self._show_history_panel()

    def action_cycle_gpu_history(self) -> None:
        self._remember(self.settings.next_gpu_history())
        self._show_history_panel()
        self.notify("GPU history: " + " and ".join(self.settings.gpu_history), timeout=2)

    def _remember(self, settings: DashboardSettings) -> None:
        """Use `settings` now and save them for the next start; why they were not saved is said once."""
        self.settings = settings
        problem = self._save_settings(settings)
        if problem is not None and problem != self._settings_problem:
            self.notify(problem, severity="warning", timeout=10, markup=False)
        self._settings_problem = problem

    def _save_settings(self, settings: DashboardSettings) -> str | None:
        """None when saved, else one line saying why not."""
        if self._settings_file_refused:
            return NOT_SAVED_WHILE_REFUSED
        return save_settings(settings)

    def _probe_recording(self) -> None:
        self.run_worker(partial(recording.probe, self.post_message), thread=True, group="recording-probe",
                        exclusive=True, exit_on_error=False)

    def on_recording_state(self, message: recording.RecordingState) -> None:
        self.recording = message
        if message.note:
            self.notify(message.note, severity="error" if message.problem else "information", timeout=8,
                        markup=False)
        self._show_header()

    def action_record(self) -> None:
        self.run_worker(partial(recording.start_recorder, self.post_message), thread=True, group="recording",
                        exclusive=True, exit_on_error=False)

    def action_rewind(self) -> None:
        from pth_top.tui.screens.replay import ReplayScreen

        path = self.recording.path if self.recording.pid is not None else None
        self.app.push_screen(ReplayScreen(recording.scrub_source(path, self.recent), live=True))

    def action_jobs(self) -> None:
        self.app.push_screen(JobsScreen(self._snapshot, self.settings.energy_price_per_kwh, self.settings.currency,
                                        self.query_one(GpuPanel).flags))

    def action_kill(self) -> None:
        from pth_top.tui.screens.kill import KillScreen

        process = self.query_one(ProcessPanel).selected_process
        if process is None:
            self.notify("no process selected", severity="warning")
            return
        refusal = signal_refusal(process)
        if refusal is not None:
            self.notify(refusal, severity="error", markup=False)
            return

        def send(signal_number: int | None) -> None:
            if signal_number is not None:
                self._send_signal(process, signal_number)

        self.app.push_screen(KillScreen(process.pid, process.command), send)

    def _send_signal(self, process: ProcessSample, signal_number: int) -> None:
        # Checked now, at confirm: the PID may have been reused while the dialog was open.
        message, severity = send_signal(process, signal_number)
        self.notify(message, severity=severity, markup=False)

"""Bench screen: pick devices and a suite, run the bench child in a subprocess, watch live results.

Esc cancels a running benchmark (terminate, then kill); with nothing running it returns to the monitor.
Workers post typed messages (bench_messages.py); the handlers own the state, and watchers draw it.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widgets import Checkbox, ContentSwitcher, DataTable, Input, Label, Select, Static

from pth_top.benches.client.rows import progress_message
from pth_top.benches.client.runs import RunRecord
from pth_top.benches.run_request import RequestError, RunRequest
from pth_top.text import printable
from pth_top.tui.screens import bench_messages as messages
from pth_top.tui.screens.bench_burn import burn_summary, conclude_burn, show_burn_sample
from pth_top.tui.screens.bench_saved import BenchSavedRuns
from pth_top.tui.screens.bench_views import (
    KernelProgress,
    add_columns,
    add_row,
    fill_table,
    highlighted_note,
    peak_bars,
    sync_device_checkboxes,
)
from pth_top.widgets.bar_chart import BarChart
from pth_top.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from pth_top.benches.client.bench_process import BenchProcess

# Worker groups that run a bench child.
CHILD_GROUPS = ("bench-run", "bench-devices")
CPU_ONLY = ({"id": "cpu", "name": "CPU"},)


class BenchScreen(BenchSavedRuns):
    BINDINGS = [
        Binding("enter", "start", "Start", id="bench.start", priority=True),
        Binding("escape", "cancel_or_back", "Cancel/Back", id="bench.cancel"),
        Binding("v", "toggle_view", "Table/Chart", id="bench.view"),
        Binding("o", "open_run", "Open run", id="bench.open"),
        Binding("c", "compare_run", "Compare", id="bench.compare"),
    ]

    DEFAULT_CSS = """
    BenchScreen #controls { height: auto; }
    BenchScreen #devices { height: 1; }
    BenchScreen #devices Checkbox { border: none; padding: 0 1; height: 1; background: transparent; }
    BenchScreen #options { height: 3; }
    BenchScreen #suite { width: 18; }
    BenchScreen #kernels { width: 1fr; }
    BenchScreen #python { width: 1fr; }
    BenchScreen #status { height: 1; color: $text-muted; }
    BenchScreen #progress { height: auto; max-height: 5; }
    BenchScreen ContentSwitcher { height: 1fr; }
    BenchScreen DataTable { height: 1fr; }
    BenchScreen #row-note { height: auto; max-height: 3; color: $text-muted; }
    """

    devices: reactive[tuple[dict, ...]] = reactive(CPU_ONLY, init=False)
    """Devices the chosen interpreter's torch lists; one checkbox each."""

    def __init__(self, request: RunRequest | None = None, *, python: str | None = None,
                 runs_folder: Path | None = None) -> None:
        super().__init__()
        self.request = request or RunRequest()  # suite and kernels prefill the controls; the rest as given
        self.python = python
        self.runs_folder = runs_folder
        self.cancelling = False
        self.last_saved: Path | None = None
        self.started_at = 0.0
        self._process: BenchProcess | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="controls"):
            with Horizontal(id="devices"):
                yield Label("Devices:")
                yield Checkbox("cpu", True, id="device-cpu", name="cpu")
            with Horizontal(id="options"):
                yield Select([("quick", "quick"), ("standard", "standard")], value=self.request.suite,
                             allow_blank=False, id="suite")
                yield Input(", ".join(self.request.kernels), placeholder="kernels (blank: suite)", id="kernels")
                yield Input(self.python or "", placeholder="python (blank: this env)", id="python")
        yield Static("Looking for devices…", id="status", markup=False)
        yield VerticalScroll(id="progress")
        with ContentSwitcher(initial="results"):
            yield DataTable(id="results", zebra_stripes=True, cursor_type="row")
            yield BarChart(id="chart")
        yield Static("", id="row-note", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        add_columns(self.query_one(DataTable))
        chart = self.query_one(BarChart)
        chart.title = "% of peak (line: 100 %)"
        chart.reference = 100.0
        chart.empty_text = "No result with a known peak yet."
        self.discover_devices()

    # Watchers: the state drawn

    def watch_status_text(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    def watch_running(self) -> None:
        self.refresh_bindings()  # the key bar greys Open while a run is in flight

    def watch_record(self, record: RunRecord | None) -> None:
        """A new record: its rows and bars; progress lines belong to the live run only, so they go."""
        self.query_one("#progress", VerticalScroll).remove_children()
        self._show_rows()

    def watch_baseline(self) -> None:
        self._show_rows()

    def watch_devices(self, devices: tuple[dict, ...]) -> None:
        sync_device_checkboxes(self.query_one("#devices", Horizontal), devices)

    def _show_rows(self) -> None:
        fill_table(self.query_one(DataTable), self.record, self.baseline)
        self.query_one(BarChart).bars = peak_bars(self.record)
        self._show_row_note()

    @on(DataTable.RowHighlighted)
    def _show_row_note(self) -> None:
        self.query_one("#row-note", Static).update(Text(highlighted_note(self.query_one(DataTable))))

    # Devices

    @work(exclusive=True, group="bench-devices", exit_on_error=False)
    async def discover_devices(self, delay_s: float = 0.0) -> None:
        import asyncio

        from pth_top.benches.client.bench_process import discover_devices
        from pth_top.benches.client.spawn import LaunchError

        await asyncio.sleep(delay_s)  # typing in the python field restarts this worker: list once typing stops
        python = self.query_one("#python", Input).value.strip() or None
        try:
            self.post_message(messages.DevicesFound(await discover_devices(python)))
        except LaunchError as error:
            self.post_message(messages.DevicesFound([], str(error)))
        except (OSError, ValueError) as error:  # anything else the child or the system throws at us
            self.post_message(messages.DevicesFound([], f"{type(error).__name__}: {error}"))

    @on(Input.Changed, "#python")
    def python_changed(self) -> None:
        self.set_status("Looking for devices…")
        self.discover_devices(delay_s=0.8)

    def on_devices_found(self, message: messages.DevicesFound) -> None:
        if self.closing:
            return
        if message.error:
            self.set_status(f"Cannot list devices: {message.error}")
            return
        self.devices = tuple(message.devices)
        names = ", ".join(f"{device['id']} ({printable(device['name'], 60)})" for device in message.devices)
        self.set_status(f"Found {names}. Enter starts, Esc cancels.")

    def chosen_device(self) -> str:
        """One ticked device, or 'all' when several are ticked (the runner takes one device or all)."""
        chosen = [checkbox.name for checkbox in self.query_one("#devices").query(Checkbox)
                  if checkbox.value and checkbox.name]
        if not chosen:
            return "cpu"
        return chosen[0] if len(chosen) == 1 else "all"

    # Running

    def chosen_request(self) -> RunRequest:
        """The run the controls ask for; RequestError (one line) when they ask for one that cannot run."""
        kernels = tuple(name.strip() for name in self.query_one("#kernels", Input).value.split(",") if name.strip())
        return dataclasses.replace(self.request, device=self.chosen_device(), kernels=kernels,
                                   suite=str(self.query_one("#suite", Select).value),
                                   disk_dir=self.request.disk_dir or _default_disk_dir())

    def action_start(self) -> None:
        if self.running:
            self.set_status("A benchmark is already running (Esc cancels it).")
            return
        try:
            request = self.chosen_request()
        except RequestError as error:
            self.set_status(str(error))
            return
        python = self.query_one("#python", Input).value.strip() or None
        self.running, self.cancelling = True, False
        self.started_at = time.monotonic()
        self.record = RunRecord()
        self.set_status(f"Starting {request.suite} suite on {request.device}…")
        self.run_benchmark(python, request)

    @work(exclusive=True, group="bench-run", exit_on_error=False)
    async def run_benchmark(self, python: str | None, request: RunRequest) -> None:
        """Stream the child's events as messages; cancelling the worker terminates the child."""
        import asyncio

        from pth_top.benches.client.bench_process import BenchProcess
        from pth_top.benches.client.spawn import LaunchError

        try:
            process = BenchProcess.for_request(python, request)
            await process.start()
        except LaunchError as error:
            self.post_message(messages.BenchEnded(None, str(error)))
            return
        self._process = process
        try:
            async for event in process.events():
                self.post_message(messages.BenchEvent(event))
            code = await process.wait()
            self.post_message(messages.BenchEnded(code, "" if code == 0 else process.failure_reason()))
        except asyncio.CancelledError:
            cancelled_code = await process.cancel()
            self.post_message(messages.BenchEnded(cancelled_code, "cancelled"))
            raise
        except (OSError, ValueError) as error:  # never leave the screen stuck on "running"
            await process.cancel()
            self.post_message(messages.BenchEnded(process.returncode, f"{type(error).__name__}: {error}"))
        finally:
            self._process = None

    def on_bench_event(self, message: messages.BenchEvent) -> None:
        event, record = message.event, self.record
        if record is None or self.closing or not self.running:
            return
        stored = record.apply(event)
        if event.kind == "started":
            container = self.query_one("#progress", VerticalScroll)
            container.mount_all([KernelProgress(item["kernel"], item["device"]) for item in record.kernels])
        elif event.kind == "sample":
            show_burn_sample(self.query_one("#progress", VerticalScroll), event.fields)
        elif event.kind == "progress":
            line = self._progress_line(event.get("kernel"), event.get("device"))
            if line is not None:
                line.update(float(event.get("fraction") or 0), progress_message(event.fields))
                self.set_status(f"Running {event.get('kernel')} on {event.get('device')}… (Esc cancels)")
        elif stored is not None:
            add_row(self.query_one(DataTable), stored, self.baseline)
            if event.kind == "result" and stored.get("percent_of_peak") is not None:
                self.query_one(BarChart).bars = peak_bars(record)
            self._show_row_note()

    def _progress_line(self, kernel: str, device: str) -> KernelProgress | None:
        for line in self.query(KernelProgress):
            if line.kernel_label == f"{kernel} {device}":
                return line
        return None

    def on_bench_ended(self, message: messages.BenchEnded) -> None:
        self.running = False
        if self.closing:
            return
        record = self.record
        elapsed = time.monotonic() - self.started_at
        if self.cancelling:
            partial = burn_summary(self.query_one("#progress", VerticalScroll))
            self.set_status(f"Cancelled after {elapsed:.0f} s; the benchmark process is gone. Not saved.{partial}")
            return
        setup_error = record.setup_error() if record else None
        if setup_error:
            self.set_status(f"Benchmark did not run: {setup_error}")
            return
        if record is None or record.finished is None:
            verb = "failed" if record is not None and record.has_started else "did not run"
            self.set_status(f"Benchmark {verb}: {message.reason}")
            return
        record.exit_code = message.exit_code
        conclude_burn(self.query_one("#progress", VerticalScroll), record)  # before saving: the curve goes with it
        self.set_status(f"Done in {elapsed:.0f} s: {len(record.rows)} results, {len(record.errors)} errors. Saving…")
        self.save_record(record)

    def action_cancel_or_back(self) -> None:
        if self.running:
            self.cancelling = True
            self.set_status("Cancelling…")
            self.workers.cancel_group(self, "bench-run")
        else:
            self.app.switch_mode("monitor")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start" and any(suite.expanded for suite in self.query("#suite").results(Select)):
            return False  # Enter picks an entry while the suite list is open
        if action == "open_run" and self.running:
            return None  # shown greyed: a run in flight is not replaced
        return True

    def action_toggle_view(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "chart" if switcher.current == "results" else "results"

    async def on_unmount(self) -> None:
        """End a run or device listing in flight and wait for its child to go, while the app's loop still runs."""
        from textual.worker import WorkerError

        children = [worker for worker in self.workers if worker.node is self and worker.group in CHILD_GROUPS]
        for worker in children:
            worker.cancel()
        for worker in children:
            try:
                await worker.wait()
            except WorkerError:
                pass


def _default_disk_dir() -> str:
    from pth_top.tui.commands.bench import default_disk_dir

    return default_disk_dir()


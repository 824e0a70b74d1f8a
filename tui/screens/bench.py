"""Bench screen: pick devices and a suite, run `python -m benches` in a subprocess, watch live results.

Esc cancels a running benchmark (terminate, then kill); with nothing running it returns to the monitor.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets._select import SelectOverlay
from textual.widgets import Checkbox, ContentSwitcher, DataTable, Input, Label, ProgressBar, Select, Static

from pth_top.benches.catalog import KERNELS_BY_NAME
from pth_top.benches.protocol import Event
from pth_top.benches.report import format_delta, format_percent, format_spread, format_value
from pth_top.benches.runs import RunRecord, compare, row_key
from pth_top.text import printable
from pth_top.widgets.bar_chart import Bar, BarChart
from pth_top.widgets.key_bar import KeyBar

# Worker groups that run a `python -m benches` child.
CHILD_GROUPS = ("bench-run", "bench-devices")
COLUMNS = ("kernel", "dev", "variant", "value", "unit", "%peak", "Δ%", "spread", "note")


class BenchEvent(Message):
    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class BenchEnded(Message):
    def __init__(self, exit_code: int | None, reason: str) -> None:
        super().__init__()
        self.exit_code = exit_code
        self.reason = reason


class DevicesFound(Message):
    def __init__(self, devices: list[dict], error: str = "") -> None:
        super().__init__()
        self.devices = devices
        self.error = error


class RunFileDone(Message):
    """A thread finished saving, listing or loading runs."""

    def __init__(self, action: str, payload: object, error: str = "") -> None:
        super().__init__()
        self.action = action
        self.payload = payload
        self.error = error


class KernelProgress(Horizontal):
    """One line per kernel and device: name, progress bar with ETA, last message."""

    DEFAULT_CSS = """
    KernelProgress { height: 1; }
    KernelProgress > Label { width: 18; }
    KernelProgress > ProgressBar { width: 1fr; }
    KernelProgress > .message { width: 30; color: $text-muted; }
    """

    def __init__(self, kernel: str, device: str) -> None:
        super().__init__()
        self.kernel_label = f"{kernel} {device}"  # the key that progress events are matched on
        self._latest = (0.0, "waiting")

    def compose(self) -> ComposeResult:
        yield Label(Text(printable(self.kernel_label, 17)))
        yield ProgressBar(total=100, show_eta=False)
        yield Label("", classes="message", markup=False)

    def update(self, fraction: float, message: str) -> None:
        self._latest = (fraction, message)
        if self.is_mounted and self.query(ProgressBar):
            self._show()

    def on_mount(self) -> None:
        self.call_after_refresh(self._show)

    def _show(self) -> None:
        fraction, message = self._latest
        self.query_one(ProgressBar).update(progress=100 * max(0.0, min(1.0, fraction)))
        self.query_one(".message", Label).update(Text(printable(message, 30)))


class BenchScreen(Screen):
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
    """

    def __init__(
        self,
        *,
        python: str | None = None,
        kernels: tuple[str, ...] = (),
        scale: float | None = None,
        time_cap_s: float | None = None,
        disk_dir: str | None = None,
        disk_size_mib: int | None = None,
        runs_folder: Path | None = None,
    ) -> None:
        super().__init__()
        self.python = python
        self.default_kernels = kernels
        self.scale = scale
        self.time_cap_s = time_cap_s
        self.disk_dir = disk_dir
        self.disk_size_mib = disk_size_mib
        self.runs_folder = runs_folder
        self.devices: list[dict] = [{"id": "cpu", "name": "CPU"}]
        self.record: RunRecord | None = None
        self.baseline: RunRecord | None = None
        self.running = False
        self.cancelling = False
        self.last_saved: Path | None = None
        self.started_at = 0.0
        self._process = None
        self.status_text = ""

    def compose(self) -> ComposeResult:
        with Vertical(id="controls"):
            with Horizontal(id="devices"):
                yield Label("Devices:")
                yield Checkbox("cpu", True, id="device-cpu", name="cpu")
            with Horizontal(id="options"):
                yield Select([("quick", "quick"), ("standard", "standard")], value="quick", allow_blank=False,
                             id="suite")
                yield Input(", ".join(self.default_kernels), placeholder="kernels (blank: suite)", id="kernels")
                yield Input(self.python or "", placeholder="python (blank: this env)", id="python")
        yield Static("Looking for devices…", id="status", markup=False)
        yield VerticalScroll(id="progress")
        with ContentSwitcher(initial="results"):
            yield DataTable(id="results", zebra_stripes=True, cursor_type="row")
            yield BarChart(id="chart")
        yield KeyBar()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in COLUMNS:
            table.add_column(column, key=column)
        chart = self.query_one(BarChart)
        chart.title = "% of peak (line: 100 %)"
        chart.reference = 100.0
        chart.empty_text = "No result with a known peak yet."
        self.discover_devices()

    # Devices

    @work(exclusive=True, group="bench-devices", exit_on_error=False)
    async def discover_devices(self, delay_s: float = 0.0) -> None:
        import asyncio

        from pth_top.benches.launcher import LaunchError, discover_devices

        await asyncio.sleep(delay_s)  # typing in the python field restarts this worker: list once typing stops
        python = self.query_one("#python", Input).value.strip() or None
        try:
            self.post_message(DevicesFound(await discover_devices(python)))
        except LaunchError as error:
            self.post_message(DevicesFound([], str(error)))
        except (OSError, ValueError) as error:  # anything else the child or the system throws at us
            self.post_message(DevicesFound([], f"{type(error).__name__}: {error}"))

    @on(Input.Changed, "#python")
    def python_changed(self) -> None:
        self.set_status("Looking for devices…")
        self.discover_devices(delay_s=0.8)

    def on_devices_found(self, message: DevicesFound) -> None:
        if self.closing:
            return
        if message.error:
            self.set_status(f"Cannot list devices: {message.error}")
            return
        self.devices = message.devices
        row = self.query_one("#devices", Horizontal)
        wanted = {device_checkbox_id(device["id"]) for device in message.devices}
        for checkbox in list(row.query(Checkbox)):
            if checkbox.id not in wanted:
                checkbox.remove()
        for device in message.devices:
            checkbox_id = device_checkbox_id(device["id"])
            if checkbox_id and not self.query(f"#{checkbox_id}"):
                row.mount(Checkbox(device["id"], device["id"].startswith("cuda"), id=checkbox_id, name=device["id"]))
        names = ", ".join(f"{device['id']} ({printable(device['name'], 60)})" for device in message.devices)
        self.set_status(f"Found {names}. Enter starts, Esc cancels.")

    def chosen_device(self) -> str:
        """One ticked device, or 'all' when several are ticked (the runner takes one device or all)."""
        chosen = [checkbox.name for checkbox in self.query_one("#devices").query(Checkbox)
                  if checkbox.value and checkbox.name]
        if not chosen:
            return "cpu"
        return chosen[0] if len(chosen) == 1 else "all"

    def set_status(self, text: str) -> None:
        self.status_text = printable(text)
        self.query_one("#status", Static).update(Text(self.status_text))

    @property
    def closing(self) -> bool:
        """True while the screen is taken down (app exit): a worker's late message then changes nothing."""
        return self._closing or self._closed or self._pruning or not self.is_attached

    # Running

    def action_start(self) -> None:
        if self.running:
            self.set_status("A benchmark is already running (Esc cancels it).")
            return
        from pth_top.benches.launcher import run_arguments

        kernels = [name.strip() for name in self.query_one("#kernels", Input).value.split(",") if name.strip()]
        unknown = [name for name in kernels if name not in KERNELS_BY_NAME]
        if unknown:
            self.set_status(f"Unknown kernel {unknown[0]!r}; known: {', '.join(KERNELS_BY_NAME)}")
            return
        suite = str(self.query_one("#suite", Select).value)
        python = self.query_one("#python", Input).value.strip() or None
        args = run_arguments(device=self.chosen_device(), suite=suite, kernels=kernels, scale=self.scale,
                             time_cap_s=self.time_cap_s, disk_dir=self.disk_dir or _default_disk_dir(),
                             disk_size_mib=self.disk_size_mib)
        self.record = RunRecord()
        self.running, self.cancelling = True, False
        self.started_at = time.monotonic()
        self.query_one(DataTable).clear()
        self.query_one("#progress", VerticalScroll).remove_children()
        self.refresh_chart()
        self.set_status(f"Starting {suite} suite on {self.chosen_device()}…")
        self.run_benchmark(python, args)

    @work(exclusive=True, group="bench-run", exit_on_error=False)
    async def run_benchmark(self, python: str | None, args: list[str]) -> None:
        """Stream the child's events as messages; cancelling the worker terminates the child."""
        import asyncio

        from pth_top.benches.launcher import BenchProcess, LaunchError

        try:
            process = BenchProcess(python, args)
            await process.start()
        except LaunchError as error:
            self.post_message(BenchEnded(None, str(error)))
            return
        self._process = process
        try:
            async for event in process.events():
                self.post_message(BenchEvent(event))
            code = await process.wait()
            self.post_message(BenchEnded(code, "" if code == 0 else process.failure_reason()))
        except asyncio.CancelledError:
            code = await process.cancel()
            self.post_message(BenchEnded(code, "cancelled"))
            raise
        except (OSError, ValueError) as error:  # never leave the screen stuck on "running"
            await process.cancel()
            self.post_message(BenchEnded(process.returncode, f"{type(error).__name__}: {error}"))
        finally:
            self._process = None

    def on_bench_event(self, message: BenchEvent) -> None:
        event, record = message.event, self.record
        if record is None or self.closing:
            return
        stored = record.apply(event)
        if event.kind == "started":
            container = self.query_one("#progress", VerticalScroll)
            container.mount_all([KernelProgress(item["kernel"], item["device"]) for item in record.kernels])
        elif event.kind == "progress":
            line = self._progress_line(event.get("kernel"), event.get("device"))
            if line is not None:
                eta = event.get("eta_s")
                eta_text = f" eta {eta:.0f}s" if isinstance(eta, (int, float)) and eta > 0 else ""
                line.update(float(event.get("fraction") or 0), f"{event.get('message') or ''}{eta_text}")
                running = f"Running {event.get('kernel')} on {event.get('device')}… (Esc cancels)"
                if running != self.status_text:
                    self.set_status(running)
        elif stored is not None:
            self.add_row(stored)
            if event.kind == "result" and stored.get("percent_of_peak") is not None:
                self.refresh_chart()

    def _progress_line(self, kernel: str, device: str) -> KernelProgress | None:
        for line in self.query(KernelProgress):
            if line.kernel_label == f"{kernel} {device}":
                return line
        return None

    def on_bench_ended(self, message: BenchEnded) -> None:
        self.running = False
        if self.closing:
            return
        record = self.record
        elapsed = time.monotonic() - self.started_at
        if self.cancelling:
            self.set_status(f"Cancelled after {elapsed:.0f} s; the benchmark process is gone. Not saved.")
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
        errors = len(record.errors)
        self.set_status(f"Done in {elapsed:.0f} s: {len(record.rows)} results, {errors} errors. Saving…")
        self.save_record(record)

    def action_cancel_or_back(self) -> None:
        if self.running:
            self.cancelling = True
            self.set_status("Cancelling…")
            self.workers.cancel_group(self, "bench-run")
        else:
            self.app.switch_mode("monitor")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # Enter picks an entry while the suite list is open; elsewhere it starts a run.
        if action == "start" and isinstance(self.focused, SelectOverlay):
            return False
        return True

    # Results

    def add_row(self, row: dict) -> None:
        table = self.query_one(DataTable)
        key = "|".join(row_key(row))
        deltas = compare([row], self.baseline.rows) if self.baseline else {}
        if "error_type" in row:
            cells = [row.get("kernel") or "-", row.get("device") or "-", row.get("variant") or "-",
                     Text("ERROR", style="bold red"), "", "", "", "",
                     printable(f"{row.get('error_type')}: {row.get('message')}", 300)]
        else:
            percent = row.get("percent_of_peak")
            note = row.get("note") or ""
            if row.get("status") == "skipped":
                note = f"skipped: {note}"
            elif percent is not None and percent > 100:
                note = (note + "; " if note else "") + "above peak: boost clock?"
            cells = [row["kernel"], row["device"], row["variant"], format_value(row.get("value")),
                     row.get("unit") or "", format_percent(percent), format_delta(deltas.get(row_key(row))),
                     format_spread(row), note]
        texts = [cell if isinstance(cell, Text) else Text(printable(cell, 300)) for cell in cells]
        if key in table.rows:
            key = f"{key}|{len(table.rows)}"
        table.add_row(*texts, key=key)

    def refresh_chart(self) -> None:
        record = self.record
        rows = [row for row in (record.rows if record else []) if row.get("percent_of_peak") is not None]
        several_devices = len({row.get("device") for row in rows}) > 1
        bars = []
        for row in rows:
            label = printable(f"{row['kernel']} {row['variant']}", 60)
            if several_devices:
                label = printable(f"{row['device']} {label}", 60)
            bars.append(Bar(label, float(row["percent_of_peak"])))
        self.query_one(BarChart).bars = tuple(bars)

    def show_record(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        if self.record:
            for row in self.record.rows + self.record.errors:
                self.add_row(row)
        self.refresh_chart()

    def action_toggle_view(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "chart" if switcher.current == "results" else "results"

    # Saved runs (file I/O in threads)

    @work(thread=True, group="bench-files", exit_on_error=False)
    def save_record(self, record: RunRecord) -> None:
        from pth_top.benches.runs import save_run

        try:
            self.post_message(RunFileDone("saved", save_run(record, self.runs_folder)))
        except (OSError, ValueError) as error:
            self.post_message(RunFileDone("saved", None, f"not saved: {getattr(error, 'strerror', None) or error}"))

    @work(thread=True, group="bench-files", exit_on_error=False)
    def list_saved_runs(self, purpose: str) -> None:
        from pth_top.benches.runs import scan_runs

        self.post_message(RunFileDone(purpose, scan_runs(self.runs_folder)))

    @work(thread=True, group="bench-files", exit_on_error=False)
    def load_saved_run(self, purpose: str, path: Path) -> None:
        from pth_top.benches.runs import RunFileError, load_run

        try:
            self.post_message(RunFileDone(purpose, load_run(path)))
        except RunFileError as error:
            self.post_message(RunFileDone(purpose, None, str(error)))

    def action_open_run(self) -> None:
        if not self.running:
            self.list_saved_runs("list-open")

    def action_compare_run(self) -> None:
        self.list_saved_runs("list-compare")

    def on_run_file_done(self, message: RunFileDone) -> None:
        from pth_top.tui.screens.bench_runs import BenchRunsScreen

        if self.closing:
            return
        if message.error:
            self.set_status(f"{message.action}: {message.error}")
        elif message.action == "saved":
            self.last_saved = message.payload
            self.set_status(f"Done: {len(self.record.rows) if self.record else 0} results; saved {message.payload}")
        elif message.action in ("list-open", "list-compare"):
            purpose = message.action.removeprefix("list-")
            title = "Open a saved run" if purpose == "open" else "Compare with a saved run (Δ% column)"

            def chosen(path: Path | None, _purpose=purpose) -> None:
                if path is not None:
                    self.load_saved_run(_purpose, path)
            if self.is_current:  # not over another mode's screen when the list comes after a mode switch
                self.app.push_screen(BenchRunsScreen(title, message.payload), chosen)
        elif message.action == "open":
            self.record = message.payload
            self.show_record()
            self.set_status(f"Showing the run of {self.record.created_at} ({self.record.python}).")
        elif message.action == "compare":
            self.baseline = message.payload
            self.show_record()
            self.set_status(f"Δ% against the run of {self.baseline.created_at}.")

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


def device_checkbox_id(device_id: str) -> str:
    """A widget id for a device's checkbox ("cuda:0" -> "device-cuda-0"); "" for an id unfit for one."""
    checkbox_id = "device-" + device_id.replace(":", "-")
    return checkbox_id if checkbox_id.replace("-", "").replace("_", "").isalnum() and checkbox_id.isascii() else ""

"""The cluster view: hosts worst first, a heat grid of every GPU, and drill-down into one host.

Fed by a FleetSource, pth_top.fleet.query.FleetReader (Prometheus) or pth_top.sshfleet's reader (SSH); the
widgets know neither. One async worker refreshes, never faster than the job's scrape interval; a failed
refresh keeps the last data, marked stale, with the error in one line. Data older than STALE_AFTER_INTERVALS
refreshes are marked stale too, whatever held them up. Every string from Prometheus or a host arrives
printable (pth_top.fleet.answers, pth_top.sshfleet.answer).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any, Callable

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from pth_top.fleet.model import (
    STALE_AFTER_INTERVALS,
    FleetSnapshot,
    FleetSource,
    HostDetail,
    HostRow,
    sorted_hosts,
)
from pth_top.fleet.query import FleetReader, PrometheusClient
from pth_top.text import printable
from pth_top.tui.format import format_percent
from pth_top.tui.screens.fleet_grid import (
    GRID_BINDINGS,
    GRID_METRICS,
    age_text,
    heat_rows,
    toggle_expanded,
    toggle_zoom,
)
from pth_top.units import GIB
from pth_top.widgets.heat_grid import HeatGrid
from pth_top.widgets.key_bar import KeyBar
from pth_top.widgets.row_table import RowTable, TableColumn

HOST_COLUMNS = (
    ("host", "Host", None), ("state", "State", 9), ("age", "Age", 6), ("gpus", "GPUs", 4),
    ("util", "Util", 5), ("util_min", "Min", 5), ("mem", "Mem", 5), ("temp", "Temp", 5),
    ("power", "Power", 7), ("errors", "Err", 4), ("throttle", "Thr", 3),
)


def percent(ratio: float | None) -> str:
    """A ratio 0-1 as a whole percent; "-" when missing, like the fleet view's other cells."""
    return "-" if ratio is None else format_percent(100 * ratio)


def host_labels(hosts: tuple[HostRow, ...]) -> dict[str, str]:
    """Instance -> what names it on screen: the hostnames when they tell hosts apart, else host:port."""
    hostnames = [host.hostname for host in hosts]
    by_hostname = all(hostnames) and len(set(hostnames)) == len(hostnames)
    return {host.instance: host.hostname if by_hostname else host.instance for host in hosts}


def host_cells(host: HostRow, name: str) -> tuple[Text, ...]:
    """One host-table row; a greyed host (down, stale, gone) is drawn dim with its data's age."""
    style = "dim" if host.state.greyed else ("bold red" if host.errors else "")
    temperature = host.temperature_max_celsius
    power = host.power_watts
    texts = (
        name, host.state.value, age_text(host.age_s), str(host.gpu_count),
        percent(host.utilization_avg_ratio), percent(host.utilization_min_ratio), percent(host.memory_used_ratio),
        "-" if temperature is None else f"{temperature:.0f}C", "-" if power is None else f"{power:.0f}W",
        f"{host.errors:.0f}", str(host.throttled_gpus),
    )
    return tuple(Text(text, style=style, justify="left" if index < 2 else "right")
                 for index, text in enumerate(texts))


def error_line(error: BaseException) -> str:
    """An unexpected error as one line: its type and the first line of its message."""
    lines = str(error).splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def status_line(snapshot: FleetSnapshot, source: str, sort_key: str, grid_metric: str, now_s: float,
                stale_after_s: float) -> Text:
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(printable(source), style="bold")
    down = sum(host.state.greyed for host in snapshot.hosts)
    line.append(f"  {len(snapshot.hosts)} hosts ({down} not up) · {snapshot.gpu_count} GPUs · "
                f"scrape {snapshot.scrape_interval_s:g}s · sort {sort_key} · grid {grid_metric}")
    age_s = snapshot.age_s(now_s)
    if age_s is not None:
        line.append(f" · data of {time.strftime('%H:%M:%S', time.localtime(snapshot.taken_at_s))}, "
                    f"{age_text(age_s)} old")
    if snapshot.malformed:
        line.append(f" · {snapshot.malformed} malformed series skipped", style="yellow")
    if snapshot.error:
        line.append(f"\nSTALE: {printable(snapshot.error)}", style="bold red")
    elif age_s is not None and snapshot.is_stale(now_s, stale_after_s):
        line.append(f"\nSTALE: no new data for {age_text(age_s)}", style="bold red")
    return line


class FleetScreen(Screen):
    """Host table (worst first) above a heat grid of every GPU (packed one cell a host for a big fleet)."""

    BINDINGS = [
        Binding("enter", "open_host", "Open host", id="fleet.open"),
        Binding("g", "cycle_grid", "Grid colour", id="fleet.grid"),
        *GRID_BINDINGS,
        Binding("h", "sort('health')", "Sort: health", id="fleet.sort_health"),
        Binding("u", "sort('utilization')", "Sort: util", id="fleet.sort_util", show=False),
        Binding("m", "sort('memory')", "Sort: memory", id="fleet.sort_memory", show=False),
        Binding("t", "sort('temperature')", "Sort: temperature", id="fleet.sort_temperature", show=False),
        Binding("p", "sort('power')", "Sort: power", id="fleet.sort_power", show=False),
        Binding("e", "sort('errors')", "Sort: errors", id="fleet.sort_errors", show=False),
        Binding("r", "sort('throttling')", "Sort: throttling", id="fleet.sort_throttling", show=False),
        Binding("s", "sort('staleness')", "Sort: staleness", id="fleet.sort_staleness", show=False),
    ]
    DEFAULT_CSS = """
    FleetScreen #fleet-status { height: auto; max-height: 2; padding: 0 1; }
    FleetScreen #fleet-hosts { height: 1fr; }
    FleetScreen #fleet-grid { height: 1fr; border-top: solid $panel-lighten-2; }
    """

    def __init__(self, source: str, clock: Callable[[], float] = time.time,
                 stale_after_s: Callable[[], float] = lambda: 60.0) -> None:
        super().__init__()
        self.source = source
        self.clock = clock
        self.stale_after_s = stale_after_s
        self.shown_stale = True
        self.sort_key = "health"
        self.grid_metric = "utilization"
        self.snapshot = FleetSnapshot(taken_at_s=0.0, scrape_interval_s=0.0, error="waiting for the first answers")
        self.shown_hosts: tuple[HostRow, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(id="fleet-status", markup=False)
        yield RowTable(id="fleet-hosts")
        grid = HeatGrid(id="fleet-grid")
        grid.zoom = "auto"
        yield grid
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(RowTable).set_columns([TableColumn(key, Text(label), width)
                                              for key, label, width in HOST_COLUMNS])
        self.show(self.snapshot)
        self.set_interval(1.0, self.show_age)

    def show_age(self) -> None:
        """The data's age ticks on between refreshes; past the limit everything turns stale."""
        now_s = self.clock()
        if self.snapshot.is_stale(now_s, self.stale_after_s()) != self.shown_stale:
            self.show(self.snapshot)
            return
        self.query_one("#fleet-status", Static).update(
            status_line(self.snapshot, self.source, self.sort_key, self.grid_metric, now_s, self.stale_after_s()))

    def show(self, snapshot: FleetSnapshot) -> None:
        self.snapshot = snapshot
        self.shown_hosts = sorted_hosts(snapshot.hosts, self.sort_key)
        rows = {host.instance: host for host in self.shown_hosts}
        now_s, stale_after_s = self.clock(), self.stale_after_s()
        self.shown_stale = snapshot.is_stale(now_s, stale_after_s)
        self.query_one("#fleet-status", Static).update(
            status_line(snapshot, self.source, self.sort_key, self.grid_metric, now_s, stale_after_s))
        labels = host_labels(self.shown_hosts)
        self.query_one(RowTable).sync_rows(list(rows), lambda key: host_cells(rows[key], labels[key]))
        grid = self.query_one(HeatGrid)
        grid.set_rows(heat_rows(self.shown_hosts, labels, self.grid_metric, self.shown_stale))
        grid.select_row(self.query_one(RowTable).highlighted_key)

    def on_row_table_highlighted(self, message: RowTable.Highlighted) -> None:
        self.query_one(HeatGrid).select_row(message.key)

    def action_expand_host(self) -> None:
        toggle_expanded(self.query_one(HeatGrid), self.query_one(RowTable).highlighted_key)

    def action_zoom_grid(self) -> None:
        toggle_zoom(self.query_one(HeatGrid))

    def action_sort(self, sort_key: str) -> None:
        self.sort_key = sort_key
        self.show(self.snapshot)

    def action_cycle_grid(self) -> None:
        names = list(GRID_METRICS)
        self.grid_metric = names[(names.index(self.grid_metric) + 1) % len(names)]
        self.show(self.snapshot)

    def action_open_host(self) -> None:
        instance = self.query_one(RowTable).highlighted_key
        if instance is not None:
            self.app.push_screen(HostScreen(instance))


class HostScreen(Screen):
    """One host from Prometheus: its GPUs and its largest GPU processes."""

    BINDINGS = [Binding("escape,backspace", "app.pop_screen", "Back", id="fleet_host.back")]
    DEFAULT_CSS = """
    HostScreen #host-title { height: auto; padding: 0 1; }
    HostScreen #host-gpus { height: 1fr; }
    HostScreen #host-processes { height: 1fr; border-top: solid $panel-lighten-2; }
    """

    class DetailReady(Message):
        """A worker read this host: posted to the screen, so it is dropped once the screen has closed."""

        def __init__(self, detail: HostDetail) -> None:
            super().__init__()
            self.detail = detail

    def __init__(self, instance: str) -> None:
        super().__init__()
        self.instance = instance
        self.detail = HostDetail(instance=instance)

    def on_host_screen_detail_ready(self, message: DetailReady) -> None:
        if self.is_attached:
            self.show(message.detail)

    def compose(self) -> ComposeResult:
        yield Static(id="host-title", markup=False)
        yield RowTable(id="host-gpus")
        yield RowTable(id="host-processes")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#host-gpus", RowTable).set_columns([
            TableColumn("gpu", Text("GPU"), 4), TableColumn("name", Text("Name"), None),
            TableColumn("util", Text("Util", justify="right"), 5), TableColumn("mem", Text("Memory"), 17),
            TableColumn("temp", Text("Temp"), 5), TableColumn("power", Text("Power"), 11),
        ])
        self.query_one("#host-processes", RowTable).set_columns([
            TableColumn("gpu", Text("GPU"), 4), TableColumn("pid", Text("PID"), 8),
            TableColumn("user", Text("User"), 12), TableColumn("comm", Text("Command"), None),
            TableColumn("mem", Text("GPU mem"), 10),
        ])
        self.query_one("#host-title", Static).update(Text(f"{self.instance}: loading…", style="bold"))
        app = self.app
        if isinstance(app, FleetApp):
            app.load_host(self)

    def show(self, detail: HostDetail) -> None:
        if detail.error is not None and self.detail.gpus:
            detail = replace(self.detail, error=detail.error)  # a failed refresh keeps the last readings
        self.detail = detail
        title = Text(self.instance, style="bold")
        title.append(f"  {len(detail.gpus)} GPUs · {len(detail.processes)} GPU processes · Esc: back", style="")
        if detail.error:
            title.append(f"\nSTALE: {printable(detail.error)}", style="bold red")
        self.query_one("#host-title", Static).update(title)
        gpus = {gpu.gpu: gpu for gpu in detail.gpus}

        def gpu_cells(key: str) -> tuple[Text, ...]:
            gpu = gpus[key]
            used, total = gpu.memory_used_bytes, gpu.memory_total_bytes
            memory = "-" if used is None or total is None else f"{used / GIB:.1f}/{total / GIB:.0f} GiB"
            power = "-" if gpu.power_watts is None else f"{gpu.power_watts:.0f}W" + (
                "" if gpu.power_limit_watts is None else f"/{gpu.power_limit_watts:.0f}W")
            temperature = "-" if gpu.temperature_celsius is None else f"{gpu.temperature_celsius:.0f}C"
            return (Text(gpu.gpu), Text(gpu.name), Text(percent(gpu.utilization_ratio), justify="right"),
                    Text(memory), Text(temperature), Text(power))

        self.query_one("#host-gpus", RowTable).sync_rows(list(gpus), gpu_cells)
        processes = {f"{process.gpu}/{process.pid}": process for process in detail.processes}
        self.query_one("#host-processes", RowTable).sync_rows(list(processes), lambda key: (
            Text(processes[key].gpu), Text(processes[key].pid), Text(processes[key].user),
            Text(processes[key].comm), Text(f"{processes[key].memory_bytes / GIB:.1f} GiB")))


class FleetApp(App):
    """`pth-top fleet`: its own small app, so the Monitor's start-up pays nothing for it."""

    TITLE = "pth-top fleet"
    BINDINGS = [Binding("q,f10", "quit", "Quit", id="quit")]

    def __init__(self, connection: Any = None, job: str = "pth-top", interval_s: float = 5.0,
                 reader: FleetSource | None = None) -> None:
        super().__init__()
        self.connection = connection
        self.reader: FleetSource = reader or FleetReader(PrometheusClient(connection), job=job)
        self.interval_s = interval_s
        self.fleet_screen = FleetScreen(self.reader.label, clock=self.reader.clock, stale_after_s=self.stale_after_s)
        self.refreshes = 0

    def stale_after_s(self) -> float:
        """Data older than a few refreshes (each at most a query timeout late) are stale."""
        refresh_s = max(self.interval_s, self.reader.scrape_interval_s)
        return STALE_AFTER_INTERVALS * refresh_s + self.reader.timeout_s

    def on_mount(self) -> None:
        self.push_screen(self.fleet_screen)
        self.refresh_forever()

    @work(exclusive=True, exit_on_error=False, group="fleet")
    async def refresh_forever(self) -> None:
        """Refresh, show, wait; the wait is never shorter than the scrape interval."""
        while True:
            try:
                snapshot = await self.reader.refresh()
                self.refreshes += 1
                self.fleet_screen.show(snapshot)
                host_screen = self.screen
                if isinstance(host_screen, HostScreen):
                    detail = await self.reader.host_detail(host_screen.instance)
                    host_screen.post_message(HostScreen.DetailReady(detail))
            except Exception as error:  # a bug here must not stop the refreshing: keep the data, marked stale
                self.fleet_screen.show(replace(self.fleet_screen.snapshot, error=error_line(error)))
            await asyncio.sleep(max(self.interval_s, self.reader.scrape_interval_s))

    @work(exit_on_error=False, group="fleet-host")
    async def load_host(self, screen: HostScreen) -> None:
        screen.post_message(HostScreen.DetailReady(await self.reader.host_detail(screen.instance)))

    async def on_unmount(self) -> None:
        await self.reader.close()

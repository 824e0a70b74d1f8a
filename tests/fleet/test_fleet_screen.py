"""The fleet screen with canned Prometheus answers: sort keys, grid colouring, a failed refresh marked stale.

And the heat grid widget alone: one line per row, shades that read without colour, greyed rows dim.
"""

from __future__ import annotations

import asyncio

import httpx

from pth_top.fleet.connection import make_connection
from pth_top.fleet.query import FleetReader, PrometheusClient
from pth_top.tui.screens.fleet import FleetApp
from pth_top.widgets.heat_grid import NO_READING, HeatGrid, HeatRow, cell_text
from pth_top.widgets.row_table import RowTable
from tests.fleet.test_fleet_query import Clock, FakeFleet
from tests.waiting import wait_until


def fleet_app(fleet: FakeFleet, clock: Clock) -> FleetApp:
    connection = make_connection("http://prom:9090")
    reader = FleetReader(PrometheusClient(connection, transport=httpx.MockTransport(fleet.handle)), clock=clock)
    return FleetApp(connection, reader=reader, interval_s=0.05)


class FleetWithDetail(FakeFleet):
    """Also answers the drill-down's GPU readings query: 8 GPUs at 40 % for any host."""

    def handle(self, request: httpx.Request) -> httpx.Response:
        if self.failure is None and b"+or+pth_top_gpu_memory_used_bytes%7B" in request.content:
            return self.vector([({"__name__": "pth_top_gpu_utilization_ratio", "gpu": str(gpu)}, 0.4)
                                for gpu in range(8)])
        return super().handle(request)


def status(app: FleetApp) -> str:
    return str(app.fleet_screen.query_one("#fleet-status").render())


async def test_sort_keys_grid_colour_and_a_failed_refresh_kept_and_marked_stale():
    fleet, clock = FakeFleet(12), Clock()
    fleet.scrape_age_s["node-011:9824"] = 60.0
    app = fleet_app(fleet, clock)
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 12, what="12 hosts")
        assert table.row_keys[:3] == ["node-011:9824", "node-004:9824", "node-003:9824"]
        stale_row = table.get_row("node-011:9824")
        assert stale_row[1].plain == "stale" and "dim" in str(stale_row[0].style)
        await pilot.press("t")
        assert table.row_keys[0] == "node-006:9824", "the hottest GPU (53 C) first"
        await pilot.press("u")
        snapshot = app.fleet_screen.snapshot
        utilization = [snapshot.host(key).utilization_avg_ratio for key in table.row_keys]
        assert utilization == sorted(utilization) and utilization[0] < utilization[-1], "idlest first"
        grid = app.fleet_screen.query_one(HeatGrid)
        utilization_grid = grid.rows
        await pilot.press("g")
        assert "grid memory" in status(app) and grid.rows != utilization_grid
        assert all(value == 0.5 for row in grid.rows for value in row.values), "memory used / total from the fake"

        fleet.failure = httpx.Response(401, text="no")
        clock.now_s += 60
        await wait_until(pilot, lambda: "STALE: Prometheus refused the request: HTTP 401" in status(app),
                         what="the 401 on screen")
        assert table.row_count == 12, "the last data stays"
        assert all(row.greyed for row in grid.rows), "and is greyed"

        fleet.failure = None
        clock.now_s += 60
        await wait_until(pilot, lambda: "STALE" not in status(app), what="a good refresh to clear the error")


async def test_drill_down_keeps_its_last_readings_when_a_refresh_fails():
    from pth_top.tui.screens.fleet import HostScreen

    fleet, clock = FleetWithDetail(3), Clock()
    app = fleet_app(fleet, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 3, what="3 hosts")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, HostScreen) and len(app.screen.detail.gpus) == 8,
                         what="the host's 8 GPUs")
        gpu_table = app.screen.query_one("#host-gpus", RowTable)
        assert [cell.plain for cell in gpu_table.get_row("0")][2] == "40%"
        fleet.failure = httpx.Response(503, text="down for maintenance")
        clock.now_s += 60
        await wait_until(pilot, lambda: app.screen.detail.error is not None, what="the failed refresh")
        title = str(app.screen.query_one("#host-title").render())
        assert "STALE: HTTP 503" in title and gpu_table.row_count == 8, "last readings kept, marked stale"
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HostScreen), what="back to the fleet")


def test_heat_grid_lines_read_without_colour():
    assert cell_text(None) == NO_READING
    assert [cell_text(value) for value in (0.0, 0.24, 0.3, 0.5, 0.8, 1.0, 7.0, -1.0)] == [
        "░░", "░░", "▒▒", "▓▓", "██", "██", "██", "░░"]
    grid = HeatGrid()
    rows = [HeatRow("node-1", (0.0, None, 1.0), note="down, data 4s old", greyed=True), HeatRow("node-10", ())]
    grid.set_rows(rows)
    line = grid.line_segments(rows[0])
    text = "".join(segment.text for segment in line)
    assert text == "node-1  ░░ ·· ██ down, data 4s old", "labels as wide as the widest"
    grid.set_rows([HeatRow("x" * 40, ())])
    assert "".join(segment.text for segment in grid.line_segments(grid.rows[0])) == "x" * HeatGrid.LABEL_WIDTH + " "
    assert all(segment.style is None or segment.style.dim for segment in line if segment.text.strip())


async def test_heat_grid_draws_only_the_lines_on_screen():
    from textual.app import App, ComposeResult

    class GridApp(App):
        def compose(self) -> ComposeResult:
            yield HeatGrid()

    app = GridApp()
    async with app.run_test(size=(60, 10)) as pilot:
        grid = app.query_one(HeatGrid)
        grid.set_rows([HeatRow(f"host-{index}", (index / 200,) * 8) for index in range(200)])
        await pilot.pause()
        assert grid.virtual_size.height == 200
        first = "".join(segment.text for segment in grid.render_line(0))
        grid.scroll_to(y=150, animate=False)
        await pilot.pause()
        scrolled = "".join(segment.text for segment in grid.render_line(0))
        assert first.startswith("host-0 ") and scrolled.startswith("host-150 ")
        assert "".join(segment.text for segment in grid.render_line(60)).strip() == "", "past the last row: blank"


class GatedReader(FleetReader):
    """A FleetReader whose drill-down answers only once the test opens `detail_gate`; refresh can be made to raise."""

    def __init__(self, client: PrometheusClient, clock: Clock) -> None:
        super().__init__(client, clock=clock)
        self.detail_gate = asyncio.Event()
        self.details_answered = 0
        self.refresh_bug: Exception | None = None

    async def refresh(self):
        if self.refresh_bug is not None:
            raise self.refresh_bug
        return await super().refresh()

    async def host_detail(self, instance: str):
        await self.detail_gate.wait()
        detail = await super().host_detail(instance)
        self.details_answered += 1
        return detail


def gated_app(fleet: FakeFleet, clock: Clock) -> tuple[FleetApp, GatedReader]:
    connection = make_connection("http://prom:9090")
    reader = GatedReader(PrometheusClient(connection, transport=httpx.MockTransport(fleet.handle)), clock)
    return FleetApp(connection, reader=reader, interval_s=0.05), reader


async def test_a_host_answer_arriving_after_esc_is_dropped_and_the_view_keeps_running():
    from pth_top.tui.screens.fleet import HostScreen

    fleet, clock = FleetWithDetail(3), Clock()
    app, reader = gated_app(fleet, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 3, what="3 hosts")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, HostScreen), what="the host screen")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is app.fleet_screen, what="back to the fleet")
        reader.detail_gate.set()
        await wait_until(pilot, lambda: reader.details_answered >= 1, what="the slow answer")
        refreshes = app.refreshes
        clock.now_s += 60
        await wait_until(pilot, lambda: app.refreshes > refreshes, what="a refresh after the late answer")
        assert app.is_running and app.return_code is None
        assert "STALE" not in status(app)


async def test_an_unexpected_error_in_a_refresh_is_shown_stale_and_refreshing_goes_on():
    fleet, clock = FakeFleet(3), Clock()
    app, reader = gated_app(fleet, clock)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.fleet_screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 3, what="3 hosts")
        reader.refresh_bug = RuntimeError("a bug in the reader\nsecond line")
        await wait_until(pilot, lambda: "STALE: RuntimeError: a bug in the reader" in status(app),
                         what="the error on screen")
        assert "second line" not in status(app) and table.row_count == 3, "one line; the last data stays"
        reader.refresh_bug = None
        clock.now_s += 60
        await wait_until(pilot, lambda: "STALE" not in status(app), what="refreshing to go on")

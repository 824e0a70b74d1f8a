"""The fleet screen's heat grid with 1,000 synthetic hosts (the model built directly, no Prometheus).

At 120 x 40 every host is one cell on one screen, worst first, coloured by its worst GPU; `x` shows the
highlighted host's GPUs below its cell and folds them again; `z` zooms to one line of GPUs per host.
At 80 x 24 the packed grid scrolls to keep the highlighted host in view. The key bar names both keys.
"""

from __future__ import annotations

from textual.app import App

from pth_top.fleet.model import FleetSnapshot, GpuCell, HostRow, HostState
from pth_top.tui.screens.fleet import FleetScreen
from pth_top.widgets.heat_grid import HeatGrid
from pth_top.widgets.key_bar import KeyBar
from pth_top.widgets.row_table import RowTable

HOSTS = 1000
DOWN, ERRORS, THROTTLED, ONE_IDLE_GPU = 500, 700, 900, 42


def instance(number: int) -> str:
    return f"node-{number:04d}:9824"


def host(number: int) -> HostRow:
    gpus = tuple(GpuCell(instance(number), str(gpu),
                         utilization_ratio=0.1 if (number, gpu) == (ONE_IDLE_GPU, 5) else 0.9,
                         memory_used_ratio=0.5, temperature_celsius=50.0, power_watts=300.0,
                         errors=1.0 if (number, gpu) == (ERRORS, 3) else 0.0,
                         throttled=(number, gpu) == (THROTTLED, 2))
                 for gpu in range(8))
    state = HostState.DOWN if number == DOWN else HostState.UP
    return HostRow(instance(number), instance(number).split(":")[0], state, 1.0, gpus)


SNAPSHOT = FleetSnapshot(taken_at_s=1_700_000_000.0, scrape_interval_s=5.0,
                         hosts=tuple(host(number) for number in range(HOSTS)))


class GridApp(App):
    def on_mount(self) -> None:
        self.push_screen(FleetScreen("synthetic", clock=lambda: SNAPSHOT.taken_at_s + 1.0))


def drawn(grid: HeatGrid) -> list[str]:
    """The grid's lines on screen now, as text."""
    return ["".join(segment.text for segment in grid.render_line(y)).rstrip()
            for y in range(grid.scrollable_content_region.height)]


async def test_a_thousand_hosts_in_one_screen_worst_first_and_one_expanded():
    app = GridApp()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, FleetScreen)
        screen.show(SNAPSHOT)
        await pilot.pause()
        grid = screen.query_one(HeatGrid)
        assert grid.packed
        assert grid.virtual_size.height <= grid.scrollable_content_region.height, "no scrolling needed"
        lines = drawn(grid)
        assert sum(len(line) for line in lines) == HOSTS, "every host's cell on screen"
        assert lines[0][:3] == "█!!", "worst first: the down host, then errors, then throttling"
        assert [row.key for row in grid.rows][:3] == [instance(DOWN), instance(ERRORS), instance(THROTTLED)]
        idle = next(row for row in grid.rows if row.key == instance(ONE_IDLE_GPU))
        assert idle.worst == 0.1, "coloured by its idlest GPU"

        table = screen.query_one(RowTable)
        await pilot.press("down")
        assert table.highlighted_key == grid.selected == instance(ERRORS), "the grid follows the table"
        await pilot.press("x")
        await pilot.pause()
        assert grid.expanded == instance(ERRORS)
        expanded = drawn(grid)[1]
        assert expanded.startswith("node-0700 ") and expanded.count("██") == 8, "its 8 GPUs below its line"
        assert sum(len(line) for line in drawn(grid)[2:]) + len(drawn(grid)[0]) == HOSTS, "still all on screen"
        await pilot.press("x")
        assert grid.expanded is None, "x again folds it"

        bar = str(screen.query_one(KeyBar).render())
        assert "GPUs of host" in bar and "Grid: hosts/GPUs" in bar
        await pilot.press("z")
        await pilot.pause()
        assert not grid.packed and grid.virtual_size.height == HOSTS, "one line of GPU cells per host"
        assert drawn(grid)[0].startswith("node-0500 ")


async def test_at_80_by_24_the_packed_grid_scrolls_to_the_highlighted_host():
    app = GridApp()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        screen.show(SNAPSHOT)
        await pilot.pause()
        grid = screen.query_one(HeatGrid)
        assert grid.packed and grid.virtual_size.height > grid.scrollable_content_region.height
        await pilot.press("end")
        await pilot.pause()
        last = screen.query_one(RowTable).highlighted_key
        assert grid.selected == last
        line = grid.line_of(last)
        assert line is not None and grid.scroll_offset.y <= line < grid.scroll_offset.y + grid.size.height
        await pilot.press("x")
        await pilot.pause()
        assert grid.expanded == last and grid.scroll_offset.y + grid.size.height > line + 1, "its GPUs in view"

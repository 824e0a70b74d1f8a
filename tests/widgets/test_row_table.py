"""RowTable: only visible rows are built and changed lines repainted, the cursor follows its key, rows scroll
under a fixed header with a scrollbar when they overflow, headers report clicks."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult

from pth_top.widgets.row_table import RowTable, TableColumn, column_widths, row_text
from tests.waiting import wait_until


class TableApp(App):
    def __init__(self) -> None:
        super().__init__()
        self.clicked: list[str] = []
        self.highlighted: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield RowTable()

    def on_row_table_header_clicked(self, event: RowTable.HeaderClicked) -> None:
        self.clicked.append(event.column_key)

    def on_row_table_highlighted(self, event: RowTable.Highlighted) -> None:
        self.highlighted.append(event.key)


def pid_command_table(app) -> RowTable:
    """The app's table with a 6-cell PID column and a flexible Command column."""
    table = app.query_one(RowTable)
    table.set_columns([TableColumn("pid", Text("PID"), 6), TableColumn("cmd", Text("Command"))])
    return table


def fill(table: RowTable, keys, asked: list[str]):
    def cells_of(key: str):
        asked.append(key)
        return (Text(key, justify="right"), Text(f"command {key}"))

    table.sync_rows(keys, cells_of)


def test_widths_and_cells_fit_the_columns():
    columns = [TableColumn("pid", Text("PID"), 5), TableColumn("cmd", Text("Command"))]
    assert column_widths(columns, 20) == [5, 14]
    line = row_text([Text("42", justify="right"), Text("a very long command line")], [5, 14])
    assert line.plain == "   42 a very long co"


async def test_only_rows_on_screen_are_built_even_with_a_thousand_rows():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        asked: list[str] = []
        fill(table, [str(i) for i in range(1000)], asked)
        await wait_until(pilot, lambda: asked, what="the rows on screen built")
        assert len(set(asked)) <= 11
        assert table.row_count == 1000


async def test_cursor_stays_on_its_key_when_rows_reorder_and_pages_move_it():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        table.focus()
        fill(table, [str(i) for i in range(100)], [])
        await pilot.press("down", "down")
        assert table.highlighted_key == "2"
        fill(table, [str(i) for i in reversed(range(100))], [])
        assert table.highlighted_key == "2"
        await pilot.press("home")
        assert table.highlighted_key == "99"
        await pilot.press("pagedown")
        assert table.highlighted_key == str(99 - 10)
        await pilot.press("end")
        assert table.highlighted_key == "0"
        fill(table, ["5", "6"], [])
        assert table.highlighted_key == "6", "a vanished key leaves the cursor on the nearest row"
        await wait_until(pilot, lambda: app.highlighted[-1:] == ["6"], what="the highlight message for row 6")


async def test_header_click_names_the_column_under_the_mouse():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        fill(table, ["1", "2"], [])
        await pilot.click(RowTable, offset=(2, 0))
        await pilot.click(RowTable, offset=(12, 0))
        await wait_until(pilot, lambda: len(app.clicked) == 2, what="both header clicks")
        assert app.clicked == ["pid", "cmd"]
        await pilot.click(RowTable, offset=(3, 2))
        assert table.highlighted_key == "2"


def spy_repaints(widget) -> list[tuple]:
    """The regions of each repaint the widget asks for from now on (a layout-only refresh is no repaint)."""
    repainted: list[tuple] = []
    original_refresh = widget.refresh

    def recording_refresh(*regions, **kwargs):
        if kwargs.get("repaint", True):
            repainted.append(regions)
        return original_refresh(*regions, **kwargs)

    widget.refresh = recording_refresh
    return repainted


def spy_rendered_lines(table: RowTable) -> list[int]:
    """Screen lines the table renders from now on (what the terminal is sent)."""
    rendered: list[int] = []
    original_render_line = table.render_line

    def recording_render_line(y: int):
        rendered.append(y)
        return original_render_line(y)

    table.render_line = recording_render_line
    return rendered


async def test_a_new_row_below_the_screen_repaints_nothing_and_a_moved_row_only_its_lines():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        keys = [str(i) for i in range(50)]
        asked: list[str] = []
        fill(table, keys, asked)
        await wait_until(pilot, lambda: asked, what="the first paint")
        repainted = spy_repaints(table)
        fill(table, keys + ["50"], [])
        assert repainted == []
        fill(table, ["1", "0"] + keys[2:], [])
        assert sorted(region.y for (region,) in repainted) == [1, 2]


async def test_a_row_count_change_and_a_changed_row_render_only_that_row():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        keys = [str(i) for i in range(50)]
        rendered = spy_rendered_lines(table)
        fill(table, keys, [])
        await wait_until(pilot, lambda: table.show_vertical_scrollbar and 11 in rendered, what="the table painted")
        await pilot.pause()
        rendered.clear()
        fill(table, keys + ["50", "51"], [])
        table.sync_rows(keys + ["50", "51"], lambda key: (
            Text(key, justify="right"), Text("changed" if key == "3" else f"command {key}")))
        await wait_until(pilot, lambda: rendered, what="the changed row painted")
        await pilot.pause()
        assert set(rendered) == {4}, "a new row count repaints no line of the table"


async def test_a_cell_whose_style_alone_changes_is_repainted():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        table.sync_rows(["1", "2"], lambda key: (Text(key), Text("idle", style="green")))
        await wait_until(pilot, lambda: table.row_count == 2 and table.size.height, what="the table laid out")
        await pilot.pause()
        rendered = spy_rendered_lines(table)
        table.sync_rows(["1", "2"], lambda key: (Text(key), Text("idle", style="red" if key == "2" else "green")))
        await wait_until(pilot, lambda: rendered, what="the restyled row painted")
        assert set(rendered) == {2}


async def test_the_scrollbar_shows_only_when_rows_overflow_and_columns_make_room_for_it():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(RowTable)
        table.set_columns([TableColumn("cmd", Text("Command")), TableColumn("cpu", Text("CPU%", justify="right"), 5)])
        table.sync_rows(["1"], lambda key: (Text("x"), Text("99.9", justify="right")))
        await pilot.pause()
        assert not table.show_vertical_scrollbar
        assert table.render_line(1).text.rstrip().endswith("99.9") and len(table.render_line(1).text.rstrip()) == 40
        table.sync_rows([str(i) for i in range(11)], lambda key: (Text("x"), Text("99.9", justify="right")))
        await pilot.pause()
        assert not table.show_vertical_scrollbar, "11 rows and the header fill 12 lines exactly"
        table.sync_rows([str(i) for i in range(12)], lambda key: (Text("x"), Text("99.9", justify="right")))
        await wait_until(pilot, lambda: table.show_vertical_scrollbar, what="the scrollbar for 12 rows")
        assert table.scrollbar_size_vertical == 1 and not table.show_horizontal_scrollbar
        assert len(table.render_line(1).text.rstrip()) == 39, "the last column ends left of the scrollbar"
        assert len(table.render_line(0).text.rstrip()) == 39


async def test_a_row_more_repaints_the_scrollbar_only_when_its_thumb_changes():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        scrollbar = table.vertical_scrollbar
        repainted = spy_repaints(scrollbar)
        for row_count, thumb_changes in ((1000, False), (20, True)):
            keys = [str(i) for i in range(row_count)]
            fill(table, keys, [])
            await wait_until(pilot, lambda: table.show_vertical_scrollbar, what="the scrollbar")
            await pilot.pause()
            repainted.clear()
            fill(table, keys + ["new"], [])
            assert scrollbar.window_virtual_size == row_count + 2, "the header and the rows"
            assert bool(repainted) is thumb_changes, f"{row_count} rows"


def wheel_down(app, table: RowTable) -> None:
    """One notch of the mouse wheel over the table's rows, as the terminal driver reports it."""
    x, y = table.region.offset + (5, 5)
    app.post_message(events.MouseScrollDown(None, x, y, 0, 1, 0, False, False, False, screen_x=x, screen_y=y))


async def test_the_wheel_scrolls_rows_under_a_fixed_header_and_keys_bring_the_cursor_back():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        table.focus()
        fill(table, [str(i) for i in range(100)], [])
        await pilot.pause()
        wheel_down(app, table)
        wheel_down(app, table)
        await wait_until(pilot, lambda: table.scroll_offset.y > 0, what="the wheel to scroll")
        top = table.scroll_offset.y
        assert table.render_line(0).text.startswith("PID"), "the header stays at the top"
        assert table.render_line(1).text.split()[0] == str(top)
        assert table.highlighted_key == "0", "the wheel moves the view, not the cursor"
        await pilot.click(RowTable, offset=(3, 2))
        assert table.highlighted_key == str(top + 1), "a click picks the row under the mouse"
        fill(table, [str(i) for i in range(100)], [])
        assert table.scroll_offset.y == top, "a refresh keeps the scrolled view"
        await pilot.press("home")
        assert table.scroll_offset.y == 0
        for _ in range(15):
            await pilot.press("down")
        assert table.highlighted_key == "15"
        assert table.scroll_offset.y == 15 - 11 + 1, "the cursor's row is the last line on screen"


async def test_fewer_rows_pull_the_view_up_so_no_blank_lines_are_left_below():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        table.focus()
        fill(table, [str(i) for i in range(100)], [])
        await pilot.press("end")
        assert table.scroll_offset.y == 100 - 11
        fill(table, [str(i) for i in range(20)], [])
        assert table.highlighted_key == "19"
        assert table.scroll_offset.y == 20 - 11
        fill(table, [], [])
        assert table.highlighted_key is None and table.scroll_offset.y == 0
        await pilot.press("down", "end", "pageup")
        await wait_until(pilot, lambda: app.highlighted[-1:] == [None], what="the empty table's highlight")
        assert table.render_line(0).text.startswith("PID")


class AutoHeightApp(TableApp):
    CSS = "RowTable { height: auto; max-height: 6; }"


async def test_an_auto_height_table_grows_with_its_rows_then_scrolls():
    app = AutoHeightApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        fill(table, ["1", "2"], [])
        await wait_until(pilot, lambda: table.region.height == 3, what="the header and two rows")
        assert not table.show_vertical_scrollbar
        fill(table, [str(i) for i in range(10)], [])
        await wait_until(pilot, lambda: table.region.height == 6, what="the table at its max height")
        assert table.show_vertical_scrollbar


async def test_the_focused_table_binds_only_its_own_keys_not_the_scroll_containers():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        table.focus()
        await pilot.pause()
        table_bindings = {key: active.binding.id for key, active in app.active_bindings.items() if active.node is table}
        assert table_bindings == {
            "up": "row_table.up", "k_up": "row_table.up", "down": "row_table.down",
            "pageup": "row_table.page_up", "pagedown": "row_table.page_down",
            "home": "row_table.first", "end": "row_table.last",
        }, "left/right and ctrl+pageup/pagedown stay with the screen"

"""RowTable: only visible rows are built, the cursor follows its key, headers report clicks."""

from __future__ import annotations

from rich.text import Text
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


async def test_a_new_row_below_the_screen_repaints_nothing_and_a_moved_row_only_its_lines():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = pid_command_table(app)
        keys = [str(i) for i in range(50)]
        asked: list[str] = []
        fill(table, keys, asked)
        await wait_until(pilot, lambda: asked, what="the first paint")
        refreshed: list[tuple] = []
        original_refresh = table.refresh
        table.refresh = lambda *regions, **kwargs: (refreshed.append(regions), original_refresh(*regions, **kwargs))[1]
        fill(table, keys + ["50"], [])
        assert refreshed == []
        fill(table, ["1", "0"] + keys[2:], [])
        assert sorted(region.y for (region,) in refreshed) == [1, 2]

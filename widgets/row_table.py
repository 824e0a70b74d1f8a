"""A keyboard-first table that renders only the rows on screen and repaints only rows that changed.

Built on Textual's line API: with a thousand rows, a refresh costs what the visible rows cost. Rows
are keys in display order plus a function giving a key's cells, called only for visible rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

CellsOf = Callable[[str], Sequence[Text]]


@dataclass(frozen=True, slots=True)
class TableColumn:
    key: str
    label: Text
    width: int | None = None  # None: takes the remaining width


def column_widths(columns: Sequence[TableColumn], total_width: int) -> list[int]:
    """Fixed widths as given; flexible columns share what is left (at least 1 cell each)."""
    fixed = sum(column.width or 0 for column in columns) + max(0, len(columns) - 1)
    flexible = [column for column in columns if column.width is None]
    spare = max(len(flexible), total_width - fixed)
    share = spare // len(flexible) if flexible else 0
    return [column.width if column.width is not None else share for column in columns]


def row_text(cells: Sequence[Text], widths: Sequence[int]) -> Text:
    """Cells cut or padded to their column widths, one space apart."""
    line = Text(no_wrap=True, overflow="crop")
    for index, (cell, width) in enumerate(zip(cells, widths)):
        if index:
            line.append(" ")
        piece = cell.copy()
        piece.truncate(width, overflow="crop")
        if piece.justify == "right":
            piece.pad_left(width - piece.cell_len)
        else:
            piece.pad_right(width - piece.cell_len)
        line.append_text(piece)
    return line


class RowTable(Widget, can_focus=True):
    """Rows with stable keys; the cursor stays on its key when rows move."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-table--header", "row-table--cursor"}
    """`row-table--header` styles the header line, `row-table--cursor` the highlighted row."""

    DEFAULT_CSS = """
    RowTable {
        height: 1fr;
    }
    RowTable > .row-table--header {
        text-style: bold;
        background: $panel;
    }
    RowTable > .row-table--cursor {
        background: $primary 40%;
    }
    RowTable:focus > .row-table--cursor {
        background: $primary;
        color: $text;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k_up", "cursor(-1)", "Up", show=False, id="row_table.up"),
        Binding("down", "cursor(1)", "Down", show=False, id="row_table.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="row_table.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="row_table.page_down"),
        Binding("home", "edge(0)", "First row", show=False, id="row_table.first"),
        Binding("end", "edge(1)", "Last row", show=False, id="row_table.last"),
    ]

    class Highlighted(Message):
        """The cursor moved to another row (key None: the table is empty)."""

        def __init__(self, table: "RowTable", key: str | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> "RowTable":
            return self.table

    class HeaderClicked(Message):
        """A column header was clicked."""

        def __init__(self, table: "RowTable", column_key: str) -> None:
            super().__init__()
            self.table = table
            self.column_key = column_key

        @property
        def control(self) -> "RowTable":
            return self.table

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.columns: list[TableColumn] = []
        self._keys: list[str] = []
        self._index_of: dict[str, int] = {}
        self._cells_of: CellsOf = lambda key: ()
        self._cursor = 0
        self._top = 0
        self._drawn: dict[int, tuple[str, tuple[Text, ...], bool]] = {}
        self._laid_out_row_count = 0

    @property
    def row_keys(self) -> list[str]:
        return list(self._keys)

    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def highlighted_key(self) -> str | None:
        return self._keys[self._cursor] if self._keys else None

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """With `height: auto`: the header plus every row."""
        return 1 + len(self._keys)

    def get_row(self, key: str) -> Sequence[Text]:
        return self._cells_of(key)

    def set_columns(self, columns: Sequence[TableColumn]) -> None:
        self.columns = list(columns)
        self._drawn.clear()
        self.refresh()

    def set_column_label(self, key: str, label: Text) -> None:
        self.columns = [TableColumn(c.key, label, c.width) if c.key == key else c for c in self.columns]
        self.refresh(Region(0, 0, self.size.width, 1))

    def sync_rows(self, keys: Sequence[str], cells_of: CellsOf) -> None:
        """Show `keys` in this order; only rows on screen have their cells built and compared."""
        selected = self.highlighted_key
        self._keys = list(keys)
        self._index_of = {key: index for index, key in enumerate(self._keys)}
        self._cells_of = cells_of
        if len(self._keys) != self._laid_out_row_count:
            self._laid_out_row_count = len(self._keys)
            # Only an auto-height table changes size with its row count; any other only repaints changed lines.
            if self.styles.height and self.styles.height.is_auto:
                self.refresh(layout=True)
        old_cursor = self._cursor
        if selected in self._index_of:
            self._cursor = self._index_of[selected]
        else:
            self._cursor = min(self._cursor, max(0, len(self._keys) - 1))
        self._keep_cursor_visible(follow=self._cursor != old_cursor and selected in self._index_of)
        self._refresh_changed_rows()
        if self.highlighted_key != selected:
            self.post_message(self.Highlighted(self, self.highlighted_key))

    def move_cursor_to_key(self, key: str) -> None:
        if key in self._index_of:
            self._move_cursor(self._index_of[key])

    @property
    def _visible_row_count(self) -> int:
        return max(0, self.size.height - 1)

    def _keep_cursor_visible(self, follow: bool = True) -> None:
        rows = self._visible_row_count
        if rows <= 0:
            return
        if follow:
            if self._cursor < self._top:
                self._top = self._cursor
            elif self._cursor >= self._top + rows:
                self._top = self._cursor - rows + 1
        self._top = max(0, min(self._top, max(0, len(self._keys) - rows)))

    def _refresh_changed_rows(self) -> None:
        """Repaint only the screen lines whose row, cells or cursor state differ from the last paint."""
        width = self.size.width
        for line in range(1, self._visible_row_count + 1):
            index = self._top + line - 1
            drawn = self._drawn.get(line)
            if index >= len(self._keys):
                if drawn is not None:
                    self._drawn.pop(line)
                    self.refresh(Region(0, line, width, 1))
                continue
            key = self._keys[index]
            state = (key, tuple(self._cells_of(key)), index == self._cursor)
            if drawn != state:
                self.refresh(Region(0, line, width, 1))

    def _move_cursor(self, index: int) -> None:
        if not self._keys:
            return
        index = max(0, min(index, len(self._keys) - 1))
        if index == self._cursor:
            return
        top_before = self._top
        self._cursor = index
        self._keep_cursor_visible()
        if self._top != top_before:
            self.refresh()
        else:
            self._refresh_changed_rows()
        self.post_message(self.Highlighted(self, self.highlighted_key))

    def action_cursor(self, step: int) -> None:
        self._move_cursor(self._cursor + step)

    def action_page(self, direction: int) -> None:
        self._move_cursor(self._cursor + direction * max(1, self._visible_row_count - 1))

    def action_edge(self, end: int) -> None:
        self._move_cursor(len(self._keys) - 1 if end else 0)

    def on_resize(self) -> None:
        self._drawn.clear()
        self._keep_cursor_visible()

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            x = 0
            for column, width in zip(self.columns, column_widths(self.columns, self.size.width)):
                if x <= event.x < x + width + 1:
                    self.post_message(self.HeaderClicked(self, column.key))
                    return
                x += width + 1
            return
        self._move_cursor(self._top + event.y - 1)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._scroll(3)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._scroll(-3)

    def _scroll(self, rows: int) -> None:
        top = max(0, min(self._top + rows, max(0, len(self._keys) - self._visible_row_count)))
        if top != self._top:
            self._top = top
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        widths = column_widths(self.columns, width)
        if y == 0:
            header_style = self.get_component_rich_style("row-table--header")
            return self._strip(row_text([column.label for column in self.columns], widths), width, header_style)
        index = self._top + y - 1
        base_style = self.rich_style
        if index >= len(self._keys):
            self._drawn.pop(y, None)
            return Strip.blank(width, base_style)
        key = self._keys[index]
        cells = tuple(self._cells_of(key))
        is_cursor = index == self._cursor
        self._drawn[y] = (key, cells, is_cursor)
        style = self.get_component_rich_style("row-table--cursor") if is_cursor else base_style
        return self._strip(row_text(cells, widths), width, style)

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        segments = list(text.render(self.app.console))
        return Strip(segments).apply_style(style).crop_extend(0, width, style)

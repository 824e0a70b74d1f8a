"""A keyboard-first table that renders only the rows on screen and repaints only rows that changed.

Built on Textual's ScrollView: the framework owns the virtual size, the scroll offset and the scrollbar;
the header line stays fixed above the scrolled rows. Rows are keys in display order plus a function giving
a key's cells, called only for rows on screen, so with a thousand rows a refresh costs what the visible
rows cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Hashable, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

CellsOf = Callable[[str], Sequence[Text]]
# Everything that decides how a row's cells look: text, cell style, justification, styled spans.
CellsLook = tuple[tuple[str, Hashable, str | None, tuple[Hashable, ...]], ...]
# What a screen line shows: row key, its cells, whether the cursor is on it.
DrawnLine = tuple[str, tuple[Text, ...], bool]

HEADER_HEIGHT = 1
# Enough for every row on a tall screen plus a few pages scrolled through.
STRIP_CACHE_SIZE = 1024


@dataclass(frozen=True, slots=True)
class TableColumn:
    key: str
    label: Text
    width: int | None = None  # None: takes the remaining width


@dataclass(frozen=True, slots=True)
class PaintContext:
    """What every line of one paint shares."""

    width: int
    rows_width: int  # the width less the scrollbar
    column_widths: list[int]
    first_index: int  # the row on the first line below the header
    row_style: Style
    cursor_style: Style
    header_style: Style


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
    for index, (cell, width) in enumerate(zip(cells, widths, strict=False)):
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


def cells_look(cells: Sequence[Text]) -> CellsLook:
    """A hashable summary of how cells render (`Text ==` compares only text and spans, not style)."""
    return tuple((cell.plain, cell.style, cell.justify, tuple(cell.spans)) for cell in cells)


def cells_look_alike(cells: Sequence[Text], other: Sequence[Text]) -> bool:
    """Whether two rows of cells render the same: `cells_look` compared, stopping at the first difference."""
    return cells is other or (len(cells) == len(other) and all(
        a.plain == b.plain and a.style == b.style and a.justify == b.justify and a.spans == b.spans
        for a, b in zip(cells, other, strict=True)))


class RowTable(ScrollView, can_focus=True, inherit_bindings=False):
    """Rows with stable keys; the cursor stays on its key when rows move."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-table--header", "row-table--cursor"}
    """`row-table--header` styles the header line, `row-table--cursor` the highlighted row."""

    DEFAULT_CSS = """
    RowTable {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
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
        # Cells built since the last sync_rows, by row key: each visible row is built once per sync.
        self._cells_by_key: dict[str, tuple[Text, ...]] = {}
        self._cursor = 0
        self._drawn: dict[int, DrawnLine] = {}
        self._paint: PaintContext | None = None
        self._strip_cache: LRUCache[tuple[CellsLook, Style, int, int], Strip] = LRUCache(STRIP_CACHE_SIZE)
        self.set_reactive(RowTable.virtual_size, Size(0, HEADER_HEIGHT))

    @property
    def row_keys(self) -> list[str]:
        return list(self._keys)

    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def highlighted_key(self) -> str | None:
        return self._keys[self._cursor] if self._keys else None

    def get_row(self, key: str) -> Sequence[Text]:
        return self._cells(key)

    def set_columns(self, columns: Sequence[TableColumn]) -> None:
        self.columns = list(columns)
        self._drawn.clear()
        self._strip_cache.clear()
        self.refresh()

    def set_column_label(self, key: str, label: Text) -> None:
        self.columns = [TableColumn(c.key, label, c.width) if c.key == key else c for c in self.columns]
        self.refresh(Region(0, 0, self.size.width, HEADER_HEIGHT))

    def sync_rows(self, keys: Sequence[str], cells_of: CellsOf, follow_key: bool = True) -> None:
        """Show `keys` in this order; only rows on screen have their cells built and compared.

        The cursor stays on its key (`follow_key`) or on its row position, as htop without "follow".
        """
        selected = self.highlighted_key
        self._keys = list(keys)
        self._index_of = {key: index for index, key in enumerate(self._keys)}
        self._cells_of = cells_of
        self._cells_by_key = {}
        self._set_row_count(len(self._keys))
        old_cursor = self._cursor
        followed_index = self._index_of.get(selected) if follow_key and selected is not None else None
        following = followed_index is not None
        if followed_index is not None:
            self._cursor = followed_index
        else:
            self._cursor = min(self._cursor, max(0, len(self._keys) - 1))
        if not self._keep_cursor_visible(follow=self._cursor != old_cursor and following):
            self._refresh_changed_rows()
        if self.highlighted_key != selected:
            self.post_message(self.Highlighted(self, self.highlighted_key))

    def show_top(self) -> None:
        """Cursor on the first row, scrolled to the top."""
        moved = self._cursor != 0
        self._cursor = 0
        if self.scroll_offset.y:
            self.scroll_to(y=0, animate=False, force=True)
        else:
            self._refresh_changed_rows()
        if moved and self._keys:
            self.post_message(self.Highlighted(self, self.highlighted_key))

    def move_cursor_to_key(self, key: str) -> None:
        if key in self._index_of:
            self._move_cursor(self._index_of[key])

    def _set_row_count(self, row_count: int) -> None:
        """Size the scrolled area for `row_count` rows without repainting the lines on screen.

        The virtual size is set without its reactive's full repaint; the lines that changed are repainted
        by `_refresh_changed_rows`. A layout pass (~5 ms per update in tests/perf/row_table_refresh.py)
        runs only when the table's height or the scrollbar's presence changes.
        """
        virtual_size = Size(0, HEADER_HEIGHT + row_count)
        if virtual_size == self.virtual_size:
            return
        self.set_reactive(RowTable.virtual_size, virtual_size)
        overflows = virtual_size.height > self.container_size.height
        auto_height = bool(self.styles.height and self.styles.height.is_auto)
        if auto_height or overflows != self.show_vertical_scrollbar:
            self.refresh(repaint=False, layout=True)
        elif self.show_vertical_scrollbar:
            self._resize_scrollbar_thumb(virtual_size.height)

    def _resize_scrollbar_thumb(self, virtual_height: int) -> None:
        """Give the scrollbar the new height, repainting it only when its thumb is drawn differently.

        Repainting the bar costs ~3 ms per update; with hundreds of rows a row more or less rarely moves the thumb.
        """
        scrollbar = self.vertical_scrollbar

        def drawn_bar(height: int) -> list[Segment]:
            # As ScrollBar draws itself: no thumb when the window shows everything.
            window_size = scrollbar.window_size if scrollbar.window_size < height else 0
            return ScrollBarRender.render_bar(size=scrollbar.size.height, virtual_size=height,
                                              window_size=window_size, position=scrollbar.position).segments

        if drawn_bar(virtual_height) == drawn_bar(scrollbar.window_virtual_size):
            scrollbar.set_reactive(ScrollBar.window_virtual_size, virtual_height)
        else:
            scrollbar.window_virtual_size = virtual_height

    def _cells(self, key: str) -> tuple[Text, ...]:
        cells = self._cells_by_key.get(key)
        if cells is None:
            cells = self._cells_by_key[key] = tuple(self._cells_of(key))
        return cells

    @property
    def _first_visible_index(self) -> int:
        return self.scroll_offset.y

    @property
    def _visible_row_count(self) -> int:
        return max(0, self.size.height - HEADER_HEIGHT)

    def _keep_cursor_visible(self, follow: bool = True) -> bool:
        """Scroll so the cursor's row is on screen (when following it) and no space is left below the rows.

        Returns whether it scrolled (a scroll repaints every line).
        """
        rows = self._visible_row_count
        if rows <= 0:
            return False
        top = self._first_visible_index
        if follow:
            if self._cursor < top:
                top = self._cursor
            elif self._cursor >= top + rows:
                top = self._cursor - rows + 1
        top = max(0, min(top, max(0, len(self._keys) - rows)))
        if top == self._first_visible_index:
            return False
        self.scroll_to(y=top, animate=False, force=True)
        return True

    def _refresh_changed_rows(self) -> None:
        """Repaint only the screen lines whose row, cells or cursor state differ from the last paint."""
        width = self.size.width
        top = self._first_visible_index
        for line in range(HEADER_HEIGHT, HEADER_HEIGHT + self._visible_row_count):
            index = top + line - HEADER_HEIGHT
            drawn = self._drawn.get(line)
            if index >= len(self._keys):
                if drawn is not None:
                    self._drawn.pop(line)
                    self.refresh(Region(0, line, width, 1))
                continue
            key = self._keys[index]
            if (drawn is None or drawn[0] != key or drawn[2] != (index == self._cursor)
                    or not cells_look_alike(drawn[1], self._cells(key))):
                self.refresh(Region(0, line, width, 1))

    def _move_cursor(self, index: int) -> None:
        if not self._keys:
            return
        index = max(0, min(index, len(self._keys) - 1))
        if index == self._cursor:
            return
        self._cursor = index
        if not self._keep_cursor_visible():
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
        if event.y < HEADER_HEIGHT:
            x = 0
            for column, width in zip(self.columns, column_widths(self.columns, self._rows_width), strict=True):
                if x <= event.x < x + width + 1:
                    self.post_message(self.HeaderClicked(self, column.key))
                    return
                x += width + 1
            return
        self._move_cursor(self._first_visible_index + event.y - HEADER_HEIGHT)

    @property
    def _rows_width(self) -> int:
        """The width the columns share: the content width less the vertical scrollbar, when shown."""
        return max(0, self.size.width - self.scrollbar_size_vertical)

    def render_lines(self, crop: Region) -> list[Strip]:
        # The lines of one paint share one PaintContext: `rich_style` alone walks the ancestors (~90 us a line).
        self._paint = self._paint_context()
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def _paint_context(self) -> PaintContext:
        rows_width = self._rows_width
        return PaintContext(
            width=self.size.width, rows_width=rows_width, column_widths=column_widths(self.columns, rows_width),
            first_index=self._first_visible_index, row_style=self.rich_style,
            cursor_style=self.get_component_rich_style("row-table--cursor"),
            header_style=self.get_component_rich_style("row-table--header"))

    def render_line(self, y: int) -> Strip:
        paint = self._paint or self._paint_context()
        if y < HEADER_HEIGHT:
            labels = [column.label for column in self.columns]
            return self._strip(row_text(labels, paint.column_widths), paint.width, paint.header_style)
        index = paint.first_index + y - HEADER_HEIGHT
        if index >= len(self._keys):
            self._drawn.pop(y, None)
            return Strip.blank(paint.width, paint.row_style)
        key = self._keys[index]
        cells = self._cells(key)
        is_cursor = index == self._cursor
        self._drawn[y] = (key, cells, is_cursor)
        style = paint.cursor_style if is_cursor else paint.row_style
        cache_key = (cells_look(cells), style, paint.rows_width, paint.width)
        strip = self._strip_cache.get(cache_key)
        if strip is None:
            strip = self._strip_cache[cache_key] = self._strip(row_text(cells, paint.column_widths), paint.width, style)
        return strip

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        segments = list(text.render(self.app.console))
        return Strip(segments).apply_style(style).crop_extend(0, width, style)

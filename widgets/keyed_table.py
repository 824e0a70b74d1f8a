"""A DataTable whose rows carry stable keys and are synced in place on every refresh."""

from __future__ import annotations

from typing import Any, Sequence

from textual.widgets import DataTable


class KeyedTable(DataTable):
    """Rows keyed by a string (a PID, a GPU index); `sync_rows` updates only what changed.

    The cursor stays on the same key across refreshes, and the row order follows the order given.
    The first column must display the row's key (it is used to re-order rows cheaply).
    """

    DEFAULT_CSS = """
    KeyedTable {
        height: 1fr;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._order: list[str] = []

    def set_columns(self, columns: Sequence[tuple[str, str, int | None]]) -> None:
        """Replace all columns, given as (key, label, width); rows are dropped and re-added on next sync."""
        self.clear(columns=True)
        self._order = []
        for key, label, width in columns:
            self.add_column(label, key=key, width=width)

    @property
    def highlighted_key(self) -> str | None:
        """The key of the row under the cursor, or None when the table is empty."""
        if not self.row_count:
            return None
        row_index = min(self.cursor_row, self.row_count - 1)
        return self.ordered_rows[row_index].key.value

    def sync_rows(self, rows: Sequence[tuple[str, Sequence[Any]]]) -> None:
        """Make the table show exactly `rows` (key, cells), in that order."""
        selected = self.highlighted_key
        wanted = {key: cells for key, cells in rows}
        columns = [column.key for column in self.ordered_columns]
        for key in [key for key in self._order if key not in wanted]:
            self.remove_row(key)
        present = set(self._order) & wanted.keys()
        for key, cells in rows:
            if key in present:
                old_cells = self.get_row(key)
                for column_key, old, new in zip(columns, old_cells, cells):
                    if old != new:
                        self.update_cell(key, column_key, new)
            else:
                self.add_row(*cells, key=key)
        order = [key for key, _ in rows]
        rank = {key: index for index, key in enumerate(order)}
        if [row.key.value for row in self.ordered_rows] != order:
            self.sort(columns[0], key=lambda key_cell: rank[str(key_cell)])
        self._order = order
        if selected in rank and rank[selected] != self.cursor_row:
            self.move_cursor(row=rank[selected], scroll=False)

"""The htop part: a keyed process table with sort, filter and tree view, plus a status line."""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input

from pth_top.sensors.model import ProcessSample
from pth_top.sensors.na import is_na
from pth_top.text import printable
from pth_top.tui.process_view import (
    ProcessColumn,
    ProcessLine,
    ProcessView,
    process_cells,
    visible_columns,
    visible_lines,
)
from pth_top.widgets.quiet_static import QuietStatic
from pth_top.widgets.row_table import RowTable, TableColumn

FILTER_PLACEHOLDER = "filter: command, user or PID (Enter keeps it, Esc clears)"


class ProcessPanel(Vertical):
    """Shows processes as `view` says; posts `ViewChanged` when the user sorts or filters here."""

    DEFAULT_CSS = """
    ProcessPanel { height: 1fr; min-height: 4; }
    ProcessPanel #process-filter { display: none; height: 1; border: none; padding: 0 1; }
    ProcessPanel.-filtering #process-filter { display: block; }
    ProcessPanel #process-table { height: 1fr; }
    ProcessPanel #process-status { height: 1; padding: 0 1; background: $panel; }
    """

    class ViewChanged(Message):
        def __init__(self, view: ProcessView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.view = ProcessView()
        self._processes: Sequence[ProcessSample] = ()
        self._by_pid: dict[int, ProcessSample] = {}
        self._columns: tuple[ProcessColumn, ...] = visible_columns(show_gpu_columns=False)
        # Cells built at the last refresh, by row key: reused while the line's process object is the same.
        self._cells_by_key: dict[str, tuple[ProcessLine, tuple[Text, ...]]] = {}

    def compose(self) -> ComposeResult:
        # The filter Input is mounted on the first `/`, so start-up does not pay for it.
        yield RowTable(id="process-table")
        yield QuietStatic(id="process-status")

    @property
    def table(self) -> RowTable:
        return self.query_one("#process-table", RowTable)

    @property
    def selected_process(self) -> ProcessSample | None:
        key = self.table.highlighted_key
        return self._by_pid.get(int(key)) if key else None

    def on_mount(self) -> None:
        self._apply_columns()

    @property
    def columns(self) -> tuple[ProcessColumn, ...]:
        """The columns shown now (sorting keys step only through these)."""
        return self._columns

    def show(self, processes: Sequence[ProcessSample], show_gpu_columns: bool) -> None:
        columns = visible_columns(
            show_gpu_columns,
            show_gpu_util=any(not is_na(use.sm_util_percent) for process in processes for use in process.gpu_uses),
            show_container=any(process.container for process in processes),
        )
        if columns != self._columns:
            self._columns = columns
            self._apply_columns()
        self._processes = processes
        self._by_pid = {process.pid: process for process in processes}
        self._render_rows()

    def set_view(self, view: ProcessView) -> None:
        """Show the table as `view` says; a new sort, filter or row set starts at the top unless following."""
        rows_changed = replace(view, follow=self.view.follow) != self.view
        self.view = view
        self._render_rows()
        if rows_changed and not view.follow:
            self.table.show_top()
        self._relabel_headers()

    def _apply_columns(self) -> None:
        self._cells_by_key = {}
        self.table.set_columns(
            [TableColumn(column.key, self._header_label(column), column.width) for column in self._columns]
        )

    def _header_label(self, column: ProcessColumn) -> Text:
        arrow = ("▼" if self.view.descending else "▲") if column.key == self.view.sort_column else ""
        right_aligned = column.width and column.key not in ("user", "gpu", "state")
        return Text(column.label + arrow, justify="right" if right_aligned else "left")

    def _render_rows(self) -> None:
        lines = visible_lines(self._processes, self.view)
        line_by_key = {str(line.process.pid): line for line in lines}
        previous = self._cells_by_key
        built: dict[str, tuple[ProcessLine, tuple[Text, ...]]] = {}
        self._cells_by_key = built
        columns = self._columns

        def cells_of(key: str) -> tuple[Text, ...]:
            # Only rows on screen are asked for; an unchanged process (same sample object) keeps its cells.
            line = line_by_key[key]
            known = built.get(key) or previous.get(key)
            if known is None or known[0].process is not line.process or known[0].tree_prefix != line.tree_prefix:
                known = (line, process_cells(line, columns))
            built[key] = known
            return known[1]

        self.table.sync_rows(list(line_by_key), cells_of, follow_key=self.view.follow)
        self._show_status(len(lines))

    def _relabel_headers(self) -> None:
        for column in self._columns:
            self.table.set_column_label(column.key, self._header_label(column))

    def _show_status(self, shown: int) -> None:
        # What changes the rows comes first, so a narrow terminal cuts only the counts and hints.
        view = self.view
        text = Text(no_wrap=True, overflow="ellipsis")
        if view.filter_text:
            text.append("filter: ", style="bold")
            text.append(printable(view.filter_text), style="bold yellow")
            text.append("  ")
        if view.gpu_only:
            text.append("GPU only  ", style="bold magenta")
        text.append(f"{shown}/{len(self._processes)} processes")
        if view.follow:
            text.append("  following PID", style="bold")
        gpu_processes = sum(1 for process in self._processes if process.has_gpu_context)
        if gpu_processes:
            text.append(f"  {gpu_processes} using a GPU", style="magenta")
        if not view.show_kernel_threads:
            hidden = sum(1 for process in self._processes if process.is_kernel_thread)
            if hidden:
                text.append(f"  {hidden} kernel thread{'s' if hidden != 1 else ''} hidden (K shows)", style="dim")
        self.query_one("#process-status", QuietStatic).update(text, layout=False)

    async def start_filter(self) -> None:
        self.add_class("-filtering")
        filter_input = self._filter_input
        if filter_input is None:
            filter_input = Input(self.view.filter_text, placeholder=FILTER_PLACEHOLDER, id="process-filter")
            await self.mount(filter_input, before=self.table)
        else:
            filter_input.value = self.view.filter_text
        # Focus now, not later: keys typed (or pasted) right after "/" already wait behind this action.
        self.screen.set_focus(filter_input)

    @property
    def filter_has_focus(self) -> bool:
        filter_input = self._filter_input
        return filter_input is not None and filter_input.has_focus

    def type_into_filter(self, text: str) -> None:
        if (filter_input := self._filter_input) is not None:
            filter_input.insert_text_at_cursor(text)

    @property
    def _filter_input(self) -> Input | None:
        return next(self.query_children("#process-filter").results(Input), None)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        shown = printable(event.value)
        if shown != event.value:
            # A pasted control character is shown, and matched, as its escape: as the table shows it.
            event.input.value = shown
            return
        self.post_message(self.ViewChanged(replace(self.view, filter_text=event.value.strip())))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.remove_class("-filtering")
        self.table.focus()

    def clear_filter(self) -> bool:
        """Clear the filter; False when there was none to clear."""
        had_filter = bool(self.view.filter_text) or self.has_class("-filtering")
        self.remove_class("-filtering")
        filter_input = self._filter_input
        if filter_input is not None:
            filter_input.value = ""
        self.table.focus()
        return had_filter

    def on_row_table_header_clicked(self, event: RowTable.HeaderClicked) -> None:
        event.stop()
        self.post_message(self.ViewChanged(self.view.sorted_by(event.column_key)))

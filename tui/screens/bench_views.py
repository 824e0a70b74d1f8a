"""The Bench screen's parts that only draw: a kernel's progress line, the results table, the %-of-peak bars."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Checkbox, DataTable, Label, ProgressBar

from pth_top.benches.client.rows import COLUMNS, Row, format_row, row_from_dict
from pth_top.benches.client.runs import RunRecord, compare, row_key
from pth_top.text import printable
from pth_top.widgets.bar_chart import Bar

NOTE_COLUMN = COLUMNS.index("note")


class KernelProgress(Horizontal):
    """One line per kernel and device: name, progress bar, last message (which takes the width left)."""

    DEFAULT_CSS = """
    KernelProgress { height: 1; }
    KernelProgress > Label { width: 18; }
    KernelProgress > ProgressBar { width: auto; }
    KernelProgress > ProgressBar Bar { width: 20; }
    KernelProgress > .message { width: 1fr; min-width: 8; color: $text-muted; padding-left: 1; }
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
        self.query_one(".message", Label).update(Text(printable(message, 200), no_wrap=True, overflow="ellipsis"))


def add_columns(table: DataTable) -> None:
    for column in COLUMNS:
        table.add_column(column, key=column)


def add_row(table: DataTable, stored: dict, baseline: RunRecord | None) -> None:
    """Append one stored row (a result or an error) with its Δ% against `baseline`."""
    row: Row = row_from_dict(stored)
    delta = compare([stored], baseline.rows).get(row_key(stored)) if baseline else None
    cells = format_row(row, delta)
    texts = [Text(cell) for cell in cells.cells()]
    if cells.is_error:
        texts[COLUMNS.index("value")] = Text(cells.value, style="bold red")
    key = "|".join(row_key(stored))
    if key in table.rows:
        key = f"{key}|{len(table.rows)}"
    table.add_row(*texts, key=key)


def fill_table(table: DataTable, record: RunRecord | None, baseline: RunRecord | None) -> None:
    table.clear()
    if record is not None:
        for stored in record.rows + record.errors:
            add_row(table, stored, baseline)


def highlighted_note(table: DataTable) -> str:
    """The full note of the row under the cursor (the note column is cut on narrow terminals)."""
    if not table.row_count:
        return ""
    row = table.get_row_at(max(0, min(table.cursor_row, table.row_count - 1)))
    return str(row[NOTE_COLUMN])


def peak_bars(record: RunRecord | None) -> tuple[Bar, ...]:
    """One bar per result with a known % of peak; the device joins the label when the run has several."""
    rows = [row for row in (record.rows if record else []) if row.get("percent_of_peak") is not None]
    several_devices = len({row.get("device") for row in rows}) > 1
    bars = []
    for row in rows:
        label = f"{row['device']} {row['kernel']} {row['variant']}" if several_devices else \
            f"{row['kernel']} {row['variant']}"
        label += " (noisy)" if row.get("noisy") else ""  # its % of peak is not to be read as exact
        bars.append(Bar(printable(label, 60), float(row["percent_of_peak"])))
    return tuple(bars)


def device_checkbox_id(device_id: str) -> str:
    """A widget id for a device's checkbox ("cuda:0" -> "device-cuda-0"); "" for an id unfit for one."""
    checkbox_id = "device-" + device_id.replace(":", "-")
    return checkbox_id if checkbox_id.replace("-", "").replace("_", "").isalnum() and checkbox_id.isascii() else ""


def sync_device_checkboxes(row: Horizontal, devices: tuple[dict, ...]) -> None:
    """One checkbox per device (GPUs ticked when they appear); checkboxes of devices gone are removed."""
    wanted = {device_checkbox_id(device["id"]) for device in devices}
    for checkbox in list(row.query(Checkbox)):
        if checkbox.id not in wanted:
            checkbox.remove()
    for device in devices:
        checkbox_id = device_checkbox_id(device["id"])
        if checkbox_id and not row.query(f"#{checkbox_id}"):
            row.mount(Checkbox(device["id"], device["id"].startswith("cuda"), id=checkbox_id, name=device["id"]))

"""The replay's event list (sortable, filtered by `/`, Enter jumps to the event) and its jump-to-time prompt."""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from pth_top.text import printable
from pth_top.tui.screens.table_sort import SortedByColumn, sort_bindings
from pth_top.widgets.key_bar import KeyBar
from pth_top.widgets.row_table import RowTable, TableColumn

# (key, label, width); None takes the rest.
COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("time", "TIME", 15), ("severity", "SEVERITY", 9), ("kind", "KIND", 16), ("gpu", "GPU", 4),
    ("pid", "PID", 8), ("message", "MESSAGE", None),
)
SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow"}


def _sort_value(event: dict[str, Any], key: str) -> tuple:
    value = {"time": event["time_s"], "severity": event["severity"], "kind": event["kind"],
             "gpu": event["gpu_index"], "pid": event["pid"], "message": event["message"]}[key]
    return (value is not None, value if value is not None else 0, event["time_s"])


class EventListScreen(SortedByColumn, Screen[dict[str, Any] | None]):
    """The recording's events; dismissed with the chosen event (Enter) or None (Esc)."""

    sort_keys = tuple(key for key, _label, _width in COLUMNS)

    AUTO_FOCUS = "#events-table"
    BINDINGS = [
        Binding("escape,l", "back", "Back", id="events.back"),
        Binding("enter", "choose", "Jump there", id="events.choose"),
        Binding("slash", "filter", "Filter", id="events.filter", key_display="/"),
        *sort_bindings("events"),
    ]
    DEFAULT_CSS = """
    EventListScreen #events-title { height: 1; padding: 0 1; background: $panel; }
    EventListScreen #events-filter { display: none; }
    EventListScreen.-filtering #events-filter { display: block; }
    EventListScreen #events-table { height: 1fr; }
    """

    def __init__(self, events: Sequence[dict[str, Any]]) -> None:
        super().__init__()
        self.all_events = list(events)
        self.sort_key = "time"
        self.descending = False
        self.filter_text = ""
        self._shown: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static(id="events-title")
        yield Input(placeholder="filter: kind, severity, message", id="events-filter")
        yield RowTable(id="events-table")
        yield KeyBar()

    def on_mount(self) -> None:
        self._show()

    def _show(self) -> None:
        table = self.query_one(RowTable)
        table.set_columns([TableColumn(key, Text(label + (("▼" if self.descending else "▲")
                                                          if key == self.sort_key else "")), width)
                           for key, label, width in COLUMNS])
        needle = self.filter_text.lower()
        chosen = [(str(position), event) for position, event in enumerate(self.all_events)
                  if not needle or needle in f"{event['kind']} {event['severity']} {event['message']}".lower()]
        chosen.sort(key=lambda item: _sort_value(item[1], self.sort_key), reverse=self.descending)
        self._shown = dict(chosen)
        title = f"Events: {len(chosen)} of {len(self.all_events)}   Enter jumps there"
        if self.filter_text:
            title += f"   filter /{printable(self.filter_text, 30)}"
        self.query_one("#events-title", Static).update(Text(title, no_wrap=True, overflow="ellipsis"))
        table.sync_rows(list(self._shown), lambda key: self._cells(self._shown[key]))

    def _cells(self, event: dict[str, Any]) -> Sequence[Text]:
        def cell(value: object, style: str = "", justify: str = "left") -> Text:
            return Text(printable(str(value), 300), style=style, no_wrap=True, overflow="ellipsis",
                        justify=justify)  # type: ignore[arg-type]

        moment = dt.datetime.fromtimestamp(event["time_s"]).strftime("%m-%d %H:%M:%S")
        return (
            cell(moment), cell(event["severity"], SEVERITY_STYLE.get(event["severity"], "")), cell(event["kind"]),
            cell("-" if event["gpu_index"] is None else event["gpu_index"], justify="right"),
            cell("-" if event["pid"] is None else event["pid"], justify="right"), cell(event["message"]),
        )

    def action_choose(self) -> None:
        key = self.query_one(RowTable).highlighted_key
        if key is None or key not in self._shown:
            self.notify("no event selected", severity="warning")
            return
        self.dismiss(self._shown[key])

    def action_back(self) -> None:
        if self.has_class("-filtering"):
            self.remove_class("-filtering")
            self.query_one(Input).value = ""
            self.query_one(RowTable).focus()
            return
        self.dismiss(None)

    def action_filter(self) -> None:
        self.add_class("-filtering")
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter_text = event.value.strip()
        self._show()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_one(RowTable).focus()

    def resort(self) -> None:
        self._show()


class JumpScreen(ModalScreen[str | None]):
    """Asks for a time: ISO, relative to the last sample (-10m), a Unix time or 'now'."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel", id="jump.cancel")]
    DEFAULT_CSS = """
    JumpScreen { align: center middle; }
    JumpScreen > Vertical { width: 64; max-width: 100%; height: auto; border: round $accent;
                            background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Jump to: 2025-01-31T14:05, -3m (before the last sample), a Unix time or now",
                         markup=False)
            yield Input(placeholder="-3m", id="jump-time")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

"""One answer field: label, an Input / Select / Checkbox bound to configs.answers.FIELDS (help and limits as
its tooltip), inline error."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Checkbox, Input, Label, Select, Static

from pth_top.configs.answers import FIELDS, FieldSpec


class FieldRow(Vertical):
    """A labelled control for `section.key`; posts Edited with the parsed value or the reason it is invalid."""

    DEFAULT_CSS = """
    FieldRow { height: auto; }
    FieldRow > Horizontal { height: auto; }
    FieldRow .field-label { width: 26; padding-right: 1; }
    FieldRow Input, FieldRow Select { width: 1fr; }
    FieldRow Checkbox { width: auto; }
    FieldRow .field-error { color: $error; height: auto; padding-left: 26; }
    FieldRow .field-error.-empty { display: none; }
    """

    class Edited(Message):
        def __init__(self, row: "FieldRow", value: Any, error: str | None) -> None:
            super().__init__()
            self.row = row
            self.value = value
            self.error = error

    def __init__(
        self, section: str, key: str, label: str, value: Any, options: list[tuple[str, str]] | None = None,
        spec: FieldSpec | None = None,
    ) -> None:
        super().__init__(id=f"row-{section}-{key}")
        self.section = section
        self.key = key
        self.label_text = label
        self.initial = value
        self.spec: FieldSpec = spec or FIELDS[section][key]
        self.options = options

    @property
    def control_id(self) -> str:
        return f"{self.section}-{self.key}"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(Text(self.label_text), classes="field-label")
            control: Select[str] | Checkbox | Input
            if self.options is not None or self.spec.kind == "choice":
                options = self.options or [(choice, choice) for choice in self.spec.choices]
                control = Select(options, value=self.initial, allow_blank=False, compact=True, id=self.control_id)
            elif self.spec.kind == "bool":
                control = Checkbox("on", value=bool(self.initial), compact=True, id=self.control_id)
            else:
                control = Input(value=_format(self.initial), compact=True, id=self.control_id, select_on_focus=False)
            control.tooltip = field_hint(self.spec) or None
            yield control
        yield Static("", classes="field-error -empty", markup=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            value = self.spec.parse_text(event.value)
        except ValueError as error:
            self.show_error(str(error))
            self.post_message(self.Edited(self, None, str(error)))
            return
        self.show_error(None)
        self.post_message(self.Edited(self, value, None))

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.value is not Select.NULL:
            self.post_message(self.Edited(self, event.value, None))

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        event.stop()
        self.post_message(self.Edited(self, event.value, None))

    def show_error(self, reason: str | None) -> None:
        error = self.query_one(".field-error", Static)
        error.update(Text(f"{self.key}: {reason}") if reason else "")
        error.set_class(not reason, "-empty")

    def set_options(self, options: list[tuple[str, str]], value: str) -> None:
        select = self.query_one(Select)
        select.set_options(options)
        select.value = value


def field_hint(spec: FieldSpec) -> str:
    """The field's help and limits, as its struct declares them (configs.answer_types)."""
    limits = f"{_format(spec.low)} to {_format(spec.high)}" if spec.low is not None and spec.high is not None else ""
    return "; ".join(part for part in (spec.help, limits) if part)


def _format(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

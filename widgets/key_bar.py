"""A one-line key bar, htop style: each shown binding of the screen as its key and what it does.

Textual's Footer mounts and styles a widget per key and rebuilds them all when bindings change; this
draws one line of text instead (a tenth of the start-up cost). Clicking a key presses it.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget


class KeyHint(NamedTuple):
    key: str
    key_display: str
    description: str
    enabled: bool


class KeyBar(Widget):
    """The focused screen's bindings with `show=True`, one per action, and the command palette key last.

    The `pinned_actions` (help and quit) are never cut: the other keys give way when the bar is narrow.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description"}
    """`key-bar--key` styles a key, `key-bar--description` the words after it."""

    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
    }
    KeyBar > .key-bar--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .key-bar--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    """

    show_command_palette: reactive[bool] = reactive(True)
    """Show the command palette's key at the right end."""

    def __init__(
        self, *, pinned_actions: tuple[str, ...] = ("help", "quit"), id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.pinned_actions = pinned_actions
        self.hints: tuple[KeyHint, ...] = ()
        self.pinned_hints: tuple[KeyHint, ...] = ()
        self.palette_hint: KeyHint | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        hints, pinned_hints, palette_hint = self._current_hints()
        if (hints, pinned_hints, palette_hint) != (self.hints, self.pinned_hints, self.palette_hint):
            self.hints, self.pinned_hints, self.palette_hint = hints, pinned_hints, palette_hint
            self.refresh()

    def _current_hints(self) -> tuple[tuple[KeyHint, ...], tuple[KeyHint, ...], KeyHint | None]:
        active_bindings = self.screen.active_bindings
        hints: list[KeyHint] = []
        pinned: dict[str, KeyHint] = {}
        seen_actions: set[str] = set()
        for _node, binding, enabled, _tooltip in active_bindings.values():
            if binding.show and binding.action not in seen_actions:
                seen_actions.add(binding.action)
                hint = KeyHint(binding.key, self.app.get_key_display(binding), binding.description, enabled)
                if binding.action in self.pinned_actions:
                    pinned[binding.action] = hint
                else:
                    hints.append(hint)
        pinned_hints = tuple(pinned[action] for action in self.pinned_actions if action in pinned)
        palette_hint = None
        palette = active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and palette is not None:
            _node, binding, enabled, _tooltip = palette
            palette_hint = KeyHint(binding.key, self.app.get_key_display(binding), binding.description, enabled)
        return tuple(hints), pinned_hints, palette_hint

    def _hint_text(self, hint: KeyHint) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        if not hint.enabled:
            key_style, description_style = key_style + Style(dim=True), description_style + Style(dim=True)
        text = Text.assemble((f" {hint.key_display} ", key_style), (f"{hint.description} ", description_style))
        text.apply_meta({"@click": f"app.simulate_key({hint.key!r})"})
        return text

    def render(self) -> Text:
        """The hints that fit whole, the pinned ones after them, then the palette key flush right (if room)."""
        pinned = Text(end="")
        for hint in self.pinned_hints:
            pinned.append_text(self._hint_text(hint))
        palette = self._hint_text(self.palette_hint) if self.palette_hint is not None else Text()
        if pinned.cell_len + palette.cell_len > self.size.width:
            palette = Text()
        room = self.size.width - palette.cell_len - pinned.cell_len
        line = Text(no_wrap=True, overflow="crop", end="")
        for hint in self.hints:
            piece = self._hint_text(hint)
            if line.cell_len + piece.cell_len > room:
                break
            line.append_text(piece)
        line.append_text(pinned)
        line.pad_right(max(0, self.size.width - palette.cell_len - line.cell_len))
        line.append_text(palette)
        return line

"""A Footer that recomposes only when the keys it shows actually change.

Textual's Footer rebuilds all its key widgets on every bindings signal (each focus change, several
at start-up); rebuilding when nothing visible changed costs tens of milliseconds each time.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer

Signature = tuple[tuple[str, str, bool], ...]


class QuietFooter(Footer):
    """Footer, minus the rebuilds that would draw the same keys again."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown_signature: Signature | None = None

    def _signature(self) -> Signature:
        return tuple(
            (binding.key, binding.description, enabled)
            for (_, binding, enabled, _) in self.screen.active_bindings.values()
            if binding.show
        )

    def bindings_changed(self, screen: Screen) -> None:
        if not screen.app.app_focus or not self.is_attached or screen is not self.screen:
            super().bindings_changed(screen)
            return
        signature = self._signature()
        if signature != self._shown_signature:
            self._shown_signature = signature
            super().bindings_changed(screen)
        else:
            self._bindings_ready = True

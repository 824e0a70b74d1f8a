"""The wizard's review step actions: recommend, swap a part, save the build (WizardScreen's base)."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any, Callable

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Input, Static

from pth_top.configs.answers import Answers
from pth_top.configs.build import ROLE_LABELS, Build
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.parts import Catalog
from pth_top.text import printable
from pth_top.tui.wizard.confirm import ConfirmScreen
from pth_top.tui.wizard.review import ReviewStep


class WizardReview(Screen):
    """Builds, swaps and saves the recommendation; the screen holds the answers and the steps."""

    answers: Answers
    pins: dict[str, tuple[str, int]]
    title_text: str
    comments: tuple[str, ...]
    build: Build | None
    steps_ready: bool
    _catalog: Catalog | None
    _catalog_error: str
    _clock: Callable[[], dt.datetime]
    _save_path_edited: bool
    _measured: Any

    def _show_status(self) -> None:
        status = self.query_one("#wizard-status", Static)
        status.display = not self.steps_ready or self._catalog is None
        if not self.steps_ready:
            status.update(Text("Loading the wizard..."))
        elif self._catalog is None:
            status.update(Text(self._catalog_error or "Loading the parts catalog..."))

    @property
    def catalog(self) -> Catalog:
        """The catalog; read here at once when the review is reached before the worker has it."""
        if self._catalog is None:
            from pth_top.configs.parts import load_catalog

            self._catalog = load_catalog()
            self._show_status()
        return self._catalog

    def _enter_review(self) -> None:
        self._recompute()
        if self.build is not None and not self._save_path_edited:
            from pth_top.configs.build_file import default_build_path

            save_input = self.query_one("#save-path", Input)
            with save_input.prevent(Input.Changed):
                save_input.value = str(default_build_path(self.build, self._clock()))

    def _recompute(self) -> None:
        from pth_top.configs.recommend import recommend

        review = self.query_one(ReviewStep)
        try:
            if self._measured is False:
                from pth_top.tui.wizard.measured import last_run_ceilings

                self._measured = last_run_ceilings()
            self.build = recommend(
                self.answers, self.catalog, pins=self.pins, today=self._clock().date(), title=self.title_text,
                comments=self.comments, measured=self._measured,
            )
        except (ConfigFileError, ValueError) as error:
            self.build = None
            review.show(None, f"Cannot recommend: {error}")
        else:
            self.pins = dict(self.build.pins)  # less the pins of parts the build does not have
            review.show(self.build)
        self.refresh_bindings()  # the apply key depends on the build

    def action_swap(self, role: str) -> None:
        from pth_top.configs.recommend import swap

        if self.build is None:
            return
        if role != "gpu" and self.build.component(role) is None:  # a desktop system or edge module: no such part
            self._set_error(f"this build has no {ROLE_LABELS[role]} to swap; 1 swaps the GPU", ok=False)
            return
        self.build = swap(self.build, role, self.catalog, today=self._clock().date())
        self.pins = dict(self.build.pins)
        self.query_one(ReviewStep).show(self.build)
        component = self.build.component(role)
        name = component.name if component is not None else "none (a CPU-only build)" if role == "gpu" else ""
        if name:
            self._set_error(f"{ROLE_LABELS[role]} is now {name}", ok=True)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "save-path":
            self._save_path_edited = True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in a field moves on to the next one; in the file name it saves."""
        if event.input.id == "save-path":
            self.action_save()
        else:
            self.focus_next()

    def action_save(self) -> None:
        if self.build is None:
            self._set_error("Nothing to save: the review has no build.")
            return
        text = self.query_one("#save-path", Input).value.strip()
        if not text:
            self._set_error("Give a file name to save to.")
            return
        # The raw text, not Path(text): Path drops a trailing "/", and "dir/" names a folder, not a file "dir".
        self._save(os.path.expanduser(text), overwrite=False)

    def _save(self, path: str, overwrite: bool) -> None:
        from pth_top import __version__
        from pth_top.configs.build_file import save_build
        from pth_top.configs.fileio import FileExistsRefused

        assert self.build is not None
        try:
            saved = save_build(self.build, path, created=self._clock(), tool_version=__version__, overwrite=overwrite)
        except FileExistsRefused:
            def decided(replace: bool | None) -> None:
                if replace:
                    self._save(path, overwrite=True)
                else:
                    self._set_error(f"Not saved: {printable(path)} exists.")

            self.app.push_screen(ConfirmScreen(f"{printable(path)} exists. Overwrite it?"), decided)
            return
        except OSError as error:
            self._set_error(printable(f"Cannot save to {path}: {error.strerror or error}"))
            return
        self._set_error(f"Saved {printable(saved)}", ok=True)
        self.notify(f"Saved {printable(saved)}", title="Build saved")

    def _set_error(self, message: str, ok: bool = False) -> None:
        line = self.query_one("#wizard-error", Static)
        line.update(Text(message))
        line.set_class(ok, "-ok")

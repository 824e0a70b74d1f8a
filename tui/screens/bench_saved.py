"""The bench screen's state and its saved runs: save the finished run, open or compare one from disk (file I/O in
worker threads that post messages; the handlers own the state). BenchScreen's base."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.reactive import reactive
from textual.screen import Screen

from pth_top.benches.client.runs import RunRecord
from pth_top.text import printable
from pth_top.tui.screens import bench_messages as messages
from pth_top.tui.screens.bench_messages import RunPurpose


class BenchSavedRuns(Screen):
    """The run shown, the one compared with, and the status line; saving, opening and comparing runs."""

    status_text: reactive[str] = reactive("", init=False)
    """The status line: what runs, what failed, where the run was saved (terminal-safe)."""
    running: reactive[bool] = reactive(False, init=False)
    """A benchmark child runs (Enter is refused, Esc cancels, Open is greyed)."""
    record: reactive[RunRecord | None] = reactive(None, init=False, always_update=True)
    """The run shown: the live one (rows added as they come) or one opened from disk."""
    baseline: reactive[RunRecord | None] = reactive(None, init=False, always_update=True)
    """The saved run the Δ% column compares with."""
    runs_folder: Path | None
    last_saved: Path | None

    @property
    def closing(self) -> bool:
        """True once the screen is no longer in the app's DOM (app exit): a late message then changes nothing."""
        return not self.is_attached

    def set_status(self, text: str) -> None:
        self.status_text = printable(text)

    @work(thread=True, group="bench-files", exit_on_error=False)
    def save_record(self, record: RunRecord) -> None:
        from pth_top.benches.client.runs import save_run

        try:
            self.post_message(messages.RunSaved(save_run(record, self.runs_folder)))
        except (OSError, ValueError) as error:
            self.post_message(messages.RunNotSaved(str(getattr(error, "strerror", None) or error)))

    @work(thread=True, group="bench-files", exit_on_error=False)
    def list_saved_runs(self, purpose: RunPurpose) -> None:
        from pth_top.benches.client.runs import scan_runs

        self.post_message(messages.RunsListed(purpose, scan_runs(self.runs_folder)))

    @work(thread=True, group="bench-files", exit_on_error=False)
    def load_saved_run(self, purpose: RunPurpose, path: Path) -> None:
        from pth_top.benches.client.runs import RunFileError, load_run

        try:
            self.post_message(messages.RunLoaded(purpose, load_run(path)))
        except RunFileError as error:
            self.post_message(messages.RunNotLoaded(purpose, str(error)))

    def action_open_run(self) -> None:
        if not self.running:
            self.list_saved_runs(RunPurpose.OPEN)

    def action_compare_run(self) -> None:
        self.list_saved_runs(RunPurpose.COMPARE)

    def on_run_saved(self, message: messages.RunSaved) -> None:
        if not self.closing:
            self.last_saved = message.path
            rows = len(self.record.rows) if self.record else 0
            self.set_status(f"Done: {rows} results; saved {message.path}")

    def on_run_not_saved(self, message: messages.RunNotSaved) -> None:
        if not self.closing:
            self.set_status(f"Done, but the run was not saved: {message.reason}")

    def on_runs_listed(self, message: messages.RunsListed) -> None:
        from pth_top.tui.screens.bench_runs import BenchRunsScreen

        if self.closing or not self.is_current:  # not over another mode's screen after a mode switch
            return
        title = "Open a saved run" if message.purpose is RunPurpose.OPEN else "Compare with a saved run (Δ% column)"

        def chosen(path: Path | None) -> None:
            if path is not None:
                self.load_saved_run(message.purpose, path)

        self.app.push_screen(BenchRunsScreen(title, message.runs), chosen)

    def on_run_loaded(self, message: messages.RunLoaded) -> None:
        if self.closing:
            return
        run = message.record
        if message.purpose is RunPurpose.OPEN:
            if self.running:
                return  # a run started while the list was open keeps the table
            self.record = run
            self.set_status(f"Showing the run of {run.created_at} ({run.python}).")
        else:
            self.baseline = run
            self.set_status(f"Δ% against the run of {run.created_at}.")

    def on_run_not_loaded(self, message: messages.RunNotLoaded) -> None:
        if not self.closing:
            self.set_status(f"{message.purpose.value}: {message.reason}")

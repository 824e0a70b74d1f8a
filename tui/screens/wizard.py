"""The build wizard: six question steps and a review step; the engine is configs.recommend.

Esc leaves the wizard (asking first when answers would be lost), back to the monitor or out of
`pth-top wizard`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Button, Checkbox, ContentSwitcher, Input, Select, Static

from pth_top.configs.answers import CUSTOM_SHAPE_KEYS, Answers, cross_field_problems
from pth_top.configs.build import ROLE_LABELS, Build
from pth_top.configs.errors import ConfigFileError
from pth_top.configs.memory_methods import ADAPTER_METHODS
from pth_top.configs.parts import Catalog
from pth_top.configs.presets import load_build_preset, model_presets
from pth_top.text import printable
from pth_top.tui.wizard.confirm import ConfirmScreen
from pth_top.tui.wizard.fields import FieldRow, _format
from pth_top.tui.wizard.review import SWAP_KEYS, ReviewStep
from pth_top.tui.wizard.review_actions import WizardReview
from pth_top.tui.wizard.steps import NO_PRESET, STEP_IDS, STEPS, Step, precision_options
from pth_top.widgets.key_bar import KeyBar

CUSTOM_ONLY_KEYS = frozenset({
    *CUSTOM_SHAPE_KEYS, "kind", "sliding_window_tokens", "sliding_window_layers", "input_size_px", "denoising_steps",
    "classifier_free_guidance", "decoder_layers", "decoder_sequence_length", "forward_gflops_per_sample",
    "encoder_only", "tied_embeddings", "linear_attention_layers", "ssm_state_size",
    "output_width_px", "output_height_px", "decoded_frames_at_once",
})


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


class WizardScreen(WizardReview):
    DEFAULT_CSS = """
    WizardScreen #wizard-title { height: 1; background: $primary; color: $text; padding: 0 1; text-style: bold; }
    WizardScreen #wizard-steps { height: 1fr; }
    WizardScreen #wizard-status { height: 1; color: $text-muted; padding: 0 1; }
    WizardScreen #wizard-error { height: auto; max-height: 3; color: $error; padding: 0 1; }
    WizardScreen #wizard-error.-ok { color: $success; }
    """
    BINDINGS = [
        Binding("ctrl+n", "next", "Next", id="wizard.next"),
        Binding("ctrl+b", "back", "Back", id="wizard.back"),
        Binding("escape", "leave", "Leave wizard", id="wizard.leave"),
        Binding("q", "quit_asking", "Quit (asks first if answers would be lost)", id="wizard.quit", show=False),
        Binding("ctrl+s", "save", "Save build", id="wizard.save"),
        Binding("a", "apply_alternative", "Apply the first feasible alternative", id="wizard.apply_alternative"),
        *[
            Binding(key, f"swap('{role}')", "Swap part" if index == 0 else f"Swap {ROLE_LABELS[role]}",
                    id=f"wizard.swap.{role}", show=index == 0, key_display="1-8" if index == 0 else None)
            for index, (key, role) in enumerate(SWAP_KEYS)
        ],
    ]

    class CatalogLoaded(Message):
        """The parts catalog finished loading in its worker (catalog None: it could not be read, see error)."""

        def __init__(self, catalog: Catalog | None, error: str = "") -> None:
            super().__init__()
            self.catalog = catalog
            self.error = error

    def __init__(
        self, *, catalog: Catalog | None = None, answers: Answers | None = None,
        clock: Callable[[], dt.datetime] = _utc_now, on_leave: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.answers = answers or Answers()
        self._initial_answers = self.answers
        self.invalid: dict[str, str] = {}
        self.pins: dict[str, tuple[str, int]] = {}
        self.title_text = ""
        self.comments: tuple[str, ...] = ()
        self.build: Build | None = None
        self.step_index = 0
        self._catalog = catalog
        self._clock = clock
        self._leave_action = on_leave
        self._save_path_edited = False
        self.steps_ready = False
        self._pending_preset: Any = None
        self._catalog_error = ""
        self._measured: Any = False  # the last bench run's ceilings, read at the first review (False: not yet)

    # Layout

    def compose(self) -> ComposeResult:
        yield Static("", id="wizard-title")
        yield Static("Loading the wizard...", id="wizard-status", markup=False)
        yield ContentSwitcher(id="wizard-steps")
        yield Static("", id="wizard-error", markup=False)
        yield KeyBar()

    def on_mount(self) -> None:
        if self._catalog is None:
            self._load_catalog()
        # The steps (some 400 widgets, about a second to style) mount after the first frame, under the loading line.
        self.call_after_refresh(self._mount_steps)

    async def _mount_steps(self) -> None:
        steps = [*(Step(spec, self.answers) for spec in STEPS[:-1]), ReviewStep()]
        for step in steps:
            step.display = False  # the switcher shows the current one
        await self.query_one(ContentSwitcher).mount_all(steps)
        self.steps_ready = True
        self._show_relevant_fields()
        self._show_step()
        self._show_status()
        if self._pending_preset is not None:
            preset_id, self._pending_preset = self._pending_preset, None
            self.open_preset(preset_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="wizard-catalog")
    def _load_catalog(self) -> None:
        """Read the catalog off the UI thread (a few hundred ms); the steps stay usable meanwhile."""
        from pth_top.configs.parts import load_catalog

        try:
            catalog = load_catalog()
        except (ConfigFileError, OSError, ValueError) as error:
            self.post_message(self.CatalogLoaded(None, printable(error)))
            return
        self.post_message(self.CatalogLoaded(catalog))

    def on_wizard_screen_catalog_loaded(self, message: CatalogLoaded) -> None:
        if message.catalog is None:
            self._catalog_error = f"Cannot read the parts catalog: {message.error}"
        elif self._catalog is None:
            self._catalog = message.catalog
        self._show_status()

    # Answers

    def on_field_row_edited(self, event: FieldRow.Edited) -> None:
        row = event.row
        if event.error is not None:
            self.invalid[row.control_id] = event.error
            return
        self.invalid.pop(row.control_id, None)
        if row.section == "answers":
            if self.answers.scenario == event.value:
                return
            self.answers = dataclasses.replace(self.answers, scenario=event.value)
        else:
            if self.answers.value(row.section, row.key) == event.value:
                return
            self.answers = self.answers.with_value(row.section, row.key, event.value)
        if (row.section, row.key) == ("task", "mode"):
            options = precision_options(event.value)
            allowed = [value for _, value in options]
            precision = self.answers.task.precision
            value = precision if precision in allowed else ("bf16" if "bf16" in allowed else allowed[0])
            self.query_one("#row-task-precision", FieldRow).set_options(options, value)
            self.answers = self.answers.with_value("task", "precision", value)
        if (row.section, row.key) in (("workload", "preset"), ("task", "method"), ("task", "mode")):
            self._show_relevant_fields()
        if (row.section, row.key) == ("workload", "preset"):
            if event.value != "custom":
                self._set_control("workload", "batch_size", model_presets()[event.value].default_batch_size)
        self._set_error("")
        if STEP_IDS[self.step_index] == "review":
            self._recompute()

    def _show_relevant_fields(self) -> None:
        """Custom-model fields for a custom model only; LoRA rank and targets for LoRA/QLoRA training only."""
        custom = self.answers.workload.preset == "custom"
        preset = model_presets().get(self.answers.workload.preset)
        for key in CUSTOM_ONLY_KEYS:
            self.query_one(f"#row-workload-{key}", FieldRow).display = custom
        # A CNN preset runs at any input size (its activations and FLOPs scale with the pixel count).
        self.query_one("#row-workload-input_size_px", FieldRow).display = custom or (
            preset is not None and preset.kind == "cnn")
        task = self.answers.task
        adapters = task.mode == "training" and task.method in ADAPTER_METHODS
        for key in ("lora_rank", "lora_targets", "lora_dropout"):
            self.query_one(f"#row-task-{key}", FieldRow).display = adapters

    def _set_control(self, section: str, key: str, value: Any) -> None:
        control = self.query_one(f"#{section}-{key}")
        if isinstance(control, Input):
            control.value = _format(value)
        elif isinstance(control, (Select, Checkbox)):
            control.value = value
        if section == "answers":
            self.answers = dataclasses.replace(self.answers, scenario=value)
        else:
            self.answers = self.answers.with_value(section, key, value)

    def _sync_controls(self) -> None:
        """Show self.answers in every field (after opening a preset)."""
        for spec in STEPS[:-1]:
            for section, key, _ in spec.fields:
                value = self.answers.scenario if section == "answers" else self.answers.value(section, key)
                if (section, key) == ("task", "precision"):
                    precision_row = self.query_one("#row-task-precision", FieldRow)
                    precision_row.set_options(precision_options(self.answers.task.mode), value)
                    continue
                self._set_control(section, key, value)
        self.invalid.clear()
        self._show_relevant_fields()

    # Navigation

    def _show_step(self) -> None:
        spec = STEPS[self.step_index]
        self.query_one(ContentSwitcher).current = f"step-{spec.id}"
        title = f"Build wizard - step {self.step_index + 1}/{len(STEPS)}: {spec.title}"
        if self.title_text:
            title += f"  ({self.title_text})"
        self.query_one("#wizard-title", Static).update(Text(title))
        self.refresh_bindings()
        target = self.query_one(f"#step-{spec.id}")
        controls = target.query("Input, Select, Checkbox, Button")
        focusable = [widget for widget in controls if widget.focusable and widget.display]
        if focusable:
            focusable[0].focus()

    def step_problems(self, index: int) -> list[str]:
        """Why the step at `index` cannot be left forward (empty when it can)."""
        spec = STEPS[index]
        problems = []
        for section, key, label in spec.fields:
            reason = self.invalid.get(f"{section}-{key}")
            row = self.query_one(f"#row-{section}-{key}", FieldRow)
            if reason and row.display:
                problems.append(f"{label}: {reason}")
        if problems:
            return problems
        sections = {section for section, _, _ in spec.fields}
        for section, key, reason in cross_field_problems(self.answers):
            if section in sections:
                problems.append(f"{section}.{key}: {reason}")
        return problems

    def action_next(self) -> None:
        if self.step_index >= len(STEPS) - 1:
            return
        problems = self.step_problems(self.step_index)
        if problems:
            self._set_error("Cannot continue: " + "; ".join(problems))
            return
        self._set_error("")
        self.step_index += 1
        if STEP_IDS[self.step_index] == "review":
            self._enter_review()
        self._show_step()

    def action_back(self) -> None:
        if self.step_index == 0:
            return
        self.step_index -= 1
        self._set_error("")
        self._show_step()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.steps_ready and action in ("swap", "save", "next", "back", "apply_alternative"):
            return False
        in_review = STEP_IDS[self.step_index] == "review"
        if action in ("swap", "save"):
            return in_review
        if action == "apply_alternative":
            return in_review and self.build is not None and bool(self.build.applicable_alternatives)
        if action == "next":
            return not in_review
        if action == "back":
            return self.step_index > 0
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        event.stop()
        if button_id.startswith("next-"):
            self.action_next()
        elif button_id.startswith("back-"):
            self.action_back()
        elif button_id == "open-preset":
            self.open_preset(self.query_one("#build-preset", Select).value)
        elif button_id == "save-build":
            self.action_save()

    def open_preset(self, preset_id: Any) -> None:
        """Load one of the guide's example builds and jump to the review step."""
        if not self.steps_ready:  # opened with --preset: it waits for the steps
            self._pending_preset = preset_id
            return
        if preset_id in (NO_PRESET, Select.NULL):
            self._set_error("Choose a preset first (the list left of 'Open preset').")
            return
        preset = load_build_preset(str(preset_id))
        self.answers = preset.answers
        self.pins = dict(preset.pins)
        self.title_text = preset.title
        self.comments = preset.comments
        self._sync_controls()
        self.step_index = len(STEPS) - 1
        self._enter_review()
        self._show_step()

    # Review (recommend, swap and save: WizardReview)

    def action_apply_alternative(self) -> None:
        """Take the review's first feasible alternative: its answers (and pins) become the wizard's."""
        if self.build is None or not self.build.applicable_alternatives:
            return
        line, answers, pins = self.build.applicable_alternatives[0]
        self.answers, self.pins = answers, dict(pins)
        self._sync_controls()
        self._recompute()
        self.notify(printable(line), title="Applied the first feasible alternative")

    # Leaving

    def action_leave(self) -> None:
        self._unless_unsaved("Discard your answers and leave the wizard?", self._leave)

    def action_quit_asking(self) -> None:
        self._unless_unsaved("Discard your answers and quit pth-top?", self.app.exit)

    def _unless_unsaved(self, question: str, then: Callable[[], None]) -> None:
        """Run `then` at once when nothing would be lost, otherwise after a yes."""
        if self.answers == self._initial_answers and not self.pins:
            then()
            return

        def decided(discard: bool | None) -> None:
            if discard:
                then()

        self.app.push_screen(ConfirmScreen(question), decided)

    def _leave(self) -> None:
        if self._leave_action is not None:
            self._leave_action()
        elif "monitor" in getattr(self.app, "MODES", {}):
            self.app.switch_mode("monitor")
            self.reset()
        else:
            self.app.exit()

    def reset(self) -> None:
        """Back to the first step with the starting answers (the screen lives on as a dashboard mode)."""
        if not self.steps_ready:
            return  # nothing was answered yet
        self.answers = self._initial_answers
        self.pins = {}
        self.title_text = ""
        self.comments = ()
        self.build = None
        self.step_index = 0
        self._save_path_edited = False
        self._sync_controls()
        self._set_error("")
        self._show_step()

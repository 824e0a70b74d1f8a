"""The wizard screen, driven by keys only (Pilot, 80x24)."""

from __future__ import annotations

import datetime as dt

from pth_top.configs.build_file import load_build
from pth_top.tui.screens.wizard import WizardScreen
from pth_top.tui.wizard.confirm import ConfirmScreen
from pth_top.tui.wizard_app import WizardApp
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import wait_until

CREATED = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def fixed_clock() -> dt.datetime:
    return CREATED


async def type_into(pilot, text: str) -> None:
    await pilot.press("ctrl+a", "ctrl+k", *list(text))


def step_id(screen: WizardScreen) -> str:
    return screen.query_one("#wizard-steps").current


def error_text(screen: WizardScreen) -> str:
    return str(screen.query_one("#wizard-error").content)


async def wait_for_screen(pilot, screen_type) -> None:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, screen_type), what=f"the {screen_type.__name__}")
    if screen_type is WizardScreen:  # its steps mount after the first frame
        await wait_until(pilot, lambda: pilot.app.screen.steps_ready, what="the wizard's steps")


async def wait_for_step(pilot, screen: WizardScreen, step: str) -> None:
    await wait_until(pilot, lambda: step_id(screen) == step, what=f"the wizard on {step}")


async def to_review(pilot) -> WizardScreen:
    """Next through every step of a wizard that opened on its first, to the review."""
    await wait_for_screen(pilot, WizardScreen)
    screen = pilot.app.screen
    for _ in range(6):
        await pilot.press("ctrl+n")
    await wait_for_step(pilot, screen, "step-review")
    return screen


async def test_whole_keyboard_flow_ends_in_a_saved_build(tmp_path):
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        assert step_id(screen) == "step-scenario"
        await pilot.press("ctrl+n")
        assert step_id(screen) == "step-workload"
        # Model: open the list on GPT-2 small and move one down to GPT-2 medium.
        assert app.focused.id == "workload-preset"
        await pilot.press("enter", "down", "enter")
        await wait_until(pilot, lambda: screen.answers.workload.preset == "gpt2-medium", what="GPT-2 medium chosen")
        await pilot.press("tab")
        assert app.focused.id == "workload-batch_size"
        await type_into(pilot, "4")
        assert screen.answers.workload.batch_size == 4
        await pilot.press("ctrl+n", "ctrl+n")
        assert step_id(screen) == "step-data"
        # Inline validation: a bad number shows the reason and blocks Next.
        await type_into(pilot, "lots")
        field_error = screen.query_one("#row-data-dataset_size_gb .field-error")
        await wait_until(pilot, lambda: "not a number" in str(field_error.content), what="the inline error")
        await pilot.press("ctrl+n")
        assert step_id(screen) == "step-data" and "Cannot continue" in error_text(screen)
        await type_into(pilot, "500")
        # Back navigation keeps the answers.
        await pilot.press("ctrl+b", "ctrl+b")
        assert step_id(screen) == "step-workload"
        assert screen.query_one("#workload-batch_size").value == "4"
        assert screen.answers.workload.preset == "gpt2-medium"
        await pilot.press("ctrl+n", "ctrl+n", "ctrl+n")
        assert step_id(screen) == "step-scale"
        await type_into(pilot, "0")
        await pilot.press("ctrl+n")
        assert step_id(screen) == "step-scale" and "at least 1" in error_text(screen)
        await type_into(pilot, "2")
        await pilot.press("ctrl+n")
        assert step_id(screen) == "step-budget"
        await type_into(pilot, "40000")
        await pilot.press("ctrl+n")
        await wait_for_step(pilot, screen, "step-review")
        build = screen.build
        assert build is not None and build.answers.scale.gpu_count == 2
        assert build.answers.data.dataset_size_gb == 500.0
        first_gpu = build.component("gpu").part_id
        await pilot.press("1")
        assert screen.build.component("gpu").part_id != first_gpu
        save_path = tmp_path / "mine.toml"
        screen.query_one("#save-path").value = str(save_path)
        await pilot.press("ctrl+s")
        await wait_until(pilot, save_path.exists, what="the build saved")
        saved, created, _ = load_build(save_path)
        assert created == CREATED and saved == screen.build
        # Saving again asks before overwriting; "n" keeps the file, "y" replaces it.
        save_path.write_text("# changed\n" + save_path.read_text(encoding="utf-8"), encoding="utf-8")
        await pilot.press("ctrl+s")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, what="the dialog closed")
        assert save_path.read_text(encoding="utf-8").startswith("# changed")
        await pilot.press("ctrl+s")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: not save_path.read_text(encoding="utf-8").startswith("# changed"),
                         what="the file replaced")
        # Esc asks before discarding the answers.
        await pilot.press("escape")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, what="the dialog closed")
        await pilot.press("escape")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None, what="the app to exit")
    assert app.return_code == 0


async def test_training_and_inference_precisions_follow_the_task():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await pilot.press("ctrl+n", "ctrl+n")
        assert app.focused.id == "task-mode"
        await pilot.press("enter", "down", "enter")
        await wait_until(pilot, lambda: screen.answers.task.mode == "inference", what="inference chosen")
        assert screen.answers.task.precision in ("fp32", "fp16", "bf16", "int8", "int4")


async def test_custom_model_needs_its_numbers():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await pilot.press("ctrl+n")
        layers_row = screen.query_one("#row-workload-layers")
        assert not layers_row.display
        screen.query_one("#workload-preset").value = "custom"
        await wait_until(pilot, lambda: layers_row.display, what="the custom model's fields")
        await pilot.press("ctrl+n")
        assert step_id(screen) == "step-workload"
        assert "custom transformer needs this above zero" in error_text(screen)


async def test_preset_opens_in_review_with_comments():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        screen.query_one("#build-preset").value = "guide-enterprise"
        await pilot.click("#open-preset")
        await wait_for_step(pilot, screen, "step-review")
        assert screen.build.component("cpu").part_id == "xeon-platinum-8380"
        body = str(screen.query_one("#review-body").content)
        assert "Comments on this preset" in body and "PM1643" in body
        # Going back shows the preset's answers in the fields.
        await pilot.press("ctrl+b")
        assert screen.query_one("#budget-amount").value == "500000"


async def test_leaving_without_changes_does_not_ask():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.return_code is not None, what="the app to exit")
    assert app.return_code == 0


async def test_dashboard_w_opens_the_wizard_and_escape_returns():
    from pth_top.tui.app import PthTopApp
    from pth_top.tui.screens.monitor import MonitorScreen

    app = PthTopApp(source_factory=lambda: FixedSource(make_snapshot(gpu_count=1)))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, MonitorScreen)
        await pilot.press("w")
        await wait_for_screen(pilot, WizardScreen)
        wizard = app.screen
        await pilot.press("escape")
        await wait_for_screen(pilot, MonitorScreen)
        await pilot.press("w")
        await wait_until(pilot, lambda: app.screen is wizard, what="the same wizard screen again")
        wizard.open_preset("guide-personal")
        await wait_for_step(pilot, wizard, "step-review")
        await pilot.press("escape")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_for_screen(pilot, MonitorScreen)
        # Discarded: the next visit starts again from the first step.
        assert wizard.step_index == 0 and not wizard.pins and wizard.answers.workload.preset == "gpt2-small"


def test_review_step_snapshot(snap_compare, monkeypatch):
    monkeypatch.setenv("PTH_TOP_CONFIG_DIR", "/nonexistent/pth-top-config")

    async def open_personal_preset(pilot):
        await wait_for_screen(pilot, WizardScreen)
        screen = pilot.app.screen
        screen.query_one("#build-preset").value = "guide-personal"
        screen.open_preset("guide-personal")
        await wait_for_step(pilot, screen, "step-review")

    assert snap_compare(WizardApp(clock=fixed_clock), terminal_size=(80, 24), run_before=open_personal_preset)


async def test_app_can_start_on_a_preset():
    app = WizardApp(clock=fixed_clock, preset="guide-personal")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await wait_for_step(pilot, screen, "step-review")
        assert screen.build.component("storage").part_id == "samsung-970-evo-plus-1tb"


async def test_q_asks_before_quitting_with_answers():
    app = WizardApp(clock=fixed_clock, preset="guide-personal")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await wait_for_step(pilot, app.screen, "step-review")
        await pilot.press("q")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n")
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("q")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: app.return_code is not None, what="the app to exit")
    assert app.return_code == 0


async def test_a_save_path_ending_in_a_slash_is_refused_not_saved_as_a_file(tmp_path):
    app = WizardApp(clock=fixed_clock, preset="guide-personal")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await wait_for_step(pilot, screen, "step-review")
        # Path("builds/") is Path("builds"): the folder name became a file before the raw text was kept.
        screen.query_one("#save-path").value = str(tmp_path / "builds") + "/"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "names a folder" in error_text(screen), what="the refusal")
        assert "Cannot save to" in error_text(screen)
    assert list(tmp_path.iterdir()) == []


async def test_fields_show_the_help_and_limits_their_struct_declares():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        assert screen.query_one("#scale-gpu_count").tooltip == "GPUs in the machine; 1 to 8"
        assert screen.query_one("#budget-max_power_w").tooltip == "wall power limit in W (0: none); 0 to 100000"
        assert screen.query_one("#scale-sharding").tooltip.startswith("ZeRO stage or FSDP; layers: training in one")


async def test_the_catalog_loads_in_a_worker_behind_a_loading_line(monkeypatch):
    # Issue 12 item 10: the first switch to the wizard froze ~1.7 s with no cue while the catalog loaded.
    import threading

    import pth_top.configs.parts as parts

    release = threading.Event()
    real_load_catalog = parts.load_catalog

    def slow_load_catalog(*args, **kwargs):
        release.wait(timeout=60)
        return real_load_catalog(*args, **kwargs)

    monkeypatch.setattr(parts, "load_catalog", slow_load_catalog)
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        status = screen.query_one("#wizard-status")
        assert status.display and "Loading the parts catalog" in str(status.content)
        await pilot.press("ctrl+n")  # the steps answer keys while it loads
        assert step_id(screen) == "step-workload"
        release.set()
        await wait_until(pilot, lambda: not status.display, what="the loading line hidden")
        assert screen._catalog is not None


async def test_key_1_swaps_between_a_cpu_only_build_and_gpus():
    from pth_top.configs.answers import Answers

    tabular = (Answers().with_value("workload", "preset", "custom").with_value("workload", "kind", "generic")
               .with_value("workload", "parameters", 0).with_value("data", "kind", "tabular")
               .with_value("budget", "amount", 8000.0))
    app = WizardApp(clock=fixed_clock, answers=tabular)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await to_review(pilot)
        assert screen.build is not None and screen.build.cpu_only
        assert "none: a CPU-only build" in str(screen.query_one("#review-body").content)
        await pilot.press("1")
        await wait_until(pilot, lambda: not screen.build.cpu_only, what="a GPU swapped in")
        assert error_text(screen).startswith("GPU is now ")


async def test_key_a_applies_the_first_feasible_alternative():
    from pth_top.configs.answers import Answers

    too_big = Answers().with_value("workload", "preset", "llama-13b").with_value("budget", "amount", 10000.0)
    app = WizardApp(clock=fixed_clock, answers=too_big)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await to_review(pilot)
        assert screen.build is not None and not screen.build.feasible
        first = screen.build.feasible_alternatives[0]
        await pilot.press("a")
        await wait_until(pilot, lambda: screen.build is not None and screen.build.feasible, what="a feasible build")
        assert screen.answers.task.method == "qlora" and first.startswith("QLoRA")
        assert screen.query_one("#task-method").value == "qlora"
        assert screen.build.total_price_cny <= 10000


async def test_lora_rank_and_targets_show_only_for_lora_and_qlora():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        rank_row = screen.query_one("#row-task-lora_rank")
        assert not rank_row.display and not screen.query_one("#row-task-lora_targets").display
        assert not screen.query_one("#row-task-lora_dropout").display
        screen.query_one("#task-method").value = "qlora"
        await wait_until(pilot, lambda: rank_row.display, what="the LoRA rank row shown")
        assert screen.query_one("#row-task-lora_targets").display and screen.query_one("#row-task-lora_dropout").display
        screen.query_one("#task-method").value = "full"
        await wait_until(pilot, lambda: not rank_row.display, what="the LoRA rank row hidden")


async def test_the_first_frame_says_the_wizard_is_loading_before_its_steps_mount(monkeypatch):
    # Issue 12 item 10: the first switch to the wizard froze with no cue while ~400 widgets were styled.
    scheduled = []
    real_mount_steps = WizardScreen._mount_steps

    async def held_mount_steps(self):
        scheduled.append(self)  # the test mounts them itself, after looking at the first frame

    monkeypatch.setattr(WizardScreen, "_mount_steps", held_mount_steps)
    app = WizardApp(clock=fixed_clock, preset="guide-personal")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: scheduled, what="the steps' mount scheduled after the first frame")
        screen = app.screen
        status = screen.query_one("#wizard-status")
        assert status.display and "Loading the wizard" in str(status.content) and not screen.steps_ready
        await pilot.press("ctrl+n")  # refused until the steps are there
        assert screen.step_index == 0
        await real_mount_steps(screen)
        await wait_for_step(pilot, screen, "step-review")  # the --preset waited for them
        assert screen.title_text.startswith("Guide §7.1")


async def test_a_cnn_preset_offers_its_input_size_and_a_transformer_does_not():
    app = WizardApp(clock=fixed_clock)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await pilot.press("ctrl+n")
        pixels_row = screen.query_one("#row-workload-input_size_px")
        screen.query_one("#workload-preset").value = "resnet50"
        await wait_until(pilot, lambda: pixels_row.display, what="the input size row for a CNN preset")
        assert not screen.query_one("#row-workload-layers").display
        screen.query_one("#workload-preset").value = "bert-base"
        await wait_until(pilot, lambda: not pixels_row.display, what="no input size for a transformer")


async def test_a_desktop_system_build_reviews_and_swaps_to_a_pc_card():
    from pth_top.configs.answers import Answers

    big_moe = (Answers().with_value("workload", "preset", "gpt-oss-120b").with_value("workload", "batch_size", 1)
               .with_value("task", "mode", "inference").with_value("task", "precision", "int4")
               .with_value("budget", "currency", "USD").with_value("budget", "amount", 5000.0))
    app = WizardApp(clock=fixed_clock, answers=big_moe)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await to_review(pilot)
        assert screen.build is not None and screen.build.component("gpu").part_id == "dgx-spark-128gb"
        assert screen.build.component("cpu") is None and "DGX Spark" in str(screen.query_one("#review-body").content)
        await pilot.press("2")
        await wait_until(pilot, lambda: "to swap; 1 swaps the GPU" in error_text(screen), what="no CPU to swap")
        await pilot.press("1")
        await wait_until(pilot, lambda: screen.build.component("gpu").part_id != "dgx-spark-128gb",
                         what="a PC card swapped in")
        assert screen.build.component("cpu") is not None and error_text(screen).startswith("GPU is now ")


async def test_key_8_swaps_the_case():
    # Desktop builds have a case now: key 8 swaps it for the next in the catalog, as 1-7 swap the other parts.
    app = WizardApp(clock=fixed_clock, preset="guide-personal")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        await wait_for_step(pilot, screen, "step-review")
        first = screen.build.component("case")
        assert first is not None and "[8] Case" in str(screen.query_one("#review-body").content)
        await pilot.press("8")
        await wait_until(pilot, lambda: screen.build.component("case").part_id != first.part_id,
                         what="the case swapped")
        assert error_text(screen).startswith("Case is now ")

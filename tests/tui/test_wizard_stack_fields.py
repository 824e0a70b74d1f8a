"""The wizard form asks for the market, the training stack and the serving engine, and each changes the build
and a diffusion model's steps (Pilot, 80x24, keys only)."""

from __future__ import annotations

import contextlib

from pth_top.configs.answers import Answers
from pth_top.tui.screens.wizard import WizardScreen
from pth_top.tui.wizard_app import WizardApp
from tests.configs.builders import answers
from tests.configs.published_workloads import FLUX1_DEV, inference_custom
from tests.configs.test_speed_target import ORPHEUS
from tests.tui.test_wizard_screen import fixed_clock, step_id, type_into, wait_for_screen, wait_for_step


async def tab_to(pilot, control_id: str) -> None:
    for _ in range(40):
        if pilot.app.focused is not None and pilot.app.focused.id == control_id:
            return
        await pilot.press("tab")
    raise AssertionError(f"#{control_id} is not reachable with Tab")


async def choose(pilot, control_id: str, downs: int) -> None:
    await tab_to(pilot, control_id)
    await pilot.press("enter", *["down"] * downs, "enter")


async def back_to(pilot, screen: WizardScreen, step: str) -> None:
    while step_id(screen) != step:
        await pilot.press("ctrl+b")


async def review(pilot, screen: WizardScreen):
    while step_id(screen) != "step-review":
        await pilot.press("ctrl+n")
    await wait_for_step(pilot, screen, "step-review")
    assert screen.build is not None
    return screen.build


@contextlib.asynccontextmanager
async def reviewed(start: Answers):
    """The wizard at 80x24 on `start`, keys only, at its review: the pilot, the screen and its first build."""
    app = WizardApp(clock=fixed_clock, answers=start)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        screen = app.screen
        yield pilot, screen, await review(pilot, screen)


async def test_market_and_training_stack_are_asked_and_change_the_build():
    start = (Answers().with_value("workload", "preset", "llama3-8b").with_value("task", "method", "qlora")
             .with_value("budget", "currency", "USD").with_value("budget", "amount", 3000.0))
    async with reviewed(start) as (pilot, screen, first):
        assert first.market == "us" and first.answers.task.training_stack == "hf_trainer"
        await back_to(pilot, screen, "step-task")
        await choose(pilot, "task-training_stack", 2)  # HF Trainer -> torchtune -> Liger
        assert screen.answers.task.training_stack == "liger"
        while step_id(screen) != "step-budget":
            await pilot.press("ctrl+n")
        await choose(pilot, "budget-market", 1)  # auto -> China
        assert screen.answers.budget.market == "cn"
        second = await review(pilot, screen)
        assert second.market == "cn" and second.currency == "USD"
        assert second.memory.total_bytes < first.memory.total_bytes  # no s x b x V fp32 logits


async def test_the_serving_engine_is_asked_and_changes_the_estimate():
    start = (Answers(scenario="inference_server").with_value("workload", "preset", "llama3-8b")
             .with_value("task", "mode", "inference").with_value("workload", "batch_size", 8)
             .with_value("budget", "amount", 60000.0))
    async with reviewed(start) as (pilot, screen, first):
        await back_to(pilot, screen, "step-task")
        await choose(pilot, "task-serving_engine", 4)  # auto, vLLM, SGLang, llama.cpp, generate()
        assert screen.answers.task.serving_engine == "hf_generate"
        second = await review(pilot, screen)
        assert second.memory.total_bytes != first.memory.total_bytes  # the whole prompt x batch prefilled at once


async def test_diffusion_steps_are_asked_and_turn_the_speed_into_seconds_an_image():
    start = answers(**{**inference_custom(FLUX1_DEV, "int8"), "budget__amount": 60000.0})
    async with reviewed(start) as (pilot, screen, first):
        assert "tokens/s" in first.speed.summary[0]  # read as a language model until it is told otherwise
        await back_to(pilot, screen, "step-workload")
        await tab_to(pilot, "workload-denoising_steps")
        await type_into(pilot, "28")
        assert screen.answers.workload.denoising_steps == 28
        second = await review(pilot, screen)
        assert "image" in second.speed.summary[0] and second.memory.kv_cache_bytes == 0


async def test_a_target_decode_rate_is_asked_and_chooses_a_card_that_meets_it():
    # 24 Orpheus-3B speech streams at ~84 tokens/s each (tests/configs/test_speed_target.py): typed in the Task step.
    start = answers("inference_server", **ORPHEUS, budget__amount=40000.0)
    async with reviewed(start) as (pilot, screen, first):
        await back_to(pilot, screen, "step-task")
        await tab_to(pilot, "task-target_tokens_per_s_per_stream")
        await type_into(pilot, "84")
        assert screen.answers.task.target_tokens_per_s_per_stream == 84.0
        second = await review(pilot, screen)
        rate = second.speed.figures["decode_tokens_per_s_per_stream"]
        assert first.speed.figures["decode_tokens_per_s_per_stream"] < 84.0 <= rate
        assert any("target_tokens_per_s_per_stream = 84 first" in line for line in second.component("gpu").reasoning)



async def test_a_quantized_models_format_and_files_size_are_asked_and_size_its_weights():
    # Audit XI8: MiMo-V2.6-Flash's Q2_K files are 126 GB; the form takes the format and the files' size, keys only.
    from tests.configs.test_low_bit_gguf import MIMO_V26_Q2K

    start = answers(**{**MIMO_V26_Q2K, "task__quantization": "gguf_q4_k_m"})
    async with reviewed(start) as (pilot, screen, first):
        await back_to(pilot, screen, "step-task")
        await choose(pilot, "task-quantization", 1)  # Q4_K_M -> the next format an int4 model takes
        assert screen.answers.task.quantization != "gguf_q4_k_m"
        await back_to(pilot, screen, "step-workload")
        await tab_to(pilot, "workload-weights_file_gb")
        await type_into(pilot, "126")
        build = await review(pilot, screen)
        assert screen.answers.workload.weights_file_gb == 126.0
        assert abs(build.memory.weights_bytes / 126e9 - 1) < 0.01 < abs(first.memory.weights_bytes / 126e9 - 1)

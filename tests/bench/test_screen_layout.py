"""Issue 14 item 6 on the Bench screen: notes and progress readable at 80 and 120 columns; a saved run
opened after a cancelled one shows no stale progress bars; CPU GEMM in MFLOP/s, not 0.000596 TFLOP/s."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

from pth_top.benches.client.runs import RunRecord, save_run
from pth_top.benches.protocol import Event, encode_event
from pth_top.benches.run_request import RunRequest
from pth_top.tui.screens.bench import BenchScreen, KernelProgress
from tests.bench.fake_children import STARTED_LINE, canned_child
from tests.bench.test_screen import BenchApp, wait_for

NOTE_WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett",
              "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "END")
LONG_NOTE = " ".join(NOTE_WORDS)
PROGRESS_LINE = encode_event("progress", kernel="gemm", device="cpu", fraction=0.5, eta_s=12.0,
                             message="shape 4096 running")
RESULT_LINE = encode_event("result", kernel="gemm", device="cpu", variant="fp32 1 thread", status="ok",
                           value=0.000596, unit="TFLOP/s", peak_kind="fp32", note=LONG_NOTE, details={"threads": 1})


def screen_text(app) -> str:
    """The screen as the terminal shows it."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def hanging_child(tmp_path) -> str:
    return canned_child(tmp_path, [STARTED_LINE, PROGRESS_LINE, RESULT_LINE], after="time.sleep(600)")


@pytest.mark.parametrize("size", [(80, 24), (120, 30)])
async def test_the_full_note_and_the_progress_are_on_screen_at_80_and_120_columns(tmp_path, size):
    screen = BenchScreen(RunRequest(kernels=("gemm",)), python=hanging_child(tmp_path), runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: "Found" in screen.status_text, timeout_s=30)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "END" in screen_text(app) and "shape 4096 running" in screen_text(app),
                       timeout_s=30)
        shown = screen_text(app)
        assert all(word in shown for word in NOTE_WORDS), shown
        assert "596.0 MFLOP/s" in shown and "50%" in shown and "eta 12s" in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, timeout_s=30)


async def test_opening_a_saved_run_after_a_cancelled_one_drops_the_old_progress_bars(tmp_path):
    saved = RunRecord(python="/venv/bin/python")
    for event in (Event("started", {"suite": "quick", "devices": ["cpu"], "metadata": {}, "kernels": []}),
                  Event("result", {"kernel": "disk", "device": "host", "variant": "sequential read", "status": "ok",
                                   "value": 812.0, "unit": "MB/s"})):
        saved.apply(event)
    save_run(saved, tmp_path / "runs")
    screen = BenchScreen(RunRequest(kernels=("gemm",)), python=hanging_child(tmp_path), runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "Found" in screen.status_text, timeout_s=30)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.query(KernelProgress), timeout_s=30)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running and "Cancelled" in screen.status_text, timeout_s=30)
        await pilot.press("o")
        await wait_for(pilot, lambda: app.screen is not screen, timeout_s=30)
        app.screen.query_one(OptionList).focus()
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.record is not None and screen.record.rows
                       and screen.record.rows[0]["kernel"] == "disk", timeout_s=30)
        await wait_for(pilot, lambda: "812.0 MB/s" in screen_text(app), timeout_s=30)
        assert not screen.query(KernelProgress)


async def test_open_is_greyed_in_the_key_bar_while_a_run_is_in_flight(tmp_path):
    screen = BenchScreen(RunRequest(kernels=("gemm",)), python=hanging_child(tmp_path), runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: "Found" in screen.status_text, timeout_s=30)
        assert screen.check_action("open_run", ()) is True
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.query(KernelProgress), timeout_s=30)
        assert screen.check_action("open_run", ()) is None
        await pilot.press("o")  # refused (the binding is disabled): the live run keeps the table
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running, timeout_s=30)
        assert screen.check_action("open_run", ()) is True

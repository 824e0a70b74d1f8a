"""The Bench screen against hostile children, and closing it while a child runs or lists its devices."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from pth_top.benches.client.rows import COLUMNS
from pth_top.benches.run_request import RunRequest
from pth_top.tui.screens.bench import BenchScreen, KernelProgress
from tests.bench.fake_children import (
    FINISHED_LINE,
    RESULT_LINE,
    STARTED_LINE,
    canned_child,
    end_if_running,
    process_gone,
    read_pid,
    shell_child,
    wait_for,
)
from tests.bench.test_hostile_output import HOSTILE_LINES
from tests.bench.test_screen import BenchApp
from tests.bench.test_screen import wait_for as wait_on_screen

GEMM_ONLY = RunRequest(kernels=("gemm",))
NAN_RESULT = HOSTILE_LINES["nan value"] + "\n"


def table_cells(screen: BenchScreen, column: str) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(table.get_row_at(index)[COLUMNS.index(column)]) for index in range(table.row_count)]


BAD_OUTPUT_WRITERS = {
    "nan": f"sys.stdout.write({NAN_RESULT!r})",  # stuck on "Saving..." before
    "17 MiB line": "sys.stdout.write('x' * (17 * 1024 * 1024) + '\\n')",  # stuck on "already running" before
    "escape sequence": "sys.stdout.write('\\x1b]0;owned\\x07\\n')",
}


@pytest.mark.parametrize("write_bad_output", BAD_OUTPUT_WRITERS.values(), ids=BAD_OUTPUT_WRITERS.keys())
async def test_a_bad_line_is_an_error_row_and_the_run_still_ends_and_saves(tmp_path, write_bad_output):
    python = canned_child(tmp_path, [STARTED_LINE], after=(
        f"{write_bad_output}\nsys.stdout.write({RESULT_LINE!r} + {FINISHED_LINE!r})\n"))
    screen = BenchScreen(GEMM_ONLY, python=python, runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_on_screen(pilot, lambda: "Found" in screen.status_text, timeout_s=30)
        await pilot.press("enter")
        await wait_on_screen(pilot, lambda: screen.last_saved is not None, timeout_s=30)
        assert not screen.running and screen.status_text.startswith("Done")
        notes = table_cells(screen, "note")
        assert any(note.startswith("BadOutput: bad output line: ") for note in notes), notes
        assert all("\x1b" not in note and "\x07" not in note for note in notes)
        await pilot.press("enter")
        assert "already running" not in screen.status_text


async def test_quitting_while_a_run_is_in_flight_raises_nothing_and_ends_the_child_group(tmp_path):
    grandchild_file = tmp_path / "grandchild.pid"
    python = canned_child(tmp_path, [STARTED_LINE], after=(
        "import subprocess\n"
        f"open({str(grandchild_file)!r}, 'w').write(str(subprocess.Popen(['sleep', '600']).pid))\n"
        "time.sleep(600)"))
    screen = BenchScreen(GEMM_ONLY, python=python, runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_on_screen(pilot, lambda: "Found" in screen.status_text, timeout_s=30)
            await pilot.press("enter")
            await wait_on_screen(pilot, lambda: screen.query(KernelProgress) and read_pid(grandchild_file),
                                 timeout_s=30)
            child = screen._process.pid
            app.exit()  # the run's worker is cancelled while the child still runs
        wait_for(lambda: process_gone(child) and process_gone(read_pid(grandchild_file)),
                 what="the benchmark child and its child to end")
    finally:
        end_if_running(read_pid(grandchild_file))


async def test_quitting_while_devices_are_listed_raises_nothing_and_ends_the_child_group(tmp_path):
    pid_file, grandchild_file = tmp_path / "child.pid", tmp_path / "grandchild.pid"
    python = shell_child(tmp_path, f"echo $$ > {pid_file}\nsleep 600 &\necho $! > {grandchild_file}\nwait")
    screen = BenchScreen(GEMM_ONLY, python=python, runs_folder=tmp_path / "runs")
    app = BenchApp(screen)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_on_screen(pilot, lambda: read_pid(pid_file) and read_pid(grandchild_file), timeout_s=30)
            app.exit()
        wait_for(lambda: process_gone(read_pid(pid_file)) and process_gone(read_pid(grandchild_file)),
                 what="the device-listing child and its child to end")
    finally:
        end_if_running(read_pid(pid_file), read_pid(grandchild_file))


async def test_a_late_message_to_a_closing_screen_changes_nothing(tmp_path):
    from pth_top.tui.screens.bench_messages import BenchEnded, DevicesFound, RunPurpose, RunsListed

    screen = BenchScreen(python=str(tmp_path / "missing"), runs_folder=tmp_path)
    app = BenchApp(screen)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_on_screen(pilot, lambda: "Cannot list devices" in screen.status_text, timeout_s=30)
        status = screen.status_text
        app.exit()  # the screen is being taken down: its worker's late messages must change nothing
        assert screen.closing
        screen.on_devices_found(DevicesFound([{"id": "cuda:0", "name": "GPU"}]))
        screen.on_bench_ended(BenchEnded(1, "late"))
        screen.on_runs_listed(RunsListed(RunPurpose.OPEN, []))
        assert app.screen is screen and screen.status_text == status
        assert [device["id"] for device in screen.devices] == ["cpu"]


async def test_a_runs_list_that_comes_after_a_mode_switch_is_not_pushed_over_the_monitor():
    from pth_top.tui.app import PthTopApp
    from pth_top.tui.screens.bench_messages import RunPurpose, RunsListed

    class BrokenSource:
        def sample(self):
            raise RuntimeError("no sensors in this test")

    app = PthTopApp(source_factory=BrokenSource)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b")
        await wait_on_screen(pilot, lambda: isinstance(app.screen, BenchScreen), timeout_s=30)
        bench = app.screen
        await pilot.press("m")
        await wait_on_screen(pilot, lambda: app.current_mode == "monitor" and app.screen is not bench, timeout_s=30)
        monitor = app.screen
        handled = []
        bench.post_message(RunsListed(RunPurpose.OPEN, []))  # as when `o`'s list arrives after the switch
        bench.call_after_refresh(handled.append, True)  # runs once the message queue has moved past it
        await wait_on_screen(pilot, lambda: handled, timeout_s=30)
        assert app.screen is monitor

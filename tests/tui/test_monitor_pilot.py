"""Keys and flows of the Monitor screen, driven with Pilot against fixed snapshots."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from rich.console import Console

from pth_top.sensors.model import ProcessSample
from tests.fakes.snapshots import FailingSource, FixedSource, make_snapshot
from pth_top.tui.app import PthTopApp
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.help import HelpScreen
from pth_top.tui.screens.kill import KillScreen
from pth_top.tui.screens.too_small import TooSmallScreen


def make_app(*snapshots, interval_s=0.1):
    source = FixedSource(*(snapshots or (make_snapshot(gpu_count=1),)))
    return PthTopApp(interval_s=interval_s, source_factory=lambda: source), source


async def settle(pilot, seconds=0.2):
    await pilot.pause(seconds)
    await pilot.pause()


async def wait_until(pilot, condition, timeout_s=3.0):
    """Let the app run until `condition()` holds (a loaded CI machine can be slow to process keys)."""
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)


def table_pids(app):
    table = app.screen.query_one(ProcessPanel).table
    return [int(key) for key in table.row_keys]


async def test_sort_keys_change_order_and_invert():
    app, _ = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        cpu_order = table_pids(app)
        processes = {p.pid: p for p in make_snapshot(gpu_count=1).processes}
        assert [processes[pid].cpu_percent for pid in cpu_order] == sorted(
            (p.cpu_percent for p in processes.values()), reverse=True)
        await pilot.press("N")
        await settle(pilot)
        assert table_pids(app) == sorted(processes)
        await pilot.press("I")
        await settle(pilot)
        assert table_pids(app) == sorted(processes, reverse=True)
        await pilot.press("M")
        await settle(pilot)
        mems = [processes[pid].memory_percent for pid in table_pids(app)]
        assert mems == sorted(mems, reverse=True)


async def test_header_click_sorts_by_that_column():
    app, _ = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = app.screen.query_one(ProcessPanel).table
        table.post_message(table.HeaderClicked(table, "pid"))
        await settle(pilot)
        assert table_pids(app) == sorted(table_pids(app))


async def test_filter_is_incremental_and_escape_clears_it():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        total = len(table_pids(app))
        await pilot.press("slash", "t", "r", "a", "i", "n")
        await settle(pilot)
        assert table_pids(app) == [1000]
        await pilot.press("enter")
        await settle(pilot)
        assert table_pids(app) == [1000], "the filter survives refreshes after Enter"
        await pilot.press("escape")
        await settle(pilot)
        assert len(table_pids(app)) == total


async def test_the_filter_input_is_mounted_on_the_first_slash_and_reopens_with_the_filter():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        panel = app.screen.query_one(ProcessPanel)
        assert not panel.query("#process-filter")
        await pilot.press("slash", "t", "r", "a", "i", "n", "enter")
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        filter_inputs = panel.query("#process-filter")
        assert len(filter_inputs) == 1
        assert filter_inputs.first().value == "train" and filter_inputs.first().has_focus


async def test_q_typed_in_filter_does_not_quit():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "q")
        await settle(pilot)
        assert app.is_running
        assert app.screen.query_one(ProcessPanel).view.filter_text == "q"


async def test_tree_view_puts_children_under_parents():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.view.tree and table_pids(app)[:1] == [1])
        assert table_pids(app)[0] == 1
        assert panel.view.tree
        command = panel.table.get_row("1001")[-1].plain
        assert command.lstrip(" │").startswith(("├─ ", "└─ "))


async def test_selection_stays_on_the_same_pid_when_order_changes():
    first = make_snapshot(process_count=10)
    reordered = replace(first, processes=tuple(
        replace(p, cpu_percent=100.0 - p.cpu_percent) for p in first.processes))
    app, source = make_app(first)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down")
        panel = app.screen.query_one(ProcessPanel)
        chosen = panel.selected_process.pid
        source.snapshots.append(reordered)
        source.calls = 1
        await settle(pilot, 0.6)
        assert table_pids(app) != sorted(table_pids(app))
        assert panel.selected_process.pid == chosen


async def test_vanished_processes_disappear_from_the_table():
    first = make_snapshot(process_count=10)
    fewer = replace(first, processes=first.processes[:5])
    app, source = make_app(first, fewer)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, 0.8)
        assert sorted(table_pids(app)) == sorted(p.pid for p in fewer.processes)


async def test_space_pauses_sampling_and_resumes():
    app, source = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        await settle(pilot, 0.1)
        calls = source.calls
        await settle(pilot, 0.8)
        assert app.paused and source.calls == calls
        await pilot.press("space")
        await settle(pilot, 0.6)
        assert not app.paused and source.calls > calls


async def test_plus_and_minus_change_the_interval_within_limits():
    app, _ = make_app(interval_s=1.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("plus")
        assert app.interval_s == 2.0
        for _ in range(10):
            await pilot.press("minus")
        assert app.interval_s == 0.25
        header = app.screen.query_one("#header").render()
        assert "every 0.25s" in str(header)


async def test_help_lists_the_screen_keys_and_closes_with_escape():
    app, _ = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot, 0.1)
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=100, file=io.StringIO(), record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        shown = console.export_text()
        for words in ("Filter", "Tree", "Kill", "Quit", "Sort MEM%"):
            assert words in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_every_monitor_binding_is_in_the_command_palette():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Pause", "Filter", "Tree", "Kill", "Sort GPU memory", "Quit", "Help"} <= titles


async def test_resize_to_tiny_and_back_never_crashes():
    app, _ = make_app(make_snapshot(gpu_count=8, mig=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for size in ((20, 5), (59, 24), (80, 14), (1, 1), (200, 60), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot, 0.3)
        assert isinstance(app.screen, type(app.monitor_screen))
        await pilot.resize_terminal(20, 5)
        await settle(pilot, 0.2)
        assert isinstance(app.screen, TooSmallScreen)
        assert "terminal too small (need 60x15)" in str(app.screen.query_one("#too-small-message").render())
        await pilot.resize_terminal(80, 24)
        await settle(pilot, 0.2)
        assert not isinstance(app.screen, TooSmallScreen)


@pytest.fixture
def child_process():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    if child.poll() is None:
        child.kill()
    child.wait()


def snapshot_with(child_pid: int):
    import getpass

    base = make_snapshot(process_count=5)
    me = ProcessSample(pid=child_pid, ppid=os.getpid(), user=getpass.getuser(), cpu_percent=100.0,
                       memory_percent=0.1, rss_bytes=10_000_000, state="sleeping", start_time_s=0.0,
                       command="python -c sleep")
    return replace(base, processes=base.processes + (me,))


@pytest.mark.parametrize("key, expected_signal", [("t", -15), ("9", -9)])
async def test_kill_confirms_then_signals_the_selected_process(child_process, key, expected_signal):
    app, _ = make_app(snapshot_with(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert app.screen.query_one(ProcessPanel).selected_process.pid == child_process.pid
        await pilot.press("k")
        await settle(pilot, 0.1)
        assert isinstance(app.screen, KillScreen)
        await pilot.press(key)
        await settle(pilot, 0.2)
        assert child_process.wait(timeout=5) == expected_signal


async def test_kill_cancel_leaves_the_process_alone(child_process):
    app, _ = make_app(snapshot_with(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot, 0.1)
        await pilot.press("escape")
        await settle(pilot, 0.2)
        assert child_process.poll() is None
        assert not isinstance(app.screen, KillScreen)


async def test_kill_of_another_users_process_is_refused_with_a_reason(monkeypatch):
    monkeypatch.setattr("pth_top.tui.screens.monitor.os.geteuid", lambda: 12345)
    monkeypatch.setattr("pth_top.tui.screens.monitor.current_user_name", lambda: "carol")
    app, _ = make_app(make_snapshot(process_count=3))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await settle(pilot, 0.1)
        assert not isinstance(app.screen, KillScreen)
        messages = [notification.message for notification in app._notifications]
        assert any("cannot signal PID" in message and "you are carol" in message for message in messages)


async def test_kill_of_a_vanished_process_says_it_exited(child_process):
    app, _ = make_app(snapshot_with(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("space")
        child_process.kill()
        child_process.wait()
        await pilot.press("k")
        await settle(pilot, 0.1)
        await pilot.press("t")
        await settle(pilot, 0.2)
        messages = [notification.message for notification in app._notifications]
        assert any("already exited" in message for message in messages)


async def test_a_failing_sampler_is_shown_and_the_dashboard_keeps_running():
    app = PthTopApp(interval_s=0.1, source_factory=lambda: FailingSource(OSError("cannot read /proc")))
    async with app.run_test(size=(100, 30)) as pilot:
        error = app.screen.query_one("#sampler-error")
        await wait_until(pilot, lambda: error.display and "cannot read /proc" in str(error.render()))
        assert error.display and "cannot read /proc" in str(error.render())
        await pilot.press("t")
        assert app.is_running


async def test_the_first_frame_already_shows_the_first_sample():
    app, source = make_app(interval_s=3600)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert source.calls == 1
        assert len(table_pids(app)) == len(make_snapshot(gpu_count=1).processes)


async def test_an_unchanged_process_keeps_its_cells_and_a_changed_one_is_redrawn():
    app, _ = make_app(make_snapshot(process_count=5))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("space")
        await settle(pilot)
        panel = app.screen.query_one(ProcessPanel)
        processes = make_snapshot(process_count=5).processes
        panel.show(processes, show_gpu_columns=False)
        await settle(pilot, 0.05)
        cells_before = {key: panel.table.get_row(key) for key in panel.table.row_keys}
        busy = replace(processes[1], cpu_percent=77.5)
        panel.show((processes[0], busy) + processes[2:], show_gpu_columns=False)
        await settle(pilot, 0.05)
        unchanged_key, changed_key = str(processes[2].pid), str(busy.pid)
        assert panel.table.get_row(unchanged_key) is cells_before[unchanged_key]
        assert panel.table.get_row(changed_key) is not cells_before[changed_key]
        assert panel.table.get_row(changed_key)[2].plain == "77.5"
        assert panel.table.row_keys[0] == changed_key


async def test_kernel_threads_are_hidden_until_capital_k():
    base = make_snapshot(process_count=5)
    kworker = ProcessSample(pid=3, ppid=2, user="root", cpu_percent=99.0, memory_percent=0.0, rss_bytes=0,
                            state="idle", start_time_s=0.0, command="[kworker/0:1-events]", is_kernel_thread=True)
    app, _ = make_app(replace(base, processes=base.processes + (kworker,)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        status = app.screen.query_one("#process-status")
        assert 3 not in table_pids(app)
        assert "1 kernel thread hidden (K shows)" in str(status.content)
        await pilot.press("K")
        await wait_until(pilot, lambda: 3 in table_pids(app))
        assert table_pids(app)[0] == 3
        assert "hidden" not in str(status.content)
        await pilot.press("K")
        await wait_until(pilot, lambda: 3 not in table_pids(app))
        assert 3 not in table_pids(app)

"""Keys and flows of the Monitor screen, driven with Pilot against fixed snapshots (kill: test_monitor_kill.py)."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from rich.console import Console

from pth_top.sensors.model import ProcessSample
from pth_top.tui.app import PthTopApp
from pth_top.tui.first_sample import FirstSample
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.help import HelpScreen
from pth_top.tui.screens.too_small import TooSmallScreen
from tests.fakes.snapshots import FailingSource, FixedSource, make_snapshot
from tests.waiting import WAIT_TIMEOUT_S, wait_until


def make_app(*snapshots, interval_s=0.1):
    source = FixedSource(*(snapshots or (make_snapshot(gpu_count=1),)))
    return PthTopApp(interval_s=interval_s, source_factory=lambda: source), source


def table_pids(app):
    table = app.screen.query_one(ProcessPanel).table
    return [int(key) for key in table.row_keys]


async def wait_for_rows(pilot, app, count=None):
    """Wait until the process table shows the first sample (`count` rows when given)."""
    await wait_until(pilot, lambda: len(table_pids(app)) == count if count is not None else table_pids(app),
                     what=f"the process table to show {count if count is not None else 'any'} rows")


async def wait_for_samples(pilot, source, count):
    """Wait until the sampler has taken `count` more samples and the app has handled them."""
    target_calls = source.calls + count + 1
    await wait_until(pilot, lambda: source.calls >= target_calls, what=f"{count} more samples")
    await pilot.pause()


def count_sampler_sleeps(app) -> list[int]:
    """A one-item list counting the sampling loop's turns (each ends in one sleep, paused or not)."""
    turns = [0]
    sleep = app._sleep_until_next_sample

    def counting_sleep(worker) -> None:
        sleep(worker)
        turns[0] += 1

    app._sleep_until_next_sample = counting_sleep
    return turns


def notifications(app) -> list[str]:
    return [notification.message for notification in app._notifications]


async def test_sort_keys_change_order_and_invert():
    app, _ = make_app()
    processes = {p.pid: p for p in make_snapshot(gpu_count=1).processes}
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_rows(pilot, app, len(processes))
        cpu_order = table_pids(app)
        assert [processes[pid].cpu_percent for pid in cpu_order] == sorted(
            (p.cpu_percent for p in processes.values()), reverse=True)
        await pilot.press("N")
        await wait_until(pilot, lambda: table_pids(app) == sorted(processes), what="PID order")
        await pilot.press("I")
        await wait_until(pilot, lambda: table_pids(app) == sorted(processes, reverse=True), what="inverted PID order")
        await pilot.press("M")
        by_memory = sorted(processes, key=lambda pid: processes[pid].memory_percent, reverse=True)
        await wait_until(pilot, lambda: [processes[pid].memory_percent for pid in table_pids(app)]
                         == [processes[pid].memory_percent for pid in by_memory], what="MEM% order")


async def test_header_click_sorts_by_that_column():
    app, _ = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_rows(pilot, app)
        table = app.screen.query_one(ProcessPanel).table
        assert table_pids(app) != sorted(table_pids(app)), "starts in CPU% order, not PID order"
        table.post_message(table.HeaderClicked(table, "pid"))
        await wait_until(pilot, lambda: table_pids(app) == sorted(table_pids(app)), what="PID order")


async def test_filter_is_incremental_and_escape_clears_it():
    app, source = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        total = len(table_pids(app))
        await pilot.press("slash", "t", "r", "a", "i", "n")
        await wait_until(pilot, lambda: table_pids(app) == [1000], what="only the train process")
        await pilot.press("enter")
        await wait_for_samples(pilot, source, 2)
        assert table_pids(app) == [1000], "the filter survives refreshes after Enter"
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table_pids(app)) == total, what="every process back")


async def test_the_filter_input_is_mounted_on_the_first_slash_and_reopens_with_the_filter():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        assert not panel.query("#process-filter")
        await pilot.press("slash", "t", "r", "a", "i", "n", "enter")
        await wait_until(pilot, lambda: panel.view.filter_text == "train", what="the filter kept after Enter")
        await pilot.press("slash")

        def reopened_with_the_filter() -> bool:
            filter_inputs = panel.query("#process-filter")
            return bool(filter_inputs) and filter_inputs.first().value == "train" and filter_inputs.first().has_focus

        await wait_until(pilot, reopened_with_the_filter, what="the focused filter input holding 'train'")
        assert len(panel.query("#process-filter")) == 1


async def test_q_typed_in_filter_does_not_quit():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("slash", "q")
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.view.filter_text == "q", what="'q' typed into the filter")
        assert app.is_running


async def test_tree_view_puts_children_under_parents():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("t")
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.view.tree and table_pids(app)[:1] == [1], what="the tree rooted at PID 1")
        command = panel.table.get_row("1001")[-1].plain
        assert command.lstrip(" │").startswith(("├─ ", "└─ "))


@pytest.mark.parametrize("follow", [False, True], ids=["row-kept", "follow-pid"])
async def test_selection_keeps_its_row_or_with_f_follows_its_pid_when_order_changes(follow):
    first = make_snapshot(process_count=10)
    reordered = replace(first, processes=tuple(
        replace(p, cpu_percent=100.0 - p.cpu_percent) for p in first.processes))
    app, source = make_app(first)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app, 10)
        first_order = table_pids(app)
        if follow:
            await pilot.press("F")
        await pilot.press("down", "down")
        panel = app.screen.query_one(ProcessPanel)
        chosen = panel.selected_process.pid
        assert chosen == first_order[2]
        source.snapshots.append(reordered)
        # The busiest process of the first sample is the idlest of the reordered one.
        await wait_until(pilot, lambda: table_pids(app)[-1] == first_order[0], what="the reordered sample")
        if follow:
            assert panel.selected_process.pid == chosen
        else:
            assert panel.selected_process.pid == table_pids(app)[2], "htop without follow: the cursor keeps its row"


async def test_vanished_processes_disappear_from_the_table():
    first = make_snapshot(process_count=10)
    fewer = replace(first, processes=first.processes[:5])
    app, source = make_app(first, fewer)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: sorted(table_pids(app)) == sorted(p.pid for p in fewer.processes),
                         what="only the 5 processes of the second sample")


async def test_space_pauses_sampling_and_resumes():
    app, source = make_app()
    sampler_turns = count_sampler_sleeps(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("space")
        assert app.paused
        # A sample already in flight when space was pressed may still land: wait one turn for it.
        turn_at_pause = sampler_turns[0]
        await wait_until(pilot, lambda: sampler_turns[0] >= turn_at_pause + 1, what="the sampler's turn in flight")
        calls = source.calls
        await wait_until(pilot, lambda: sampler_turns[0] >= turn_at_pause + 4, what="three paused sampler turns")
        assert source.calls == calls, "no sample is taken while paused"
        await pilot.press("space")
        assert not app.paused
        await wait_until(pilot, lambda: source.calls > calls, what="sampling to resume")


async def test_plus_and_minus_change_the_interval_within_limits():
    app, _ = make_app(interval_s=1.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("plus")
        assert app.interval_s == 2.0
        for _ in range(10):
            await pilot.press("minus")
        assert app.interval_s == 0.25
        header = app.screen.query_one("#header")
        await wait_until(pilot, lambda: "every 0.25s" in str(header.render()), what="the header to say every 0.25s")


async def test_help_lists_the_screen_keys_and_closes_with_escape():
    app, _ = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        console = Console(width=100, file=io.StringIO(), record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        shown = console.export_text()
        for words in ("Filter", "Tree", "Kill", "Quit", "Sort MEM%"):
            assert words in shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen), what="the help screen to close")


async def test_every_monitor_binding_is_in_the_command_palette():
    app, _ = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Pause", "Filter", "Tree", "Kill", "Sort GPU memory", "Quit", "Help"} <= titles


async def test_resize_to_tiny_and_back_never_crashes():
    app, _ = make_app(make_snapshot(gpu_count=8, mig=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        for width, height in ((20, 5), (59, 24), (80, 14), (1, 1), (200, 60), (80, 24)):
            await pilot.resize_terminal(width, height)
            too_small = width < 60 or height < 15
            await wait_until(pilot, lambda too_small=too_small: isinstance(app.screen, TooSmallScreen) == too_small,
                             what=f"the {'too-small' if too_small else 'monitor'} screen at {width}x{height}")
        assert isinstance(app.screen, type(app.monitor_screen))
        await pilot.resize_terminal(20, 5)
        await wait_until(pilot, lambda: isinstance(app.screen, TooSmallScreen), what="the too-small screen")
        assert "terminal too small (need 60x15)" in str(app.screen.query_one("#too-small-message").render())
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: not isinstance(app.screen, TooSmallScreen), what="the monitor back")
        assert app.is_running


async def test_a_failing_sampler_is_shown_and_the_dashboard_keeps_running():
    app = PthTopApp(interval_s=0.1, source_factory=lambda: FailingSource(OSError("cannot read /proc")))
    async with app.run_test(size=(100, 30)) as pilot:
        error = app.screen.query_one("#sampler-error")
        await wait_until(pilot, lambda: error.display and "cannot read /proc" in str(error.render()),
                         what="the sampler error on screen")
        await pilot.press("t")
        assert app.is_running


async def test_the_first_frame_already_shows_the_first_sample():
    source = FixedSource(make_snapshot(gpu_count=1))
    first = FirstSample.on_thread(lambda: source)
    assert first.wait(WAIT_TIMEOUT_S), "the first sample came"
    app = PthTopApp(interval_s=3600, source_factory=lambda: source, first_sample=first)
    async with app.run_test(size=(100, 30)):
        assert source.calls == 1
        assert len(table_pids(app)) == len(make_snapshot(gpu_count=1).processes)


async def test_an_unchanged_process_keeps_its_cells_and_a_changed_one_is_redrawn():
    # One sample only (the next is an hour away), so nothing but the test draws the table after it.
    app, _ = make_app(make_snapshot(process_count=5), interval_s=3600)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for_rows(pilot, app, 5)
        panel = app.screen.query_one(ProcessPanel)
        processes = make_snapshot(process_count=5).processes
        panel.show(processes, show_gpu_columns=False)
        await pilot.pause()
        cells_before = {key: panel.table.get_row(key) for key in panel.table.row_keys}
        busy = replace(processes[1], cpu_percent=77.5)
        panel.show((processes[0], busy) + processes[2:], show_gpu_columns=False)
        await pilot.pause()
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
        await wait_for_rows(pilot, app, 5)
        status = app.screen.query_one("#process-status")
        assert 3 not in table_pids(app)
        assert "1 kernel thread hidden (K shows)" in str(status.content)
        await pilot.press("K")
        await wait_until(pilot, lambda: 3 in table_pids(app), what="the kernel thread shown")
        assert table_pids(app)[0] == 3
        assert "hidden" not in str(status.content)
        await pilot.press("K")
        await wait_until(pilot, lambda: 3 not in table_pids(app), what="the kernel thread hidden again")


async def test_keys_typed_right_after_slash_all_reach_the_filter():
    """A pasted or fast-typed filter loses no character to the table's keys while the filter box mounts."""
    from textual import events
    from textual.widgets import Input

    app = PthTopApp(interval_s=3600, source_factory=lambda: FixedSource(make_snapshot(process_count=5)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query_one(ProcessPanel).table.row_count > 0, what="the rows")
        for key, character in [("slash", "/"), ("c", "c"), ("l", "l"), ("i", "i"), ("p", "p")]:
            app.post_message(events.Key(key, character))  # all queued at once, as a paste arrives
        await wait_until(pilot, lambda: app.screen.query("#process-filter").results(Input)
                         and app.screen.query_one("#process-filter", Input).value == "clip",
                         what='"clip" in the filter box')


async def test_a_slash_typed_in_the_filter_is_text_not_a_new_filter():
    from textual.widgets import Input

    app = PthTopApp(interval_s=3600, source_factory=lambda: FixedSource(make_snapshot(process_count=5)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("slash")
        await wait_until(pilot, lambda: app.screen.query("#process-filter").results(Input) and app.focused
                         is app.screen.query_one("#process-filter", Input), what="the filter box focused")
        await pilot.press("u", "s", "r", "slash", "b")
        await wait_until(pilot, lambda: app.screen.query_one("#process-filter", Input).value == "usr/b",
                         what='"usr/b" in the filter box')

"""What the process table shows after view changes, and that its state is on screen at every supported size.

Issue 14: the busiest processes scrolled off after a cleared filter (1), pause invisible at 80x24 and
q/? cut from the key bar (2), G and < > moving over hidden GPU columns (5), Tab missing from help (8),
and the GPU-only filter users asked for.
"""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from rich.console import Console

from pth_top.sensors.model import ProcessSample
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.help import HelpScreen
from tests.fakes.snapshots import make_snapshot
from tests.tui.test_monitor_pilot import make_app, notifications, table_pids, wait_for_rows
from tests.waiting import wait_until

SUPPORTED_SMALL_SIZES = [(80, 24), (60, 15)]


def screen_lines(app) -> list[str]:
    """The screen as the terminal shows it, one plain string per line."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def process(pid: int, cpu: float, command: str, kernel: bool = False) -> ProcessSample:
    return ProcessSample(pid=pid, ppid=2 if kernel else 1, user="root" if kernel else "alice", cpu_percent=cpu,
                         memory_percent=0.5, rss_bytes=0 if kernel else 1 << 20, state="sleeping",
                         start_time_s=500.0, command=command, is_kernel_thread=kernel)


def busy_machine_snapshot():
    """Two busy trainers, 40 idle kworkers and 30 idle services; the user's bash sorts last by CPU%."""
    processes = [process(1, 0.0, "/sbin/init"), process(500, 96.0, "python train.py"),
                 process(501, 94.0, "python eval.py"), process(9000, 0.0, "bash")]
    processes += [process(10 + index, 0.0, f"[kworker/{index}:1]", kernel=True) for index in range(40)]
    processes += [process(600 + index, 0.0, f"service-{index}") for index in range(30)]
    return replace(make_snapshot(gpu_count=0), processes=tuple(processes))


async def test_a_cleared_filter_shows_the_busiest_processes_at_the_top():
    app, _ = make_app(busy_machine_snapshot())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        await pilot.press("K", "slash", "b", "a", "s", "h", "enter")
        await wait_until(pilot, lambda: table_pids(app) == [9000], what="only bash")
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table_pids(app)) == 74, what="every process back")
        assert panel.table.scroll_offset.y == 0 and panel.selected_process.pid == 500
        assert any("python train.py" in line for line in screen_lines(app)), "the 96 % process is on screen"


async def test_a_sort_change_shows_the_top_of_the_table():
    app, _ = make_app(busy_machine_snapshot())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        await pilot.press("end")
        await wait_until(pilot, lambda: panel.table.scroll_offset.y > 0, what="the table scrolled down")
        await pilot.press("N")
        await wait_until(pilot, lambda: panel.view.sort_column == "pid", what="PID order")
        assert panel.table.scroll_offset.y == 0 and panel.selected_process.pid == 1


async def test_with_follow_on_a_sort_change_keeps_the_selected_process():
    app, _ = make_app(busy_machine_snapshot())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        await pilot.press("F", "down", "down")
        chosen = panel.selected_process.pid
        await pilot.press("N")
        await wait_until(pilot, lambda: panel.view.sort_column == "pid", what="PID order")
        assert panel.selected_process.pid == chosen
        assert "follow" in screen_lines(app)[0]


@pytest.mark.parametrize("size", SUPPORTED_SMALL_SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
async def test_paused_filter_tree_follow_and_sort_stay_visible_when_small(size):
    app, _ = make_app(make_snapshot(gpu_count=1))
    async with app.run_test(size=size) as pilot:
        await wait_for_rows(pilot, app)
        key_bar = screen_lines(app)[-1]
        assert "q Quit" in key_bar and "? Help" in key_bar, key_bar
        await pilot.press("space")
        await wait_until(pilot, lambda: "PAUSED" in screen_lines(app)[0], what="PAUSED in the header")
        await pilot.press("slash", "w", "o", "r", "enter", "t", "F", "M")
        header_has = lambda words: all(word in screen_lines(app)[0] for word in words)  # noqa: E731
        await wait_until(pilot, lambda: header_has(("PAUSED", "/wor", "tree", "follow", "MEM%▼")),
                         what="paused, filter, tree, follow and sort in the header")
        assert len(screen_lines(app)[0].rstrip()) <= size[0]
        await pilot.press("g")
        await wait_until(pilot, lambda: header_has(("GPU-only", "PAUSED")), what="GPU-only in the header")
        key_bar = screen_lines(app)[-1]
        assert "q Quit" in key_bar and "? Help" in key_bar, key_bar


async def test_g_without_gpus_says_there_is_no_gpu_column_and_cycling_skips_hidden_columns():
    app, _ = make_app(make_snapshot(gpu_count=0))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        await pilot.press("G")
        await wait_until(pilot, lambda: any("no GPUMEM column" in message for message in notifications(app)),
                         what="the no-GPU notice")
        assert panel.view.sort_column == "cpu"
        shown = {column.key for column in panel.columns}
        visited = set()
        for _ in range(len(shown) + 2):
            await pilot.press("greater_than_sign")
            visited.add(panel.view.sort_column)
        for _ in range(len(shown) + 2):
            await pilot.press("less_than_sign")
            visited.add(panel.view.sort_column)
        assert visited == shown and not visited & {"gpu_mem", "gpu"}


async def test_g_shows_only_processes_using_a_gpu_and_again_shows_all():
    snapshot = make_snapshot(gpu_count=2)
    app, _ = make_app(snapshot)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app, len(snapshot.processes))
        await pilot.press("g")
        gpu_pids = sorted(p.pid for p in snapshot.processes if p.has_gpu_context)
        await wait_until(pilot, lambda: sorted(table_pids(app)) == gpu_pids, what="only the GPU processes")
        await pilot.press("g")
        await wait_until(pilot, lambda: len(table_pids(app)) == len(snapshot.processes), what="every process back")


async def test_help_lists_tab_follow_and_gpu_only():
    app, _ = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        console = Console(width=100, file=io.StringIO(), record=True)
        for static in app.screen.query("Static"):
            console.print(static.content)
        shown = console.export_text()
        assert "Tab" in shown and "GPU and process tables" in shown
        assert "Follow the selected process" in shown and "GPU only" in shown


@pytest.mark.parametrize("sm_known, container", [(False, ""), (True, "slurm:4242")], ids=["plain", "sm-and-job"])
async def test_sm_and_container_columns_appear_only_with_data(sm_known, container):
    snapshot = make_snapshot(gpu_count=1)
    processes = list(snapshot.processes)
    trainer_at = next(position for position, p in enumerate(processes) if p.has_gpu_context)
    use = processes[trainer_at].gpu_uses[0]
    processes[trainer_at] = replace(processes[trainer_at], container=container,
                                    gpu_uses=(replace(use, sm_util_percent=87.0) if sm_known else use,))
    app, _ = make_app(replace(snapshot, processes=tuple(processes)))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for_rows(pilot, app)
        panel = app.screen.query_one(ProcessPanel)
        shown = {column.key for column in panel.columns}
        assert ("gpu_util" in shown) == sm_known and ("container" in shown) == bool(container)
        assert ("SM%" in screen_lines(app)[panel.table.region.y]) == sm_known, "the table's header line"
        cells = [cell.plain for cell in panel.table.get_row(str(processes[trainer_at].pid))]
        assert ("87" in cells) == sm_known and ("job 4242" in cells) == bool(container)

"""The Bench screen runs a tiny CPU suite end to end, shows rows and a chart, cancels, and compares runs."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import DataTable

from pth_top.benches.client.rows import COLUMNS
from pth_top.benches.client.runs import list_runs
from pth_top.benches.run_request import RunRequest
from pth_top.tui.screens.bench import BenchScreen, KernelProgress
from pth_top.widgets.bar_chart import BarChart
from tests.waiting import wait_until


class BenchApp(App):
    def __init__(self, screen: BenchScreen) -> None:
        super().__init__()
        self.bench_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self.bench_screen)


async def wait_for(pilot, condition, timeout_s: float = 60.0) -> None:
    """The suite's one condition wait, with this file's longer default (real bench children start slowly)."""
    await wait_until(pilot, condition, timeout_s=timeout_s, what="the bench screen's condition")


@pytest.mark.usefixtures("torch")  # a real child in this interpreter
async def test_bench_screen_runs_a_tiny_cpu_suite_and_saves_it(tmp_path):
    screen = BenchScreen(RunRequest(kernels=("gemm", "disk"), scale=0.01, time_cap_s=0.05, disk_dir=str(tmp_path),
                                    disk_size_mib=8))
    app = BenchApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "Found" in str(screen.query_one("#status").content))
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.last_saved is not None)
        table = screen.query_one(DataTable)
        kernels = {str(table.get_row_at(index)[0]) for index in range(table.row_count)}
        assert kernels == {"gemm", "disk"}
        assert len(screen.query(KernelProgress)) == 2
        assert screen.query_one(BarChart).bars, "GEMM rows have a CPU peak, so the chart has bars"
        await pilot.press("v")
        assert screen.query_one("ContentSwitcher").current == "chart"
        assert len(list_runs()) == 1

        await pilot.press("c")  # compare with the saved run: Δ% column filled
        await wait_for(pilot, lambda: app.screen is not screen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.baseline is not None)

        def deltas() -> list[str]:
            return [str(table.get_row_at(index)[COLUMNS.index("Δ%")]) for index in range(table.row_count)]

        await wait_for(pilot, lambda: deltas() and all(delta.endswith("%") for delta in deltas()))


@pytest.mark.usefixtures("torch")  # a real child in this interpreter
async def test_escape_cancels_a_running_benchmark(tmp_path):
    """Cancel ends the child and its temp file (how fast: tests/perf, not here; the machine may be loaded)."""
    screen = BenchScreen(RunRequest(kernels=("disk",), scale=0.01, time_cap_s=0.05, disk_dir=str(tmp_path),
                                    disk_size_mib=4096))
    app = BenchApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "Found" in str(screen.query_one("#status").content))
        await pilot.press("enter")
        await wait_for(pilot, lambda: list(tmp_path.glob(".pth-top-bench-*.tmp")))
        process = screen._process
        assert process is not None
        await pilot.press("escape")
        await wait_for(pilot, lambda: not screen.running)
        assert process.returncode is not None
        assert "Cancelled" in str(screen.query_one("#status").content)
        assert not list(tmp_path.glob(".pth-top-bench-*")), "the child removes its temp file before it exits"
        assert not list_runs()


async def test_a_missing_interpreter_is_reported_on_the_status_line(tmp_path):
    screen = BenchScreen(RunRequest(kernels=("disk",)), python=str(tmp_path / "nope" / "python"))
    app = BenchApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        status = lambda: str(screen.query_one("#status").content)  # noqa: E731
        await wait_for(pilot, lambda: "Cannot list devices" in status(), timeout_s=10)
        assert "does not exist" in status()
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Benchmark did not run" in status(), timeout_s=10)
        assert "does not exist" in status() and not screen.running


async def test_enter_in_the_open_suite_list_picks_a_suite_instead_of_starting(tmp_path):
    from textual.widgets import Select

    screen = BenchScreen(RunRequest(kernels=("disk",)), python=str(tmp_path / "missing"))
    app = BenchApp(screen)
    async with app.run_test(size=(80, 24)) as pilot:
        screen.query_one("#suite", Select).focus()
        await pilot.press("down")  # opens the list
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: screen.query_one("#suite", Select).value == "standard")
        assert not screen.running and "Benchmark did not run" not in str(screen.query_one("#status").content)


@pytest.mark.usefixtures("torch")  # a real child in this interpreter
async def test_b_opens_the_bench_mode_and_escape_returns_to_the_monitor():
    from pth_top.tui.app import PthTopApp

    class BrokenSource:
        def sample(self):
            raise RuntimeError("no sensors in this test")

    app = PthTopApp(source_factory=BrokenSource)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, BenchScreen))
        screen = app.screen
        await wait_for(pilot, lambda: "Found" in str(screen.query_one("#status").content))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current_mode == "monitor")

"""The Jobs view: `j` opens it at 80x24 with the jobs and their cost at the [jobs] price, `>` sorts, Enter lists
a job's processes; the price and currency are validated settings."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.sensors.model import JobSample
from pth_top.sensors.na import NA
from pth_top.tui.app import PthTopApp
from pth_top.tui.screens.help import HelpScreen
from pth_top.tui.screens.jobs import JobProcessesScreen, JobsScreen
from pth_top.tui.settings import SETTINGS_FILE_NAME, load_settings, save_settings, settings_from_dict
from pth_top.widgets.row_table import RowTable
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import wait_until


def job_snapshot():
    snapshot = make_snapshot(gpu_count=2, process_count=10)
    pids = [process.pid for process in snapshot.processes]
    jobs = (
        JobSample(kind="torchrun", job_id="run-42", user="alice", pids=tuple(pids[:3]), gpu_indices=(0, 1),
                  gpu_memory_used_bytes=40 << 30, sm_active_ratio=0.5, power_draw_w=900.0,
                  start_time_s=snapshot.timestamp_s - 3600, energy_j=7.2e6, energy_method="counter"),
        JobSample(kind="slurm", job_id="777", user="bob", pids=tuple(pids[3:5]), gpu_indices=(),
                  gpu_memory_used_bytes=NA, sm_active_ratio=NA, power_draw_w=NA,
                  start_time_s=snapshot.timestamp_s - 60),
    )
    return replace(snapshot, jobs=jobs)


def write_settings(text: str) -> None:
    path = Path(os.environ["PTH_TOP_CONFIG_DIR"]) / SETTINGS_FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def row_text(table: RowTable, key: str) -> str:
    return " ".join(cell.plain for cell in table.get_row(key))


@pytest.mark.asyncio
async def test_j_opens_the_jobs_view_and_enter_lists_a_jobs_processes():
    write_settings('[jobs]\nenergy_price_per_kwh = 0.25\ncurrency = "EUR"\n')
    snapshot = job_snapshot()
    source = FixedSource(snapshot)
    app = PthTopApp(interval_s=0.1, source_factory=lambda: source)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen_stack and app.screen.query("#process-table"), what="the monitor")
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), what="the Jobs view")
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="two jobs")
        assert table.row_keys == ["torchrun:run-42", "slurm:777"], "largest GPU memory first"
        text = row_text(table, "torchrun:run-42")
        # 7.2 MJ = 2 kWh at 0.25 EUR/kWh.
        assert "alice" in text and "0,1" in text and "50%" in text and "2.00kWh" in text and "0.50" in text
        assert "COST EUR" in " ".join(column.label.plain for column in table.columns)
        await pilot.press("full_stop")  # sort by the next column (SM active)
        await pilot.press("I")
        assert table.row_keys == ["slurm:777", "torchrun:run-42"]
        table.move_cursor_to_key("torchrun:run-42")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JobProcessesScreen), what="the job's processes")
        assert [process.pid for process in app.screen.processes] == list(snapshot.jobs[0].pids)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), what="back to the Jobs view")
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, JobsScreen), what="back to the monitor")


@pytest.mark.parametrize("table, problem", [
    ({"energy_price_per_kwh": -1}, "energy_price_per_kwh"),
    ({"energy_price_per_kwh": "cheap"}, "energy_price_per_kwh"),
    ({"energy_price_per_kwh": 0.3, "currency": "euros and cents"}, "currency"),
    ({"price": 0.3}, "jobs.price is not a setting"),
])
def test_a_bad_price_is_one_line(table, problem):
    with pytest.raises(ValueError, match=problem):
        settings_from_dict({"jobs": table})


def test_the_price_is_saved_and_read_back():
    settings, _ = load_settings()
    assert settings.energy_price_per_kwh is None
    assert save_settings(replace(settings, energy_price_per_kwh=0.31, currency="$")) is None
    again, problem = load_settings()
    assert problem is None and again.energy_price_per_kwh == 0.31 and again.currency == "$"


@pytest.mark.asyncio
async def test_a_job_on_stuck_gpus_is_marked_stuck_even_while_the_jobs_view_covers_the_monitor():
    from tests.recorder.test_flag_events import hung_snapshot

    hung = hung_snapshot()
    job = JobSample(kind="tree", job_id="100", user="alice", pids=tuple(p.pid for p in hung.processes),
                    gpu_indices=(0, 1, 2), gpu_memory_used_bytes=3 << 30, sm_active_ratio=0.15,
                    power_draw_w=456.0, start_time_s=500.0)
    idle = JobSample(kind="slurm", job_id="777", user="bob", pids=(), gpu_indices=(), gpu_memory_used_bytes=NA,
                     sm_active_ratio=NA, power_draw_w=NA, start_time_s=500.0)
    hung = replace(hung, jobs=(job, idle))
    source = FixedSource(hung)
    app = PthTopApp(interval_s=3600, source_factory=lambda: source)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.screen_stack and app.screen.query("#process-table"), what="the monitor")
        monitor = app.screen
        await pilot.press("j")
        await wait_until(pilot, lambda: isinstance(app.screen, JobsScreen), what="the Jobs view")
        table = app.screen.query_one(RowTable)
        await wait_until(pilot, lambda: table.row_count == 2, what="two jobs")
        assert "STUCK" not in row_text(table, "tree:100")
        # A minute of hung samples, all while the Jobs view is on top.
        for step in range(14):
            monitor.take_snapshot(replace(hung, timestamp_s=2000.0 + 5 * step))
        await pilot.pause()
        assert row_text(table, "tree:100").startswith("STUCK tree:100")
        assert "STUCK" not in row_text(table, "slurm:777")

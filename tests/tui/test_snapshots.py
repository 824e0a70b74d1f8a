"""Snapshot tests of the Monitor screen with fixed data: no GPU, 1 GPU, 8 GPUs (with MIG and a lost GPU)."""

from __future__ import annotations

import pytest

from pth_top.tui.app import PthTopApp
from pth_top.tui.first_sample import FirstSample
from tests.fakes.snapshots import FixedSource, make_snapshot
from tests.waiting import WAIT_TIMEOUT_S, wait_until


def fixed_app(snapshot):
    # One sample, taken before the app starts (so it is always drawn on load), the next an hour away:
    # the drawing never depends on timing.
    source = FixedSource(snapshot)
    first_sample = FirstSample.on_thread(lambda: source)
    assert first_sample.wait(WAIT_TIMEOUT_S), "the first sample came"
    return PthTopApp(interval_s=3600, source_factory=lambda: source, first_sample=first_sample)


async def wait_for_first_sample(pilot):
    table = pilot.app.screen.query_one("#process-table")
    await wait_until(pilot, lambda: table.row_count, what="the sample in the process table")
    await pilot.pause()


@pytest.mark.parametrize("gpu_count, size", [(0, (80, 24)), (1, (80, 24)), (8, (120, 40))])
def test_monitor_screen(snap_compare, gpu_count, size):
    snapshot = make_snapshot(gpu_count=gpu_count, mig=gpu_count == 8, lost_gpu=7 if gpu_count == 8 else None)
    assert snap_compare(fixed_app(snapshot), terminal_size=size, run_before=wait_for_first_sample)


def test_help_screen(snap_compare):
    assert snap_compare(fixed_app(make_snapshot()), terminal_size=(80, 24), press=["question_mark"],
                        run_before=wait_for_first_sample)

"""The Monitor's kill flow, driven with Pilot: confirm then signal, cancel, another user's process, a vanished one."""

from __future__ import annotations

import pytest

from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.screens.kill import KillScreen
from tests.fakes.snapshots import make_snapshot, snapshot_with_process
from tests.tui.test_monitor_pilot import make_app, notifications, wait_for_rows
from tests.waiting import wait_until


@pytest.mark.parametrize("key, expected_signal", [("t", -15), ("9", -9)])
async def test_kill_confirms_then_signals_the_selected_process(child_process, key, expected_signal):
    app, _ = make_app(snapshot_with_process(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.screen.query_one(ProcessPanel)
        await wait_until(pilot, lambda: panel.selected_process is not None, what="a selected process")
        assert panel.selected_process.pid == child_process.pid
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")
        await pilot.press(key)
        await wait_until(pilot, lambda: child_process.poll() is not None, what="the child to die")
        assert child_process.returncode == expected_signal


async def test_kill_cancel_leaves_the_process_alone(child_process):
    app, _ = make_app(snapshot_with_process(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, KillScreen), what="the kill dialog to close")
        assert child_process.poll() is None


async def test_kill_of_another_users_process_is_refused_with_a_reason(monkeypatch):
    monkeypatch.setattr("pth_top.tui.screens.process_signal.os.geteuid", lambda: 12345)
    monkeypatch.setattr("pth_top.tui.screens.process_signal.current_user_name", lambda: "carol")
    app, _ = make_app(make_snapshot(process_count=3))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("k")
        await wait_until(pilot, lambda: any("cannot signal PID" in message and "you are carol" in message
                                            for message in notifications(app)), what="the refusal")
        assert not isinstance(app.screen, KillScreen)


async def test_kill_of_a_vanished_process_says_it_exited(child_process):
    app, _ = make_app(snapshot_with_process(child_process.pid))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_rows(pilot, app)
        await pilot.press("space")
        child_process.kill()
        child_process.wait()
        await pilot.press("k")
        await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")
        await pilot.press("t")
        await wait_until(pilot, lambda: any("already exited" in message for message in notifications(app)),
                         what="'already exited'")

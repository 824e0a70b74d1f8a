"""No text from another process reaches the viewer's terminal raw (table, filter, kill dialog, the real
terminal), and the kill dialog signals only the process the user chose."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pexpect
import pytest
from textual.widgets import Input

from pth_top.sensors.model import DiskIoRate, FilesystemUsage, NetworkRate, ProcessSample
from pth_top.sensors.processes import process_start_time_s
from pth_top.text import printable
from pth_top.tui.app import PthTopApp
from pth_top.tui.panels.cpu_memory import cpu_title
from pth_top.tui.panels.gpus import gpu_cells, gpu_detail_text
from pth_top.tui.panels.header import header_text
from pth_top.tui.panels.io import disks_text, network_text
from pth_top.tui.panels.processes import ProcessPanel
from pth_top.tui.process_view import ProcessLine, process_cells
from pth_top.tui.screens.kill import KillScreen
from tests.fakes.snapshots import FixedSource, make_cpu, make_gpu, make_host, make_snapshot
from tests.hostile_children import (
    OSC52_TAIL,
    start_hostile_children,
    start_term_blocking_child,
    stop_children,
    terminal_controls_in,
    was_signalled,
)
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_TEXTS = [
    "clip2" + OSC52_TAIL,  # OSC 52: writes the clipboard
    "\x1b]0;owned title\x07",  # retitles the window
    "\x1b[2J\x1b[H", "\x1b[31mred", "\x1bc",  # clears, colours, resets the terminal
    "two\nlines", "back\rline", "bell\x07", "del\x7f", "nul\x00", "\u009b2J", "\u202eevil", "a\u2028b",
]


def process_named(command: str, user: str = "alice", pid: int = 4242, start_time_s: float = 0.0) -> ProcessSample:
    return ProcessSample(pid=pid, ppid=1, user=user, cpu_percent=100.0, memory_percent=0.1, rss_bytes=1,
                         state="sleeping", start_time_s=start_time_s, command=command)


def messages(app) -> list[str]:
    return [notification.message for notification in app._notifications]


def table_pids(app) -> list[int]:
    return [int(key) for key in app.screen.query_one(ProcessPanel).table.row_keys]


@pytest.mark.parametrize("hostile", HOSTILE_TEXTS)
def test_process_cells_show_control_characters_as_visible_escapes(hostile):
    cells = process_cells(ProcessLine(process_named(hostile, user=hostile)))
    shown = "".join(cell.plain for cell in cells)
    assert not terminal_controls_in(shown)
    assert printable(hostile) in shown and printable(hostile[:8]) in shown


def test_mount_points_and_interfaces_show_control_characters_as_visible_escapes():
    # Any user can FUSE-mount on a folder whose name holds an escape sequence.
    mount = FilesystemUsage(mountpoint="/m/\x1b]52;c;eA==\x07", device="fuse", fstype="fuse",
                            total_bytes=100, used_bytes=1, free_bytes=99)
    disk = DiskIoRate(device="sd\x1b[2J", read_bytes_per_s=0.0, write_bytes_per_s=0.0, read_iops=0.0, write_iops=0.0)
    network = NetworkRate(interface="e\x1b[31m", rx_bytes_per_s=0.0, tx_bytes_per_s=0.0)
    shown = disks_text([disk], [mount]).plain + network_text([network]).plain
    assert not terminal_controls_in(shown.replace("\n", ""))
    assert "/m/\\x1b]52;c;e" in shown and "sd\\x1b[2J" in shown and "e\\x1b[31m" in shown


def test_host_cpu_and_gpu_names_show_control_characters_as_visible_escapes():
    hostile = "x\x1b]0;t\x07\n"
    host = replace(make_host(gpu_count=1), hostname=hostile, nvidia_driver_version=hostile)
    gpu = replace(make_gpu(0, name=hostile))
    shown = [header_text(host).plain, cpu_title(make_cpu(), hostile).plain, gpu_detail_text(gpu).plain,
             *(cell.plain for cell in gpu_cells(gpu)), *(cell.plain for cell in gpu_cells(replace(gpu, lost=True)))]
    for text in shown:
        assert not terminal_controls_in(text)
    assert all("x\\x1b]0;t" in text for text in shown[:3])


@pytest.fixture(scope="module")
def hostile_children():
    children = start_hostile_children("tui")
    yield children
    stop_children(children)


async def filter_to(pilot, app, filter_text: str, pid: int) -> None:
    """Filter the table, then select `pid` (a filter by PID may also match other command lines)."""
    app.screen.query_one("#process-filter", Input).value = filter_text
    panel = app.screen.query_one(ProcessPanel)
    await wait_until(pilot, lambda: panel.view.filter_text == filter_text and pid in table_pids(app),
                     what=f"PID {pid} in the filtered table")
    panel.table.move_cursor_to_key(str(pid))
    await wait_until(pilot, lambda: panel.selected_process.pid == pid, what=f"PID {pid} selected")


async def test_hostile_names_are_drawn_as_visible_escapes_in_table_filter_and_kill_dialog(hostile_children):
    app = PthTopApp(interval_s=0.25)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("slash")
        await wait_until(pilot, lambda: app.screen.query("#process-filter"), what="the filter input")
        for kind, filter_text in (("osc52", "clip2" + hostile_children["osc52"].marker),
                                  ("controls", hostile_children["controls"].marker),
                                  ("long", hostile_children["long"].marker),
                                  ("zombie", str(hostile_children["zombie"].pid))):
            await filter_to(pilot, app, filter_text, hostile_children[kind].pid)
            screen = app.export_screenshot()
            assert not terminal_controls_in(screen), kind
        await filter_to(pilot, app, "clip2" + hostile_children["osc52"].marker, hostile_children["osc52"].pid)
        assert "\\x1b]52;c;cHduZWQ=" in app.export_screenshot()
        await pilot.press("enter", "k")
        await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")
        dialog = app.export_screenshot()
        assert not terminal_controls_in(dialog) and "\\x1b]52;c;cHduZWQ=" in dialog
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, KillScreen), what="the kill dialog to close")
        # A pasted filter holding an escape is shown escaped on the status line.
        await pilot.press("slash")
        app.screen.query_one("#process-filter", Input).value = "x\x1b]0;t\x07"
        await wait_until(pilot, lambda: app.screen.query_one(ProcessPanel).view.filter_text.startswith("x"),
                         what="the filter to apply")
        status = str(app.screen.query_one("#process-status").render())
        assert "x\\x1b]0;t\\x07" in status and not terminal_controls_in(status)
        assert app.screen.query_one("#process-filter", Input).value == "x\\x1b]0;t\\x07"
        assert not terminal_controls_in(app.export_screenshot()), "the filter input shows what was pasted raw"


def test_the_real_terminal_never_receives_an_osc52_from_a_process_name(hostile_children):
    script = Path(sys.executable).with_name("pth-top")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "pth_top.tui"]
    received = io.BytesIO()
    terminal = pexpect.spawn(command[0], command[1:] + ["--interval", "0.5"], cwd=ROOT, timeout=30,
                             env={**os.environ, "TERM": "xterm-256color"}, dimensions=(30, 160))
    terminal.logfile_read = received
    try:
        terminal.expect(b"processes", timeout=60)
        terminal.send("/")  # the filter opens before it is typed into: keys sent sooner could go to the table
        terminal.expect(b"filter: command", timeout=60)
        terminal.send("clip2" + hostile_children["osc52"].marker)
        terminal.expect(b"\\\\x1b]52;c;cHduZWQ=", timeout=60)
        terminal.send("\r")
        terminal.send("q")
        terminal.expect(pexpect.EOF, timeout=30)
    finally:
        terminal.close(force=True)
    assert b"\x1b]52" not in received.getvalue()


@pytest.mark.parametrize("start_offset_s, key, signalled", [
    (-60.0, "t", False), (-60.0, "9", False), (+3600.0, "t", False), (0.0, "t", True),
], ids=["older-term", "older-kill", "newer-term", "same-process"])
async def test_the_kill_dialog_signals_only_the_process_that_was_selected(start_offset_s, key, signalled):
    # A row whose start time differs from the live process's is what a reused PID looks like.
    child = start_term_blocking_child()
    try:
        row = process_named("python sleeper", user="root" if os.geteuid() == 0 else os.environ.get("USER", ""),
                            pid=child.pid, start_time_s=process_start_time_s(child.pid) + start_offset_s)
        base = make_snapshot(process_count=3)
        source = FixedSource(replace(base, processes=base.processes + (row,)))
        app = PthTopApp(interval_s=0.1, source_factory=lambda: source)
        async with app.run_test(size=(100, 30)) as pilot:
            panel = app.screen.query_one(ProcessPanel)
            await wait_until(pilot, lambda: panel.selected_process is not None
                             and panel.selected_process.pid == child.pid, what="the child's row selected")
            await pilot.press("k")
            await wait_until(pilot, lambda: isinstance(app.screen, KillScreen), what="the kill dialog")
            await pilot.press(key)
            await wait_until(pilot, lambda: messages(app), what="the outcome on screen")
            signal_number = signal.SIGKILL if key == "9" else signal.SIGTERM
            assert was_signalled(child.pid, signal_number) is signalled
            expected = "sent" if signalled else "is now another process"
            assert any(expected in message for message in messages(app)), messages(app)
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process needs root")
async def test_another_users_real_process_is_refused_when_not_root(monkeypatch):
    monkeypatch.setattr("pth_top.tui.screens.process_signal.os.geteuid", lambda: 1000)
    monkeypatch.setattr("pth_top.tui.screens.process_signal.current_user_name", lambda: "carol")
    other = subprocess.Popen(["sleep", "600"], user=65534, stdin=subprocess.DEVNULL)
    try:
        app = PthTopApp(interval_s=0.25)
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.press("slash")
            await wait_until(pilot, lambda: app.screen.query("#process-filter"), what="the filter input")
            await filter_to(pilot, app, str(other.pid), other.pid)
            await pilot.press("enter", "k")
            await wait_until(pilot, lambda: messages(app), what="the refusal")
            assert not isinstance(app.screen, KillScreen)
            assert any("cannot signal PID" in message and "you are carol" in message for message in messages(app))
            assert not was_signalled(other.pid)
    finally:
        other.kill()
        other.wait()

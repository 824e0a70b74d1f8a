"""Processes a hostile or unlucky user could start (escape sequences and control characters in names, a
100 KB command line, a zombie) read intact, printed safely; signals reach only the process the user chose."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.sensors import processes
from pth_top.sensors.model import FilesystemUsage, ProcessSample
from pth_top.sensors.processes import ProcfsProcessSource, SignalOutcome, process_start_time_s, signal_process
from pth_top.sensors.snapshot_table import format_snapshot_table, render_table
from tests.fakes.snapshots import make_snapshot
from tests.hostile_children import (
    LONG_COMMAND_CHARS,
    ZOMBIE_COMM,
    start_hostile_children,
    start_term_blocking_child,
    stop_children,
    terminal_controls_in,
    was_signalled,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
GIB = 1024 ** 3


@pytest.fixture(scope="module")
def hostile_children():
    children = start_hostile_children("sensors")
    yield children
    stop_children(children)


@pytest.fixture
def term_blocking_child():
    child = start_term_blocking_child()
    yield child
    child.kill()
    child.wait()


def run_snapshot(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pth_top.tui", "snapshot", "--interval", "0.05", *args], cwd=REPO_ROOT,
        capture_output=True, timeout=120, stdin=subprocess.DEVNULL,
    )


def test_the_process_table_reads_hostile_names_intact(hostile_children):
    rows = {row.pid: row for row in ProcfsProcessSource().rows(memory_total_bytes=GIB).processes}
    for kind in ("osc52", "controls"):
        assert rows[hostile_children[kind].pid].command == hostile_children[kind].command
    # /proc/PID/cmdline is read once, up to 64 KiB: a 100 KB command line is cut, never an error.
    long_command = rows[hostile_children["long"].pid].command
    assert long_command.startswith(hostile_children["long"].marker) and 60_000 < len(long_command) < LONG_COMMAND_CHARS
    zombie = rows[hostile_children["zombie"].pid]
    assert zombie.state == "zombie" and zombie.command == "[" + ZOMBIE_COMM.decode() + "]"


def test_snapshot_table_prints_hostile_names_as_visible_escapes(hostile_children):
    result = run_snapshot("--top", "1000000")
    assert result.returncode == 0, result.stderr
    output = result.stdout.decode("utf-8")
    assert not terminal_controls_in(output), "a control character reached the terminal"
    lines = output.splitlines()

    def line_of(pid: int) -> str:
        found = [line for line in lines if line.split()[:1] == [str(pid)]]
        assert len(found) == 1, f"PID {pid} on {len(found)} lines"
        return found[0]

    assert "\\x1b]52;c;cHduZWQ=\\x1b\\tail" in line_of(hostile_children["osc52"].pid)
    assert "controls\\x0a\\x0d\\x07\\x08\\x7f\\x9b2J\\u202eevil\\u2028end" in line_of(hostile_children["controls"].pid)
    assert len(line_of(hostile_children["long"].pid)) <= 160
    assert "[zz\\x1b]0;pwn\\x07\\x0a)(]" in line_of(hostile_children["zombie"].pid)


def test_snapshot_json_stays_valid_and_keeps_the_names_as_they_are(hostile_children):
    result = run_snapshot("--json")
    assert result.returncode == 0, result.stderr
    # JSON escapes every control character: the document is plain printable ASCII.
    assert all(0x20 <= byte < 0x7F for byte in result.stdout.rstrip(b"\n"))
    commands = {process["pid"]: process["command"] for process in json.loads(result.stdout)["processes"]}
    for kind in ("osc52", "controls", "zombie"):
        assert commands[hostile_children[kind].pid] == hostile_children[kind].command


def test_snapshot_table_aligns_and_escapes_every_outside_string():
    hostile = "ev\x1b[2Jil\nname"
    base = make_snapshot(process_count=2)
    process = ProcessSample(pid=4242, ppid=1, user="us\x1b]0;x\x07er", cpu_percent=99.0, memory_percent=1.0,
                            rss_bytes=1, state="sleeping", start_time_s=0.0, command=hostile)
    mount = FilesystemUsage(mountpoint="/media/\x1b]52;c;eA==\x07usb", device="fuse\x9b", fstype="fuse",
                            total_bytes=GIB, used_bytes=1, free_bytes=GIB - 1)
    snapshot = replace(base, processes=base.processes + (process,), filesystems=(mount,),
                       host=replace(base.host, hostname="box\x1b[31m"))
    text = format_snapshot_table(snapshot)
    assert not terminal_controls_in(text.replace("\n", ""))
    assert "ev\\x1b[2Jil\\x0aname" in text and "/media/\\x1b]52;c;eA==\\x07usb" in text and "box\\x1b[31m" in text
    table = render_table(("A", "B"), [("x\x1by", "one"), ("plain", "two")])
    assert table[1].index("one") == table[2].index("two"), "escaped cells still align"


def test_a_signal_reaches_the_process_that_started_at_the_selected_time(term_blocking_child):
    pid = term_blocking_child.pid
    outcome = signal_process(pid, process_start_time_s(pid), signal.SIGTERM)
    assert outcome is SignalOutcome.SENT and was_signalled(pid)


@pytest.mark.parametrize("with_pidfd", [True, False], ids=["pidfd", "kill"])
def test_a_reused_pid_is_not_signalled(term_blocking_child, monkeypatch, with_pidfd):
    if not with_pidfd:
        monkeypatch.setattr(processes, "_open_pidfd", lambda pid: None)
    pid = term_blocking_child.pid
    # The row the user chose started 5 s before the process now holding its PID: another process.
    outcome = signal_process(pid, process_start_time_s(pid) - 5.0, signal.SIGTERM)
    assert outcome is SignalOutcome.REPLACED
    assert not was_signalled(pid), "the process now holding the PID was signalled"
    assert signal_process(pid, process_start_time_s(pid), signal.SIGTERM) is SignalOutcome.SENT
    assert was_signalled(pid)


def test_an_exited_process_is_reported_and_nothing_is_sent(monkeypatch):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    start_s = process_start_time_s(child.pid)
    child.wait()
    assert signal_process(child.pid, start_s or 0.0, signal.SIGTERM) is SignalOutcome.EXITED
    assert signal_process(0, 0.0, signal.SIGTERM) is SignalOutcome.EXITED, "PID 0 would signal our own group"
    assert signal_process(-1, 0.0, signal.SIGTERM) is SignalOutcome.EXITED, "PID -1 would signal everything"


def test_a_process_that_exits_after_the_check_is_not_mistaken_for_another(term_blocking_child, monkeypatch):
    # Through the pidfd the signal goes to the checked process or nowhere, whatever holds the PID by then.
    pid = term_blocking_child.pid
    start_s = process_start_time_s(pid)
    real_start_time = processes.process_start_time_s

    def check_then_exit(checked_pid, proc_root="/proc"):
        started = real_start_time(checked_pid, proc_root)
        term_blocking_child.kill()
        term_blocking_child.wait()
        return started

    monkeypatch.setattr(processes, "process_start_time_s", check_then_exit)
    assert signal_process(pid, start_s, signal.SIGTERM) is SignalOutcome.EXITED


def test_zombies_take_a_signal_without_error(hostile_children):
    zombie = hostile_children["zombie"]
    start_s = process_start_time_s(zombie.pid)
    assert start_s is not None
    assert signal_process(zombie.pid, start_s, signal.SIGTERM) in (SignalOutcome.SENT, SignalOutcome.EXITED)


@pytest.mark.skipif(os.geteuid() != 0, reason="starting another user's process needs root")
def test_another_users_process_is_listed_under_that_user():
    child = subprocess.Popen(["sleep", "600"], user=65534, stdin=subprocess.DEVNULL)
    try:
        rows = {row.pid: row for row in ProcfsProcessSource().rows(memory_total_bytes=GIB).processes}
        assert rows[child.pid].user != "root"
    finally:
        child.kill()
        child.wait()

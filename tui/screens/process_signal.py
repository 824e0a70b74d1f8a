"""Signalling a process from the Monitor: who may (root, or the process's own user), and what to say after."""

from __future__ import annotations

import os
import pwd

from textual.notifications import SeverityLevel

from pth_top.sensors.model import ProcessSample
from pth_top.text import printable


def current_user_name() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return str(os.geteuid())


def may_signal(process: ProcessSample, user_name: str, is_root: bool) -> bool:
    """Only root may signal other users' processes."""
    return is_root or process.user == user_name


def signal_refusal(process: ProcessSample) -> str | None:
    """Why this user may not signal `process` (one line), or None when they may."""
    user_name = current_user_name()
    if may_signal(process, user_name, os.geteuid() == 0):
        return None
    return f"cannot signal PID {process.pid}: it belongs to {printable(process.user)} and you are {user_name}"


def send_signal(process: ProcessSample, signal_number: int) -> tuple[str, SeverityLevel]:
    """Signal `process` only if its PID still names the process sampled; (message, notification severity)."""
    from pth_top.sensors.processes import signal_process
    from pth_top.tui.screens.kill import signal_notice

    outcome = signal_process(process.pid, process.start_time_s, signal_number)
    return signal_notice(process.pid, signal_number, outcome)

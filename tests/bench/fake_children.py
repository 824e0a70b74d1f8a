"""Stand-ins for `--python`: small executable scripts that print canned events, garbage, hang or die."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from pth_top.benches.protocol import encode_event
from tests import waiting

DEVICES_LINE = encode_event("devices", devices=[{"id": "cpu", "name": "Fake CPU"}])
STARTED_LINE = encode_event("started", suite="custom", devices=["cpu"], scale=0.01, time_cap_s=0.05,
                            kernels=[{"kernel": "gemm", "device": "cpu", "unit": "TFLOP/s"}], metadata={})
RESULT_LINE = encode_event("result", kernel="gemm", device="cpu", variant="fp32 1 thread", status="ok", value=0.5,
                           unit="TFLOP/s", peak_kind="fp32", note="", details={"threads": 1})
FINISHED_LINE = encode_event("finished", ok=True, results=1, errors=0, wall_s=0.1)
GOOD_RUN = [STARTED_LINE, RESULT_LINE, FINISHED_LINE]
# `pth-top` with only the bench command loaded, run as a subprocess.
CLI_CODE = ("import sys, pth_top.tui.cli as c; c.COMMAND_MODULES = ('pth_top.tui.commands.bench',); "
            "sys.exit(c.main(sys.argv[1:]))")


def executable(path: Path, text: str) -> str:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def shell_child(tmp_path: Path, body: str, name: str = "fake-python") -> str:
    """A /bin/sh script run in place of the interpreter (it ignores the bootstrap arguments)."""
    return executable(tmp_path / name, "#!/bin/sh\n" + body + "\n")


def canned_child(tmp_path: Path, run_lines: list[str], *, after: str = "", name: str = "fake-python") -> str:
    """A Python script that lists one CPU for --list-devices and otherwise prints `run_lines`, then runs `after`."""
    code = (
        f"#!{sys.executable}\n"
        "import sys, time\n"
        f"if '--list-devices' in sys.argv:\n    sys.stdout.write({DEVICES_LINE!r})\n    sys.exit(0)\n"
        f"for line in {run_lines!r}:\n    sys.stdout.write(line)\n    sys.stdout.flush()\n"
        f"{after}\n"
    )
    return executable(tmp_path / name, code)


def process_gone(pid: int) -> bool:
    """True once `pid` no longer runs (a zombie nobody reaps counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in (b"Z", b"X")


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None


def end_if_running(*pids: int | None) -> None:
    """Test clean-up: SIGKILL pids a failed test left behind."""
    import signal

    for pid in pids:
        if pid and not process_gone(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def wait_for(predicate, timeout_s: float = 30.0, what: str = "the condition") -> None:
    """The suite's wait, with the longer deadline a real child process may need."""
    waiting.wait_for(predicate, what, timeout_s)

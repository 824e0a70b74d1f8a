"""One terminal tool in a fresh COLUMNS x ROWS pty, for dashboard_overhead.py: its first frame, process tree, output.

A thread drains the pty master, counting the bytes the tool writes and noting when its first-frame marker
(a regex on the output with escape sequences stripped) shows up; `stop` quits the tool and always reaps it.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

REPO_ROOT = Path(__file__).resolve().parents[2]
COLUMNS, ROWS = 120, 40
QUIET_S = 0.2
FIRST_FRAME_TIMEOUT_S = 15.0
ESCAPE = re.compile(
    rb"\x1b(\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\][^\x07\x1b]*(\x07|\x1b\\)"  # OSC
    rb"|[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    rb"|[()][0-9A-Za-z]|[=>78MDEHc])"
)


@dataclass
class Tool:
    name: str
    argv: list[str]
    marker: re.Pattern[bytes] | None
    quit_keys: bytes = b""
    env: dict[str, str] = field(default_factory=dict)


class PtyRun:
    """One tool in a fresh pty of COLUMNS x ROWS; a thread drains the master and counts bytes."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS), **tool.env)
        env.pop("NO_COLOR", None)
        # Bytecode caching on, as for an installed tool (this sandbox sets PYTHONDONTWRITEBYTECODE).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(
            tool.argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
            preexec_fn=_become_terminal_owner, cwd=REPO_ROOT,
        )
        os.close(slave)
        self.master = master
        self.bytes_read = 0
        self.last_byte_at: float | None = None
        self.marker_at: float | None = None
        self._text = b""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            now = time.monotonic()
            with self._lock:
                self.bytes_read += len(data)
                self.last_byte_at = now
                if self.marker_at is None and self.tool.marker is not None:
                    self._text = (self._text + data)[-200_000:]
                    if self.tool.marker.search(ESCAPE.sub(b"", self._text)):
                        self.marker_at = now

    def wait_first_frame(self) -> float | None:
        """Seconds from spawn to the first full frame, or None when it never came."""
        deadline = self.started_at + FIRST_FRAME_TIMEOUT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            with self._lock:
                if self.tool.marker is not None and self.marker_at is not None:
                    return self.marker_at - self.started_at
                if self.tool.marker is None and self.last_byte_at is not None:
                    if time.monotonic() - self.last_byte_at >= QUIET_S:
                        return self.last_byte_at - self.started_at
            time.sleep(0.01)
        return None

    def tree(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.process.pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def stop(self) -> None:
        """Quit with the tool's key when it has one, then SIGTERM, then SIGKILL; always reaps."""
        try:
            if self.tool.quit_keys and self.process.poll() is None:
                try:
                    os.write(self.master, self.tool.quit_keys)
                    self.process.wait(timeout=3)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            for send in (self.process.terminate, self.process.kill):
                if self.process.poll() is not None:
                    break
                send()
                try:
                    self.process.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    pass
            self.process.wait()
        finally:
            self._stop.set()
            self._reader.join(timeout=2)
            os.close(self.master)


def _become_terminal_owner() -> None:
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

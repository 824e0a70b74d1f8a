"""Run `benches probe` as a subprocess of a chosen interpreter and parse its one JSON object.

The launcher's one bootstrap loads the bench package by file path, so the target interpreter needs
only torch: our own site-packages are never added to its sys.path.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from typing import Any

from pth_top.benches.launcher import build_command
from pth_top.benches.protocol import ProtocolError, parse_json_bounded
from pth_top.text import printable

PROBE_SCHEMA = "pth-top.torch-probe"
AFTER_KILL_S = 5.0
PROBE_MAX_DEPTH = 32


class ProbeError(Exception):
    """The probe could not produce a report; the message is one line saying why."""


def probe_command(python: str, load_seconds: float = 0) -> list[str]:
    command = build_command(python, ["probe"])
    if load_seconds > 0:
        command += ["--load-seconds", f"{load_seconds:g}"]
    return command


def resolve_python(python: str) -> str | None:
    """The executable `python` names (a path or a name on PATH), or None when there is none."""
    if os.path.isdir(python):
        return None
    return shutil.which(python)


class PendingProbe:
    """A probe subprocess started now and collected later, so other checks can run meanwhile."""

    def __init__(self, python: str, timeout_s: float, load_seconds: float = 0) -> None:
        resolved = resolve_python(python)
        if resolved is None:
            raise ProbeError(f"no Python interpreter at {python}")
        self.python = resolved
        self._cancelled = False
        self.timeout_s = timeout_s + max(0.0, load_seconds)
        try:
            self._process = subprocess.Popen(
                probe_command(resolved, load_seconds),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, errors="replace", env={**os.environ, "PYTHONWARNINGS": "ignore"},
                start_new_session=True,  # its own group: the timeout ends whatever the probe started too
            )
        except (OSError, ValueError) as error:
            raise ProbeError(f"cannot start {printable(resolved, 200)}: {getattr(error, 'strerror', None) or error}") from None

    def result(self) -> dict[str, Any]:
        """The probe's JSON object (which may carry "error"); ProbeError when there is none.

        The timeout holds even when the probe's own children keep its pipes open: the whole group is killed.
        """
        try:
            stdout, stderr = self._process.communicate(timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            self._kill_group()
            try:
                self._process.communicate(timeout=AFTER_KILL_S)
            except subprocess.TimeoutExpired:  # a descendant that left the group still holds a pipe
                self._process.kill()
            raise ProbeError(f"torch probe in {printable(self.python, 200)} took longer than {self.timeout_s:g} s") from None
        finally:
            self._kill_group()
        if self._cancelled:
            raise ProbeError("torch probe cancelled")
        return parse_probe_output(self.python, stdout, stderr, self._process.returncode)

    def cancel(self) -> None:
        """Kill the probe and its descendants if it still runs; safe from another thread while `result` waits."""
        if self._process.poll() is None:
            self._cancelled = True
            self._kill_group()

    def _kill_group(self) -> None:
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def parse_probe_output(python: str, stdout: str, stderr: str, returncode: int) -> dict[str, Any]:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            report = parse_json_bounded(line, PROBE_MAX_DEPTH, non_finite_as_none=True)
        except ProtocolError:  # not JSON, or nested deeper than any report
            continue
        if isinstance(report, dict) and report.get("schema") == PROBE_SCHEMA:
            return report
    last_error_line = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    detail = last_error_line.strip() or f"exit code {returncode}, no output"
    raise ProbeError(f"torch probe in {printable(python, 200)} failed: {printable(detail, 300)}")


def run_torch_probe(python: str, timeout_s: float, load_seconds: float = 0) -> dict[str, Any]:
    """Run the probe in `python` and return its JSON object; ProbeError with a one-line reason."""
    return PendingProbe(python, timeout_s, load_seconds).result()

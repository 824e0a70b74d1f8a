"""Run the bench child's `probe` in a chosen interpreter and parse its one JSON object.

The probe goes through the benches client's one spawn (bootstrap, process group, bounded output), on a
small event loop of its own in a thread, so the doctor's other checks run meanwhile.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from pth_top.benches.client.spawn import ChildProcess, InterpreterError, LaunchError, build_command
from pth_top.benches.protocol import ProtocolError, parse_json_bounded
from pth_top.text import printable

PROBE_SCHEMA = "pth-top.torch-probe"
PROBE_MAX_DEPTH = 32
PROBE_ENV = {"PYTHONWARNINGS": "ignore"}
# The probe prints one JSON line; only the last few stdout lines are kept.
PROBE_STDOUT_LINES = 20


class ProbeError(Exception):
    """The probe could not produce a report; the message is one line saying why."""


def probe_args(load_seconds: float = 0) -> list[str]:
    return ["probe", *(["--load-seconds", f"{load_seconds:g}"] if load_seconds > 0 else [])]


def probe_command(python: str, load_seconds: float = 0) -> list[str]:
    return build_command(python, probe_args(load_seconds))


class PendingProbe:
    """A probe subprocess started now and collected later, so other checks can run meanwhile."""

    def __init__(self, python: str, timeout_s: float, load_seconds: float = 0) -> None:
        try:
            self._child = ChildProcess(python, probe_args(load_seconds), env=PROBE_ENV)
        except InterpreterError as error:
            raise ProbeError(f"no Python interpreter at {error.shown} ({error.reason})") from None
        self.python = self._child.python
        self.timeout_s = timeout_s + max(0.0, load_seconds)
        self._stdout: list[bytes] = []
        self._problem: str | None = None
        self._cancelled = False
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        # Set (on the loop's thread) once the clean-up runs: a cancel then must not cut its SIGKILL short.
        self._cleaning_up = False
        self._thread = threading.Thread(target=asyncio.run, args=(self._collect(),), name="torch-probe", daemon=True)
        self._thread.start()

    async def _collect(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            await self._child.start()
            await asyncio.wait_for(self._read_and_wait(), timeout=self.timeout_s)
        except LaunchError as error:
            self._problem = str(error)
        except asyncio.TimeoutError:
            self._problem = f"torch probe in {printable(self.python, 200)} took longer than {self.timeout_s:g} s"
        except asyncio.CancelledError:
            self._problem = "torch probe cancelled"
        finally:
            self._cleaning_up = True
            await self._child.cancel()  # the whole group, even when a descendant keeps the pipes open

    async def _read_and_wait(self) -> None:
        while line := await self._read_line_or_skip():
            self._stdout = [*self._stdout[-(PROBE_STDOUT_LINES - 1):], line]
        await self._child.wait()

    async def _read_line_or_skip(self) -> bytes:
        while True:
            try:
                return await self._child.read_line()
            except ProtocolError:  # a line over the bound: not the report
                continue

    def result(self) -> dict[str, Any]:
        """The probe's JSON object (which may carry "error"); ProbeError when there is none."""
        self._thread.join()
        if self._cancelled:
            raise ProbeError("torch probe cancelled")
        if self._problem:
            raise ProbeError(self._problem)
        stdout = b"".join(self._stdout).decode("utf-8", errors="replace")
        return parse_probe_output(self.python, stdout, "\n".join(self._child.stderr_tail), self._child.returncode)

    def cancel(self) -> None:
        """Kill the probe and its descendants if it still runs; safe from another thread while `result` waits."""
        with self._lock:
            if not self._thread.is_alive():
                return
            self._cancelled = True
            if self._loop is not None:
                self._loop.call_soon_threadsafe(self._cancel_unless_cleaning_up)

    def _cancel_unless_cleaning_up(self) -> None:
        """On the loop's thread: stop the reading, but never the clean-up that ends the process group."""
        if self._task is not None and not self._cleaning_up:
            self._task.cancel()


def parse_probe_output(python: str, stdout: str, stderr: str, returncode: int | None) -> dict[str, Any]:
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

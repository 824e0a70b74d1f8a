"""A benchmark child: its events checked against the protocol, a silent one stopped; device listing."""

from __future__ import annotations

import asyncio
import signal
from typing import Any, AsyncIterator

from pth_top.benches.client.spawn import ChildProcess, LaunchError
from pth_top.benches.protocol import (
    Event,
    ProtocolError,
    bad_output_event,
    decode_line,
    stall_limit_s,
)
from pth_top.benches.run_request import RunRequest
from pth_top.text import printable

# A child is stopped after this long without a line (it sends a heartbeat every HEARTBEAT_INTERVAL_S).
SILENCE_TIMEOUT_S = 60.0
MAX_BAD_LINES = 20
LIST_DEVICES_ARGS = ("run", "--list-devices")


class BenchProcess(ChildProcess):
    """One bench child (`run`, loaded by path through the bootstrap): checked events, stopped when silent or garbled.

    Each output line is read with a bound and checked against the protocol; a bad line becomes an error
    row. A child silent for `silence_timeout_s` (no event, not even a heartbeat) is stopped, and so is one
    whose heartbeats say its main thread made no progress for `stall_limit_s` (a hung GPU kernel);
    by default that limit follows the run's time cap (`stall_limit_s` in the protocol).
    """

    def __init__(self, python: str | None, args: list[str], *, silence_timeout_s: float | None = None,
                 stall_limit_s: float | None = None) -> None:
        super().__init__(python, args)
        self.silence_timeout_s = SILENCE_TIMEOUT_S if silence_timeout_s is None else silence_timeout_s
        self.fixed_stall_limit_s = stall_limit_s
        self.stall_limit_s = stall_limit_s if stall_limit_s is not None else _stall_limit_s(None)
        self.bad_lines: list[str] = []
        self.events_seen = 0
        self.silenced = False
        self.stalled_reason: str | None = None
        self.current_step: tuple[str | None, str | None] = (None, None)  # kernel, device of the last event

    @classmethod
    def for_request(cls, python: str | None, request: RunRequest, *,
                    stall_limit_s: float | None = None) -> "BenchProcess":
        return cls(python, ["run", *request.to_argv()], stall_limit_s=stall_limit_s)

    def _watch(self, event: Event) -> Event | None:
        """Follow the run's time cap and current kernel; the error row that stops a stalled child, else None."""
        if event.kind == "started" and self.fixed_stall_limit_s is None:
            self.stall_limit_s = _stall_limit_s(event.get("time_cap_s"))
        elif event.kind in ("progress", "result", "error", "sample"):
            self.current_step = (event.get("kernel"), event.get("device"))
        age = event.get("progress_age_s") if event.kind == "heartbeat" else None
        if not isinstance(age, (int, float)) or age <= self.stall_limit_s:
            return None
        kernel, device = self.current_step
        where = f" in {kernel} on {device}" if kernel else ""
        self.stalled_reason = (f"no progress for {age:.0f} s{where} (GPU hung?); the benchmark process was "
                               f"stopped (limit {self.stall_limit_s:g} s)")
        return Event("error", {"kernel": kernel, "device": device, "variant": None, "error_type": "Stalled",
                               "message": self.stalled_reason})

    async def events(self) -> AsyncIterator[Event]:
        """Checked events until the child closes stdout; a bad line is yielded as an error row.

        Heartbeats are consumed here. Silence beyond the bound, or too many bad lines, stops the child.
        """
        while True:
            try:
                line = await _within(self.read_line(), self.silence_timeout_s)
            except asyncio.TimeoutError:
                self.silenced = True
                await self.cancel()
                yield bad_output_event(f"no output for {self.silence_timeout_s:g} s; the benchmark process was stopped")
                return
            except ProtocolError as error:
                line, problem = b"", str(error)
            else:
                if not line:
                    return
                if not line.strip():
                    continue
                try:
                    event = decode_line(line)
                except ProtocolError as error:
                    problem = str(error)
                else:
                    self.events_seen += 1
                    stalled = self._watch(event)
                    if stalled is not None:
                        await self.cancel()
                        yield stalled
                        return
                    if event.kind != "heartbeat":
                        yield event
                    continue
            self.bad_lines.append(problem)
            yield bad_output_event(f"bad output line: {problem}")
            if len(self.bad_lines) >= MAX_BAD_LINES:
                await self.cancel()
                yield bad_output_event(f"{MAX_BAD_LINES} bad output lines; the benchmark process was stopped")
                return

    def failure_reason(self) -> str:
        """One terminal-safe line on why the child produced no (complete) run."""
        if self.silenced:
            return f"{printable(self.python, 200)} gave no output for {self.silence_timeout_s:g} s and was stopped"
        if self.stalled_reason:
            return printable(self.stalled_reason, 300)
        last_stderr = self.last_stderr_line()
        if last_stderr:
            return last_stderr
        code = self.returncode
        ending = f"killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exit code {code}"
        if not self.events_seen:
            detail = printable(self.bad_lines[0], 200) if self.bad_lines else ending
            return f"{printable(self.python, 200)} printed no benchmark events ({detail}); is it a Python interpreter?"
        if code is not None and code < 0:
            return f"the benchmark process was {ending}"
        return f"the benchmark process ended ({ending}) before finishing"


def _stall_limit_s(time_cap_s: object) -> float:
    return stall_limit_s(float(time_cap_s) if isinstance(time_cap_s, (int, float)) else None)


async def _within(coroutine: Any, timeout_s: float) -> Any:
    """Await `coroutine`, asyncio.TimeoutError after `timeout_s`; unlike wait_for (3.10, 3.11), a cancel that
    lands as it finishes is never lost (Ctrl-C during a burn, whose child writes every second)."""
    task = asyncio.ensure_future(coroutine)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise asyncio.TimeoutError
    return task.result()


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


async def discover_devices(python: str | None = None, timeout_s: float = 60.0,
                           silence_timeout_s: float | None = None) -> list[dict]:
    """[{'id': 'cpu', 'name': ...}, {'id': 'cuda:0', ...}] as seen by `python`'s torch."""
    process = BenchProcess(python, list(LIST_DEVICES_ARGS), silence_timeout_s=silence_timeout_s)
    await process.start()
    devices: list[dict] = []
    error = None

    async def read() -> None:
        nonlocal devices, error
        async for event in process.events():
            if event.kind == "devices":
                devices = list(event.get("devices") or [])
            elif event.kind == "error" and error is None:
                error = event.get("message")

    try:
        await asyncio.wait_for(read(), timeout=timeout_s)
    except asyncio.TimeoutError:
        await process.cancel()
        raise LaunchError(f"{printable(process.python, 200)} did not list its devices "
                          f"within {timeout_s:.0f} s") from None
    except asyncio.CancelledError:
        await process.cancel()
        raise
    code = await process.wait()
    if not devices:
        reason = process.failure_reason() if process.silenced or not error else printable(error, 300)
        raise LaunchError(reason or f"device listing failed (exit {code})")
    return devices

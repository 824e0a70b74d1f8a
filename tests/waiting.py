"""Waiting for the condition a test asserts (Pilot tests or plain code): a generous deadline, never a fixed sleep."""

from __future__ import annotations

import time
from typing import Any, Callable

# Generous: CI runs the suite on a loaded 2-core machine; a passing wait returns as soon as its condition holds.
WAIT_TIMEOUT_S = 15.0
POLL_INTERVAL_S = 0.02


async def wait_until(pilot, predicate: Callable[[], object], timeout_s: float = WAIT_TIMEOUT_S,
                     what: str = "the condition") -> None:
    """Let the app run until `predicate()` is true; fail naming `what` once `timeout_s` has passed."""
    deadline_s = time.monotonic() + timeout_s
    while True:
        # pause() first lets the app handle every message already queued (keys, worker results).
        await pilot.pause()
        if predicate():
            return
        if time.monotonic() >= deadline_s:
            raise AssertionError(f"waited {timeout_s:g} s for {what}, in vain")
        await pilot.pause(POLL_INTERVAL_S)


def wait_for(condition: Callable[[], Any], what: str = "the condition", timeout_s: float = WAIT_TIMEOUT_S) -> Any:
    """Outside an event loop: poll `condition()` until it returns something truthy (returned); fail naming `what`."""
    deadline_s = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline_s:
            raise AssertionError(f"waited {timeout_s:g} s for {what}, in vain")
        time.sleep(POLL_INTERVAL_S)

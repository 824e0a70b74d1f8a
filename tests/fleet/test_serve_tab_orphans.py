"""A tab leads its own process group, so no signal to `pth-top serve` reaches it: when serve itself is
SIGKILLed, the kernel must end each tab (PR_SET_PDEATHSIG, Linux), or it would run on, orphaned, forever."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.fleet.test_serve_guard import origin, poll, receive_screen, serve_factory, served_app, tab_processes

aiohttp = pytest.importorskip("aiohttp")
psutil = pytest.importorskip("psutil")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux prctl")]
__all__ = ["serve_factory"]
ORPHAN_DEADLINE_S = 30.0


def alive(processes: list) -> list:
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            continue
    return running


async def test_a_tab_ends_when_serve_is_sigkilled(serve_factory):
    serve = serve_factory()
    tabs: list = []
    try:
        async with aiohttp.ClientSession() as session:
            socket = await session.ws_connect(f"ws://127.0.0.1:{serve.port}/ws", origin=origin(serve))
            await poll(lambda: served_app(serve), "the tab's process")
            await receive_screen(socket, "\x1b[")  # the app runs
            tabs = tab_processes(serve)
            assert all(os.getpgid(tab.pid) != os.getpgid(serve.process.pid) for tab in tabs)
            os.kill(serve.process.pid, signal.SIGKILL)  # serve alone, as the OOM killer would
            serve.process.wait(timeout=ORPHAN_DEADLINE_S)
            await poll(lambda: not alive(tabs), "no tab process left after serve's SIGKILL", ORPHAN_DEADLINE_S)
    finally:
        for process in alive(tabs):  # what the code before left running
            process.kill()

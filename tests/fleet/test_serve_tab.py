"""A browser tab's process group ends with its websocket, even when the tab ignores the request to quit."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.fleet.prometheus_tools import DEADLINE_S
from tests.waiting import wait_for

pytest.importorskip("textual_serve", reason="pth-top serve needs textual-serve (the web extra)")
psutil = pytest.importorskip("psutil")


async def test_stop_ends_a_tab_that_ignores_quit_and_what_it_started():
    from textual_serve.download_manager import DownloadManager

    from pth_top.tui.serve_tab import TabService

    async def ignore(*_: object) -> None:
        return None

    # Never says it is a Textual app, ignores its stdin, leaves a grandchild: the worst tab there is.
    tab = TabService("sh -c \"trap '' TERM; sleep 300 & sleep 300\"", write_bytes=ignore, write_str=ignore,
                     close=ignore, download_manager=DownloadManager())
    await tab.start(80, 24)
    assert tab.pid is not None
    leader = psutil.Process(tab.pid)
    started = [leader]
    give_up = asyncio.get_running_loop().time() + DEADLINE_S
    while len(started) < 3:  # the shell and its two sleeps
        assert asyncio.get_running_loop().time() < give_up, f"the tab's processes never started: {started}"
        await asyncio.sleep(0.05)
        started = [leader, *leader.children(recursive=True)]
    assert all(os.getpgid(process.pid) == tab.pid for process in started)
    await asyncio.wait_for(tab.stop(), DEADLINE_S)
    # SIGKILL went to the whole group; on a loaded machine a killed process may take a moment to be gone.
    wait_for(lambda: not alive(started), "no process of the tab left", DEADLINE_S)


def alive(processes: list) -> list:
    return [process for process in processes if process.is_running() and process.status() != "zombie"]

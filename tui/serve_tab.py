"""One browser tab's pth-top process under `pth-top serve`: its own process group, ended with its websocket.

textual-serve's AppService asks the process to quit and waits for it without end: a tab busy laying out
(or ignoring its stdin) outlived its websocket. Here the quit gets a grace period, then the whole process
group (the shell, pth-top and anything it started) gets SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import asyncio
import os
import signal

from textual_serve.app_service import AppService

QUIT_GRACE_S = 5.0  # for the app to quit when asked
TERM_GRACE_S = 5.0  # between SIGTERM and SIGKILL to the tab's process group


class TabService(AppService):
    """AppService whose process leads its own process group, and whose stop always ends that group."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    async def stop(self) -> None:
        try:
            await asyncio.wait_for(super().stop(), QUIT_GRACE_S)
        except asyncio.TimeoutError:
            pass
        finally:
            await self._end_process_group()
            if self._task is not None:
                await self._task  # returns once the group's end closed its stdout
                self._task = None

    async def _end_process_group(self) -> None:
        process = self._process
        if process is None:
            return
        if not signal_group(process.pid, signal.SIGTERM):
            return
        try:
            await asyncio.wait_for(process.wait(), TERM_GRACE_S)
        except asyncio.TimeoutError:
            pass
        signal_group(process.pid, signal.SIGKILL)  # whatever the tab started and left behind
        await process.wait()


def signal_group(group_id: int, signal_number: int) -> bool:
    """Send a signal to a process group; False when no process of it is left."""
    try:
        os.killpg(group_id, signal_number)
    except ProcessLookupError:
        return False
    return True

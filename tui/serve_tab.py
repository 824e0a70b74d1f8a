"""One browser tab's pth-top process under `pth-top serve`: its own process group, ended with its websocket.

textual-serve's AppService asks the process to quit and waits for it without end: a tab busy laying out
(or ignoring its stdin) outlived its websocket. Here the quit gets a grace period, then the whole process
group (pth-top and anything it started) gets SIGTERM, then SIGKILL. On Linux the kernel also kills the
tab when `pth-top serve` itself dies, even by SIGKILL: its own process group keeps every other signal from it.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shlex
import signal
import sys
from typing import Callable

from textual_serve.app_service import AppService

QUIT_GRACE_S = 5.0  # for the app to quit when asked
TERM_GRACE_S = 5.0  # between SIGTERM and SIGKILL to the tab's process group
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class TabService(AppService):
    """AppService whose process leads its own process group, and whose stop always ends that group."""

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        # Run directly, not under a shell: the signal on serve's death reaches pth-top itself.
        self._process = process = await asyncio.create_subprocess_exec(
            *shlex.split(self.command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=self._build_environment(width=width, height=height),
            start_new_session=True, preexec_fn=killed_with_parent(),
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


def killed_with_parent() -> Callable[[], None] | None:
    """Linux: a preexec_fn asking the kernel to SIGKILL the child when this process dies (PR_SET_PDEATHSIG).

    The kernel means the thread that forked: tabs are started from the server's event loop, the main thread.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up before the fork, only called after it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the server died before the prctl: nobody would signal this child
            os._exit(1)

    return preexec


def signal_group(group_id: int, signal_number: int) -> bool:
    """Send a signal to a process group; False when no process of it is left."""
    try:
        os.killpg(group_id, signal_number)
    except ProcessLookupError:
        return False
    return True

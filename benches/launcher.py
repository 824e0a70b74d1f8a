"""Start `python -m benches run` under a chosen interpreter and read its events. Imports no torch.

The chosen interpreter (say, the user's training venv) may not have pth-top installed: a `-c` bootstrap
loads this `benches` package from its folder by path, so nothing of our environment joins its sys.path.
Used by both the headless CLI and the Bench screen (asyncio, so the UI loop never blocks).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import os
import shutil
import signal
import sys
import time
from pathlib import Path
from typing import AsyncIterator

from pth_top.benches.protocol import Event, ProtocolError, decode_line

PACKAGE_DIR = Path(__file__).resolve().parent
KILL_AFTER_S = 1.5
STDERR_TAIL_LINES = 30

# Runs in the target interpreter: drop the cwd from sys.path, load pth_top.benches from PACKAGE_DIR
# under a bare pth_top parent (nothing else of pth-top is importable there), dispatch.
BOOTSTRAP = (
    "import importlib.util, os, sys, types\n"
    "package_dir = sys.argv.pop(1)\n"
    "sys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]\n"
    "root = types.ModuleType('pth_top')\n"
    "root.__path__ = []\n"
    "sys.modules['pth_top'] = root\n"
    "spec = importlib.util.spec_from_file_location('pth_top.benches', os.path.join(package_dir, '__init__.py'),"
    " submodule_search_locations=[package_dir])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "sys.modules['pth_top.benches'] = module\n"
    "spec.loader.exec_module(module)\n"
    "from pth_top.benches.__main__ import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


_live_pids: set[int] = set()


def _terminate_live_children() -> None:
    """At interpreter exit, no benchmark child outlives us (they run in their own session)."""
    for pid in list(_live_pids):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            _live_pids.discard(pid)
    deadline = time.monotonic() + KILL_AFTER_S
    while _live_pids and time.monotonic() < deadline:
        for pid in list(_live_pids):
            try:
                finished, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                finished = pid
            if finished:
                _live_pids.discard(pid)
        time.sleep(0.05)
    for pid in _live_pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


atexit.register(_terminate_live_children)


class LaunchError(Exception):
    """The benchmark process cannot be started (missing interpreter and the like); one-line message."""


def resolve_python(python: str | None) -> str:
    """The interpreter to run: `python` (a path or a name on PATH) or this process's own."""
    if not python:
        return sys.executable
    candidate = python if os.sep in python else (shutil.which(python) or python)
    path = Path(candidate).expanduser()
    if not path.exists():
        raise LaunchError(f"interpreter {python} does not exist")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise LaunchError(f"interpreter {python} is not an executable file")
    return str(path)


def build_command(python: str, args: list[str]) -> list[str]:
    """argv that runs `benches <args>` in `python` with this package loaded from PACKAGE_DIR."""
    return [python, "-c", BOOTSTRAP, str(PACKAGE_DIR), *args]


def run_arguments(
    *,
    device: str = "cpu",
    suite: str = "quick",
    kernels: list[str] | tuple[str, ...] = (),
    scale: float | None = None,
    time_cap_s: float | None = None,
    disk_dir: str | None = None,
    disk_size_mib: int | None = None,
    cpu_memory_budget_mib: int | None = None,
) -> list[str]:
    args = ["run", "--device", device, "--suite", suite]
    for name in kernels:
        args += ["--kernel", name]
    if scale is not None:
        args += ["--scale", repr(float(scale))]
    if time_cap_s is not None:
        args += ["--time-cap", repr(float(time_cap_s))]
    if disk_dir is not None:
        args += ["--disk-dir", str(disk_dir)]
    if disk_size_mib is not None:
        args += ["--disk-size-mib", str(int(disk_size_mib))]
    if cpu_memory_budget_mib is not None:
        args += ["--cpu-memory-budget-mib", str(int(cpu_memory_budget_mib))]
    return args


class BenchProcess:
    """One `python -m benches` child: async start, event stream, cancel (terminate, then kill)."""

    def __init__(self, python: str | None, args: list[str]) -> None:
        self.python = resolve_python(python)
        self.command = build_command(self.python, args)
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.protocol_errors: list[str] = []
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    async def start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # Ctrl+C in the terminal reaches the parent only; we cancel the child
                limit=2**24,
            )
        except OSError as error:
            raise LaunchError(f"cannot start {self.python}: {error.strerror or error}") from None
        _live_pids.add(self._process.pid)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self._process and self._process.stderr
        async for line in self._process.stderr:
            self.stderr_tail.append(line.decode("utf-8", errors="replace").rstrip())

    async def events(self) -> AsyncIterator[Event]:
        """Events until the child closes stdout; lines that are not events are kept in protocol_errors."""
        assert self._process and self._process.stdout
        async for line in self._process.stdout:
            if not line.strip():
                continue
            try:
                yield decode_line(line)
            except ProtocolError as error:
                self.protocol_errors.append(str(error))

    async def wait(self) -> int:
        assert self._process
        code = await self._process.wait()
        _live_pids.discard(self._process.pid)
        if self._stderr_task:
            await self._stderr_task
        return code

    async def cancel(self, kill_after_s: float = KILL_AFTER_S) -> int | None:
        """SIGTERM (the child removes its temp files), SIGKILL if still alive after `kill_after_s`."""
        process = self._process
        if process is None or process.returncode is not None:
            return process.returncode if process else None
        try:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=kill_after_s)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
        except ProcessLookupError:
            pass
        _live_pids.discard(process.pid)
        await self._close_pipes()
        return process.returncode

    async def _close_pipes(self) -> None:
        """Read the dead child's pipes to EOF so their transports close on this event loop."""
        process = self._process
        try:
            if process and process.stdout:
                await asyncio.wait_for(process.stdout.read(), timeout=1.0)
            if self._stderr_task:
                await asyncio.wait_for(self._stderr_task, timeout=1.0)
        except (asyncio.TimeoutError, OSError):
            if self._stderr_task:
                self._stderr_task.cancel()

    def failure_reason(self) -> str:
        """One line on why the child failed, from its stderr tail."""
        for line in reversed(self.stderr_tail):
            if line.strip():
                return line.strip()[:300]
        return f"benchmark process exited with code {self.returncode}"


async def discover_devices(python: str | None = None, timeout_s: float = 60.0) -> list[dict]:
    """[{'id': 'cpu', 'name': ...}, {'id': 'cuda:0', ...}] as seen by `python`'s torch."""
    process = BenchProcess(python, ["run", "--list-devices"])
    await process.start()
    devices: list[dict] = []
    error = None

    async def read() -> None:
        nonlocal devices, error
        async for event in process.events():
            if event.kind == "devices":
                devices = list(event.get("devices") or [])
            elif event.kind == "error":
                error = event.get("message")

    try:
        await asyncio.wait_for(read(), timeout=timeout_s)
    except asyncio.TimeoutError:
        await process.cancel()
        raise LaunchError(f"{process.python} did not list its devices within {timeout_s:.0f} s") from None
    except asyncio.CancelledError:
        await process.cancel()
        raise
    code = await process.wait()
    if not devices:
        raise LaunchError(error or process.failure_reason() or f"device listing failed (exit {code})")
    return devices

"""The one way pth-top starts a child in another interpreter: bootstrap, resolve_python, spawn. No torch.

The chosen interpreter (say, the user's training venv) may not have pth-top installed: a `-c` bootstrap
loads the `benches` package from its folder by path, so nothing of our environment joins its sys.path.
Every child (benchmark run, device listing, the doctor's torch probe) leads its own process group, has
bounded output, and is ended with its group on cancel, timeout, SIGHUP/SIGTERM or our exit.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import os
import shutil
import signal
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pth_top.benches.protocol import MAX_LINE_BYTES, ProtocolError
from pth_top.text import printable

# The benches folder (benches/client/spawn.py -> benches/), loaded by path in the child.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
KILL_AFTER_S = 1.5
CLOSE_PIPES_S = 1.0
STDERR_TAIL_LINES = 30
STDERR_LINE_CHARS = 1000

# Runs in the target interpreter: drop the cwd from sys.path, load pth_top.benches from PACKAGE_DIR
# under a bare pth_top parent (nothing else of pth-top is importable there), run the child's entry.
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
    "from pth_top.benches.child.entry import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


# Process groups of running children (each child leads its own session, so its pid is the group id).
_live_groups: set[int] = set()
_previous_handlers: dict[int, Any] = {}
_spawning: set[asyncio.Future] = set()  # a signal that comes while a child is being forked waits for its pid
_deferred_signals: list[int] = []


def _signal_group(group_id: int, signum: int) -> bool:
    """Send `signum` to a whole process group; False when none of it is left."""
    try:
        os.killpg(group_id, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def end_live_groups(grace_s: float = KILL_AFTER_S) -> None:
    """SIGTERM every running child's group (temp files go), SIGKILL what is left of them after `grace_s`."""
    groups = list(_live_groups)
    waiting = {group_id for group_id in groups if _signal_group(group_id, signal.SIGTERM)}
    deadline = time.monotonic() + grace_s
    while waiting and time.monotonic() < deadline:
        for group_id in list(waiting):
            try:
                finished, _ = os.waitpid(group_id, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere (the event loop's child watcher)
                finished = group_id
            if finished:
                waiting.discard(group_id)
        time.sleep(0.02)
    for group_id in groups:
        _signal_group(group_id, signal.SIGKILL)  # the children's own children, and any child still alive
    _live_groups.clear()


def _end_groups_then_resignal(signum: int, frame: Any) -> None:
    """SIGHUP/SIGTERM to us (terminal closed, kill): end the children, then do what the signal did before."""
    if _spawning:
        _deferred_signals.append(signum)
        return
    end_live_groups()
    previous = _previous_handlers.get(signum)
    if callable(previous):
        previous(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_signal_handlers() -> None:
    """Once, in the main thread: SIGHUP and SIGTERM end the children's groups first (not when ignored: nohup)."""
    if _previous_handlers or threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGHUP, signal.SIGTERM):
        previous = signal.getsignal(signum)
        if previous == signal.SIG_IGN:
            continue
        _previous_handlers[signum] = previous
        signal.signal(signum, _end_groups_then_resignal)


atexit.register(end_live_groups)


class LaunchError(Exception):
    """The child cannot be started (missing interpreter and the like); one-line message."""


class InterpreterError(LaunchError):
    """`--python` names no usable interpreter: `shown` is the name (terminal-safe), `reason` why."""

    def __init__(self, message: str, shown: str, reason: str) -> None:
        super().__init__(message)
        self.shown = shown
        self.reason = reason


def resolve_python(python: str | None) -> str:
    """The interpreter to run: `python` (a path or a name on PATH) or, when None, this process's own."""
    if python is None:
        return sys.executable
    shown = printable(python, 200)
    if not python.strip():
        raise InterpreterError("interpreter path is empty", shown, "empty path")
    candidate = python if os.sep in python else (shutil.which(python) or python)
    path = Path(candidate).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InterpreterError(f"interpreter {shown} does not exist", shown, "does not exist") from None
    except (OSError, ValueError) as error:  # name too long, a parent that is a file, a NUL byte
        reason = str(getattr(error, "strerror", None) or error)
        raise InterpreterError(f"interpreter {shown}: {reason}", shown, reason) from None
    if stat.S_ISDIR(info.st_mode) or not os.access(path, os.X_OK):
        raise InterpreterError(f"interpreter {shown} is not an executable file", shown, "not an executable file")
    return str(path)


def build_command(python: str, args: list[str]) -> list[str]:
    """argv that runs the child's `<args>` in `python` with the benches package loaded from PACKAGE_DIR."""
    return [python, "-c", BOOTSTRAP, str(PACKAGE_DIR), *args]


class ChildProcess:
    """One child (`build_command(python, args)`) in its own process group: async start, bounded reads, cancel."""

    def __init__(self, python: str | None, args: list[str], *, env: dict[str, str] | None = None) -> None:
        self.python = resolve_python(python)
        self.command = build_command(self.python, args)
        self.env = None if env is None else {**os.environ, **env}
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode if self._process else None

    async def start(self) -> None:
        """Start the child; a cancel or a SIGHUP/SIGTERM that comes meanwhile still ends its group."""
        _install_signal_handlers()
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            start_new_session=True,  # its own group: Ctrl+C reaches the parent only; we end the group
            limit=MAX_LINE_BYTES,
        ))
        _spawning.add(spawn)
        try:
            self._process = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            if spawn.done() and spawn.exception() is not None:
                raise
            self._process = await spawn  # the fork is done or fails at once; then its group is ended
            _live_groups.add(self._process.pid)
            await self.cancel()
            raise
        except (OSError, ValueError) as error:
            raise LaunchError(f"cannot start {printable(self.python, 200)}: "
                              f"{getattr(error, 'strerror', None) or error}") from None
        finally:
            _spawning.discard(spawn)
            if self._process is not None and self._process.returncode is None:
                _live_groups.add(self._process.pid)
            if not _spawning and _deferred_signals:
                _end_groups_then_resignal(_deferred_signals.pop(), None)
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        """Keep the last lines of stderr, each cut to STDERR_LINE_CHARS; reads in chunks, so no line is too long."""
        assert self._process and self._process.stderr
        pending = b""
        while chunk := await self._process.stderr.read(1 << 16):
            *lines, pending = (pending + chunk).split(b"\n")
            self.stderr_tail.extend(_stderr_line(line) for line in lines[-STDERR_TAIL_LINES:])
            pending = pending[: 4 * STDERR_LINE_CHARS]
        if pending.strip():
            self.stderr_tail.append(_stderr_line(pending))

    async def read_line(self) -> bytes:
        """One stdout line (b"" at the end); ProtocolError for a line over MAX_LINE_BYTES, which is skipped whole."""
        assert self._process and self._process.stdout
        stream, too_long = self._process.stdout, False
        while True:
            try:
                line = await stream.readuntil(b"\n")
            except asyncio.IncompleteReadError as error:
                line = error.partial  # the last line, without a newline
            except asyncio.LimitOverrunError as error:
                await stream.readexactly(error.consumed)
                too_long = True
                continue
            if too_long:
                raise ProtocolError(f"a line longer than {MAX_LINE_BYTES} bytes")
            return line

    async def wait(self) -> int:
        """The child's exit code, once it and the rest of its group are gone."""
        assert self._process
        code = await self._process.wait()
        _signal_group(self._process.pid, signal.SIGKILL)  # grandchildren it left behind
        _live_groups.discard(self._process.pid)
        await self._close_pipes()
        return code

    async def cancel(self, kill_after_s: float = KILL_AFTER_S) -> int | None:
        """SIGTERM the group (the child removes its temp files), SIGKILL it if the child lives after `kill_after_s`."""
        process = self._process
        if process is None:
            return None
        if process.returncode is None:
            _signal_group(process.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), timeout=kill_after_s)
            except asyncio.TimeoutError:
                _signal_group(process.pid, signal.SIGKILL)
                await process.wait()
        _signal_group(process.pid, signal.SIGKILL)
        _live_groups.discard(process.pid)
        await self._close_pipes()
        return process.returncode

    async def _close_pipes(self) -> None:
        """Read the dead child's pipes to EOF so their transports close on this event loop."""
        process = self._process
        deadline = time.monotonic() + CLOSE_PIPES_S
        try:
            if process and process.stdout:
                while await asyncio.wait_for(process.stdout.read(1 << 16),
                                             timeout=max(0.0, deadline - time.monotonic())):
                    pass
            if self._stderr_task:
                await asyncio.wait_for(asyncio.shield(self._stderr_task),
                                       timeout=max(0.0, deadline - time.monotonic()))
        except (asyncio.TimeoutError, OSError):
            if self._stderr_task:
                self._stderr_task.cancel()

    def last_stderr_line(self) -> str:
        """The child's last non-blank stderr line, terminal-safe ("" when none)."""
        for line in reversed(self.stderr_tail):
            if line.strip():
                return printable(line.strip(), 300)
        return ""


def _stderr_line(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").rstrip()[:STDERR_LINE_CHARS]

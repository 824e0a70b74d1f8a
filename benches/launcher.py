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
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any, AsyncIterator

from pth_top.benches.protocol import MAX_LINE_BYTES, Event, ProtocolError, bad_output_event, decode_line
from pth_top.text import printable

PACKAGE_DIR = Path(__file__).resolve().parent
KILL_AFTER_S = 1.5
CLOSE_PIPES_S = 1.0
STDERR_TAIL_LINES = 30
STDERR_LINE_CHARS = 1000
# A child is stopped after this long without a line (it sends a heartbeat every HEARTBEAT_INTERVAL_S).
SILENCE_TIMEOUT_S = 60.0
MAX_BAD_LINES = 20

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
    """The benchmark process cannot be started (missing interpreter and the like); one-line message."""


def resolve_python(python: str | None) -> str:
    """The interpreter to run: `python` (a path or a name on PATH) or, when None, this process's own."""
    if python is None:
        return sys.executable
    shown = printable(python, 200)
    if not python.strip():
        raise LaunchError("interpreter path is empty")
    candidate = python if os.sep in python else (shutil.which(python) or python)
    path = Path(candidate).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise LaunchError(f"interpreter {shown} does not exist") from None
    except (OSError, ValueError) as error:  # name too long, a parent that is a file, a NUL byte
        raise LaunchError(f"interpreter {shown}: {getattr(error, 'strerror', None) or error}") from None
    if stat.S_ISDIR(info.st_mode) or not os.access(path, os.X_OK):
        raise LaunchError(f"interpreter {shown} is not an executable file")
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
    """One `python -m benches` child in its own process group: async start, checked events, cancel.

    Each output line is read with a bound and checked against the protocol; a bad line becomes an error
    row. A child silent for `silence_timeout_s` (no event, not even a heartbeat) is stopped.
    """

    def __init__(self, python: str | None, args: list[str], *, silence_timeout_s: float | None = None) -> None:
        self.python = resolve_python(python)
        self.command = build_command(self.python, args)
        self.silence_timeout_s = SILENCE_TIMEOUT_S if silence_timeout_s is None else silence_timeout_s
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.bad_lines: list[str] = []
        self.events_seen = 0
        self.silenced = False
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
            raise LaunchError(f"cannot start {printable(self.python, 200)}: {getattr(error, 'strerror', None) or error}") from None
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

    async def _read_line(self) -> bytes:
        """One line (b"" at the end); ProtocolError for a line over MAX_LINE_BYTES, which is skipped whole."""
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

    async def events(self) -> AsyncIterator[Event]:
        """Checked events until the child closes stdout; a bad line is yielded as an error row.

        Heartbeats are consumed here. Silence beyond the bound, or too many bad lines, stops the child.
        """
        assert self._process and self._process.stdout
        while True:
            try:
                line = await asyncio.wait_for(self._read_line(), timeout=self.silence_timeout_s)
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
                    if event.kind != "heartbeat":
                        yield event
                    continue
            self.bad_lines.append(problem)
            yield bad_output_event(f"bad output line: {problem}")
            if len(self.bad_lines) >= MAX_BAD_LINES:
                await self.cancel()
                yield bad_output_event(f"{MAX_BAD_LINES} bad output lines; the benchmark process was stopped")
                return

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
                while await asyncio.wait_for(process.stdout.read(1 << 16), timeout=max(0.0, deadline - time.monotonic())):
                    pass
            if self._stderr_task:
                await asyncio.wait_for(asyncio.shield(self._stderr_task), timeout=max(0.0, deadline - time.monotonic()))
        except (asyncio.TimeoutError, OSError):
            if self._stderr_task:
                self._stderr_task.cancel()

    def failure_reason(self) -> str:
        """One terminal-safe line on why the child produced no (complete) run."""
        if self.silenced:
            return f"{printable(self.python, 200)} gave no output for {self.silence_timeout_s:g} s and was stopped"
        for line in reversed(self.stderr_tail):
            if line.strip():
                return printable(line.strip(), 300)
        code = self.returncode
        ending = f"killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exit code {code}"
        if not self.events_seen:
            detail = printable(self.bad_lines[0], 200) if self.bad_lines else ending
            return f"{printable(self.python, 200)} printed no benchmark events ({detail}); is it a Python interpreter?"
        if code is not None and code < 0:
            return f"the benchmark process was {ending}"
        return f"the benchmark process ended ({ending}) before finishing"


def _stderr_line(line: bytes) -> str:
    return line.decode("utf-8", errors="replace").rstrip()[:STDERR_LINE_CHARS]


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


async def discover_devices(python: str | None = None, timeout_s: float = 60.0,
                           silence_timeout_s: float | None = None) -> list[dict]:
    """[{'id': 'cpu', 'name': ...}, {'id': 'cuda:0', ...}] as seen by `python`'s torch."""
    process = BenchProcess(python, ["run", "--list-devices"], silence_timeout_s=silence_timeout_s)
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
        raise LaunchError(f"{printable(process.python, 200)} did not list its devices within {timeout_s:.0f} s") from None
    except asyncio.CancelledError:
        await process.cancel()
        raise
    code = await process.wait()
    if not devices:
        reason = process.failure_reason() if process.silenced or not error else printable(error, 300)
        raise LaunchError(reason or f"device listing failed (exit {code})")
    return devices

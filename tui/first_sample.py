"""The dashboard's first sample, taken in a forked child or on a thread while Textual loads (no textual here)."""

from __future__ import annotations

import os
import pickle
import signal
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, NoReturn, Protocol

if TYPE_CHECKING:
    from pth_top.sensors.model import Snapshot


class SnapshotSource(Protocol):
    def sample(self) -> Snapshot: ...


def default_source() -> SnapshotSource:
    """The machine's sensors, with room for the kept-open /proc files of a big process table."""
    from pth_top.sensors.procfs import raise_open_file_limit
    from pth_top.sensors.sampler import Sampler

    raise_open_file_limit()
    return Sampler()


class FirstSample:
    """One snapshot for the first frame, taken while Textual loads; `wait()` until it is in.

    `source` is the source that took it when the sampling worker can go on with it (rates primed),
    or None when the worker must open its own.
    """

    def __init__(self) -> None:
        self.source: SnapshotSource | None = None
        self.snapshot: Snapshot | None = None
        self.error: str | None = None
        self._done = threading.Event()
        self._child_pid: int | None = None

    @classmethod
    def on_thread(cls, source_factory: Callable[[], SnapshotSource] = default_source) -> FirstSample:
        """Sample on a daemon thread; the worker takes the source over once `wait()` returns true."""
        first = cls()
        threading.Thread(target=first._take, args=(source_factory,), name="first-sample", daemon=True).start()
        return first

    @classmethod
    def in_child_process(cls, source_factory: Callable[[], SnapshotSource] = default_source) -> FirstSample:
        """Sample in a forked child, in parallel with the parent's imports (no shared GIL).

        Fork before any thread exists; where there is no fork, this samples on a thread.
        """
        if not hasattr(os, "fork"):
            return cls.on_thread(source_factory)
        try:
            read_fd, write_fd = os.pipe()
        except OSError:  # no descriptors left
            return cls.on_thread(source_factory)
        try:
            pid = os.fork()
        except OSError:  # process limit reached
            os.close(read_fd)
            os.close(write_fd)
            return cls.on_thread(source_factory)
        if pid == 0:
            os.close(read_fd)
            _sample_in_child(source_factory, write_fd)
        os.close(write_fd)
        first = cls()
        first._child_pid = pid
        threading.Thread(target=first._receive, args=(pid, read_fd), name="first-sample", daemon=True).start()
        return first

    def _take(self, source_factory: Callable[[], SnapshotSource]) -> None:
        try:
            self.source = source_factory()
            self.snapshot = self.source.sample()
        except Exception as error:  # shown by the dashboard, which keeps retrying
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self._done.set()

    def _receive(self, pid: int, read_fd: int) -> None:
        try:
            with os.fdopen(read_fd, "rb") as pipe:
                payload = pipe.read()
            _, status = os.waitpid(pid, 0)
            if payload:
                self.snapshot, self.error = pickle.loads(payload)
            else:
                self.error = f"the first-sample process ended with status {os.waitstatus_to_exitcode(status)}"
        except Exception as error:
            self.error = f"{type(error).__name__}: {error}"
        finally:
            self._done.set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once the sample (or its error) is in; False if `timeout_s` passed first."""
        return self._done.wait(timeout_s)

    def close(self) -> None:
        """Kill a child that is still sampling (a hung NVML call), so it does not outlive the dashboard."""
        if self._child_pid is not None and not self._done.is_set():
            try:
                os.kill(self._child_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._done.wait(5)


def _sample_in_child(source_factory: Callable[[], SnapshotSource], write_fd: int) -> NoReturn:
    """The forked child: one sample (without the child itself in it) down the pipe, then exit at once."""
    exit_code = 0
    try:
        try:
            snapshot = source_factory().sample()
            own_pid = os.getpid()
            result: tuple[Snapshot | None, str | None] = (
                replace(snapshot, processes=tuple(p for p in snapshot.processes if p.pid != own_pid)), None
            )
        except BaseException as error:  # even Ctrl-C: the parent reports it and retries
            result = (None, f"{type(error).__name__}: {error}")
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except BaseException:
        exit_code = 1
    finally:
        # No atexit handlers, no flushing of buffers the parent also holds.
        os._exit(exit_code)

"""One writer per recording: the recorder holds an flock on `<recording>.lock` holding its PID; others can ask."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path

from pth_top.recorder.database import RecordingRefused

# A probe holds a shared lock for an instant: a starting writer retries this long before it gives up.
ACQUIRE_WAIT_S = 1.0


def lock_path(recording: Path) -> Path:
    return Path(f"{recording}.lock")


def _open(path: Path, flags: int) -> int:
    try:
        return os.open(path, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RecordingRefused(errno.ELOOP, f"{path} is a symbolic link; not used") from None
        raise


class WriterLock:
    """Held while a recorder writes; `acquire` raises RecordingRefused naming the PID that holds it."""

    def __init__(self, recording: Path) -> None:
        self.path = lock_path(recording)
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = _open(self.path, os.O_RDWR | os.O_CREAT)
        except RecordingRefused:
            raise
        except OSError as error:
            raise RecordingRefused(error.errno or errno.EIO, f"{self.path}: {error.strerror}") from None
        deadline = time.monotonic() + ACQUIRE_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid = _read_pid(fd)
                    os.close(fd)
                    raise RecordingRefused(errno.EBUSY, f"{self.path.with_suffix('')} is already being recorded "
                                                        f"(pid {pid or 'unknown'})") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock; the file stays (removing it would race a new writer)
            self._fd = None


def _read_pid(fd: int) -> int:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else 0


def writer_pid(recording: Path) -> int | None:
    """The PID of the recorder writing `recording` (0 when it has not written it yet), None when none is."""
    try:
        fd = _open(lock_path(recording), os.O_RDONLY)
    except (OSError, RecordingRefused):
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

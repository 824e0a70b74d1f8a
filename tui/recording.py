"""The dashboard's side of the flight recorder: is this host recorded, start `pth-top record`, frames to scrub.

Both checks run on worker threads and post a RecordingState to the Monitor screen.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import Callable

from textual.message import Message
from textual.worker import get_current_worker

from pth_top.recorder.database import _make_private_folder as make_private_folder
from pth_top.recorder.frames import FileFrames, FrameSource, MemoryFrames
from pth_top.recorder.rows import recorded_snapshot
from pth_top.recorder.writer_lock import writer_pid
from pth_top.sensors.model import Snapshot
from pth_top.text import printable

# What the live dashboard keeps per sample to scrub back over: the processes the recorder keeps.
SCRUB_TOP_PROCESSES = 20
START_WAIT_S = 60.0
PROBE_EVERY_S = 5.0


class RecordingState(Message):
    """Whether this host's recording is being written (`pid`), and a line to show when something happened."""

    bubble = False

    def __init__(self, pid: int | None, path: Path | None, note: str | None = None, problem: bool = False) -> None:
        super().__init__()
        self.pid, self.path, self.note, self.problem = pid, path, note, problem


def kept_frame(snapshot: Snapshot) -> Snapshot:
    return recorded_snapshot(snapshot, SCRUB_TOP_PROCESSES, include_cmdline=True)


def recording_path() -> Path:
    """This host's default recording, as `pth-top record` writes it; UserDirError for a bad PTH_TOP_DATA_DIR."""
    from pth_top.configs.paths import DATA_DIR_VARIABLE, check_override
    from pth_top.recorder.database import default_recording_path

    check_override(DATA_DIR_VARIABLE)
    return default_recording_path()


def probe(post: Callable[[Message], bool]) -> None:
    """Post whether a recorder writes this host's recording."""
    try:
        path = recording_path()
    except Exception:
        return
    post(RecordingState(writer_pid(path), path))


def start_recorder(post: Callable[[Message], bool]) -> None:
    """Spawn `pth-top record` in its own session (it outlives the dashboard) unless one already records here."""
    try:
        path = recording_path()
    except Exception as error:
        post(RecordingState(None, None, f"cannot record: {printable(error, 200)}", problem=True))
        return
    running = writer_pid(path)
    if running is not None:
        post(RecordingState(running, path, f"already recording to {printable(path, 200)} (pid {running or '?'})"))
        return
    log = log_path(path)
    try:
        make_private_folder(path.parent)
        log_fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as error:
        post(RecordingState(None, path, f"cannot record: {printable(log, 200)}: {error.strerror}", problem=True))
        return
        return
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "pth_top.tui.cli", "record", "--out", str(path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log_fd, start_new_session=True,
        )
    finally:
        os.close(log_fd)
    said = _wait_for_start(process, path)
    if said is None:
        post(RecordingState(process.pid, path, f"recording to {printable(path, 200)} (pid {process.pid}; "
                                               f"kill {process.pid} stops it)"))
    else:
        post(RecordingState(writer_pid(path), path, f"pth-top record did not start: {said}", problem=True))


def log_path(recording: Path) -> Path:
    """Where a recorder the dashboard started writes its own lines (next to the recording)."""
    return Path(f"{recording}.log")


def _wait_for_start(process: subprocess.Popen, path: Path) -> str | None:
    """None once the recorder holds the recording; else why not (its last line, or that it is still starting)."""
    worker = get_current_worker()
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline and not worker.is_cancelled:
        if writer_pid(path) == process.pid:
            return None
        if process.poll() is not None:
            return _last_line(log_path(path)) or f"exit status {process.returncode}"
        worker.cancelled_event.wait(0.1)
    return f"still starting after {START_WAIT_S:g} s (pid {process.pid})"


def _last_line(path: Path) -> str:
    try:
        with open(path, "rb") as log:
            log.seek(max(0, os.fstat(log.fileno()).st_size - 4096))
            lines = log.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return printable(lines[-1], 300) if lines else ""


def scrub_source(recording: Path | None, recent: deque[Snapshot]) -> FrameSource:
    """The recording when a recorder writes it, else the frames the dashboard kept in memory (as many as it keeps:
    the replay screen appends the newer ones)."""
    if recording is not None and recording.exists():
        return FileFrames(recording)
    return MemoryFrames(recent, capacity=recent.maxlen)

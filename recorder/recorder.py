"""The flight recorder's loop: sample every interval, detect events, commit both, keep retention and the disk floor.

`Recorder(options).run(stop)` records until `stop` is set; it blocks, so run it in a thread of its own (it
touches neither Textual nor the caller's Sampler) or spawn `pth-top record` as a subprocess.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from pth_top.recorder.database import open_recording
from pth_top.recorder.event import Event
from pth_top.recorder.events import EventDetector, Limits
from pth_top.recorder.oom import KernelLog, OomWatcher
from pth_top.recorder.rows import processes_that_matter, recorded_snapshot
from pth_top.recorder.store import Retention, Store, transaction
from pth_top.recorder.writer_lock import WriterLock
from pth_top.sensors.gpu_flags import FlagThresholds
from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.text import printable
from pth_top.units import MIB

DEFAULT_TOP = 20
# Every process is read this often; in between only the GPU processes and the recorded top ones are.
FULL_SCAN_EVERY_S = 5.0
DEFAULT_MIN_FREE_BYTES = 256 * MIB
RETENTION_EVERY_S = 300.0
# Events held while the disk is full, written once there is room; the oldest beyond this are dropped.
MAX_PENDING_EVENTS = 1000


class SamplerLike(Protocol):
    def sample(self) -> Snapshot: ...

    def close(self) -> None: ...


class AlertStep(Protocol):
    """What the recorder needs of recorder.delivery.AlertPipeline: alerts for one interval, never blocking."""

    def step(self, snapshot: Snapshot, events: Iterable[Event] = ()) -> list[Event]: ...

    def close(self, timeout_s: float = 1.0) -> None: ...


@dataclass(frozen=True)
class RecorderOptions:
    path: Path
    interval_s: float = 1.0
    top: int = DEFAULT_TOP
    include_cmdline: bool = True
    retention: Retention = field(default_factory=Retention)
    # Below this free space where the recording lives, samples stop (an event says so) until there is room.
    min_free_bytes: int = DEFAULT_MIN_FREE_BYTES
    fsync_each_commit: bool = False
    limits: Limits = field(default_factory=Limits)
    read_kernel_log: bool = True
    # The stuck and straggler thresholds (the settings file's [flags]).
    flags: FlagThresholds = field(default_factory=FlagThresholds)


def free_bytes(folder: Path) -> int:
    """Space unprivileged writers still have on the filesystem of `folder` (statvfs f_bavail)."""
    info = os.statvfs(folder)
    return info.f_bavail * info.f_frsize


def is_disk_full(error: sqlite3.Error) -> bool:
    return getattr(error, "sqlite_errorcode", None) == 13 or "full" in str(error).lower()  # SQLITE_FULL


class Recorder:
    """One writer of one recording. `step()` is one interval (tests drive it); `run(stop)` loops."""

    def __init__(self, options: RecorderOptions, sampler: SamplerLike | None = None,
                 clock: Callable[[], float] = time.time,
                 on_events: Callable[[list[Event]], None] | None = None,
                 alerts: AlertStep | None = None) -> None:
        self.options = options
        self.clock = clock
        self.on_events = on_events
        self.alerts = alerts
        self.connection = open_recording(options.path, create=True, fsync_each_commit=options.fsync_each_commit)
        self.writer_lock = WriterLock(options.path)
        try:
            self.writer_lock.acquire()
        except BaseException:
            self.connection.close()
            if alerts is not None:
                alerts.close()
            raise
        self.store = Store(self.connection, options.interval_s, options.retention)
        self._write_meta()
        if sampler is None:
            from pth_top.sensors.sampler import Sampler

            sampler = Sampler(full_scan_every_s=FULL_SCAN_EVERY_S)
        self.sampler = sampler
        kernel_log = KernelLog() if options.read_kernel_log else None
        self._chosen: tuple[ProcessSample, ...] = ()
        self.oom = OomWatcher(lambda _snapshot: self._chosen, kernel_log=kernel_log)
        self.detector = EventDetector(options.limits, options.include_cmdline, sources=(self.oom,), flags=options.flags)
        self.paused_reason: str | None = None
        self._pending: list[Event] = []
        self._retention_at = 0.0
        self.samples_written = 0

    def _write_meta(self) -> None:
        options = self.options
        with transaction(self.connection):
            self.connection.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", [
                ("interval_s", repr(options.interval_s)), ("include_cmdline", str(int(options.include_cmdline))),
                ("top_processes", str(options.top)),
            ])

    def step(self) -> list[Event]:
        """Sample once, detect, write; returns this interval's events (also passed to `on_events`)."""
        now = self.clock()
        snapshot = dataclasses.replace(self.sampler.sample(), timestamp_s=now)
        # Between full scans only the fresh rows are candidates: the others are up to FULL_SCAN_EVERY_S old.
        self._chosen = processes_that_matter(snapshot, self.options.top, getattr(self.sampler, "fresh_pids", None))
        if hasattr(self.sampler, "watched_pids"):
            self.sampler.watched_pids = {process.pid for process in self._chosen}
        xid_counts = getattr(self.sampler, "xid_counts", None)
        events = self.detector.feed(snapshot, xid_counts() if callable(xid_counts) else None)
        events += self._check_floor(now)
        if self.alerts is not None:  # alerts are events too: recorded, and delivered by the pipeline's own threads
            events += self.alerts.step(snapshot, events)
        self._pending = (self._pending + events)[-MAX_PENDING_EVENTS:]
        recorded = None
        if self.paused_reason is None:
            recorded = recorded_snapshot(snapshot, self.options.top, self.options.include_cmdline, self._chosen)
        try:
            self.store.write(recorded, self._pending)
            self._pending = []
            if recorded is not None:
                self.samples_written += 1
        except sqlite3.OperationalError as error:
            if not is_disk_full(error):
                raise
            self._pause(now, f"the disk is full ({printable(error, 200)})")
        if now - self._retention_at >= RETENTION_EVERY_S:
            self._retention_at = now
            self._apply_retention(now)
        if events and self.on_events is not None:
            self.on_events(events)
        return events

    def _check_floor(self, now: float) -> list[Event]:
        folder = self.options.path.parent
        try:
            free = free_bytes(folder)
        except OSError:
            return []
        floor = self.options.min_free_bytes
        if self.paused_reason is None and free < floor:
            self.paused_reason = f"{free:,} bytes free, below the floor of {floor:,}"
            self._shrink_wal()
            return [Event(now, "disk_full", "critical",
                          f"recorder paused: {printable(folder, 200)} has {free / MIB:.1f} MiB free, "
                          f"below the floor of {floor / MIB:.1f} MiB; samples stop, events go on",
                          evidence={"path": str(self.options.path), "free_bytes": free, "floor_bytes": floor})]
        if self.paused_reason is not None and free >= floor * 1.1 + MIB:
            self.paused_reason = None
            return [Event(now, "recorder", "info", f"recorder resumed: {free / MIB:.1f} MiB free",
                          evidence={"path": str(self.options.path), "free_bytes": free, "floor_bytes": floor})]
        return []

    def _pause(self, now: float, reason: str) -> None:
        if self.paused_reason is None:
            self._pending.append(Event(now, "disk_full", "critical", f"recorder paused: {reason}",
                                       evidence={"path": str(self.options.path)}))
        self.paused_reason = reason
        self._shrink_wal()

    def _shrink_wal(self) -> None:
        """Move the WAL into the file and truncate it: frees most of what the recording holds on disk beyond it."""
        try:
            self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            pass

    def _apply_retention(self, now: float) -> None:
        try:
            self.store.apply_retention(now)
        except sqlite3.OperationalError as error:
            if not is_disk_full(error):
                raise

    def note(self, message: str, **evidence: Any) -> None:
        """A `recorder` event (started, stopped) written at once where the disk allows."""
        event = Event(self.clock(), "recorder", "info", printable(message, 400), evidence=evidence)
        try:
            self.store.write_events([event])
        except sqlite3.OperationalError as error:
            if not is_disk_full(error):
                raise

    def run(self, stop: threading.Event) -> None:
        """Record every interval until `stop` is set; the recording is closed afterwards."""
        interval = self.options.interval_s
        self.note(f"recording started: every {interval:g} s", interval_s=interval, pid=os.getpid())
        next_at = time.monotonic()
        try:
            while not stop.is_set():
                self.step()
                next_at += interval
                late = time.monotonic() - next_at
                if late > interval:  # a long stall (suspend, a loaded machine): skip the missed ticks
                    next_at += (late // interval) * interval
                stop.wait(max(0.0, next_at - time.monotonic()))
            self.note("recording stopped", samples=self.samples_written)
        finally:
            self.close()

    def close(self) -> None:
        if self.alerts is not None:
            self.alerts.close()
        self.oom.close()
        self.sampler.close()
        self.connection.close()
        self.writer_lock.release()

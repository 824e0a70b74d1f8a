"""Frames to replay: the samples of a recording (or of a dashboard's memory) as Snapshots, by index in time order.

The dashboard's replay reads a source from a worker thread; `FileFrames` serialises its calls with a lock and
keeps the decoded samples it was last asked for, so stepping one sample decodes one.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol, Sequence

from pth_top.recorder.database import open_recording
from pth_top.recorder.replay import events
from pth_top.recorder.rows import decompress
from pth_top.sensors.model import Snapshot
from pth_top.sensors.snapshot_json import snapshot_from_dict

# Decoded samples kept: a history chart's worth and a few steps either side.
CACHE_FRAMES = 400


class FrameSource(Protocol):
    """What the replay screen reads: sample times, the events, one sample by index."""

    label: str

    def times(self) -> tuple[float, ...]: ...

    def events(self) -> list[dict[str, Any]]: ...

    def frame(self, index: int) -> Snapshot | None: ...

    def close(self) -> None: ...


class MemoryFrames:
    """Samples the dashboard kept in memory, and those `append`ed while they are replayed (the oldest beyond
    `capacity` drop); no events: the live dashboard records none without a recorder."""

    label = "memory"

    def __init__(self, snapshots: Sequence[Snapshot], capacity: int | None = None) -> None:
        self._capacity = capacity
        self._snapshots = tuple(snapshots)[-capacity:] if capacity else tuple(snapshots)

    def append(self, snapshot: Snapshot) -> None:
        """A newer sample (from the UI thread: a reader on a worker sees the old tuple or the new one whole)."""
        grown = (*self._snapshots, snapshot)
        self._snapshots = grown[-self._capacity:] if self._capacity else grown

    def times(self) -> tuple[float, ...]:
        return tuple(snapshot.timestamp_s for snapshot in self._snapshots)

    def events(self) -> list[dict[str, Any]]:
        return []

    def frame(self, index: int) -> Snapshot | None:
        return self._snapshots[index] if 0 <= index < len(self._snapshots) else None

    def close(self) -> None:
        pass


class FileFrames:
    """A recording on disk, opened on first use (from the worker thread, not the UI loop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = str(path)
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._times: tuple[float, ...] = ()
        self._cache: OrderedDict[float, Snapshot] = OrderedDict()
        self._dictionary: tuple[int, bytes] | None = None
        self._closed = False

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise ValueError("the replay was closed")
        if self._connection is None:
            self._connection = open_recording(self.path, create=False)
        return self._connection

    def times(self) -> tuple[float, ...]:
        """Every sample time, oldest first (read again each call: a recorder may still be writing)."""
        with self._lock:
            rows = self._open().execute("SELECT time_s FROM samples ORDER BY time_s").fetchall()
            self._times = tuple(float(row[0]) for row in rows)
            return self._times

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(events(self._open(), float("-inf"), float("inf")))

    def frame(self, index: int) -> Snapshot | None:
        with self._lock:
            if not 0 <= index < len(self._times):
                return None
            time_s = self._times[index]
            cached = self._cache.get(time_s)
            if cached is None:
                cached = self._decode(time_s)
                if cached is None:
                    return None
                self._cache[time_s] = cached
                while len(self._cache) > CACHE_FRAMES:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(time_s)
            return cached

    def _decode(self, time_s: float) -> Snapshot | None:
        connection = self._open()
        row = connection.execute("SELECT keyframe_id, snapshot FROM samples WHERE time_s = ?", (time_s,)).fetchone()
        if row is None:
            return None  # thinned or expired since the times were read
        keyframe_id, blob = row
        if self._dictionary is None or self._dictionary[0] != keyframe_id:
            keyframe = connection.execute("SELECT snapshot FROM keyframes WHERE id = ?", (keyframe_id,)).fetchone()
            if keyframe is None:
                return None
            self._dictionary = (keyframe_id, decompress(keyframe[0], None))
        return snapshot_from_dict(json.loads(decompress(blob, self._dictionary[1])))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._connection is not None:
                self._connection.close()
                self._connection = None

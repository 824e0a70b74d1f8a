"""Writing the recording: one transaction per interval, retention by age and size, downsampling with age.

Downsampling keeps, of each bucket, its first sample (not an average): 1 s rows for a day, one per 10 s for a
week, one a minute beyond. Events are never downsampled; they go with age or the size cap only.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Iterator

from pth_top.recorder.database import used_bytes
from pth_top.recorder.event import Event
from pth_top.recorder.rows import GPU_COLUMNS, compress, gpu_row, host_columns, process_row, snapshot_json_bytes
from pth_top.sensors.model import Snapshot
from pth_top.units import GIB

DAY_S = 86400.0
# A new keyframe (the preset dictionary of the samples after it) this often, and when the JSON grew this much.
KEYFRAME_EVERY = 60
# Past the size cap the oldest samples go until the recording holds this share of the cap.
SIZE_CAP_TARGET = 0.9


@dataclass(frozen=True, slots=True)
class Retention:
    max_age_s: float = 30 * DAY_S
    max_bytes: int = 1 * GIB
    # (age after which, seconds per row): rows older than the age are thinned to one per bucket.
    steps: tuple[tuple[float, float], ...] = ((DAY_S, 10.0), (7 * DAY_S, 60.0))


_UPSERT_PROCESS = """
INSERT INTO processes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (pid, start_time_s) DO UPDATE SET
    last_seen_s = excluded.last_seen_s,
    max_cpu_percent = max(max_cpu_percent, excluded.max_cpu_percent),
    peak_rss_bytes = max(peak_rss_bytes, excluded.peak_rss_bytes),
    peak_gpu_memory_bytes = max(coalesce(peak_gpu_memory_bytes, 0), coalesce(excluded.peak_gpu_memory_bytes, 0)),
    gpus = CASE WHEN excluded.gpus = '' THEN gpus ELSE excluded.gpus END
"""
_UPSERT_GPU = """
INSERT INTO gpus VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (gpu_index, uuid) DO UPDATE SET last_seen_s = excluded.last_seen_s
"""


@contextmanager
def transaction(connection: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE .. COMMIT (the connection is in autocommit mode); ROLLBACK on any failure."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


class Store:
    """Writes samples and events into an open recording (one writer; `connection` from open_recording)."""

    def __init__(self, connection: sqlite3.Connection, resolution_s: float, retention: Retention | None = None) -> None:
        self.connection = connection
        self.resolution_s = resolution_s
        self.retention = retention or Retention()
        self._keyframe: tuple[int, bytes] | None = None
        self._since_keyframe = 0
        self._last_time_s = self._latest_time_s()
        self._thinned_to: dict[float, float] = {}

    def _latest_time_s(self) -> float:
        row = self.connection.execute("SELECT max(time_s) FROM samples").fetchone()
        return float(row[0]) if row and row[0] is not None else 0.0

    def write(self, snapshot: Snapshot | None, events: Iterable[Event] = ()) -> None:
        """One interval, one commit: the sample (None: events only) and its events."""
        try:
            with transaction(self.connection):
                if snapshot is not None and snapshot.timestamp_s > self._last_time_s:
                    self._write_sample(snapshot)
                self._write_events(events)
        except BaseException:
            self._keyframe = None  # it may have been rolled back with the sample
            raise

    def write_events(self, events: Iterable[Event]) -> None:
        self.write(None, events)

    def _write_sample(self, snapshot: Snapshot) -> None:
        connection = self.connection
        now = snapshot.timestamp_s
        body = snapshot_json_bytes(snapshot)
        keyframe = self._keyframe
        if keyframe is None or self._since_keyframe >= KEYFRAME_EVERY or len(body) > 2 * len(keyframe[1]):
            cursor = connection.execute("INSERT INTO keyframes (time_s, snapshot) VALUES (?, ?)",
                                        (now, compress(body, None)))
            keyframe = self._keyframe = (int(cursor.lastrowid or 0), body)
            self._since_keyframe = 0
        self._since_keyframe += 1
        connection.execute("INSERT INTO samples VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (now, self.resolution_s, *host_columns(snapshot), keyframe[0], compress(body, keyframe[1])))
        connection.executemany(f"INSERT INTO gpu_samples VALUES ({', '.join('?' * len(GPU_COLUMNS))})",
                               [gpu_row(now, gpu) for gpu in snapshot.gpus])
        connection.executemany(_UPSERT_GPU, [(gpu.index, gpu.uuid, gpu.name, gpu.bus_id, now, now)
                                             for gpu in snapshot.gpus])
        connection.executemany(_UPSERT_PROCESS, [process_row(now, process) for process in snapshot.processes])
        self._last_time_s = now

    def _write_events(self, events: Iterable[Event]) -> None:
        self.connection.executemany("INSERT INTO events VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?)", [
            (event.time_s, event.kind, event.severity, event.gpu_index, event.gpu_uuid, event.pid, event.message,
             json.dumps(event.evidence, default=str, allow_nan=False, separators=(",", ":")))
            for event in events
        ])

    def apply_retention(self, now_s: float) -> dict[str, int]:
        """Thin old rows, drop those past the age limit, then the oldest past the size cap; counts of rows gone."""
        gone = {"downsampled": 0, "expired": 0, "over_size": 0}
        retention = self.retention
        for age_s, step_s in retention.steps:
            cut = (now_s - age_s) // 60 * 60  # a whole minute: buckets of every step end on it
            gone["downsampled"] += self._thin(cut, step_s)
        gone["expired"] = self._delete_before(now_s - retention.max_age_s, events_too=True)
        while used_bytes(self.connection) > retention.max_bytes:
            oldest, newest = self.connection.execute("SELECT min(time_s), max(time_s) FROM samples").fetchone()
            if oldest is None or oldest >= newest:
                break
            # The oldest twentieth of the time span at a time (at least a minute), until under the cap.
            cut = oldest + max(60.0, (newest - oldest) / 20)
            gone["over_size"] += self._delete_before(min(cut, newest), events_too=False)
            if used_bytes(self.connection) <= SIZE_CAP_TARGET * retention.max_bytes:
                break
        if any(gone.values()):
            self.connection.execute("PRAGMA incremental_vacuum")
            self._keyframe = None if self._keyframe_gone() else self._keyframe
        return gone

    def _thin(self, cut: float, step_s: float) -> int:
        connection = self.connection
        low = self._thinned_to.get(step_s)
        if low is None:
            row = connection.execute("SELECT min(time_s) FROM samples WHERE resolution_s < ?", (step_s,)).fetchone()
            low = float(row[0]) if row[0] is not None else cut
        low = low // step_s * step_s  # from the start of a bucket, so a bucket is never split
        doomed = [row[0] for row in connection.execute(
            "SELECT time_s FROM samples WHERE time_s >= ? AND time_s < ? AND resolution_s < ? AND id NOT IN ("
            " SELECT min(id) FROM samples WHERE time_s >= ? AND time_s < ? AND resolution_s < ?"
            " GROUP BY CAST(time_s / ? AS INTEGER))",
            (low, cut, step_s, low, cut, step_s, step_s))]
        self._thinned_to[step_s] = max(low, cut)
        with transaction(connection):
            connection.executemany("DELETE FROM samples WHERE time_s = ?", ((time_s,) for time_s in doomed))
            connection.executemany("DELETE FROM gpu_samples WHERE time_s = ?", ((time_s,) for time_s in doomed))
            connection.execute(
                "UPDATE samples SET resolution_s = ? WHERE time_s >= ? AND time_s < ? AND resolution_s < ?",
                (step_s, low, cut, step_s))
            self._drop_unused_keyframes()
        return len(doomed)

    def _delete_before(self, cut: float, events_too: bool) -> int:
        connection = self.connection
        with transaction(connection):
            count = connection.execute("DELETE FROM samples WHERE time_s < ?", (cut,)).rowcount
            connection.execute("DELETE FROM gpu_samples WHERE time_s < ?", (cut,))
            connection.execute("DELETE FROM processes WHERE last_seen_s < ?", (cut,))
            connection.execute("DELETE FROM gpus WHERE last_seen_s < ?", (cut,))
            if events_too:
                count += connection.execute("DELETE FROM events WHERE time_s < ?", (cut,)).rowcount
            self._drop_unused_keyframes()
        return int(count)

    def _drop_unused_keyframes(self) -> None:
        # Keyframe ids grow with sample ids: the first sample's keyframe is the oldest still needed.
        first = self.connection.execute("SELECT keyframe_id FROM samples ORDER BY id LIMIT 1").fetchone()
        if first is None:
            self.connection.execute("DELETE FROM keyframes")
        else:
            self.connection.execute("DELETE FROM keyframes WHERE id < ?", (first[0],))

    def _keyframe_gone(self) -> bool:
        if self._keyframe is None:
            return True
        return self.connection.execute("SELECT 1 FROM keyframes WHERE id = ?", (self._keyframe[0],)).fetchone() is None

"""Reading a recording back: time windows, GPU metric rows (CSV, JSON), the event log, the stored snapshots."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import sqlite3
from typing import IO, Any, Iterator

from pth_top.recorder.rows import GPU_COLUMNS, decompress, sample_from_json
from pth_top.text import printable

_RELATIVE = re.compile(r"^-\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$")
_UNIT_S = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


class TimeRefused(ValueError):
    """A --from/--to that is no time: the message says what is accepted."""


def parse_time(text: str, now_s: float) -> float:
    """Unix time of `text`: "now", relative ("-10m", "-2h", "-1d"), an ISO time (local unless it has a zone)
    or a Unix time in seconds."""
    value = text.strip()
    if value == "now":
        return now_s
    relative = _RELATIVE.match(value)
    if relative:
        return now_s - float(relative.group(1)) * _UNIT_S[relative.group(2)]
    try:
        return float(value)
    except ValueError:
        pass
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise TimeRefused(f"not a time: {printable(text, 80)!r} (use an ISO time like 2025-01-31T14:05, "
                          "a relative one like -10m, -2h, -1d, or 'now')") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return moment.timestamp()


def iso_time(time_s: float) -> str:
    """Local time with its offset, to the millisecond."""
    return dt.datetime.fromtimestamp(time_s).astimezone().isoformat(timespec="milliseconds")


def gpu_rows(connection: sqlite3.Connection, from_s: float, to_s: float,
             gpu: int | None = None) -> Iterator[dict[str, Any]]:
    """gpu_samples rows in [from_s, to_s], oldest first, with the GPU's uuid and name."""
    columns = ", ".join(f"s.{name}" for name in GPU_COLUMNS)
    query = (f"SELECT {columns}, coalesce(g.uuid, ''), coalesce(g.name, '') FROM gpu_samples s "
             "LEFT JOIN gpus g ON g.gpu_index = s.gpu_index AND s.time_s BETWEEN g.first_seen_s AND g.last_seen_s "
             "WHERE s.time_s >= ? AND s.time_s <= ?")
    parameters: list[Any] = [from_s, to_s]
    if gpu is not None:
        query += " AND s.gpu_index = ?"
        parameters.append(gpu)
    for row in connection.execute(query + " ORDER BY s.time_s, s.gpu_index", parameters):
        record = dict(zip((*GPU_COLUMNS, "uuid", "name"), row, strict=True))
        record["time"] = iso_time(record["time_s"])
        yield record


EXPORT_COLUMNS = ("time", *GPU_COLUMNS, "uuid", "name")


def write_csv(rows: Iterator[dict[str, Any]], out: IO[str]) -> int:
    writer = csv.DictWriter(out, EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    return count


def write_json(rows: Iterator[dict[str, Any]], out: IO[str], from_s: float, to_s: float) -> int:
    """One JSON object: the window and its rows (schema pth-top.replay.gpu, version 1)."""
    body = list(rows)
    json.dump({"schema": "pth-top.replay.gpu", "schema_version": 1, "from_s": from_s, "to_s": to_s,
               "rows": body}, out, allow_nan=False)
    out.write("\n")
    return len(body)


def events(connection: sqlite3.Connection, from_s: float, to_s: float,
           gpu: int | None = None) -> Iterator[dict[str, Any]]:
    query = ("SELECT time_s, kind, severity, gpu_index, gpu_uuid, pid, message, evidence FROM events "
             "WHERE time_s >= ? AND time_s <= ?")
    parameters: list[Any] = [from_s, to_s]
    if gpu is not None:
        query += " AND gpu_index = ?"
        parameters.append(gpu)
    for time_s, kind, severity, gpu_index, uuid, pid, message, evidence in connection.execute(
            query + " ORDER BY time_s, id", parameters):
        try:
            parsed = json.loads(evidence)
        except ValueError:
            parsed = {}
        yield {"time": iso_time(time_s), "time_s": time_s, "kind": kind, "severity": severity,
               "gpu_index": gpu_index, "gpu_uuid": uuid, "pid": pid, "message": message, "evidence": parsed}


def event_line(event: dict[str, Any]) -> str:
    """One printable line: time, severity, kind, GPU, PID, message."""
    where = f"GPU {event['gpu_index']}" if event["gpu_index"] is not None else "-"
    pid = f"pid {event['pid']}" if event["pid"] is not None else "-"
    return printable(f"{event['time']}  {event['severity']:<8} {event['kind']:<18} {where:<6} {pid:<10} "
                     f"{event['message']}", 1000)


def snapshots(connection: sqlite3.Connection, from_s: float, to_s: float) -> Iterator[dict[str, Any]]:
    """The stored samples in [from_s, to_s] as `pth-top snapshot --json` dicts, oldest first."""
    dictionaries: dict[int, bytes] = {}
    for keyframe_id, blob in connection.execute(
            "SELECT keyframe_id, snapshot FROM samples WHERE time_s >= ? AND time_s <= ? ORDER BY time_s",
            (from_s, to_s)):
        dictionary = dictionaries.get(keyframe_id)
        if dictionary is None:
            row = connection.execute("SELECT snapshot FROM keyframes WHERE id = ?", (keyframe_id,)).fetchone()
            if row is None:
                continue
            dictionaries.clear()
            dictionary = dictionaries[keyframe_id] = decompress(row[0], None)
        yield sample_from_json(decompress(blob, dictionary))


def time_span(connection: sqlite3.Connection) -> tuple[float, float] | None:
    """(first, last) sample time, or None for a recording with no samples."""
    first, last = connection.execute("SELECT min(time_s), max(time_s) FROM samples").fetchone()
    return None if first is None else (float(first), float(last))

"""`pth-top snapshot --json`: a Snapshot as plain JSON data, schema "pth-top.snapshot" version 1.

The layout mirrors sensors/model.py field for field (units in the names); NA becomes null and tuples
become lists. sensors/snapshot.schema.json describes it; docs/snapshot-schema.md explains it.
Bump SCHEMA_VERSION when a field is renamed or removed; adding a field keeps the version.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.sensors.na import is_na

SCHEMA_NAME = "pth-top.snapshot"
SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("snapshot.schema.json")


def to_json_value(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, NA (and any NaN or infinity) to None."""
    if is_na(value):
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: to_json_value(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def top_processes_by_cpu(processes: tuple[ProcessSample, ...], count: int) -> tuple[ProcessSample, ...]:
    """The `count` busiest processes (CPU %, then memory %), busiest first."""
    ranked = sorted(processes, key=lambda process: (-process.cpu_percent, -process.memory_percent, process.pid))
    return tuple(ranked[:max(0, count)])


def snapshot_to_dict(snapshot: Snapshot, top_processes: int | None = None) -> dict[str, Any]:
    """The JSON-ready form of `snapshot`; `top_processes` keeps only that many busiest processes."""
    body = to_json_value(snapshot)
    processes = snapshot.processes
    if top_processes is not None:
        processes = top_processes_by_cpu(processes, top_processes)
        body["processes"] = to_json_value(processes)
    for process, process_json in zip(processes, body["processes"], strict=True):
        process_json["running_time_s"] = process.running_time_s(snapshot.timestamp_s)
    for job, job_json in zip(snapshot.jobs, body["jobs"], strict=True):
        job_json["running_time_s"] = job.running_time_s(snapshot.timestamp_s)
    return {"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION, **body}

"""`pth-top snapshot --json`: a Snapshot as plain JSON data, schema "pth-top.snapshot" version 1.

The layout mirrors sensors/model.py field for field (units in the names); NA becomes null and tuples
become lists; `snapshot_from_dict` reads it back. sensors/snapshot.schema.json describes it;
docs/snapshot-schema.md explains it.
Bump SCHEMA_VERSION when a field is renamed or removed; adding a field keeps the version.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import types
import typing
from pathlib import Path
from typing import Any

from pth_top.sensors.model import ProcessSample, Snapshot
from pth_top.sensors.na import NA, NotApplicable, is_na

SCHEMA_NAME = "pth-top.snapshot"
SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("snapshot.schema.json")


_PLAIN = frozenset({int, str, bool})


def to_json_value(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, NA (and any NaN or infinity) to None."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if is_na(value):
        return None
    names = _field_names(kind)
    if names is not None:
        return {name: to_json_value(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(kind: type) -> tuple[str, ...] | None:
    """A dataclass's field names (looked up once per class); None for any other type."""
    if kind not in _FIELD_NAMES:
        is_dataclass = dataclasses.is_dataclass(kind)
        _FIELD_NAMES[kind] = tuple(field.name for field in dataclasses.fields(kind)) if is_dataclass else None
    return _FIELD_NAMES[kind]


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


def _decode(hint: Any, value: Any) -> Any:
    """`value` (JSON data) as the type `hint` of a model field: None back to NA, lists back to tuples."""
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _from_dict(hint, value)
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple:
        return tuple(_decode(arguments[0], item) for item in value or ())
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return NA if NotApplicable in arguments else None
        concrete = [argument for argument in arguments if argument not in (NotApplicable, type(None))]
        return _decode(concrete[0], value) if len(concrete) == 1 else value
    if value is None:
        return math.nan if hint is float else NA
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _from_dict(cls: type, data: dict[str, Any]) -> Any:
    hints = _hints(cls)
    known = {field.name for field in dataclasses.fields(cls)}
    return cls(**{name: _decode(hints[name], value) for name, value in data.items() if name in known})


def snapshot_from_dict(data: dict[str, Any]) -> Snapshot:
    """The Snapshot that `snapshot_to_dict` wrote (derived keys such as running_time_s are dropped).

    Raises ValueError for data of another schema or version, TypeError/KeyError for a malformed one."""
    if data.get("schema") != SCHEMA_NAME or data.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"not a {SCHEMA_NAME} version {SCHEMA_VERSION} sample")
    snapshot: Snapshot = _from_dict(Snapshot, data)
    return snapshot

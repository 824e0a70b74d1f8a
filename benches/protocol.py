"""What the bench client and child share: the JSON-lines events (the run request is run_request.py). Stdlib only.

Each line is one JSON object: {"v": PROTOCOL_VERSION, "event": KIND, ...fields}, at most MAX_LINE_BYTES
long and MAX_DEPTH deep. EVENT_SCHEMAS declares each kind's fields once; `decode_line` checks every
event against it, so the parent never acts on NaN, a wrong type or a missing field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_VERSION = 2
MAX_LINE_BYTES = 1 << 20
MAX_DEPTH = 16
HEARTBEAT_INTERVAL_S = 2.0
# A child whose main thread made no progress (no finished timing batch, sweep shape, burn second or event)
# this long is stopped: a hung GPU keeps the heartbeat thread going. Generous, as torch.compile or an OOM
# retry can be silent for minutes.
STALL_FLOOR_S = 300.0
STALL_TIME_CAP_FACTOR = 10.0
BAD_OUTPUT_ERROR_TYPE = "BadOutput"
MIN_TRUSTED_SAMPLES = 3  # a row timed from fewer samples gives no spread worth a figure: it is noisy


class ProtocolError(ValueError):
    """A line that is not a valid event of a version this parent understands."""


class Number:
    """Schema marker: an int or a finite float, never a bool."""


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    """A JSON object with any string keys, each value matching `item`."""

    item: Any


@dataclass(frozen=True)
class Fields:
    """A JSON object with these required and optional fields (others are kept, unchecked)."""

    required: dict[str, Any] = field(default_factory=dict)
    optional: dict[str, Any] = field(default_factory=dict)


NoneType = type(None)
OPT_STR = (str, NoneType)
OPT_NUMBER = (Number, NoneType)
DEVICE = Fields({"id": str, "name": str})
CPU_INFO = Fields(optional={"model": OPT_STR, "physical_cores": (int, NoneType), "max_ghz": OPT_NUMBER,
                            "isa_flags": ListOf(str)})
METADATA = Fields(optional={"cpu": CPU_INFO, "cuda_devices": MapOf(Fields(optional={"name": str})),
                            "python_executable": str, "python_version": str})
RESULT_ROW = Fields(
    required={"kernel": str, "device": str, "variant": str, "status": str, "value": OPT_NUMBER},
    optional={"unit": OPT_STR, "peak_kind": OPT_STR, "note": OPT_STR,
              "details": Fields(optional={"threads": (int, NoneType)}),
              "rel_iqr": OPT_NUMBER, "noisy": (bool, NoneType), "median_s": OPT_NUMBER, "iqr_s": OPT_NUMBER},
)
ERROR_ROW = Fields(
    required={"kernel": OPT_STR, "device": OPT_STR, "variant": OPT_STR, "error_type": str, "message": str},
    optional={"traceback": OPT_STR},
)
EVENT_SCHEMAS: dict[str, Fields] = {
    "devices": Fields({"devices": ListOf(DEVICE)}),
    "started": Fields({"suite": str, "devices": ListOf(str), "metadata": METADATA,
                       "kernels": ListOf(Fields({"kernel": str, "device": str}, {"unit": OPT_STR}))},
                      {"scale": OPT_NUMBER, "time_cap_s": OPT_NUMBER}),
    "progress": Fields({"kernel": str, "device": str, "fraction": Number},
                       {"eta_s": OPT_NUMBER, "message": OPT_STR}),
    "result": RESULT_ROW,
    "error": ERROR_ROW,
    "finished": Fields({"ok": bool, "results": int, "errors": int}, {"wall_s": OPT_NUMBER}),
    # progress_age_s: seconds since the child's main thread last sent anything but a heartbeat.
    "heartbeat": Fields({"pid": int}, {"progress_age_s": OPT_NUMBER}),
    # One device's second of a burn: GEMM rate and NVML readings (null where the device has none).
    "sample": Fields({"kernel": str, "device": str, "t_s": Number},
                     {"tflops": OPT_NUMBER, "sm_clock_mhz": OPT_NUMBER, "power_w": OPT_NUMBER,
                      "temperature_c": OPT_NUMBER, "clock_event_mask": (int, NoneType)}),
}
EVENT_KINDS = tuple(EVENT_SCHEMAS)


@dataclass(frozen=True)
class Event:
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


def _type_name(spec: Any) -> str:
    if isinstance(spec, tuple):
        return " or ".join(_type_name(item) for item in spec)
    if spec is Number:
        return "a number"
    if spec is NoneType:
        return "null"
    if isinstance(spec, (ListOf, Fields, MapOf)):
        return "a list" if isinstance(spec, ListOf) else "an object"
    return spec.__name__


def _matches(value: Any, spec: Any, where: str) -> bool:
    """True if `value` fits `spec`; raises ProtocolError for a nested mismatch (with its path)."""
    if isinstance(spec, tuple):
        return any(_matches(value, option, where) for option in spec)
    if spec is Number:
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and math.isfinite(value))
    if spec is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            return False
        for index, item in enumerate(value):
            check(item, spec.item, f"{where}[{index}]")
        return True
    if isinstance(spec, MapOf):
        if not isinstance(value, dict):
            return False
        for key, item in value.items():
            check(item, spec.item, f"{where}.{key}")
        return True
    if isinstance(spec, Fields):
        if not isinstance(value, dict):
            return False
        for name, item_spec in spec.required.items():
            if name not in value:
                raise ProtocolError(f"{where}: missing field {name!r}")
            check(value[name], item_spec, f"{where}.{name}")
        for name, item_spec in spec.optional.items():
            if name in value:
                check(value[name], item_spec, f"{where}.{name}")
        return True
    return isinstance(value, spec)


def check(value: Any, spec: Any, where: str) -> None:
    """Raise ProtocolError (one line, with the field's path) unless `value` fits `spec`."""
    if not _matches(value, spec, where):
        raise ProtocolError(f"{where}: expected {_type_name(spec)}, got {type(value).__name__}")


def _finite_or_none(value: Any) -> Any:
    """JSON has no NaN/inf: non-finite floats travel as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(item) for item in value]
    return value


def encode_event(kind: str, **fields: Any) -> str:
    """One event as a single JSON line (with a trailing newline)."""
    if kind not in EVENT_KINDS:
        raise ProtocolError(f"unknown event kind {kind!r}")
    payload = {"v": PROTOCOL_VERSION, "event": kind, **_finite_or_none(fields)}
    return json.dumps(payload, separators=(",", ":"), allow_nan=False) + "\n"


def _refuse_constant(name: str) -> Any:
    raise ProtocolError(f"{name} is not a number JSON allows")


def _depth_exceeds(text: str, limit: int) -> bool:
    """True if brackets nest deeper than `limit` (strings skipped), checked before parsing."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json_bounded(text: str, max_depth: int = MAX_DEPTH, *, non_finite_as_none: bool = False) -> Any:
    """json.loads without nesting deeper than `max_depth`; NaN/Infinity refused (or read as None). ProtocolError."""
    if text.count("[") + text.count("{") > max_depth and _depth_exceeds(text, max_depth):
        raise ProtocolError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=(lambda name: None) if non_finite_as_none else _refuse_constant)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON: {text.strip()[:80]!r} ({error.msg})") from None
    except RecursionError:
        raise ProtocolError(f"nested deeper than {max_depth} levels") from None


def decode_line(line: str | bytes) -> Event:
    """Parse and check one line; raises ProtocolError (one line) for anything that is not a valid event."""
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"line longer than {MAX_LINE_BYTES} bytes")
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    payload = parse_json_bounded(line)
    if not isinstance(payload, dict):
        raise ProtocolError(f"not an event object: {line.strip()[:80]!r}")
    version = payload.pop("v", None)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {version!r}, expected {PROTOCOL_VERSION}")
    kind = payload.pop("event", None)
    if kind not in EVENT_KINDS:
        raise ProtocolError(f"unknown event kind {str(kind)[:40]!r}")
    check(payload, EVENT_SCHEMAS[kind], kind)
    return Event(kind=kind, fields=payload)


def stall_limit_s(time_cap_s: float | None) -> float:
    """Seconds without progress after which the parent stops a child: max(STALL_FLOOR_S, 10 x the time cap)."""
    return max(STALL_FLOOR_S, STALL_TIME_CAP_FACTOR * (time_cap_s or 0.0))


def bad_output_event(reason: str) -> Event:
    """The error row that stands for a child output line that is not a valid event."""
    return Event("error", {"kernel": None, "device": None, "variant": None, "error_type": BAD_OUTPUT_ERROR_TYPE,
                           "message": reason})

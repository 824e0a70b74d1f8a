"""JSON-lines events between `python -m benches run` and its parent. Imports no torch.

Each line is one JSON object: {"v": PROTOCOL_VERSION, "event": KIND, ...fields}.
Kinds: devices, started, progress, result, error, finished.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_VERSION = 1
EVENT_KINDS = ("devices", "started", "progress", "result", "error", "finished")


class ProtocolError(ValueError):
    """A line that is not a valid event of a version this parent understands."""


@dataclass(frozen=True)
class Event:
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)


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


def decode_line(line: str | bytes) -> Event:
    """Parse one line; raises ProtocolError for anything that is not a known event."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    try:
        payload = json.loads(line)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"not JSON: {line.strip()[:80]!r} ({error.msg})") from None
    if not isinstance(payload, dict):
        raise ProtocolError(f"not an event object: {line.strip()[:80]!r}")
    version = payload.pop("v", None)
    if version != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {version!r}, expected {PROTOCOL_VERSION}")
    kind = payload.pop("event", None)
    if kind not in EVENT_KINDS:
        raise ProtocolError(f"unknown event kind {kind!r}")
    return Event(kind=kind, fields=payload)

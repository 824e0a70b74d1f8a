"""One thing that happened on the machine, with its evidence: what the recorder stores and alerts deliver."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

EventKind = Literal[
    "xid", "ecc", "row_remap", "throttle_start", "throttle_end", "gpu_lost", "power_limit", "temperature_limit",
    "gpu_process_start", "gpu_process_exit", "oom_kill", "disk_full", "recorder", "alert", "gpu_stuck",
    "gpu_straggler",
]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)
Severity = Literal["info", "warning", "critical"]
SEVERITIES: tuple[str, ...] = get_args(Severity)


@dataclass(frozen=True, slots=True)
class Event:
    time_s: float  # Unix time
    kind: str  # one of EVENT_KINDS
    severity: str  # one of SEVERITIES
    message: str  # one printable line, for the event list and alert text
    gpu_index: int | None = None
    gpu_uuid: str = ""
    pid: int | None = None
    # What shows it happened: counter before/after, reason names, the Xid code and its meaning; JSON-able values.
    evidence: dict[str, object] = field(default_factory=dict)

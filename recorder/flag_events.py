"""The stuck and straggler flags (sensors/gpu_flags.py) as events: one when a GPU's flag rises, one when it ends."""

from __future__ import annotations

from dataclasses import dataclass

from pth_top.recorder.event import Event
from pth_top.sensors.gpu_flags import STUCK, FlagThresholds, FlagTracker, GpuFlag
from pth_top.sensors.model import GpuSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.text import printable

# Event kind and words by flag kind.
FLAG_EVENT_KINDS = {STUCK: "gpu_stuck", "straggler": "gpu_straggler"}
FLAG_WORDS = {STUCK: "stuck", "straggler": "a straggler"}


@dataclass(slots=True)
class _Raised:
    kind: str
    since_s: float  # when the signature began to hold (the event's time minus the flag's held_s)


class FlagEvents:
    """An EventSource (recorder/events.py) over the snapshots it is polled with, in order, from one thread."""

    def __init__(self, thresholds: FlagThresholds | None = None) -> None:
        self.tracker = FlagTracker(thresholds)
        self._raised: dict[int, _Raised] = {}

    def poll(self, snapshot: Snapshot) -> list[Event]:
        now = snapshot.timestamp_s
        flags = self.tracker.update(snapshot.gpus, snapshot.processes, now)
        gpus = {gpu.index: gpu for gpu in snapshot.gpus}
        group_of = {index: group for group in self.tracker.groups for index in group}
        events = []
        for index, raised in sorted(self._raised.items()):
            flag = flags.get(index)
            if flag is None or flag.kind != raised.kind:
                del self._raised[index]
                events.append(self._ended(now, index, raised, gpus.get(index)))
        for index, flag in sorted(flags.items()):
            if index not in self._raised:
                self._raised[index] = _Raised(flag.kind, now - flag.held_s)
                events.append(self._raised_event(now, flag, gpus.get(index), group_of.get(index, (index,))))
        return events

    def _raised_event(self, now: float, flag: GpuFlag, gpu: GpuSample | None, group: tuple[int, ...]) -> Event:
        severity = "warning" if flag.kind == STUCK else "info"
        return Event(now, FLAG_EVENT_KINDS[flag.kind], severity, printable(f"GPU {flag.gpu_index}: {flag.reason}", 400),
                     flag.gpu_index, gpu.uuid if gpu else "", evidence={
                         "reason": flag.reason, "held_s": round(flag.held_s, 3), "group": list(group),
                         **_readings(gpu)})

    def _ended(self, now: float, index: int, raised: _Raised, gpu: GpuSample | None) -> Event:
        lasted_s = max(0.0, now - raised.since_s)
        return Event(now, FLAG_EVENT_KINDS[raised.kind], "info",
                     f"GPU {index} no longer {FLAG_WORDS[raised.kind]} (after {lasted_s:.0f} s)",
                     index, gpu.uuid if gpu else "", evidence={
                         "ended": True, "duration_s": round(lasted_s, 3), **_readings(gpu)})


def _readings(gpu: GpuSample | None) -> dict[str, object]:
    """The readings the flags judge: NVML util, power as a share of its limit, GPM SM active (None: unknown)."""
    if gpu is None or gpu.lost:
        return {"utilization_percent": None, "power_ratio": None, "sm_active_ratio": None}
    draw, cap = gpu.power_draw_w, gpu.power_limit_w
    return {
        "utilization_percent": None if is_na(gpu.utilization_percent) else gpu.utilization_percent,
        "power_ratio": round(draw / cap, 4) if not is_na(draw) and not is_na(cap) and cap > 0 else None,
        "sm_active_ratio": None if is_na(gpu.sm_active_ratio) else round(gpu.sm_active_ratio, 4),
    }

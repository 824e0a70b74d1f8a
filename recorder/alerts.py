"""The alert evaluator: consecutive Snapshots and the recorder's Events in, Event(kind="alert") out.

Each rule watches one thing at a time (a GPU, a filesystem, a process) as an episode: it fires once when
its condition has held for the rule's `for_s`, and is re-armed only when the condition clears (with a margin
where a reading hovers). The recorder and the dashboard call `AlertEvaluator.step` once per sample.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable

from pth_top.recorder.alert_rules import AlertSettings
from pth_top.recorder.event import Event
from pth_top.sensors.model import FilesystemUsage, GpuSample, ProcessSample, Snapshot
from pth_top.sensors.na import is_na
from pth_top.sensors.units import format_bytes
from pth_top.text import printable

# A low-space alert re-arms once there is this much more than its threshold (no alert each time it hovers).
REARM_MARGIN = 1.2
# Event kinds each event rule answers to.
EVENT_RULE_KINDS = {"xid": ("xid",), "ecc": ("ecc", "row_remap")}
# Flag event kinds (recorder/flag_events.py) and their rules: an episode runs from the flag's event to its end.
FLAG_RULES = {"gpu_stuck": "gpu_stuck", "gpu_straggler": "gpu_straggler"}
NAME_CHARS = 60


@dataclass(slots=True)
class Episode:
    """One condition on one thing: when it began to hold, and whether it has fired since."""

    since_s: float | None = None
    fired: bool = False

    def update(self, active: bool, cleared: bool, now_s: float, for_s: float) -> bool:
        """True once per episode: when `active` has held for `for_s`; `cleared` ends a fired episode."""
        if self.fired:
            if cleared:
                self.fired, self.since_s = False, None
            return False
        if not active:
            self.since_s = None
            return False
        if self.since_s is None:
            self.since_s = now_s
        self.fired = now_s - self.since_s >= for_s
        return self.fired


@dataclass(frozen=True, slots=True)
class _Watched:
    name: str
    start_time_s: float
    pattern: str


class AlertEvaluator:
    """The rules of `settings` over a stream of samples; `clock` (monotonic seconds) times the durations."""

    def __init__(self, settings: AlertSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._clock = clock
        self._episodes: dict[Hashable, Episode] = {}
        self._last_event_s: dict[Hashable, float] = {}
        self._patterns = [re.compile(pattern) for pattern in settings.rules.process_exit.patterns]
        self._watched: dict[int, _Watched] = {}
        # PID -> (start time, name, command line) of a process no pattern matched; an exec is checked again.
        self._unmatched: dict[int, tuple[float, str, str]] = {}
        # (rule, GPU) whose flag has alerted and not yet ended.
        self._flagged: set[tuple[str, Hashable]] = set()

    def step(self, snapshot: Snapshot, events: Iterable[Event] = ()) -> list[Event]:
        """The alerts this sample (and the events since the last one) raise; each fires once per episode."""
        if not self.settings.enabled:
            return []
        self._now_s = self._clock()
        self._snapshot = snapshot
        self._seen: set[Hashable] = set()
        self._alerts: list[Event] = []
        self._holders: dict[int, list[ProcessSample]] = {}
        for process in snapshot.processes:
            if process.gpu_uses:
                for index in process.gpu_indices:
                    self._holders.setdefault(index, []).append(process)
        for gpu in snapshot.gpus:
            self._gpu_rules(gpu)
        self._host_rules(snapshot)
        events = tuple(events)
        self._event_rules(events)
        self._flag_rules(events)
        self._process_exits(snapshot)
        # A GPU or filesystem that is gone ends its episodes: it starts afresh if it comes back.
        self._episodes = {key: episode for key, episode in self._episodes.items() if key in self._seen}
        return self._alerts

    def _condition(self, rule: str, thing: Hashable, active: bool, cleared: bool, for_s: float,
                   alert: Callable[[], Event]) -> None:
        key = (rule, thing)
        self._seen.add(key)
        episode = self._episodes.setdefault(key, Episode())
        if episode.update(active, cleared, self._now_s, for_s):
            self._alerts.append(alert())

    def _alert(self, rule: str, severity: str, message: str, gpu: GpuSample | None = None,
               pid: int | None = None, **evidence: object) -> Event:
        return Event(
            time_s=self._snapshot.timestamp_s, kind="alert", severity=severity, message=printable(message, 300),
            gpu_index=gpu.index if gpu else None, gpu_uuid=gpu.uuid if gpu else "", pid=pid,
            evidence={"rule": rule, "host": printable(self._snapshot.host.hostname, NAME_CHARS), **evidence},
        )

    def _gpu_rules(self, gpu: GpuSample) -> None:
        rules, thing = self.settings.rules, gpu.uuid or gpu.index
        label = f"GPU {gpu.index} ({printable(gpu.name, NAME_CHARS)})"
        if rules.gpu_lost.enabled:
            self._condition("gpu_lost", thing, gpu.lost, not gpu.lost, 0.0, lambda: self._alert(
                "gpu_lost", "critical", f"{label} stopped answering (lost); it needs a reset or a reboot", gpu))
        if gpu.lost:
            return
        temperature = rules.gpu_temperature
        if temperature.enabled and not is_na(gpu.temperature_c):
            hot = gpu.temperature_c
            self._condition("gpu_temperature", thing, hot >= temperature.above_c, hot < temperature.clear_below_c,
                            temperature.for_s, lambda: self._alert(
                                "gpu_temperature", "warning",
                                f"{label} at {hot:.0f} C, at or above {temperature.above_c:g} C for "
                                f"{temperature.for_s:g} s", gpu, temperature_c=hot))
        memory = rules.gpu_memory
        used_percent = gpu.memory_percent
        if memory.enabled and not is_na(used_percent):
            used = used_percent / 100
            self._condition("gpu_memory", thing, used >= memory.above_fraction, used < memory.clear_below_fraction,
                            memory.for_s, lambda: self._alert(
                                "gpu_memory", "warning",
                                f"{label} memory {used:.0%} used, at or above {memory.above_fraction:.0%} for "
                                f"{memory.for_s:g} s", gpu, memory_used_fraction=round(used, 4)))
        throttle = rules.throttle
        if throttle.enabled:
            reasons = [reason for reason in gpu.throttle_reasons if reason in throttle.reasons]
            self._condition("throttle", thing, bool(reasons), not reasons, throttle.for_s, lambda: self._alert(
                "throttle", "warning", f"{label} slowed by {', '.join(reasons)} for over {throttle.for_s:g} s",
                gpu, reasons=reasons))
        if rules.gpu_idle.enabled:
            self._gpu_idle(gpu, thing, label)

    def _gpu_idle(self, gpu: GpuSample, thing: Hashable, label: str) -> None:
        idle = self.settings.rules.gpu_idle
        holders = self._holders.get(gpu.index, [])
        activity = gpu.utilization_percent
        if is_na(activity):  # MIG and some boards: the processes' own SM samples
            known = [use.sm_util_percent for process in holders for use in process.gpu_uses
                     if use.gpu_index == gpu.index and not is_na(use.sm_util_percent)]
            activity = float(sum(known)) if known else activity
        if is_na(activity):
            return
        hung = bool(holders) and activity < idle.below_percent
        pids = sorted(process.pid for process in holders)

        def alert() -> Event:
            names = ", ".join(f"{p.pid} {printable(p.name or '?', 20)}" for p in holders[:4])
            return self._alert("gpu_idle", "warning", (
                f"{label} idle ({activity:.0f}% busy, below {idle.below_percent:g}%) for {idle.for_s:g} s while "
                f"processes hold it ({names}): a hung or stalled job?"), gpu, pids=pids, busy_percent=activity)

        self._condition("gpu_idle", thing, hung, not hung, idle.for_s, alert)

    def _host_rules(self, snapshot: Snapshot) -> None:
        disk, memory = self.settings.rules.disk, self.settings.rules.memory
        if disk.enabled:
            for filesystem in snapshot.filesystems:
                if not disk.mountpoints or filesystem.mountpoint in disk.mountpoints:
                    self._disk(filesystem)
        total = snapshot.memory.total_bytes
        if memory.enabled and total > 0:
            share = snapshot.memory.available_bytes / total
            self._condition("memory", "ram", share < memory.available_below_fraction,
                            share >= memory.available_below_fraction * REARM_MARGIN, memory.for_s, lambda: self._alert(
                                "memory", "warning",
                                f"RAM low: {format_bytes(snapshot.memory.available_bytes)} available ({share:.1%}) "
                                f"for {memory.for_s:g} s", available_bytes=snapshot.memory.available_bytes,
                                available_fraction=round(share, 4)))

    def _disk(self, filesystem: FilesystemUsage) -> None:
        disk = self.settings.rules.disk
        usable = filesystem.used_bytes + filesystem.free_bytes
        if usable <= 0:
            return
        free, share = filesystem.free_bytes, filesystem.free_bytes / usable
        low = share < disk.free_below_fraction or free < disk.free_below_bytes
        roomy = share >= disk.free_below_fraction * REARM_MARGIN and free >= disk.free_below_bytes * REARM_MARGIN
        where = printable(filesystem.mountpoint, 120)
        self._condition("disk", filesystem.mountpoint, low, roomy, disk.for_s, lambda: self._alert(
            "disk", "critical" if share < 0.01 else "warning",
            f"disk {where} nearly full: {format_bytes(free)} free ({share:.1%})",
            mountpoint=where, free_bytes=free, free_fraction=round(share, 4)))

    def _event_rules(self, events: Iterable[Event]) -> None:
        """Xid and ECC/row-remap events: one alert per GPU for a burst, again after `quiet_s` without one."""
        rules = {"xid": self.settings.rules.xid, "ecc": self.settings.rules.ecc}
        for event in events:
            for name, kinds in EVENT_RULE_KINDS.items():
                rule = rules[name]
                if event.kind not in kinds or not rule.enabled:
                    continue
                key = (name, event.gpu_uuid or event.gpu_index)
                last_s = self._last_event_s.get(key)
                self._last_event_s[key] = self._now_s
                if last_s is None or self._now_s - last_s >= rule.quiet_s:
                    self._alerts.append(Event(
                        time_s=event.time_s, kind="alert", severity=_at_least_warning(event.severity),
                        message=printable(event.message, 300),
                        gpu_index=event.gpu_index, gpu_uuid=event.gpu_uuid, pid=event.pid,
                        evidence={"rule": name, "host": printable(self._snapshot.host.hostname, NAME_CHARS),
                                  "event": event.kind, **event.evidence},
                    ))

    def _flag_rules(self, events: Iterable[Event]) -> None:
        """Stuck and straggler flags: one alert per group of GPUs flagged together, again only after the flag ended."""
        raised: dict[tuple[str, tuple[int, ...]], list[Event]] = {}
        for event in events:
            rule = FLAG_RULES.get(event.kind)
            if rule is None or not getattr(self.settings.rules, rule).enabled:
                continue
            key = (rule, event.gpu_uuid or event.gpu_index)
            if event.evidence.get("ended"):
                self._flagged.discard(key)
            elif key not in self._flagged:
                self._flagged.add(key)
                group = event.evidence.get("group")
                together = tuple(group) if rule == "gpu_stuck" and isinstance(group, list) else (event.gpu_index,)
                raised.setdefault((rule, together), []).append(event)
        for (rule, _group), flagged in raised.items():
            first = flagged[0]
            indices = [event.gpu_index for event in flagged]
            where = f"GPU {indices[0]}" if len(indices) == 1 else f"GPUs {', '.join(map(str, indices))}"
            reason = printable(str(first.evidence.get("reason", first.message)), 240)
            self._alerts.append(Event(
                time_s=first.time_s, kind="alert", severity="warning",
                message=printable(f"{where}: {reason}", 300), gpu_index=first.gpu_index, gpu_uuid=first.gpu_uuid,
                evidence={"rule": rule, "host": printable(self._snapshot.host.hostname, NAME_CHARS),
                          "event": first.kind, "gpus": indices, **first.evidence},
            ))

    def _process_exits(self, snapshot: Snapshot) -> None:
        """Watched jobs (name or command line matching a pattern) that left the process list."""
        if not self.settings.rules.process_exit.enabled or not self._patterns:
            return
        alive = {process.pid: process for process in snapshot.processes}
        self._unmatched = {pid: seen for pid, seen in self._unmatched.items() if pid in alive}
        for pid, watched in list(self._watched.items()):
            process = alive.get(pid)
            if process is None or process.start_time_s != watched.start_time_s:  # gone, or the PID reused
                del self._watched[pid]
                ran_s = max(0.0, snapshot.timestamp_s - watched.start_time_s)
                self._alerts.append(self._alert(
                    "process_exit", "warning",
                    f"watched job {pid} ({watched.name}) exited after {ran_s / 60:.0f} min",
                    pid=pid, name=watched.name, pattern=watched.pattern))
        for process in snapshot.processes:
            seen = (process.start_time_s, process.name, process.command)
            if process.pid in self._watched or self._unmatched.get(process.pid) == seen:
                continue
            self._unmatched[process.pid] = seen
            for pattern in self._patterns:
                if pattern.search(process.name) or pattern.search(process.command):
                    # The name only goes in the alert: a command line can hold tokens.
                    name = printable(process.name or process.command.split(" ")[0].rsplit("/")[-1], NAME_CHARS)
                    self._watched[process.pid] = _Watched(name, process.start_time_s, pattern.pattern)
                    del self._unmatched[process.pid]
                    break


def _at_least_warning(severity: str) -> str:
    return "critical" if severity == "critical" else "warning"

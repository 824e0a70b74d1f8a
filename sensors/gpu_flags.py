"""Hang and straggler signatures over a history of GPU samples: pure functions, the clock passed in.

Stuck in a collective: every GPU of a group reads busy (NVML util >= 95 %) at near-idle power with few SMs
active, for longer than a threshold. A waiting NCCL kernel keeps one block per channel resident, so NVML's
"any kernel ran" reads 100 % while the SMs do nothing (NVIDIA/nccl#1550: 100 % at 152 W of 700 W).
Straggler: one GPU of a busy group whose SM activity, power or clocks lag the others' median for a while.
A group is, for now, the GPUs used by processes of one parent (a launcher and its ranks).
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from dataclasses import dataclass, fields
from typing import Callable, Iterable, Mapping, Sequence

from pth_top.sensors.model import GpuSample, ProcessSample
from pth_top.sensors.na import is_na

STUCK = "stuck"
STRAGGLER = "straggler"


@dataclass(frozen=True, slots=True)
class FlagThresholds:
    # Stuck: NVML util at least this, power under this share of the limit, SM active under this, this long.
    stuck_util_percent: float = 95.0
    stuck_power_ratio: float = 0.35
    # A hung NCCL kernel keeps ~15 % of an H100's SMs active (NVIDIA/nccl#1432): 10 % would miss it.
    stuck_sm_active_ratio: float = 0.25
    stuck_after_s: float = 60.0
    # Straggler: a reading below this share of the group's other GPUs' median, this long, while they are busy.
    straggler_ratio: float = 0.70
    straggler_after_s: float = 30.0
    busy_util_percent: float = 50.0


def thresholds_from_table(table: object) -> FlagThresholds:
    """A settings file's [flags] table; ValueError (one line) for an unknown key or a value that makes no sense."""
    if not isinstance(table, dict):
        raise ValueError("[flags] is not a table")
    known = [field.name for field in fields(FlagThresholds)]
    values = {}
    for key, value in table.items():
        if key not in known:
            raise ValueError(f"flags.{str(key)[:40]!r} is not a setting; the settings are {', '.join(known)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise ValueError(f"flags.{key} must be a positive number")
        if key.endswith("_ratio") and value > 1:
            raise ValueError(f"flags.{key} must be a share from 0 to 1 (e.g. 0.35)")
        values[key] = float(value)
    return FlagThresholds(**values)


def thresholds_table(thresholds: FlagThresholds) -> dict[str, float]:
    """The [flags] table to write back: the settings that differ from the defaults."""
    default = FlagThresholds()
    return {
        field.name: getattr(thresholds, field.name) for field in fields(FlagThresholds)
        if getattr(thresholds, field.name) != getattr(default, field.name)
    }


@dataclass(frozen=True, slots=True)
class GpuFlag:
    gpu_index: int
    kind: str  # STUCK or STRAGGLER
    # Seconds the signature has held, and what it is, in words.
    held_s: float
    reason: str


# One reading of the history: (Unix time of the sample, the GPUs then).
HistoryEntry = tuple[float, Sequence[GpuSample]]
LAGGING_READINGS: tuple[tuple[str, Callable[[GpuSample], float]], ...] = (
    ("SM active", lambda gpu: gpu.sm_active_ratio),
    ("power", lambda gpu: gpu.power_draw_w),
    ("SM clock", lambda gpu: gpu.sm_clock_mhz),
    ("memory clock", lambda gpu: gpu.memory_clock_mhz),
)
HOTTER_BY_C = 10.0
# Samples kept for the flags: the longest threshold twice over, and never more than this many.
FLAG_HISTORY_MAX = 2000


def gpu_groups(gpus: Sequence[GpuSample], processes: Iterable[ProcessSample]) -> tuple[tuple[int, ...], ...]:
    """GPUs used by processes of one parent (or one process) form a group; GPUs with no known process, one more.

    Groups that share a GPU are merged.
    """
    known = {gpu.index for gpu in gpus}
    by_parent: dict[int, set[int]] = {}
    for process in processes:
        used = set(process.gpu_indices) & known
        if used:
            # Processes whose parent is init (or unknown) are not one job for sharing it.
            by_parent.setdefault(process.ppid if process.ppid > 1 else -process.pid, set()).update(used)
    groups: list[set[int]] = []
    for used in by_parent.values():
        overlapping = [group for group in groups if group & used]
        merged = used.union(*overlapping)
        groups = [group for group in groups if not group & used] + [merged]
    unattributed = known - set().union(*groups)
    if unattributed:
        groups.append(unattributed)
    return tuple(sorted(tuple(sorted(group)) for group in groups))


# (what, group, GPU index) -> (the newest sample judged, since when it has held); see RunMemo.
RunKey = tuple[str, tuple[int, ...], int]


class RunMemo:
    """Where each condition's latest unbroken run starts, carried from one sample to the next: a new sample is
    judged alone instead of walking the whole history again (8 GPUs x 120 samples a step)."""

    def __init__(self) -> None:
        self._runs: dict[RunKey, tuple[float, float | None]] = {}

    def held_since(self, key: RunKey, history: Sequence[HistoryEntry],
                   holds: Callable[[Mapping[int, GpuSample]], bool]) -> float | None:
        latest_s = history[-1][0]
        known = self._runs.get(key)
        if known is not None and known[0] == latest_s:
            since = known[1]
        elif known is not None and len(history) >= 2 and known[0] == history[-2][0]:
            since = (latest_s if known[1] is None else known[1]) if holds(_by_index(history[-1][1])) else None
        else:
            since = _held_since(history, holds)
        # The history forgets its oldest samples; a walk would start at the oldest one kept.
        since = None if since is None else max(since, history[0][0])
        self._runs[key] = (latest_s, since)
        return since

    def keep_only(self, keys: Iterable[RunKey]) -> None:
        wanted = set(keys)
        self._runs = {key: run for key, run in self._runs.items() if key in wanted}


def detect_flags(
    history: Sequence[HistoryEntry],
    groups: Sequence[Sequence[int]],
    now_s: float,
    thresholds: FlagThresholds = FlagThresholds(),
    memo: RunMemo | None = None,
) -> dict[int, GpuFlag]:
    """GPU index -> its flag (stuck wins over straggler), from `history` (oldest first) up to `now_s`; `memo`
    carries the runs from the previous call over the same history with one sample more."""
    flags: dict[int, GpuFlag] = {}
    used: list[RunKey] = []
    for group in groups:
        members = tuple(group)
        used.append(("stuck", members, -1))
        stuck = _stuck(history, members, now_s, thresholds, memo)
        if stuck is not None:
            flags.update({index: GpuFlag(index, STUCK, stuck[0], stuck[1]) for index in members})
            continue
        if len(members) >= 2:
            for index in members:
                used.append(("straggler", members, index))
                flag = _straggler(history, members, index, now_s, thresholds, memo)
                if flag is not None:
                    flags[index] = flag
    if memo is not None:
        memo.keep_only(used)
    return flags


def _by_index(gpus: Sequence[GpuSample]) -> Mapping[int, GpuSample]:
    return {gpu.index: gpu for gpu in gpus if not gpu.lost}


def _held_since(history: Sequence[HistoryEntry], holds: Callable[[Mapping[int, GpuSample]], bool]) -> float | None:
    """The time of the oldest sample of the latest unbroken run where `holds`; None when the latest fails."""
    since = None
    for timestamp_s, gpus in reversed(history):
        if not holds(_by_index(gpus)):
            break
        since = timestamp_s
    return since


def _looks_stuck(gpu: GpuSample | None, thresholds: FlagThresholds) -> bool:
    if gpu is None or is_na(gpu.utilization_percent) or is_na(gpu.power_draw_w) or is_na(gpu.power_limit_w):
        return False
    if gpu.utilization_percent < thresholds.stuck_util_percent or not gpu.power_limit_w > 0:
        return False
    if gpu.power_draw_w >= thresholds.stuck_power_ratio * gpu.power_limit_w:
        return False
    # Without GPM (before Hopper) busy-at-idle-power is the whole signature.
    return is_na(gpu.sm_active_ratio) or gpu.sm_active_ratio < thresholds.stuck_sm_active_ratio


def _run_since(memo: RunMemo | None, key: RunKey, history: Sequence[HistoryEntry],
               holds: Callable[[Mapping[int, GpuSample]], bool]) -> float | None:
    return _held_since(history, holds) if memo is None else memo.held_since(key, history, holds)


def _stuck(
    history: Sequence[HistoryEntry], members: tuple[int, ...], now_s: float, thresholds: FlagThresholds,
    memo: RunMemo | None = None,
) -> tuple[float, str] | None:
    since = _run_since(memo, ("stuck", members, -1), history,
                       lambda gpus: all(_looks_stuck(gpus.get(index), thresholds) for index in members))
    if since is None or now_s - since < thresholds.stuck_after_s:
        return None
    latest = _by_index(history[-1][1])
    gpus = [latest[index] for index in members]
    power = max(gpu.power_draw_w / gpu.power_limit_w for gpu in gpus)
    sm = [gpu.sm_active_ratio for gpu in gpus if not is_na(gpu.sm_active_ratio)]
    activity = f"SM active <= {max(sm):.0%}" if sm else "SM activity not measured (no GPM)"
    which = "all its group's GPUs" if len(members) > 1 else "this GPU"
    return now_s - since, (
        f"likely stuck in a collective: {which} busy at <= {power:.0%} of the power limit, {activity}, "
        f"for {now_s - since:.0f} s"
    )


def _lagging(gpus: Mapping[int, GpuSample], members: tuple[int, ...], index: int,
             thresholds: FlagThresholds) -> str | None:
    """The first reading of GPU `index` below straggler_ratio of its busy peers' median, in words; else None."""
    gpu = gpus.get(index)
    peers = [gpus[other] for other in members if other != index and other in gpus]
    busy = [peer.utilization_percent for peer in peers if not is_na(peer.utilization_percent)]
    if gpu is None or not busy or statistics.median(busy) < thresholds.busy_util_percent:
        return None
    for name, read in LAGGING_READINGS:
        values = [read(peer) for peer in peers if not is_na(read(peer))]
        own = read(gpu)
        if values and not is_na(own):
            median = statistics.median(values)
            if median > 0 and own < thresholds.straggler_ratio * median:
                return f"{name} {own / median:.0%} of its group's median"
    return None


def _straggler(
    history: Sequence[HistoryEntry], members: tuple[int, ...], index: int, now_s: float,
    thresholds: FlagThresholds, memo: RunMemo | None = None,
) -> GpuFlag | None:
    since = _run_since(memo, ("straggler", members, index), history,
                       lambda gpus: _lagging(gpus, members, index, thresholds) is not None)
    if since is None or now_s - since < thresholds.straggler_after_s:
        return None
    latest = _by_index(history[-1][1])
    lag = _lagging(latest, members, index, thresholds)
    reasons = likely_reasons(latest[index], [latest[other] for other in members if other != index and other in latest])
    because = f" ({'; '.join(reasons)})" if reasons else ""
    return GpuFlag(index, STRAGGLER, now_s - since, f"straggler: {lag} for {now_s - since:.0f} s{because}")


def likely_reasons(gpu: GpuSample, peers: Sequence[GpuSample]) -> list[str]:
    """What visibly holds `gpu` back against its peers: throttle reasons, a down-trained link, heat."""
    reasons = [f"throttled: {reason}" for reason in gpu.throttle_reasons if reason != "idle"]
    if gpu.pcie_link_degraded:
        reasons.append(
            f"PCIe Gen{gpu.pcie_generation_current} x{gpu.pcie_width_current}"
            f" of Gen{gpu.pcie_generation_max} x{gpu.pcie_width_max}"
        )
    temperatures = [peer.temperature_c for peer in peers if not is_na(peer.temperature_c)]
    if temperatures and not is_na(gpu.temperature_c):
        median = statistics.median(temperatures)
        if gpu.temperature_c >= median + HOTTER_BY_C:
            reasons.append(f"{gpu.temperature_c - median:.0f} C hotter than its group")
    return reasons


class FlagTracker:
    """The recent GPU samples of a live view or a recording and the flags they raise now."""

    def __init__(self, thresholds: FlagThresholds | None = None) -> None:
        self.thresholds = thresholds or FlagThresholds()
        self._history: deque[HistoryEntry] = deque(maxlen=FLAG_HISTORY_MAX)
        self._runs = RunMemo()
        # The GPU groups the last flags were judged over.
        self.groups: tuple[tuple[int, ...], ...] = ()

    def update(
        self, gpus: Sequence[GpuSample], processes: Iterable[ProcessSample], timestamp_s: float
    ) -> dict[int, GpuFlag]:
        if self._history and timestamp_s <= self._history[-1][0]:
            return self.flags(gpus, processes)
        self._history.append((timestamp_s, tuple(gpus)))
        keep_s = 2 * max(self.thresholds.stuck_after_s, self.thresholds.straggler_after_s)
        while self._history and self._history[0][0] < timestamp_s - keep_s:
            self._history.popleft()
        return self.flags(gpus, processes)

    def flags(self, gpus: Sequence[GpuSample], processes: Iterable[ProcessSample]) -> dict[int, GpuFlag]:
        if not self._history:
            return {}
        self.groups = gpu_groups(gpus, [process for process in processes if process.gpu_uses])
        return detect_flags(self._history, self.groups, self._history[-1][0], self.thresholds, self._runs)

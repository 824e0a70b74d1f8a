"""Energy per job since pth-top first saw it, from one sample to the next.

Each interval, a GPU's energy is the change of NVML's total-energy counter (nvmlDeviceGetTotalEnergyConsumption,
millijoules since the driver loaded) where the GPU has one, else its power integrated over the interval
(the mean of the two readings times the time between them). That energy is split equally among the jobs
on the GPU at both ends of the interval, the same rule as their power share. A job's method is "counter"
while every interval it was given came from counters, "power x time" once one did not.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import Any, Iterable, Mapping

from pth_top.sensors.jobs import JobKey
from pth_top.sensors.model import GpuSample, MaybeFloat
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.nvml import GpuLostError, NvmlSession

COUNTER = "counter"
INTEGRATED = "power x time"


def read_energy_counters(session: NvmlSession, handles: Iterable[tuple[int, Any]]) -> dict[int, MaybeFloat]:
    """GPU index -> joules since the driver loaded (NVML's counter), NA where the GPU has none."""
    counters: dict[int, MaybeFloat] = {}
    for index, handle in handles:
        try:
            value = session.call("nvmlDeviceGetTotalEnergyConsumption", handle)
        except GpuLostError:
            value = NA
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        counters[index] = value * 1e-3 if ok else NA
    return counters


@dataclasses.dataclass(slots=True)
class JobAccount:
    """One job's energy so far (joules), its method, and when pth-top first saw it (Unix time)."""

    first_seen_s: float
    energy_j: MaybeFloat = NA
    method: str = ""


class JobEnergy:
    """Keeps each job's energy between samples; jobs that are gone are forgotten."""

    def __init__(self) -> None:
        self._accounts: dict[JobKey, JobAccount] = {}
        self._previous: dict[int, tuple[float, MaybeFloat, MaybeFloat]] = {}

    def update(
        self, jobs: Iterable[tuple[JobKey, tuple[int, ...]]], gpus: Iterable[GpuSample],
        counters_j: Mapping[int, MaybeFloat], monotonic_s: float, wall_s: float,
    ) -> list[JobAccount]:
        """Each job's account (energy_j, energy_method, first_seen_s), in the order of `jobs` ((kind, id), GPUs)."""
        jobs = list(jobs)
        readings = {gpu.index: (monotonic_s, counters_j.get(gpu.index, NA), gpu.power_draw_w) for gpu in gpus}
        deltas = {index: self._delta(self._previous.get(index), now) for index, now in readings.items()}
        self._previous = readings
        sharing: dict[int, int] = defaultdict(int)
        for key, gpu_indices in jobs:
            if key in self._accounts:
                for index in gpu_indices:
                    sharing[index] += 1
        accounts: dict[JobKey, JobAccount] = {}
        for key, gpu_indices in jobs:
            account = self._accounts.get(key)
            if account is None:
                account = JobAccount(wall_s)
                if any(not is_na(readings[index][1]) or not is_na(readings[index][2])
                       for index in gpu_indices if index in readings):
                    account.energy_j = 0.0
            else:
                self._add(account, gpu_indices, deltas, sharing)
            accounts[key] = account
        self._accounts = accounts
        return [accounts[key] for key, _ in jobs]

    @staticmethod
    def _delta(
        before: tuple[float, MaybeFloat, MaybeFloat] | None, now: tuple[float, MaybeFloat, MaybeFloat],
    ) -> tuple[MaybeFloat, str]:
        if before is None:
            return NA, ""
        elapsed_s = now[0] - before[0]
        if not is_na(now[1]) and not is_na(before[1]) and now[1] >= before[1]:
            return now[1] - before[1], COUNTER
        powers = [power for power in (before[2], now[2]) if not is_na(power)]
        if not powers or elapsed_s <= 0:
            return NA, ""
        return sum(powers) / len(powers) * elapsed_s, INTEGRATED

    @staticmethod
    def _add(
        account: JobAccount, gpu_indices: tuple[int, ...], deltas: Mapping[int, tuple[MaybeFloat, str]],
        sharing: Mapping[int, int],
    ) -> None:
        for index in gpu_indices:
            energy_j, method = deltas.get(index, (NA, ""))
            if is_na(energy_j):
                continue
            account.energy_j = (0.0 if is_na(account.energy_j) else account.energy_j) + energy_j / sharing[index]
            account.method = INTEGRATED if INTEGRATED in (account.method, method) else COUNTER

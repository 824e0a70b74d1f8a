"""Who runs each GPU process: user and kernel name (comm) for NVML's PIDs, without reading the whole table.

The exporter labels per-process GPU memory with these; it reads /proc only for the PIDs NVML reported
(a few), and walks every process's NSpid only when one of them is not visible here (a container).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from pth_top.sensors.pidns import NamespacePidMapper
from pth_top.sensors.procfs import UserNames, parse_stat, read_small_file


@dataclass(frozen=True, slots=True)
class ProcessOwner:
    """A GPU process as seen here: its PID in this namespace, user name and comm (<= 15 chars, raw)."""

    pid: int
    user: str
    comm: str


class GpuProcessOwners:
    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._user_names = UserNames()
        self._mapper = NamespacePidMapper(proc_root)

    def identify(self, nvml_pids: Iterable[int]) -> dict[int, ProcessOwner]:
        """NVML PID -> its owner here; PIDs that have exited (or are hidden from us) are left out."""
        owners: dict[int, ProcessOwner] = {}
        unseen = []
        for pid in set(nvml_pids):
            owner = self._read(pid)
            if owner is None:
                unseen.append(pid)
            else:
                owners[pid] = owner
        if unseen:
            for nvml_pid, local_pid in self._mapper.map(unseen, self._visible_start_ticks()).items():
                owner = self._read(local_pid)
                if owner is not None:
                    owners[nvml_pid] = owner
        return owners

    def _read(self, pid: int) -> ProcessOwner | None:
        try:
            stat = parse_stat(read_small_file(f"{self.proc_root}/{pid}/stat"))
            uid = os.stat(f"{self.proc_root}/{pid}").st_uid
        except (OSError, ValueError, IndexError):
            return None
        return ProcessOwner(pid=pid, user=self._user_names(uid), comm=stat.comm)

    def _visible_start_ticks(self) -> dict[int, float]:
        """Every visible PID -> its start time in ticks (tells a reused PID apart in the NSpid cache)."""
        visible: dict[int, float] = {}
        try:
            names = os.listdir(self.proc_root)
        except OSError:
            return visible
        for name in names:
            if not name.isdigit():
                continue
            try:
                visible[int(name)] = float(parse_stat(read_small_file(f"{self.proc_root}/{name}/stat")).start_ticks)
            except (OSError, ValueError, IndexError):
                continue
        return visible

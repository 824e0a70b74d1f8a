"""Who runs each GPU process: user and kernel name (comm) for NVML's PIDs, without reading the whole table.

The exporter labels per-process GPU memory with these; it looks only at the PIDs NVML reported (one
stat() each, the name only for the few it shows), and walks every process's NSpid only when one of
them is not visible here (a container).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from pth_top.sensors.pidns import NamespacePidMapper
from pth_top.sensors.procfs import UserNames, parse_stat, read_small_file


@dataclass(frozen=True, slots=True)
class ProcessOwner:
    """A GPU process as seen here: its PID in this namespace and its user name."""

    pid: int
    user: str


class GpuProcessOwners:
    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._user_names = UserNames()
        self._mapper = NamespacePidMapper(proc_root)
        self._known: dict[int, ProcessOwner] = {}

    def identify(self, nvml_pids: Iterable[int]) -> dict[int, ProcessOwner]:
        """NVML PID -> its owner here; PIDs that exited or are hidden from us are left out.

        An owner is kept while NVML keeps listing the PID: a GPU process's PID cannot be reused until NVML
        has stopped listing it, so only PIDs new since the previous call cost a stat().
        """
        owners: dict[int, ProcessOwner] = {}
        unseen = []
        for pid in set(nvml_pids):
            owner = self._known.get(pid) or self._owner(pid)
            if owner is None:
                unseen.append(pid)
            else:
                owners[pid] = owner
        if unseen:
            for nvml_pid, local_pid in self._mapper.map(unseen, self._visible_start_ticks()).items():
                owner = self._owner(local_pid)
                if owner is not None:
                    owners[nvml_pid] = owner
        self._known = owners
        return owners

    def comm(self, pid: int) -> str | None:
        """The kernel's name of process `pid` here (<= 15 chars, raw); None when it has exited."""
        try:
            return parse_stat(read_small_file(f"{self.proc_root}/{pid}/stat")).comm
        except (OSError, ValueError, IndexError):
            return None

    def _owner(self, pid: int) -> ProcessOwner | None:
        try:
            uid = os.stat(f"{self.proc_root}/{pid}").st_uid
        except OSError:
            return None
        return ProcessOwner(pid=pid, user=self._user_names(uid))

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

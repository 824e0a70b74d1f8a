"""Map NVML's PIDs (root PID namespace) to PIDs visible here, through `NSpid` in /proc/PID/status."""

from __future__ import annotations

from typing import Iterable


def read_nspid(proc_root: str, pid: int) -> tuple[int, ...]:
    """The PIDs of `pid` from this /proc's namespace inwards; () when unknown or exited."""
    try:
        with open(f"{proc_root}/{pid}/status", "rb") as status_file:
            for line in status_file:
                if line.startswith(b"NSpid:"):
                    return tuple(int(value) for value in line.split()[1:])
    except (OSError, ValueError):
        pass
    return ()


class NamespacePidMapper:
    """Finds which visible process a foreign PID belongs to; NSpid lines are cached per process."""

    def __init__(self, proc_root: str = "/proc") -> None:
        self.proc_root = proc_root
        self._nspid: dict[tuple[int, float], tuple[int, ...]] = {}

    def map(self, foreign_pids: Iterable[int], visible: dict[int, float]) -> dict[int, int]:
        """foreign PID -> visible PID, for the `foreign_pids` named in some visible process's NSpid.

        `visible` maps each visible PID to its start time, so a reused PID is read again.
        """
        wanted = set(foreign_pids)
        if not wanted:
            return {}
        mapping: dict[int, int] = {}
        live_keys = set()
        for pid, start in visible.items():
            key = (pid, start)
            live_keys.add(key)
            nspid = self._nspid.get(key)
            if nspid is None:
                nspid = self._nspid[key] = read_nspid(self.proc_root, pid)
            for value in nspid:
                if value in wanted and value != pid:
                    mapping.setdefault(value, pid)
        for key in [key for key in self._nspid if key not in live_keys]:
            del self._nspid[key]
        return mapping

"""Everything a doctor check reads, injectable so tests can script it."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pth_top.sensors.nvml import NvmlSession


@dataclass(frozen=True)
class ProbeOutcome:
    """The torch probe's JSON object, or the one-line reason there is none."""

    data: dict[str, Any] | None = None
    error: str | None = None
    skipped: bool = False


def _usable_cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _physical_core_count() -> int | None:
    import psutil

    return psutil.cpu_count(logical=False)


@dataclass
class DoctorContext:
    """Paths, NVML session, CPU counts and the torch probe that the checks look at.

    `probe_source` returns the probe's JSON (raising on failure); None means torch checks are skipped.
    """

    nvml: NvmlSession = field(default_factory=NvmlSession)
    proc_root: Path = Path("/proc")
    sys_root: Path = Path("/sys")
    dev_shm: Path = Path("/dev/shm")
    data_dir: Path = field(default_factory=Path.cwd)
    # False while data_dir is only the working directory (nobody named the data set's folder).
    data_dir_chosen: bool = False
    disk_usage: Callable[[str], Any] = shutil.disk_usage
    usable_cpu_count: Callable[[], int] = _usable_cpu_count
    physical_core_count: Callable[[], int | None] = _physical_core_count
    probe_source: Callable[[], dict[str, Any]] | None = None
    python: str = sys.executable
    python_chosen: bool = False
    cancel_probe: Callable[[], None] | None = None
    memo: dict[str, Any] = field(default_factory=dict)
    _probe_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def torch_probe(self) -> ProbeOutcome:
        """Run (once) and return the torch probe's outcome."""
        with self._probe_lock:
            outcome = self.memo.get("torch_probe")
            if outcome is None:
                outcome = self._run_probe()
                self.memo["torch_probe"] = outcome
            return outcome

    def cancel(self) -> None:
        """Stop a probe that is still running (the screen closed); its checks then could not run."""
        if self.cancel_probe is not None:
            self.cancel_probe()

    def _run_probe(self) -> ProbeOutcome:
        if self.probe_source is None:
            return ProbeOutcome(skipped=True, error="torch checks skipped (--no-torch)")
        try:
            data = self.probe_source()
        except Exception as error:  # ProbeError and anything a probe source raises
            return ProbeOutcome(error=str(error) or type(error).__name__)
        if data.get("error"):
            return ProbeOutcome(data=data, error=str(data["error"]))
        return ProbeOutcome(data=data)

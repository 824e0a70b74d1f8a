"""One call, one Snapshot of the whole machine: the only entry point the dashboard and CLI need."""

from __future__ import annotations

import threading
import time
from typing import Callable, Collection

from pth_top.sensors.cpu import CpuReader
from pth_top.sensors.disks import DiskReader
from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.gpu_health import GpuHealthReader
from pth_top.sensors.gpu_processes import NvmlProcess, read_gpu_processes
from pth_top.sensors.host import HostReader
from pth_top.sensors.job_energy import read_energy_counters
from pth_top.sensors.job_tracker import JobTracker
from pth_top.sensors.memory import read_memory
from pth_top.sensors.model import FilesystemUsage, JobSample, ProcessSample, Snapshot
from pth_top.sensors.network import NetworkReader
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.processes import ProcessReader
from pth_top.sensors.xid_events import XidEventWatcher, stop_and_join

FILESYSTEM_TTL_S = 5.0
# The Xid thread's longest NVML wait: how soon it sees `close()`.
XID_WAIT_MS = 250


class Sampler:
    """Reads host, CPU, memory, disks, network, GPUs and processes. Not thread-safe: use from one thread.

    Rates (disk, network, process CPU %) are deltas since the previous `sample()`; the first is zero.
    Jobs start on the second sample (the dashboard's first frame and one-off samples do not pay for them);
    `group_jobs=False` leaves them out.

    With `full_scan_every_s` (the recorder; the dashboard reads every process each sample), every process is
    read that often; in between only the GPU processes and `watched_pids` are, and `fresh_pids` names them:
    the other rows are as last read, so a process outside them shows its change up to that period late.
    """

    def __init__(
        self,
        nvml: NvmlSession | None = None,
        clock: Callable[[], float] = time.monotonic,
        proc_root: str = "/proc",
        include_loopback: bool = False,
        group_jobs: bool = True,
        full_scan_every_s: float | None = None,
    ) -> None:
        self.nvml = nvml if nvml is not None else NvmlSession(clock=clock)
        self._clock = clock
        self._host = HostReader(proc_root)
        self._cpu = CpuReader(clock)
        self._disks = DiskReader(clock)
        self._network = NetworkReader(clock, include_loopback=include_loopback)
        self._gpus = GpuReader(self.nvml, health=GpuHealthReader(self.nvml))
        self._samples_taken = 0
        self._xid_thread: threading.Thread | None = None
        self._processes = ProcessReader(proc_root, clock)
        self._filesystems = DiskReader.filesystems()
        self._filesystems_read_at = clock()
        self._jobs = JobTracker(proc_root, clock) if group_jobs else None
        self.full_scan_every_s = full_scan_every_s
        self._full_scan_at: float | None = None
        self.watched_pids: Collection[int] = ()
        # The PIDs whose rows the last sample read; None when it read every process.
        self.fresh_pids: frozenset[int] | None = None

    def sample(self) -> Snapshot:
        driver_version, cuda_version = self._gpus.driver_versions()
        gpus = self._gpus.sample()
        live_handles = [
            (slot.index, slot.handle) for slot in (self._gpus.slots or ()) if slot.handle is not None
        ]
        gpu_processes = read_gpu_processes(self.nvml, live_handles) if live_handles else []
        self._samples_taken += 1
        if self._samples_taken == 2 and live_handles:
            # Not for a one-off sample (`pth-top snapshot`, the dashboard's first frame): only a live view.
            self._start_xid_watcher()
        memory = read_memory()
        timestamp_s = time.time()
        processes = self._read_processes(memory.total_bytes, gpu_processes)
        jobs: tuple[JobSample, ...] = ()
        if self._jobs is not None and self._samples_taken >= 2:
            counters = read_energy_counters(self.nvml, live_handles)
            jobs = self._jobs.sample(processes, gpus, counters, timestamp_s)
        return Snapshot(
            timestamp_s=timestamp_s,
            host=self._host.sample(driver_version, cuda_version, self.nvml.unavailable_reason),
            cpu=self._cpu.sample(),
            memory=memory,
            disks=self._disks.io_rates(),
            filesystems=self._current_filesystems(),
            networks=self._network.sample(),
            gpus=gpus,
            processes=processes,
            jobs=jobs,
        )

    def _read_processes(self, memory_total_bytes: int, gpu_processes: list[NvmlProcess]) -> tuple[ProcessSample, ...]:
        now = self._clock()
        every_s = self.full_scan_every_s
        due = every_s is None or self._full_scan_at is None or now - self._full_scan_at >= every_s
        only = None if due else self.watched_pids
        processes = self._processes.sample(memory_total_bytes, gpu_processes, only)
        if self._processes.last_read_was_full:
            self._full_scan_at = now if every_s is not None else None
            self.fresh_pids = None
        else:
            self.fresh_pids = frozenset({*self.watched_pids, *(process.pid for process in processes
                                                                 if process.gpu_uses)})
        return processes

    def _current_filesystems(self) -> tuple[FilesystemUsage, ...]:
        now = self._clock()
        if now - self._filesystems_read_at >= FILESYSTEM_TTL_S:
            self._filesystems = DiskReader.filesystems()
            self._filesystems_read_at = now
        return self._filesystems

    def _start_xid_watcher(self) -> None:
        """Count Xid errors from now on, in a thread that waits on NVML events (where the GPUs report them)."""
        watcher = XidEventWatcher(self.nvml)
        slots = [slot for slot in (self._gpus.slots or ()) if slot.handle is not None]
        if not watcher.register((slot.index, slot.uuid, slot.handle) for slot in slots):
            watcher.close()
            return
        self._gpus.xid_watcher = watcher
        self._xid_thread = threading.Thread(target=watcher.run, args=(XID_WAIT_MS,), name="pth-top-xid", daemon=True)
        self._xid_thread.start()

    def xid_counts(self) -> dict[tuple[int, str], int]:
        """(GPU index, Xid label) -> Xid events seen since the watcher started; {} before it does."""
        watcher = self._gpus.xid_watcher
        return watcher.counts() if watcher is not None else {}

    def close(self) -> None:
        """Release NVML and the files kept open; the Sampler may not be used afterwards."""
        self._processes.close()
        self._gpus.close()
        watcher = self._gpus.xid_watcher
        if watcher is not None and self._xid_thread is not None and not stop_and_join(watcher, self._xid_thread):
            return  # still inside an NVML wait: leave NVML to the process exit rather than free it under the thread
        self.nvml.shutdown()

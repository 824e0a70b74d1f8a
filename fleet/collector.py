"""The exporter's one Collector: reads the sensors when Prometheus scrapes (no timer loop).

The HTTP server answers scrapes on several threads (two Prometheus replicas may scrape at once), so
one lock guards the sample; a scrape arriving within `reuse_s` of the last one gets that sample again.
"""

from __future__ import annotations

import platform
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from prometheus_client.core import Metric
from prometheus_client.registry import Collector, CollectorRegistry

from pth_top import __version__
from pth_top.fleet import DEFAULT_PROCESSES_PER_GPU
from pth_top.fleet.gpu_families import add_gpu, add_xid
from pth_top.fleet.host_families import add_host_info, add_host_metrics
from pth_top.fleet.metrics import FamilyBook
from pth_top.fleet.process_families import add_jobs, add_processes, compute_process_counts
from pth_top.sensors.gpu import GpuReader, decode_text
from pth_top.sensors.gpu_health import GpuHealth, GpuHealthReader
from pth_top.sensors.gpu_process_owners import GpuProcessOwners, ProcessOwner
from pth_top.sensors.gpu_processes import NvmlProcess, read_gpu_processes
from pth_top.sensors.host import HostReader
from pth_top.sensors.host_counters import HostCounterReader
from pth_top.sensors.job_tracker import GpuProcessTree, JobTracker
from pth_top.sensors.model import GpuProcessUse, GpuSample, JobSample, MaybeFloat
from pth_top.sensors.na import NA
from pth_top.sensors.nvml import GpuLostError, NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher

# Scrapes closer together than this share one sensor reading.
DEFAULT_REUSE_S = 0.5


@dataclass(frozen=True)
class ExportOptions:
    host_metrics: bool = False
    process_metrics: bool = True
    processes_per_gpu: int = DEFAULT_PROCESSES_PER_GPU
    proc_root: str = "/proc"
    reuse_s: float = DEFAULT_REUSE_S


class ExporterCollector(Collector):
    def __init__(
        self,
        session: NvmlSession,
        options: ExportOptions = ExportOptions(),
        xid_watcher: XidEventWatcher | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.options = options
        self.xid_watcher = xid_watcher
        self._clock = clock
        self._lock = threading.Lock()
        self._gpus = GpuReader(session)
        self._health = GpuHealthReader(session)
        self._owners = GpuProcessOwners(options.proc_root)
        self._process_tree = GpuProcessTree(options.proc_root)
        self._jobs = JobTracker(options.proc_root, clock)
        self._host = HostReader(options.proc_root)
        self._host_counters = HostCounterReader(clock) if options.host_metrics else None
        self._nvml_version: str | None = None
        self._last: tuple[float, list[Metric]] | None = None

    def describe(self) -> Iterable[Metric]:
        # Registering must not read NVML; the families are only known at scrape time.
        return []

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            now = self._clock()
            if self._last is None or now - self._last[0] >= self.options.reuse_s:
                self._last = (now, self._read())
            return list(self._last[1])

    def gpu_handles(self) -> list[tuple[int, str, object]]:
        """(index, uuid, handle) of every GPU answering now; reads the GPUs once if not yet done."""
        with self._lock:
            if self._gpus.slots is None:
                self._gpus.sample()
            return [(slot.index, slot.uuid, slot.handle) for slot in self._gpus.slots or () if slot.handle is not None]

    def _read(self) -> list[Metric]:
        started = time.perf_counter()
        book = FamilyBook()
        driver_version, cuda_version = self._gpus.driver_versions()
        gpus = self._gpus.sample()
        handles = {slot.index: slot.handle for slot in self._gpus.slots or () if slot.handle is not None}
        nvml_up = self.session.available and self._gpus.slots is not None
        gpu_processes = read_gpu_processes(self.session, list(handles.items())) if handles else []
        compute_counts = compute_process_counts(gpu_processes)
        energy_j: dict[int, MaybeFloat] = {}
        for gpu in gpus:
            health = self._read_health(gpu.index, handles.get(gpu.index), gpu) if not gpu.lost else None
            add_gpu(book, gpu, health, compute_counts.get(gpu.index, 0) if not gpu.lost else None)
            energy_j[gpu.index] = health.energy_joules if health is not None else NA
        if self.xid_watcher is not None:
            add_xid(book, gpus, self.xid_watcher.watched_gpus, self.xid_watcher.counts())
        if self.options.process_metrics and gpu_processes:
            owners = self._owners.identify(process.pid for process in gpu_processes)
            jobs = self._read_jobs(gpus, gpu_processes, owners, energy_j)
            add_processes(
                book, gpus, gpu_processes, owners, self._owners.comm, self.options.processes_per_gpu, jobs
            )
            add_jobs(book, jobs)
        host = self._host.sample(driver_version, cuda_version, self.session.unavailable_reason)
        add_host_info(book, host)
        if self._host_counters is not None:
            add_host_metrics(book, host, self._host_counters.sample(), self._host.boot_time_s)
        book.add("pth_top_build_info", (__version__, platform.python_version(), self._nvml_version_text()), 1)
        book.add("pth_top_nvml_up", (), nvml_up)
        book.add("pth_top_scrape_duration_seconds", (), time.perf_counter() - started)
        return list(book.families())

    def _read_jobs(
        self, gpus: tuple[GpuSample, ...], gpu_processes: list[NvmlProcess], owners: Mapping[int, ProcessOwner],
        energy_j: Mapping[int, MaybeFloat],
    ) -> tuple[JobSample, ...]:
        """The jobs of the GPU processes (grouped over them and their ancestors), with their energy."""
        uses: dict[int, list[GpuProcessUse]] = {}
        for process in gpu_processes:
            owner = owners.get(process.pid)
            if owner is not None:
                uses.setdefault(owner.pid, []).append(GpuProcessUse(
                    process.gpu_index, process.gpu_memory_used_bytes, process.kind, process.sm_util_percent,
                ))
        processes = self._process_tree.processes({pid: tuple(found) for pid, found in uses.items()})
        return self._jobs.sample(processes, gpus, energy_j, time.time())

    def _read_health(self, index: int, handle: object, gpu: object) -> GpuHealth | None:
        if handle is None:
            return None
        try:
            return self._health.read(
                index, handle, getattr(gpu, "ecc_enabled", NA), getattr(gpu, "nvlink_active_links", NA)
            )
        except GpuLostError:
            return None

    def _nvml_version_text(self) -> str:
        if self._nvml_version is None and self.session.available:
            try:
                version = self.session.call("nvmlSystemGetNVMLVersion", default=None)
            except GpuLostError:
                version = None
            self._nvml_version = decode_text(version) if version is not None else ""
        return self._nvml_version or ""


def make_registry(collector: ExporterCollector) -> CollectorRegistry:
    """A private registry: our collector plus the exporter's own process metrics (no GC/platform noise)."""
    from prometheus_client import ProcessCollector

    registry = CollectorRegistry(auto_describe=True)
    registry.register(collector)
    ProcessCollector(registry=registry)
    return registry

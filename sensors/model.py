"""Immutable snapshots of the machine. Units are in the field names; NA marks a missing reading.

These dataclasses are the contract between `sensors` (which fills them) and everything that reads
them: the dashboard, `pth-top snapshot --json`, the doctor and the build checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from pth_top.sensors.na import NA, NotApplicable, is_na

# A reading that may be missing on this machine.
MaybeFloat: TypeAlias = float | NotApplicable
MaybeInt: TypeAlias = int | NotApplicable
MaybeStr: TypeAlias = str | NotApplicable


@dataclass(frozen=True, slots=True)
class HostInfo:
    hostname: str
    uptime_s: float
    load_average_1m: MaybeFloat
    load_average_5m: MaybeFloat
    load_average_15m: MaybeFloat
    logical_cpu_count: int
    physical_cpu_count: MaybeInt
    cpu_model_name: str
    kernel: str
    nvidia_driver_version: MaybeStr = NA
    cuda_driver_version: MaybeStr = NA
    # Why no GPU data, in words ("no NVIDIA driver"), or None when NVML works.
    nvml_unavailable_reason: str | None = None


@dataclass(frozen=True, slots=True)
class CoreUsage:
    """One logical core over the last interval, in percent of that core."""

    index: int
    user_percent: float
    system_percent: float
    iowait_percent: float
    total_percent: float


@dataclass(frozen=True, slots=True)
class CpuSample:
    cores: tuple[CoreUsage, ...]
    total_percent: float
    frequency_mhz: MaybeFloat
    package_temperature_c: MaybeFloat


@dataclass(frozen=True, slots=True)
class MemorySample:
    total_bytes: int
    used_bytes: int
    buffers_cache_bytes: int
    available_bytes: int
    swap_total_bytes: int
    swap_used_bytes: int


@dataclass(frozen=True, slots=True)
class DiskIoRate:
    """A physical block device; rates from counter deltas since the previous sample."""

    device: str
    read_bytes_per_s: float
    write_bytes_per_s: float
    read_iops: float
    write_iops: float


@dataclass(frozen=True, slots=True)
class FilesystemUsage:
    mountpoint: str
    device: str
    fstype: str
    total_bytes: int
    used_bytes: int
    # Space unprivileged users can still write (statvfs f_bavail); root's reserve is not in it.
    free_bytes: int

    @property
    def used_percent(self) -> MaybeFloat:
        """Used share as `df` shows it: used / (used + available), so root's reserve counts as full."""
        usable = self.used_bytes + self.free_bytes
        return 100.0 * self.used_bytes / usable if usable > 0 else NA


@dataclass(frozen=True, slots=True)
class NetworkRate:
    interface: str
    rx_bytes_per_s: float
    tx_bytes_per_s: float


@dataclass(frozen=True, slots=True)
class MigInstance:
    """A MIG GPU instance under its parent GPU."""

    gpu_instance_id: MaybeInt
    name: str
    memory_used_bytes: MaybeInt
    memory_total_bytes: MaybeInt


@dataclass(frozen=True, slots=True)
class GpuSample:
    index: int
    name: str
    bus_id: str
    uuid: str
    # True when the GPU stopped answering (NVMLError_GpuIsLost / Unknown); other fields are then NA.
    lost: bool = False
    utilization_percent: MaybeFloat = NA
    memory_utilization_percent: MaybeFloat = NA
    memory_used_bytes: MaybeInt = NA
    memory_total_bytes: MaybeInt = NA
    temperature_c: MaybeFloat = NA
    fan_speed_percent: MaybeFloat = NA
    power_draw_w: MaybeFloat = NA
    power_limit_w: MaybeFloat = NA
    sm_clock_mhz: MaybeFloat = NA
    memory_clock_mhz: MaybeFloat = NA
    pstate: MaybeStr = NA
    pcie_generation_current: MaybeInt = NA
    pcie_generation_max: MaybeInt = NA
    pcie_width_current: MaybeInt = NA
    pcie_width_max: MaybeInt = NA
    pcie_rx_bytes_per_s: MaybeFloat = NA
    pcie_tx_bytes_per_s: MaybeFloat = NA
    ecc_enabled: bool | NotApplicable = NA
    ecc_volatile_uncorrected_errors: MaybeInt = NA
    throttle_reasons: tuple[str, ...] = ()
    nvlink_active_links: MaybeInt = NA
    mig_enabled: bool | NotApplicable = NA
    mig_instances: tuple[MigInstance, ...] = ()
    # Why temperature_c is NA, in words ("no sensor", "no permission"); NA when there is a reading.
    temperature_missing_reason: MaybeStr = NA
    # Xid errors (driver fault reports) since pth-top began watching; NA where the GPU reports no events.
    xid_errors: MaybeInt = NA
    # Memory repair (Ampere and newer): rows remapped so far (for correctable and uncorrectable errors),
    # a remap waiting for a GPU reset, a remap that failed (the GPU needs service). NA without row remapping.
    remapped_rows: MaybeInt = NA
    remapped_rows_pending: bool | NotApplicable = NA
    remapped_rows_failed: bool | NotApplicable = NA
    # Pages retired for ECC errors (single + double bit; pre-Ampere); NA where the GPU does not retire pages.
    retired_pages: MaybeInt = NA
    # NVML GPM (Hopper and newer): True when the GPU has it, False when not (then the fields below stay NA).
    gpm_supported: bool | NotApplicable = NA
    # What the SMs did over the last sample interval (GPM; NA on the first sample): share of SMs with a warp
    # resident (DCGM's SM_ACTIVE), resident warps / the most they hold, and cycles each pipe was busy.
    sm_active_ratio: MaybeFloat = NA
    sm_occupancy_ratio: MaybeFloat = NA
    tensor_active_ratio: MaybeFloat = NA
    tensor_hmma_active_ratio: MaybeFloat = NA
    fp64_active_ratio: MaybeFloat = NA
    fp32_active_ratio: MaybeFloat = NA
    fp16_active_ratio: MaybeFloat = NA
    dram_bandwidth_active_ratio: MaybeFloat = NA
    # PCIe and NVLink (all links) traffic averaged over the sample interval (GPM), not NVML's 20 ms window.
    gpm_pcie_tx_bytes_per_s: MaybeFloat = NA
    gpm_pcie_rx_bytes_per_s: MaybeFloat = NA
    nvlink_rx_bytes_per_s: MaybeFloat = NA
    nvlink_tx_bytes_per_s: MaybeFloat = NA

    @property
    def health_problems(self) -> tuple[str, ...]:
        """What is wrong with the GPU's health, in words; empty when nothing is."""
        problems = []
        if not is_na(self.xid_errors) and self.xid_errors > 0:
            problems.append(f"{self.xid_errors} Xid error{'s' if self.xid_errors != 1 else ''} since start")
        if self.remapped_rows_failed is True:
            problems.append("row remapping failed (GPU needs service)")
        if self.remapped_rows_pending is True:
            problems.append("row remap pending (reset the GPU)")
        if not is_na(self.retired_pages) and self.retired_pages > 0:
            problems.append(f"{self.retired_pages} retired page{'s' if self.retired_pages != 1 else ''}")
        return tuple(problems)

    @property
    def memory_percent(self) -> MaybeFloat:
        used, total = self.memory_used_bytes, self.memory_total_bytes
        if is_na(used) or is_na(total) or not total:
            return NA
        return 100.0 * used / total

    @property
    def pcie_link_degraded(self) -> bool:
        """True when the link runs below its maximum generation or width (can be idle power saving)."""
        pairs = (
            (self.pcie_generation_current, self.pcie_generation_max),
            (self.pcie_width_current, self.pcie_width_max),
        )
        return any(not is_na(cur) and not is_na(top) and cur < top for cur, top in pairs)


@dataclass(frozen=True, slots=True)
class GpuProcessUse:
    """One process's use of one GPU, as NVML reports it (PID already mapped to this namespace)."""

    gpu_index: int
    gpu_memory_used_bytes: MaybeInt
    kind: str  # "compute" or "graphics"
    # Streaming-multiprocessor utilisation by this process (NVML process samples); NA where unsupported (MIG).
    sm_util_percent: MaybeFloat = NA


@dataclass(frozen=True, slots=True)
class ProcessSample:
    pid: int
    ppid: int
    user: str
    cpu_percent: float
    memory_percent: float
    rss_bytes: int
    state: str
    # Unix time the process started; its running time is a snapshot's timestamp_s minus this.
    start_time_s: float
    command: str
    gpu_uses: tuple[GpuProcessUse, ...] = ()
    # CPU time used so far, user + system (htop's TIME+).
    cpu_time_s: float = 0.0
    # A kernel thread ([kworker/0:1] and the like), which htop-style views hide by default.
    is_kernel_thread: bool = False
    # Container or job from /proc/PID/cgroup: "docker:<12 hex>", "pod:<uid>", "slurm:<job id>"; "" otherwise.
    container: str = ""
    # The kernel's short name for it (comm, at most 15 characters); "" where unknown. No arguments, so no secrets.
    name: str = ""

    def running_time_s(self, at_s: float) -> float:
        """Seconds the process had been running at Unix time `at_s` (a snapshot's timestamp_s)."""
        return max(0.0, at_s - self.start_time_s)

    @property
    def has_gpu_context(self) -> bool:
        return bool(self.gpu_uses)

    @property
    def gpu_memory_used_bytes(self) -> MaybeInt:
        known = [use.gpu_memory_used_bytes for use in self.gpu_uses if not is_na(use.gpu_memory_used_bytes)]
        if not self.gpu_uses or not known:
            return NA
        return sum(known)

    @property
    def gpu_sm_util_percent(self) -> MaybeFloat:
        """SM utilisation summed over this process's GPUs (as CPU% sums cores); NA when no GPU reports it."""
        known = [use.sm_util_percent for use in self.gpu_uses if not is_na(use.sm_util_percent)]
        return float(sum(known)) if known else NA

    @property
    def gpu_indices(self) -> tuple[int, ...]:
        return tuple(sorted({use.gpu_index for use in self.gpu_uses}))


@dataclass(frozen=True, slots=True)
class JobSample:
    """Processes grouped into one job (sensors/jobs.py says how); GPU figures are the job's share of its GPUs."""

    # "torchrun" (TORCHELASTIC_RUN_ID, or its launcher's PID), "slurm", "pod" (Kubernetes pod UID),
    # "docker" / "container" (12-hex id), or "tree" (the PID of the process-tree root).
    kind: str
    job_id: str
    # The user of its earliest-started process.
    user: str
    pids: tuple[int, ...]
    gpu_indices: tuple[int, ...]
    gpu_memory_used_bytes: MaybeInt
    # Mean over its GPUs of their GPM SM active; NA without GPM.
    sm_active_ratio: MaybeFloat
    # Each GPU's power split equally among the jobs holding a context on it, summed over its GPUs.
    power_draw_w: MaybeFloat
    # Unix time its earliest process started.
    start_time_s: float
    # Its share of its GPUs' energy since pth-top first saw it (joules), and how: "counter" (NVML's
    # total-energy counter) or "power x time" (power integrated where a GPU has no counter); NA when neither.
    energy_j: MaybeFloat = NA
    energy_method: str = ""
    # Unix time pth-top first saw the job (energy counts from here).
    first_seen_s: float = 0.0
    # Its container from the cgroup path ("pod:<uid>/<container id>", "docker:<id>" ...), "" for none; a GPU
    # process's first.
    container: str = ""
    # Kubernetes namespace and pod name where its environment says (POD_NAMESPACE, POD_NAME), else "".
    namespace: str = ""
    pod_name: str = ""

    def running_time_s(self, at_s: float) -> float:
        """Seconds since its earliest process started, at Unix time `at_s`."""
        return max(0.0, at_s - self.start_time_s)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One sample of the whole machine."""

    timestamp_s: float
    host: HostInfo
    cpu: CpuSample
    memory: MemorySample
    disks: tuple[DiskIoRate, ...] = ()
    filesystems: tuple[FilesystemUsage, ...] = ()
    networks: tuple[NetworkRate, ...] = ()
    gpus: tuple[GpuSample, ...] = ()
    processes: tuple[ProcessSample, ...] = field(default=())
    # Jobs (sensors/jobs.py); empty on a sampler's first sample, which skips the job step.
    jobs: tuple[JobSample, ...] = ()

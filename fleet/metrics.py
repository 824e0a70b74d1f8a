"""Every metric `pth-top export` serves, declared once: name, type, labels and help, in base units.

Names are written as Prometheus shows them (counters end in `_total`). GPU series carry `gpu` and `uuid`
only, plus a bounded label where a family needs one; identity lives in the `_info` metrics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from pth_top.sensors.na import is_na
from pth_top.text import printable

GPU_LABELS = ("gpu", "uuid")
# Longest label value served: names and versions come from the driver and /proc, and one huge value would
# be sent, stored and indexed on every scrape.
MAX_LABEL_CHARS = 256


@dataclass(frozen=True)
class MetricSpec:
    name: str
    kind: str  # "gauge" or "counter"
    help: str
    labels: tuple[str, ...] = ()


def _gauge(name: str, help_text: str, labels: tuple[str, ...] = ()) -> MetricSpec:
    return MetricSpec(name, "gauge", help_text, labels)


def _counter(name: str, help_text: str, labels: tuple[str, ...] = ()) -> MetricSpec:
    return MetricSpec(name, "counter", help_text, labels)


G = GPU_LABELS
SPECS: dict[str, MetricSpec] = {spec.name: spec for spec in (
    _gauge("pth_top_build_info", "pth-top build, constant 1", ("version", "python_version", "nvml_version")),
    _gauge("pth_top_nvml_up", "1 when NVML started and answered this scrape, else 0"),
    _gauge("pth_top_scrape_duration_seconds", "Time this exporter took to read the sensors for this scrape"),
    _gauge("pth_top_host_info", "This host, constant 1",
           ("hostname", "kernel", "cpu_model", "nvidia_driver_version", "cuda_driver_version")),
    # GPU identity and state
    _gauge("pth_top_gpu_info", "A GPU's identity, constant 1", (*G, "name", "bus_id", "vbios")),
    _gauge("pth_top_gpu_lost", "1 when the GPU stopped answering NVML (GPU lost / unknown error)", G),
    _gauge("pth_top_gpu_utilization_ratio", "Fraction of the last sample period a kernel ran on the GPU", G),
    _gauge("pth_top_gpu_memory_utilization_ratio", "Fraction of the last sample period device memory was busy", G),
    _gauge("pth_top_gpu_memory_used_bytes", "Device memory in use", G),
    _gauge("pth_top_gpu_memory_total_bytes", "Device memory size", G),
    _gauge("pth_top_gpu_temperature_celsius", "GPU core temperature", G),
    _gauge("pth_top_gpu_memory_temperature_celsius", "GPU memory (HBM) temperature", G),
    _gauge("pth_top_gpu_fan_speed_ratio", "Fan speed as a fraction of its maximum", G),
    _gauge("pth_top_gpu_power_watts", "Power draw", G),
    _gauge("pth_top_gpu_power_limit_watts", "Enforced power limit", G),
    _counter("pth_top_gpu_energy_joules_total", "Energy used since the driver loaded", G),
    _gauge("pth_top_gpu_sm_clock_hertz", "SM clock", G),
    _gauge("pth_top_gpu_sm_clock_max_hertz", "Highest SM clock", G),
    _gauge("pth_top_gpu_memory_clock_hertz", "Memory clock", G),
    _gauge("pth_top_gpu_performance_state", "Performance state, 0 (P0, fastest) to 15", G),
    _gauge("pth_top_gpu_compute_processes", "Compute processes holding a context on the GPU", G),
    _gauge("pth_top_gpu_clocks_event_active", "1 while this reason holds the clocks down (throttle reason)",
           (*G, "reason")),
    _counter("pth_top_gpu_throttle_seconds_total", "Time the clocks were held down, by cause, since driver load",
             (*G, "reason")),
    # Activity from NVML GPM (Hopper and newer), over the interval since the previous scrape; absent without it.
    # Names mirror dcgm-exporter's DCGM_FI_PROF_* fields (SM_ACTIVE -> sm_active_ratio ...).
    _gauge("pth_top_gpu_gpm_supported", "1 when the GPU has GPM activity counters (Hopper and newer), else 0", G),
    _gauge("pth_top_gpu_sm_active_ratio", "Share of SMs with a warp resident (DCGM_FI_PROF_SM_ACTIVE)", G),
    _gauge("pth_top_gpu_sm_occupancy_ratio", "Resident warps over the most the SMs hold (DCGM_FI_PROF_SM_OCCUPANCY)",
           G),
    _gauge("pth_top_gpu_pipe_tensor_active_ratio", "Cycles any tensor pipe was busy (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE)",
           G),
    _gauge("pth_top_gpu_pipe_tensor_hmma_active_ratio",
           "Cycles the HMMA tensor pipe was busy (DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE)", G),
    _gauge("pth_top_gpu_pipe_fp64_active_ratio", "Cycles the FP64 pipe was busy (DCGM_FI_PROF_PIPE_FP64_ACTIVE)", G),
    _gauge("pth_top_gpu_pipe_fp32_active_ratio", "Cycles the FP32 pipe was busy (DCGM_FI_PROF_PIPE_FP32_ACTIVE)", G),
    _gauge("pth_top_gpu_pipe_fp16_active_ratio", "Cycles the FP16 pipe was busy (DCGM_FI_PROF_PIPE_FP16_ACTIVE)", G),
    _gauge("pth_top_gpu_dram_active_ratio", "Device memory bandwidth used over its peak (DCGM_FI_PROF_DRAM_ACTIVE)", G),
    _gauge("pth_top_gpu_prof_pcie_transmit_bytes_per_second",
           "PCIe bytes sent per second over the interval (DCGM_FI_PROF_PCIE_TX_BYTES)", G),
    _gauge("pth_top_gpu_prof_pcie_receive_bytes_per_second",
           "PCIe bytes received per second over the interval (DCGM_FI_PROF_PCIE_RX_BYTES)", G),
    _gauge("pth_top_gpu_prof_nvlink_transmit_bytes_per_second",
           "NVLink bytes sent per second, all links, over the interval (DCGM_FI_PROF_NVLINK_TX_BYTES)", G),
    _gauge("pth_top_gpu_prof_nvlink_receive_bytes_per_second",
           "NVLink bytes received per second, all links, over the interval (DCGM_FI_PROF_NVLINK_RX_BYTES)", G),
    # PCIe
    _gauge("pth_top_gpu_pcie_link_generation", "Current PCIe link generation", G),
    _gauge("pth_top_gpu_pcie_link_generation_max", "Highest PCIe link generation of GPU and slot", G),
    _gauge("pth_top_gpu_pcie_link_width", "Current PCIe link width in lanes", G),
    _gauge("pth_top_gpu_pcie_link_width_max", "Widest PCIe link of GPU and slot, in lanes", G),
    _gauge("pth_top_gpu_pcie_receive_bytes_per_second", "PCIe receive throughput (NVML's ~20 ms sample)", G),
    _gauge("pth_top_gpu_pcie_transmit_bytes_per_second", "PCIe transmit throughput (NVML's ~20 ms sample)", G),
    _counter("pth_top_gpu_pcie_replays_total", "PCIe replays (link-level retries)", G),
    # Memory health
    _gauge("pth_top_gpu_ecc_enabled", "1 when ECC is on", G),
    _counter("pth_top_gpu_ecc_errors_total", "ECC errors since the driver loaded (volatile)", (*G, "severity")),
    _gauge("pth_top_gpu_remapped_rows", "Memory rows remapped, by the severity of the errors that caused it",
           (*G, "severity")),
    _gauge("pth_top_gpu_row_remap_pending", "1 when a row remap waits for a GPU reset", G),
    _gauge("pth_top_gpu_row_remap_failed", "1 when a row remap failed (the GPU needs service)", G),
    _gauge("pth_top_gpu_retired_pages", "Memory pages retired, by cause (GPUs before Ampere)", (*G, "cause")),
    _gauge("pth_top_gpu_xid_events_watched", "1 when this exporter receives the GPU's Xid events", G),
    _counter("pth_top_gpu_xid_errors_total", "Xid errors reported by the driver since the exporter started",
             (*G, "xid")),
    # NVLink and MIG
    _gauge("pth_top_gpu_nvlink_links_active", "NVLink links up", G),
    _counter("pth_top_gpu_nvlink_transmit_bytes_total", "NVLink data transmitted, all links", G),
    _counter("pth_top_gpu_nvlink_receive_bytes_total", "NVLink data received, all links", G),
    _counter("pth_top_gpu_nvlink_errors_total", "NVLink errors, all links, by kind", (*G, "error")),
    _gauge("pth_top_gpu_mig_enabled", "1 when MIG mode is on", G),
    _gauge("pth_top_mig_memory_used_bytes", "Memory in use in a MIG GPU instance", (*G, "gpu_instance", "profile")),
    _gauge("pth_top_mig_memory_total_bytes", "Memory size of a MIG GPU instance", (*G, "gpu_instance", "profile")),
    # Processes
    _gauge("pth_top_process_gpu_memory_bytes", "GPU memory of a process (the largest few per GPU)",
           (*G, "pid", "user", "comm", "job_id", "job_kind", "pod", "namespace", "container")),
    _gauge("pth_top_user_gpu_memory_bytes", "GPU memory of all of a user's processes", (*G, "user")),
    _gauge("pth_top_job_gpu_memory_bytes", "GPU memory of a job's processes, all its GPUs", ("job_id", "kind", "user")),
    _counter("pth_top_job_energy_joules_total",
             "A job's share of its GPUs' energy since the exporter first saw it (GPUs shared equally)",
             ("job_id", "kind", "user")),
    # Host (--host-metrics)
    _counter("pth_top_host_cpu_seconds_total", "CPU time of all cores, by mode", ("mode",)),
    _gauge("pth_top_host_logical_cpus", "Logical CPUs"),
    _gauge("pth_top_host_load1", "Load average over 1 minute"),
    _gauge("pth_top_host_load5", "Load average over 5 minutes"),
    _gauge("pth_top_host_load15", "Load average over 15 minutes"),
    _gauge("pth_top_host_memory_total_bytes", "Physical memory"),
    _gauge("pth_top_host_memory_available_bytes", "Memory available without swapping"),
    _gauge("pth_top_host_swap_total_bytes", "Swap space"),
    _gauge("pth_top_host_swap_used_bytes", "Swap in use"),
    _counter("pth_top_host_network_receive_bytes_total", "Bytes received", ("device",)),
    _counter("pth_top_host_network_transmit_bytes_total", "Bytes transmitted", ("device",)),
    _counter("pth_top_host_disk_read_bytes_total", "Bytes read from a physical disk", ("device",)),
    _counter("pth_top_host_disk_written_bytes_total", "Bytes written to a physical disk", ("device",)),
    _gauge("pth_top_host_filesystem_size_bytes", "Filesystem size", ("mountpoint", "device", "fstype")),
    _gauge("pth_top_host_filesystem_avail_bytes", "Filesystem space available to users",
           ("mountpoint", "device", "fstype")),
    _gauge("pth_top_host_shm_size_bytes", "Size of /dev/shm"),
    _gauge("pth_top_host_shm_avail_bytes", "Space available in /dev/shm"),
    _gauge("pth_top_host_boot_time_seconds", "Boot time, Unix seconds"),
)}
del G


class FamilyBook:
    """Collects the samples of one scrape; a missing reading (NA/None) adds nothing, never a 0.

    Every label value passes through here: made printable and cut to MAX_LABEL_CHARS, whatever its family.
    """

    def __init__(self) -> None:
        self._samples: dict[str, dict[tuple[str, ...], float]] = {}

    def add(self, name: str, label_values: tuple[str, ...], value: object) -> None:
        spec = SPECS[name]
        if isinstance(value, str):
            raise TypeError(f"{name}: a value must be a number, got {value!r}")
        if value is None or is_na(value):
            return
        if len(label_values) != len(spec.labels):
            raise ValueError(f"{name} takes labels {spec.labels}, got {label_values}")
        labels = tuple(printable(label, MAX_LABEL_CHARS) for label in label_values)
        # Two label sets the cut made alike would be one series twice (a scrape error): the first stands.
        self._samples.setdefault(name, {}).setdefault(labels, float(value))  # type: ignore[arg-type]

    def families(self) -> Iterator[Metric]:
        """One family per metric that has samples, in the order SPECS declares them."""
        for name, spec in SPECS.items():
            samples = self._samples.get(name)
            if not samples:
                continue
            family: CounterMetricFamily | GaugeMetricFamily
            if spec.kind == "counter":
                family = CounterMetricFamily(name.removesuffix("_total"), spec.help, labels=spec.labels)
            else:
                family = GaugeMetricFamily(name, spec.help, labels=spec.labels)
            for label_values, value in samples.items():
                family.add_metric(list(label_values), value)
            yield family

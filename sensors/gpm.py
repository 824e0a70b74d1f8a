"""What the SMs do, from NVML GPM (GPU performance monitoring, Hopper and newer): SM active, tensor pipes...

GPM gives each metric over the interval between two samples, so one sample buffer per GPU is kept from
one reading to the next (two buffers per GPU, used in turn, freed by `forget` and `close`). Every call goes
through the reader's NvmlSession: no second session. A GPU that answers NotSupported is asked once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pth_top.sensors.na import NA
from pth_top.sensors.nvml import GpuLostError, NvmlSession
from pth_top.units import MIB

NVML_GPM_METRICS_GET_VERSION = 1
NVML_SUCCESS = 0


def _ratio(percent: float) -> float:
    return percent / 100.0


def _mib_per_s(value: float) -> float:
    return value * MIB


# GpuSample field <- (pynvml metric id, conversion to the field's unit). Ids as pynvml's NVML_GPM_METRIC_*.
GPM_FIELDS: dict[str, tuple[int, Callable[[float], float]]] = {
    "sm_active_ratio": (2, _ratio),  # SM_UTIL: share of SMs busy (DCGM's SM_ACTIVE)
    "sm_occupancy_ratio": (3, _ratio),  # SM_OCCUPANCY: resident warps / the most an SM holds
    "tensor_active_ratio": (5, _ratio),  # ANY_TENSOR_UTIL
    "tensor_hmma_active_ratio": (7, _ratio),  # HMMA_TENSOR_UTIL (FP16/BF16/TF32 matrix math)
    "fp64_active_ratio": (11, _ratio),
    "fp32_active_ratio": (12, _ratio),
    "fp16_active_ratio": (13, _ratio),
    "dram_bandwidth_active_ratio": (10, _ratio),  # DRAM_BW_UTIL
    "gpm_pcie_tx_bytes_per_s": (20, _mib_per_s),
    "gpm_pcie_rx_bytes_per_s": (21, _mib_per_s),
    "nvlink_rx_bytes_per_s": (60, _mib_per_s),
    "nvlink_tx_bytes_per_s": (61, _mib_per_s),
}
GPM_METRIC_IDS = tuple(metric_id for metric_id, _ in GPM_FIELDS.values())
NO_GPM_READING: dict[str, Any] = dict.fromkeys(GPM_FIELDS, NA)


@dataclass
class _GpuBuffers:
    """Two allocated sample buffers of one GPU; `previous` holds the last sample taken (None before one)."""

    buffers: tuple[Any, Any]
    previous: int | None = None


class GpmSampler:
    """Per-GPU GPM readings between consecutive `read` calls; NA where unsupported or not yet two samples."""

    def __init__(self, session: NvmlSession) -> None:
        self.session = session
        # GPU index -> True / False once asked (nvmlGpmQueryDeviceSupport).
        self.supported: dict[int, bool] = {}
        self._gpus: dict[int, _GpuBuffers] = {}
        self._request: Any = None

    def is_supported(self, index: int, handle: Any) -> bool:
        if index not in self.supported:
            support = self.session.call("nvmlGpmQueryDeviceSupport", handle, default=None)
            self.supported[index] = bool(getattr(support, "isSupportedDevice", 0))
        return self.supported[index]

    def read(self, index: int, handle: Any) -> dict[str, Any]:
        """The GpuSample GPM fields of one GPU since its previous read; raises GpuLostError (buffers freed)."""
        if not self.is_supported(index, handle):
            return NO_GPM_READING
        try:
            return self._read(index, handle)
        except GpuLostError:
            self.forget(index)
            raise

    def _read(self, index: int, handle: Any) -> dict[str, Any]:
        gpu = self._gpus.get(index)
        if gpu is None:
            gpu = self._allocate(index)
            if gpu is None:
                return NO_GPM_READING
        current = 0 if gpu.previous != 0 else 1
        if self.session.call("nvmlGpmSampleGet", handle, gpu.buffers[current], default=None) is None:
            if self.session.last_error_names.get("nvmlGpmSampleGet") == "NVMLError_NotSupported":
                # E.g. MIG mode on (GPM then samples per GPU instance): not this GPU's to give any more.
                self.forget(index)
                self.supported[index] = False
                return NO_GPM_READING
            # The interval is broken: start again from the next sample.
            gpu.previous = None
            return NO_GPM_READING
        previous, gpu.previous = gpu.previous, current
        if previous is None:
            return NO_GPM_READING
        return self._metrics(gpu.buffers[previous], gpu.buffers[current])

    def _allocate(self, index: int) -> _GpuBuffers | None:
        first = self._alloc()
        second = self._alloc() if first is not None else None
        if second is None:
            if first is not None:
                self._free(first)
            self.supported[index] = False
            return None
        self._gpus[index] = _GpuBuffers((first, second))
        return self._gpus[index]

    def _alloc(self) -> Any:
        """A sample buffer, or None; an allocation that fails says nothing about the GPU being lost."""
        try:
            return self.session.call("nvmlGpmSampleAlloc", default=None)
        except GpuLostError:
            return None

    def _metrics(self, older: Any, newer: Any) -> dict[str, Any]:
        request = self._metrics_request()
        if request is None:
            return NO_GPM_READING
        try:
            request.version = NVML_GPM_METRICS_GET_VERSION
            request.numMetrics = len(GPM_METRIC_IDS)
            request.sample1 = older
            request.sample2 = newer
            for position, metric_id in enumerate(GPM_METRIC_IDS):
                request.metrics[position].metricId = metric_id
        except (TypeError, ValueError, AttributeError):
            # This binding's struct or sample type is not the one we know (version skew): stop asking.
            self._request = None
            self.session.mark_missing("nvmlGpmMetricsGet")
            return NO_GPM_READING
        if self.session.call("nvmlGpmMetricsGet", request, default=None) is None:
            return NO_GPM_READING
        values = {}
        for position, (field, (metric_id, convert)) in enumerate(GPM_FIELDS.items()):
            metric = request.metrics[position]
            good = metric.metricId == metric_id and metric.nvmlReturn == NVML_SUCCESS and metric.value >= 0
            values[field] = convert(float(metric.value)) if good else NA
        return values

    def _metrics_request(self) -> Any:
        """One c_nvmlGpmMetricsGet_t (~19 KB) reused for every GPU and reading; None without one."""
        if self._request is None:
            struct = getattr(self.session.module, "c_nvmlGpmMetricsGet_t", None)
            self._request = struct() if isinstance(struct, type) else None
        return self._request

    def forget(self, index: int) -> None:
        """Free one GPU's buffers (it was lost or reset); it starts again at its next read."""
        gpu = self._gpus.pop(index, None)
        self.supported.pop(index, None)
        if gpu is not None:
            for buffer in gpu.buffers:
                self._free(buffer)

    def close(self) -> None:
        for index in list(self._gpus):
            self.forget(index)

    def _free(self, buffer: Any) -> None:
        try:
            self.session.call("nvmlGpmSampleFree", buffer, default=None)
        except GpuLostError:
            pass

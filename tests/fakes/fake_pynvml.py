"""A scripted stand-in for the pynvml module that raises the real `pynvml.NVMLError_*` classes.

Device readings live in a dict keyed by pynvml function name; a value may be a callable that takes the
call's extra arguments. A function with no value raises NVMLError_NotSupported, as on hardware that
lacks the field. `fail()` scripts an error for one function (on one device or all); `remove()` makes a
function vanish from the binding (AttributeError), as with an older nvidia-ml-py.

GPM (Hopper and newer): a device with `gpm_metrics` (metric id -> value over an interval) answers
nvmlGpmQueryDeviceSupport with isSupportedDevice=1; sample buffers are real `c_nvmlGpmSample_t` pointers
from nvmlGpmSampleAlloc, and nvmlGpmMetricsGet fills the real `c_nvmlGpmMetricsGet_t` with the values the
device held when the newer sample was taken (a metric id it lacks: nvmlReturn NOT_SUPPORTED). A device
without them (pre-Hopper) says isSupportedDevice=0 and nvmlGpmSampleGet raises NVMLError_NotSupported.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

import pynvml as real_pynvml


@dataclass
class FakeHandle:
    index: int
    # Set for a MIG device handle: its slot under the parent GPU `index`.
    mig_index: int | None = None

    def __hash__(self) -> int:
        return hash(("fake-handle", self.index, self.mig_index))


@dataclass
class FakeDevice:
    values: dict[str, Any] = field(default_factory=dict)
    # MIG devices by slot (None: empty slot), reached through nvmlDeviceGetMigDeviceHandleByIndex.
    mig_devices: list["FakeDevice | None"] = field(default_factory=list)
    # GPM metric id -> value (0-100, or MiB/s); None: no GPM (GPUs before Hopper).
    gpm_metrics: dict[int, float] | None = None


class FakePynvml:
    def __init__(
        self,
        devices: list[FakeDevice] | None = None,
        system_values: dict[str, Any] | None = None,
        init_error: type[BaseException] | None = None,
    ) -> None:
        self.devices = devices or []
        self.system_values = {
            "nvmlSystemGetDriverVersion": "550.54.15",
            "nvmlSystemGetCudaDriverVersion": 12040,
            "nvmlSystemGetCudaDriverVersion_v2": 12040,
            **(system_values or {}),
        }
        self.init_error = init_error
        self.calls: Counter[str] = Counter()
        self._failures: dict[tuple[str, int | None], BaseException | type[BaseException]] = {}
        self._removed: set[str] = set()
        self.initialised = False
        # Live GPM sample buffers: address -> (device index, metric values) once taken, None before.
        self.gpm_samples: dict[int, tuple[int, dict[int, float]] | None] = {}
        self._gpm_buffers: dict[int, Any] = {}

    def fail(
        self, function_name: str, error: BaseException | type[BaseException], device_index: int | None = None,
    ) -> None:
        self._failures[(function_name, device_index)] = error

    def clear_failures(self) -> None:
        self._failures.clear()

    def remove(self, function_name: str) -> None:
        self._removed.add(function_name)

    def __getattr__(self, name: str) -> Any:
        if name in self._removed:
            raise AttributeError(name)
        if name.startswith("nvml") and name[4:5].isupper():
            return self._make_function(name)
        return getattr(real_pynvml, name)

    def _raise_if_scripted(self, name: str, device_index: int | None) -> None:
        error = self._failures.get((name, device_index)) or self._failures.get((name, None))
        if error is None:
            return
        if isinstance(error, type) and issubclass(error, real_pynvml.NVMLError):
            raise error()
        raise error

    def _make_function(self, name: str) -> Callable[..., Any]:
        def function(*args: Any) -> Any:
            self.calls[name] += 1
            if name == "nvmlInit":
                self._raise_if_scripted(name, None)
                if self.init_error is not None:
                    raise self.init_error()
                self.initialised = True
                return None
            if not self.initialised and name != "nvmlShutdown":
                raise real_pynvml.NVMLError_Uninitialized()
            if name == "nvmlShutdown":
                self.initialised = False
                return None
            handle = args[0] if args and isinstance(args[0], FakeHandle) else None
            self._raise_if_scripted(name, handle.index if handle else None)
            if name.startswith("nvmlGpm"):
                return self._gpm(name, handle, args)
            if name == "nvmlDeviceGetCount":
                return len(self.devices)
            if name == "nvmlDeviceGetHandleByIndex":
                index = args[0]
                if not 0 <= index < len(self.devices):
                    raise real_pynvml.NVMLError_InvalidArgument()
                return FakeHandle(index)
            if name == "nvmlDeviceGetHandleByPciBusId":
                return self._handle_by_bus_id(args[0])
            if name == "nvmlDeviceGetMigDeviceHandleByIndex" and handle is not None:
                slots = self.devices[handle.index].mig_devices
                if not slots:
                    raise real_pynvml.NVMLError_NotSupported()
                if not 0 <= args[1] < len(slots) or slots[args[1]] is None:
                    raise real_pynvml.NVMLError_NotFound()
                return FakeHandle(handle.index, args[1])
            if handle is not None and handle.mig_index is not None:
                values = self.devices[handle.index].mig_devices[handle.mig_index].values
                rest = args[1:]
            elif handle is not None:
                values = self.devices[handle.index].values
                rest = args[1:]
            else:
                values = self.system_values
                rest = args
            if name not in values:
                raise real_pynvml.NVMLError_NotSupported()
            value = values[name]
            return value(*rest) if callable(value) else value

        function.__name__ = name
        return function

    def _gpm(self, name: str, handle: FakeHandle | None, args: tuple[Any, ...]) -> Any:
        device = self.devices[handle.index] if handle is not None else None
        if name == "nvmlGpmQueryDeviceSupport" and device is not None:
            return SimpleNamespace(version=1, isSupportedDevice=int(device.gpm_metrics is not None))
        if name == "nvmlGpmSampleAlloc":
            buffer = ctypes.pointer(real_pynvml.struct_c_nvmlGpmSample_t())
            self.gpm_samples[ctypes.addressof(buffer.contents)] = None
            self._gpm_buffers[ctypes.addressof(buffer.contents)] = buffer
            return buffer
        if name == "nvmlGpmSampleFree":
            self._gpm_buffers.pop(self._gpm_address(args[0]))
            del self.gpm_samples[self._gpm_address(args[0])]
            return None
        if name == "nvmlGpmSampleGet" and device is not None and handle is not None:
            if device.gpm_metrics is None:
                raise real_pynvml.NVMLError_NotSupported()
            self.gpm_samples[self._gpm_address(args[1])] = (handle.index, dict(device.gpm_metrics))
            return args[1]
        if name == "nvmlGpmMetricsGet":
            return self._gpm_metrics_get(args[0])
        raise real_pynvml.NVMLError_NotSupported()

    def _gpm_address(self, buffer: Any) -> int:
        address = ctypes.addressof(buffer.contents) if buffer else 0
        if address not in self.gpm_samples:
            raise real_pynvml.NVMLError_InvalidArgument()
        return address

    def _gpm_metrics_get(self, request: Any) -> Any:
        if request.version != real_pynvml.NVML_GPM_METRICS_GET_VERSION:
            raise real_pynvml.NVMLError_ArgumentVersionMismatch()
        older = self.gpm_samples[self._gpm_address(request.sample1)]
        newer = self.gpm_samples[self._gpm_address(request.sample2)]
        if older is None or newer is None or older[0] != newer[0]:
            raise real_pynvml.NVMLError_InvalidArgument()
        for position in range(request.numMetrics):
            metric = request.metrics[position]
            known = metric.metricId in newer[1]
            metric.nvmlReturn = real_pynvml.NVML_SUCCESS if known else real_pynvml.NVML_ERROR_NOT_SUPPORTED
            metric.value = newer[1].get(metric.metricId, 0.0)
        return request

    def _handle_by_bus_id(self, bus_id: bytes) -> FakeHandle:
        if not isinstance(bus_id, bytes):
            # pynvml hands the argument to ctypes.c_char_p, which takes bytes only.
            raise TypeError("bytes or integer address expected instead of str instance")
        wanted = bus_id.decode()
        for index, device in enumerate(self.devices):
            pci = device.values.get("nvmlDeviceGetPciInfo")
            if pci is not None and getattr(pci, "busId", None) == wanted:
                return FakeHandle(index)
        raise real_pynvml.NVMLError_NotFound()


def process_utilization(samples: list[tuple[int, int, int]]) -> Callable[[int], list[Any]]:
    """A scripted `nvmlDeviceGetProcessUtilization(handle, lastSeenTimeStamp)` for a FakeDevice's values.

    `samples` are (pid, timestamp in µs since the epoch, SM %). As the driver does, only samples newer than
    lastSeenTimeStamp come back, and none at all is NVMLError_NotFound. A device without this value raises
    NVMLError_NotSupported (MIG, boards without per-process accounting), like every missing reading.
    """

    def read(last_seen_us: int) -> list[Any]:
        newer = [
            SimpleNamespace(pid=pid, timeStamp=stamp_us, smUtil=sm_percent, memUtil=0, encUtil=0, decUtil=0)
            for pid, stamp_us, sm_percent in samples if stamp_us > last_seen_us
        ]
        if not newer:
            raise real_pynvml.NVMLError_NotFound()
        return newer

    return read

"""A scripted stand-in for the pynvml module that raises the real `pynvml.NVMLError_*` classes.

Device readings live in a dict keyed by pynvml function name; a value may be a callable that takes the
call's extra arguments. A function with no value raises NVMLError_NotSupported, as on hardware that
lacks the field. `fail()` scripts an error for one function (on one device or all); `remove()` makes a
function vanish from the binding (AttributeError), as with an older nvidia-ml-py.
"""

from __future__ import annotations

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

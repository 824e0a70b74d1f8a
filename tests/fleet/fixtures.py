"""Fake NVML machines for the exporter: the shared 8-GPU fixture plus the counters and health readings it reads.

`make_exporter_gpus(8)` adds to `make_fake_gpus(8)`: an energy counter, throttle (violation) time, PCIe
replays, corrected ECC errors, row remapping (GPU 2: one uncorrectable row, remap pending), HBM
temperature and NVLink bytes/errors through field values, the max SM clock, a VBIOS version, and an
Xid event queue (`XidQueue`). Retired pages stay unsupported (as on H100), and so does the fan.
"""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace
from typing import Any, Callable, Mapping, Sequence

import pynvml as real_pynvml

from tests.fakes.fake_pynvml import FakeHandle, FakePynvml
from tests.fakes.gpu_fixtures import by_argument, make_fake_gpus

NVML_SUCCESS = 0
NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3
NVML_FI_DEV_MEMORY_TEMP = 82
# Fixed energy when no clock is given (mJ since driver load).
ENERGY_BASE_MJ = 5_000_000_000
NVLINK_ERROR_FIELDS = {38: "crc_flit", 45: "crc_data", 52: "replay", 59: "recovery"}


def energy_mj(index: int) -> int:
    return ENERGY_BASE_MJ + index * 1_000_000


def violation_ns(index: int, policy: int) -> int:
    return (index + 1) * (policy + 1) * 1_500_000_000


def field_reader(index: int, nvlink: bool) -> Callable[[Sequence[int]], list[Any]]:
    values = {NVML_FI_DEV_MEMORY_TEMP: 45 + index}
    if nvlink:
        values |= {138: 1_000_000 + index, 139: 2_000_000 + index, 38: index, 45: 0, 52: 2 * index, 59: 0}

    def read(field_ids: Sequence[int]) -> list[Any]:
        return [
            SimpleNamespace(fieldId=field_id, valueType=NVML_VALUE_TYPE_UNSIGNED_LONG_LONG,
                            nvmlReturn=NVML_SUCCESS if field_id in values else 3,
                            value=SimpleNamespace(ullVal=values.get(field_id, 0)))
            for field_id in field_ids
        ]

    return read


class XidQueue:
    """Scripted Xid events: `push(gpu, code)`; a wait with none queued answers NVMLError_Timeout at once."""

    def __init__(self) -> None:
        self.events: deque[tuple[int, int]] = deque()
        self.registered: list[int] = []

    def push(self, gpu_index: int, code: int) -> None:
        self.events.append((gpu_index, code))

    def wait(self, _event_set: Any, _timeout_ms: int) -> Any:
        if not self.events:
            raise real_pynvml.NVMLError_Timeout()
        gpu_index, code = self.events.popleft()
        return SimpleNamespace(device=FakeHandle(gpu_index), eventType=0x8, eventData=code,
                               gpuInstanceId=0, computeInstanceId=0)


def make_exporter_gpus(
    count: int = 8,
    process_pids: Mapping[int, Sequence[int]] | None = None,
    xid_queue: XidQueue | None = None,
    wall_clock: Callable[[], float] | None = None,
) -> FakePynvml:
    """`count` fake H100s with everything the exporter reads; with `wall_clock`, energy grows at the power draw."""
    fake = make_fake_gpus(count, process_pids=process_pids)
    for index, device in enumerate(fake.devices):
        values = device.values
        if wall_clock is None:
            values["nvmlDeviceGetTotalEnergyConsumption"] = energy_mj(index)
        else:
            power_mw = values["nvmlDeviceGetPowerUsage"]
            values["nvmlDeviceGetTotalEnergyConsumption"] = (
                lambda power_mw=power_mw, index=index: energy_mj(index) + int(power_mw * wall_clock())
            )
        values["nvmlDeviceGetViolationStatus"] = (
            lambda policy, index=index: SimpleNamespace(referenceTime=0, violationTime=violation_ns(index, policy))
        )
        values["nvmlDeviceGetPcieReplayCounter"] = index * 3
        values["nvmlDeviceGetTotalEccErrors"] = by_argument({(1, 0): 2 if index == 5 else 0, (0, 0): 10 * index})
        values["nvmlDeviceGetRemappedRows"] = (index, 1 if index == 2 else 0, 1 if index == 2 else 0, 0)
        values["nvmlDeviceGetFieldValues"] = field_reader(index, nvlink="nvmlDeviceGetNvLinkState" in values)
        values["nvmlDeviceGetMaxClockInfo"] = by_argument({1: 1980})
        values["nvmlDeviceGetVbiosVersion"] = "96.00.89.00.01"
        if xid_queue is not None:
            values["nvmlDeviceRegisterEvents"] = (
                lambda _types, _event_set, index=index: xid_queue.registered.append(index)
            )
    if xid_queue is not None:
        fake.system_values["nvmlEventSetCreate"] = lambda: object()
        fake.system_values["nvmlEventSetWait_v2"] = xid_queue.wait
        fake.system_values["nvmlEventSetFree"] = lambda _event_set: None
    fake.system_values["nvmlSystemGetNVMLVersion"] = "12.550.54.15"
    return fake

"""Deterministic fake NVML machines: 1 to 16 H100- or A100-like GPUs with realistic readings.

`make_fake_gpus(8)` gives an 8x H100 SXM box: NVLink and ECC on, no fan reading (N/A), GPUs 0 and 6
power-capped, GPUs 3 and 7 idle in P8 with the PCIe link trained down to Gen1, GPU 5 with 2 volatile
uncorrected ECC errors. `make_fake_gpus(1, model="A100")` is a single A100 80GB PCIe card (no NVLink).
`enable_mig(fake, index)` puts one GPU in MIG mode with two instances.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable, Mapping, Sequence

import pynvml as real_pynvml

from pth_top.units import MIB
from tests.fakes.fake_pynvml import FakeDevice, FakePynvml

MODELS: dict[str, dict[str, Any]] = {
    "H100": {
        "name": "NVIDIA H100 80GB HBM3",
        "memory_total_bytes": 81559 * MIB,
        "power_limit_mw": 700_000,
        "pcie_generation_max": 5,
        "pcie_width_max": 16,
        "sm_clock_max_mhz": 1980,
        "memory_clock_mhz": 2619,
        "nvlink_links": 18,
        "bus_numbers": (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB),
    },
    "A100": {
        "name": "NVIDIA A100 80GB PCIe",
        "memory_total_bytes": 81920 * MIB,
        "power_limit_mw": 300_000,
        "pcie_generation_max": 4,
        "pcie_width_max": 16,
        "sm_clock_max_mhz": 1410,
        "memory_clock_mhz": 1512,
        "nvlink_links": 0,
        "bus_numbers": (0x17, 0x31, 0x4B, 0x65, 0xCA, 0xE3, 0xE4, 0xF1),
    },
}
# Throttle bits used below: idle (0x1) and SW power cap (0x4).
IDLE_BIT = 0x1
POWER_CAP_BIT = 0x4


def by_argument(mapping: Mapping[Any, Any]) -> Callable[..., Any]:
    """A fake reading that depends on the call's argument(s); unknown ones are NotSupported."""

    def read(*args: Any) -> Any:
        key = args[0] if len(args) == 1 else tuple(args)
        if key not in mapping:
            raise real_pynvml.NVMLError_NotSupported()
        return mapping[key]

    return read


def nvlink_state(active_links: int) -> Callable[[int], int]:
    def read(link: int) -> int:
        if link >= active_links:
            raise real_pynvml.NVMLError_InvalidArgument()
        return 1

    return read


def bus_id(model: str, index: int) -> str:
    numbers = MODELS[model]["bus_numbers"]
    bus = numbers[index] if index < len(numbers) else 0x100 - len(numbers) + index
    domain = index // 256
    return f"{domain:08X}:{bus % 256:02X}:00.0"


def make_fake_device(model: str, index: int, process_pids: Sequence[int] = ()) -> FakeDevice:
    spec = MODELS[model]
    idle = index % 4 == 3
    utilization = 0 if idle else 55 + (index * 13) % 45
    memory_used = (1 * 1024 if idle else 20_000 + (index * 7919) % 55_000) * MIB
    power_mw = 70_000 + index * 1_000 if idle else int(spec["power_limit_mw"] * (0.95 - (index % 3) * 0.2))
    throttle = IDLE_BIT if idle else (POWER_CAP_BIT if power_mw >= spec["power_limit_mw"] * 0.9 else 0)
    pcie_generation = 1 if idle else spec["pcie_generation_max"]
    values: dict[str, Any] = {
        "nvmlDeviceGetName": spec["name"],
        "nvmlDeviceGetUUID": f"GPU-{model.lower()}{index:02d}-0000-4000-8000-{index:012d}",
        "nvmlDeviceGetPciInfo": SimpleNamespace(busId=bus_id(model, index)),
        "nvmlDeviceGetUtilizationRates": SimpleNamespace(gpu=utilization, memory=utilization // 2),
        "nvmlDeviceGetMemoryInfo": SimpleNamespace(
            total=spec["memory_total_bytes"], used=memory_used, free=spec["memory_total_bytes"] - memory_used
        ),
        "nvmlDeviceGetTemperature": by_argument({0: 31 + index if idle else 58 + (index * 5) % 20}),
        "nvmlDeviceGetPowerUsage": power_mw,
        "nvmlDeviceGetEnforcedPowerLimit": spec["power_limit_mw"],
        "nvmlDeviceGetPowerManagementLimit": spec["power_limit_mw"],
        "nvmlDeviceGetClockInfo": by_argument({
            1: 345 if idle else spec["sm_clock_max_mhz"] - (index % 3) * 45,
            2: spec["memory_clock_mhz"],
        }),
        "nvmlDeviceGetPerformanceState": 8 if idle else 0,
        "nvmlDeviceGetCurrPcieLinkGeneration": pcie_generation,
        "nvmlDeviceGetMaxPcieLinkGeneration": spec["pcie_generation_max"],
        "nvmlDeviceGetCurrPcieLinkWidth": spec["pcie_width_max"],
        "nvmlDeviceGetMaxPcieLinkWidth": spec["pcie_width_max"],
        "nvmlDeviceGetPcieThroughput": by_argument({0: 0 if idle else 1_200_000 + index * 10_000,
                                                    1: 0 if idle else 3_400_000 + index * 10_000}),
        "nvmlDeviceGetEccMode": [1, 1],
        "nvmlDeviceGetTotalEccErrors": by_argument({(1, 0): 2 if index == 5 else 0}),
        "nvmlDeviceGetCurrentClocksEventReasons": throttle,
        "nvmlDeviceGetCurrentClocksThrottleReasons": throttle,
        "nvmlDeviceGetMigMode": [0, 0],
    }
    compute = [
        SimpleNamespace(pid=pid, usedGpuMemory=memory_used // max(1, len(process_pids)) - 512 * MIB)
        for pid in process_pids
    ]
    for suffix in ("_v3", "_v2", ""):
        values[f"nvmlDeviceGetComputeRunningProcesses{suffix}"] = compute
        values[f"nvmlDeviceGetGraphicsRunningProcesses{suffix}"] = []
    if spec["nvlink_links"]:
        values["nvmlDeviceGetNvLinkState"] = nvlink_state(spec["nvlink_links"])
    return FakeDevice(values=values)


def make_fake_gpus(
    count: int,
    model: str = "H100",
    process_pids: Mapping[int, Sequence[int]] | None = None,
) -> FakePynvml:
    """A FakePynvml with `count` GPUs of `model` ("H100" or "A100"); identical on every call.

    `process_pids` maps a GPU index to the PIDs NVML should report running on it (none by default).
    """
    if model not in MODELS:
        raise ValueError(f"unknown fake GPU model {model!r}; choose from {sorted(MODELS)}")
    pids = process_pids or {}
    return FakePynvml(
        devices=[make_fake_device(model, index, pids.get(index, ())) for index in range(count)],
        system_values={
            "nvmlSystemGetDriverVersion": "550.54.15",
            "nvmlSystemGetCudaDriverVersion": 12040,
            "nvmlSystemGetCudaDriverVersion_v2": 12040,
        },
    )


def enable_mig(fake: FakePynvml, gpu_index: int) -> FakePynvml:
    """Put one GPU of `fake` in MIG mode with two 3g.40gb instances (a third slot left empty)."""
    device = fake.devices[gpu_index]
    device.values["nvmlDeviceGetMigMode"] = [1, 1]
    device.values["nvmlDeviceGetMaxMigDeviceCount"] = 3
    device.mig_devices = [
        FakeDevice(values={
            "nvmlDeviceGetName": f"{device.values['nvmlDeviceGetName']} MIG 3g.40gb",
            "nvmlDeviceGetGpuInstanceId": instance_id,
            "nvmlDeviceGetMemoryInfo": SimpleNamespace(total=40192 * MIB, used=used_mib * MIB,
                                                       free=(40192 - used_mib) * MIB),
        })
        for instance_id, used_mib in ((1, 12_000), (2, 300))
    ] + [None]
    return fake

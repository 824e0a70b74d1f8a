"""Fake NVML machines built from real `nvidia-smi -q` outputs published in open-source repositories
(8 x H100 SXM, 4 x A100 SXM4, 10 x A40, an A10 twice, 3 of 9 RTX A6000s) and recorded by this repository
(one H200 in a VM: tests/fakes/recorded/h200).

The values are as they were on those machines (idle servers); each machine names its origin. A field
`nvidia-smi` printed as N/A is left out, so the fake answers NVMLError_NotSupported for it, as the
driver did. `nvidia-smi -q` does not print NVLink state: SXM boards get their links from the board's
specification (noted), PCIe cards none. `make_real_machine("h100_sxm_x8")` gives the FakePynvml.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from pth_top.units import MIB
from tests.fakes import gpm_profiles
from tests.fakes.fake_pynvml import FakeDevice, FakePynvml
from tests.fakes.gpu_fixtures import by_argument, nvlink_state

# nvmlClocksEventReason bits seen in these outputs.
IDLE = 0x1
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
HW_POWER_BRAKE = 0x80
NVML_VALUE_TYPE_UNSIGNED_INT = 1
NVML_FI_DEV_MEMORY_TEMP = 82


@dataclass(frozen=True)
class RealBoard:
    """What every GPU of one machine shares."""

    origin: str
    driver_version: str
    cuda_version: int  # NVML's integer: 12.7 -> 12070
    name: str
    vbios: str
    memory_total_mib: int
    power_limit_w: float
    pcie_generation_max: int
    pcie_width_max: int
    sm_clock_max_mhz: int
    pstate: int
    memory_clock_mhz: int
    fan_percent: int | None  # None: "Fan Speed : N/A"
    nvlink_links: int  # 0: no NVLink
    mig_supported: bool  # False: "MIG Mode : N/A"
    bar1_total_mib: int
    power_limit_min_w: float
    # nvmlTemperatureThresholds_t -> °C: 0 shutdown, 1 slowdown, 2 memory max, 3 GPU max; absent where N/A.
    temperature_thresholds_c: tuple[tuple[int, int], ...] = ()
    # GPM metrics while the machine was recorded (Hopper and newer); None: the GPU has no GPM.
    gpm_metrics: dict[int, float] | None = None


@dataclass(frozen=True)
class RealGpu:
    """What one GPU of the machine read; remapped rows are (correctable, uncorrectable, pending, failed)."""

    bus_id: str
    uuid: str
    temperature_c: int
    power_draw_w: float
    sm_clock_mhz: int
    pcie_generation: int
    tx_kb_per_s: int
    rx_kb_per_s: int
    replays: int
    clocks_event_mask: int
    remapped_rows: tuple[int, int, int, int]
    memory_temperature_c: int | None = None  # None: "Memory Current Temp : N/A" (GDDR boards)
    ecc_volatile_corrected: int = 0
    # NVML's used memory (nvmlDeviceGetMemoryInfo: total - free); the published outputs print "Used : 1 MiB".
    memory_used_mib: int = 1


# thamada/nvidia-smi nvsim/H100SXMx8_smi.py (nvidia-smi -a, Thu Nov 14 2024): 8 x H100 SXM5, idle at P0.
H100_SXM_X8 = (
    RealBoard(
        origin="thamada/nvidia-smi nvsim/H100SXMx8_smi.py", driver_version="565.57.01", cuda_version=12070,
        name="NVIDIA H100 80GB HBM3", vbios="96.00.74.00.01", memory_total_mib=81559, power_limit_w=700.0,
        pcie_generation_max=5, pcie_width_max=16, sm_clock_max_mhz=1980, pstate=0, memory_clock_mhz=2619,
        fan_percent=None,
        nvlink_links=18,  # not in -q; H100 SXM5 has 18 NVLink 4 links (Fabric State: Completed, Success)
        mig_supported=True, bar1_total_mib=131072, power_limit_min_w=200.0,
        # Thresholds printed as T.Limit offsets (-8 C, -2 C), no absolute values: left N/A.
        gpm_metrics=gpm_profiles.IDLE,  # 0 % utilisation: no SM, pipe or link activity
    ),
    (
        RealGpu("00000000:18:00.0", "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1",
                30, 100.89, 345, 5, 567, 559, 7, IDLE, (0, 0, 0, 0), 36),
        RealGpu("00000000:2A:00.0", "GPU-7c3cadbd-17e5-0913-f69b-c618122ea0cd",
                30, 82.81, 345, 5, 555, 3874, 0, IDLE, (0, 0, 0, 0), 36),
        RealGpu("00000000:3A:00.0", "GPU-2d50cdf6-dd67-9f2e-855e-0d4d6d395a2f",
                31, 85.98, 345, 5, 574, 535, 0, IDLE, (0, 0, 0, 0), 38),
        RealGpu("00000000:5D:00.0", "GPU-d1838e76-90e6-4408-711d-aeeaa2e1fd14",
                29, 85.48, 345, 5, 565, 463, 0, IDLE, (0, 0, 0, 0), 37),
        RealGpu("00000000:9A:00.0", "GPU-72be6e5d-3c1b-0d37-98ac-d3ef159f2589",
                28, 84.94, 345, 5, 617, 567, 0, IDLE, (0, 0, 0, 0), 36),
        RealGpu("00000000:AB:00.0", "GPU-52378fbc-3124-3895-13b6-1dd179563e0f",
                30, 85.27, 345, 5, 3534, 551, 4, IDLE, (0, 0, 0, 0), 38),
        RealGpu("00000000:BA:00.0", "GPU-83a5aebb-b71c-c570-aa83-185e1233fe97",
                29, 86.05, 345, 5, 638, 553, 15, IDLE, (0, 0, 0, 0), 37),
        RealGpu("00000000:DB:00.0", "GPU-33135771-a848-ece1-b61e-489e221d663c",
                29, 75.09, 345, 5, 658, 604, 0, IDLE, (0, 0, 0, 0), 36),
    ),
)

# thamada/nvidia-smi gls/A100SXMx4_smi.py (nvidia-smi -a, Thu Nov 14 2024): 4 x A100-SXM4-80GB; GPU 1 has
# 353 corrected DRAM errors and a correctable row remap pending (waiting for a GPU reset).
A100_SXM4_X4 = (
    RealBoard(
        origin="thamada/nvidia-smi gls/A100SXMx4_smi.py", driver_version="555.42.02", cuda_version=12050,
        name="NVIDIA A100-SXM4-80GB", vbios="92.00.9E.00.02", memory_total_mib=81920, power_limit_w=500.0,
        pcie_generation_max=4, pcie_width_max=16, sm_clock_max_mhz=1410, pstate=0, memory_clock_mhz=1593,
        fan_percent=None,
        nvlink_links=12,  # not in -q; A100 SXM4 has 12 NVLink 3 links
        mig_supported=True, bar1_total_mib=131072, power_limit_min_w=100.0,
        temperature_thresholds_c=((0, 92), (1, 89), (2, 95), (3, 85)),
    ),
    (
        RealGpu("00000000:68:00.0", "GPU-31515c3d-1414-7c2c-004a-f86a898946ac",
                25, 59.77, 210, 4, 0, 0, 0, IDLE, (0, 0, 0, 0), 43),
        RealGpu("00000000:9E:00.0", "GPU-72d87681-01db-370e-567d-41afcf20fad0",
                22, 60.31, 210, 4, 0, 0, 0, IDLE, (1, 0, 1, 0), 41,
                ecc_volatile_corrected=353),
        RealGpu("00000000:C2:00.0", "GPU-62989189-9e1e-ac75-4676-114f14998542",
                23, 58.78, 210, 4, 0, 0, 0, IDLE, (1, 0, 0, 0), 40),
        RealGpu("00000000:D4:00.0", "GPU-011b2cfe-2b8e-1cb0-19e1-1b764e854dfc",
                23, 62.21, 930, 4, 0, 0, 0, IDLE, (0, 0, 0, 0), 39),
    ),
)

# thamada/nvidia-smi nvsim/A40x10_smi.py (nvidia-smi -a, Thu Nov 14 2024): 10 x A40 (passive, reports fan 0 %),
# idle in P8 with SM clock 0 MHz and the link at Gen1; GPUs 0 and 3 report "SW Power Cap" at ~25 W of 300 W.
A40_X10 = (
    RealBoard(
        origin="thamada/nvidia-smi nvsim/A40x10_smi.py", driver_version="550.127.05", cuda_version=12040,
        name="NVIDIA A40", vbios="94.02.5C.00.03", memory_total_mib=46068, power_limit_w=300.0,
        pcie_generation_max=4, pcie_width_max=16, sm_clock_max_mhz=1740, pstate=8, memory_clock_mhz=405,
        fan_percent=0, nvlink_links=0, mig_supported=False, bar1_total_mib=65536, power_limit_min_w=100.0,
        temperature_thresholds_c=((0, 98), (1, 95), (3, 88)),
    ),
    (
        RealGpu("00000000:4F:00.0", "GPU-4e65de01-972e-93cf-b077-181a5378972a",
                29, 29.70, 0, 1, 500, 400, 0, SW_POWER_CAP, (2, 0, 0, 0)),
        RealGpu("00000000:52:00.0", "GPU-8c45994a-7fe3-4f26-b7e9-4d496ae2d5cf",
                30, 24.44, 0, 1, 450, 450, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:53:00.0", "GPU-0434566c-52a9-43e0-b8be-672175746d87",
                27, 15.09, 0, 1, 550, 500, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:56:00.0", "GPU-b60642c3-5e0a-4748-ffa6-75a20ab8724f",
                29, 24.94, 0, 1, 500, 400, 0, SW_POWER_CAP, (0, 0, 0, 0)),
        RealGpu("00000000:57:00.0", "GPU-2b37f9cd-608d-97bb-d26f-cee5857f4130",
                30, 24.63, 0, 1, 500, 450, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:CE:00.0", "GPU-1003dfb9-5321-b26d-f6a4-6077b646fa08",
                29, 30.71, 0, 1, 500, 400, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:D1:00.0", "GPU-f3b9d97b-0c14-0a69-4aa7-d329589a12b1",
                29, 15.70, 0, 1, 550, 450, 0, IDLE, (1, 0, 0, 0)),
        RealGpu("00000000:D2:00.0", "GPU-87b8a4d2-777d-b7ce-8bfc-cf7a6649b771",
                29, 30.30, 0, 1, 500, 400, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:D5:00.0", "GPU-915ea693-8f25-c910-82ed-c9cceb00a045",
                29, 15.69, 0, 1, 550, 450, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:D6:00.0", "GPU-c373ab5a-5eab-b35c-02ee-e76e8b7f0853",
                29, 15.85, 0, 1, 550, 500, 0, IDLE, (1, 0, 0, 0)),
    ),
)

# leptonai/gpud e2e/mock/nvidia-smi/test_data.go (NormalQueryOutput, Wed Jan 22 2025): one A10 passed through
# to a VM, idle in P8. HWSlowdownQueryOutput of the same file: the same card with HW slowdown and power brake.
A10_BOARD = RealBoard(
    origin="leptonai/gpud e2e/mock/nvidia-smi/test_data.go", driver_version="550.127.05", cuda_version=12040,
    name="NVIDIA A10", vbios="94.02.91.00.03", memory_total_mib=23028, power_limit_w=150.0,
    pcie_generation_max=4, pcie_width_max=16, sm_clock_max_mhz=1695, pstate=8, memory_clock_mhz=405,
    fan_percent=0, nvlink_links=0, mig_supported=False, bar1_total_mib=32768, power_limit_min_w=100.0,
    temperature_thresholds_c=((0, 101), (1, 98), (3, 91)),
)
A10_GPU = RealGpu("00000000:06:00.0", "GPU-51ae0086-e1ac-4a20-f062-9caa44e4df6d",
                  33, 21.30, 210, 1, 1200, 500, 0, IDLE, (0, 0, 0, 0))
A10 = (A10_BOARD, (A10_GPU,))
A10_HW_SLOWDOWN = (A10_BOARD, (replace(A10_GPU, clocks_event_mask=IDLE | HW_SLOWDOWN | HW_POWER_BRAKE),))

# thamada/gls gls/RTX_A6000_x9_smi.py (nvidia-smi -a, Wed Nov 20 2024): the first 3 of 9 RTX A6000s (the
# -q sections read), blower fans at 30 %, idle in P8 at SM 0 MHz; GPU 2 reports "SW Power Cap" at 23 W.
RTX_A6000_FIRST3_OF_9 = (
    RealBoard(
        origin="thamada/gls gls/RTX_A6000_x9_smi.py", driver_version="550.127.05", cuda_version=12040,
        name="NVIDIA RTX A6000", vbios="94.02.5C.00.02", memory_total_mib=46068, power_limit_w=300.0,
        pcie_generation_max=4, pcie_width_max=16, sm_clock_max_mhz=2100, pstate=8, memory_clock_mhz=405,
        fan_percent=30, nvlink_links=0, mig_supported=False, bar1_total_mib=65536, power_limit_min_w=100.0,
        temperature_thresholds_c=((0, 98), (1, 95), (3, 93)),
    ),
    (
        RealGpu("00000000:4F:00.0", "GPU-880b8a57-8586-fe40-bec5-fb703f80ffe6",
                28, 24.69, 0, 1, 0, 150, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:52:00.0", "GPU-588b70bd-7af1-b8d2-f0a9-d8af8d063f30",
                29, 18.67, 0, 1, 0, 100, 0, IDLE, (0, 0, 0, 0)),
        RealGpu("00000000:53:00.0", "GPU-9f432315-e4ef-f5e1-ab74-dfd8887bd00c",
                28, 23.29, 0, 1, 50, 50, 0, SW_POWER_CAP, (0, 0, 0, 0)),
    ),
)

# This repository's own recording: tests/fakes/recorded/h200/nvidia-smi-q.txt (Fri Dec 4 2026, written by
# tests/perf/gpu_check.sh before its workloads): one H200 passed through to a Firecracker VM, idle at P0 with
# SM 345 MHz. "Used : 0 MiB" there excludes the 616 MiB "Reserved"; NVML's used (total - free) is 143771 -
# 143156 = 615 MiB, as pth-top's snapshot of the idle GPU read (615.06 MiB; the run's snapshot.json, not kept).
# Thresholds are printed as T.Limit offsets only (left N/A). In the VM NVLink state is not readable (the
# recorded snapshots have nvlink_active_links null), so no links. Power: "Average Power Draw" (NVML's power
# usage on Hopper).
H200_X1 = (
    RealBoard(
        origin="this repository: tests/fakes/recorded/h200 (tests/perf/gpu_check.sh)",
        driver_version="580.159.04", cuda_version=13000,
        name="NVIDIA H200", vbios="96.00.A5.00.1A", memory_total_mib=143771, power_limit_w=700.0,
        pcie_generation_max=5, pcie_width_max=16, sm_clock_max_mhz=1980, pstate=0, memory_clock_mhz=3201,
        fan_percent=None, nvlink_links=0, mig_supported=True, bar1_total_mib=262144, power_limit_min_w=200.0,
        # The idle-context capture (a CUDA context held, no kernel): every pipe 0, PCIe chatter only.
        gpm_metrics=gpm_profiles.H200_IDLE_CONTEXT,
    ),
    (
        RealGpu("00000000:00:06.0", "GPU-c231345f-e0dc-2d72-6578-ebdc2654da19",
                38, 79.25, 345, 5, 938, 567, 0, IDLE, (0, 0, 0, 0), 41, memory_used_mib=615),
    ),
)

REAL_MACHINES: dict[str, tuple[RealBoard, tuple[RealGpu, ...]]] = {
    "h100_sxm_x8": H100_SXM_X8,
    "a100_sxm4_x4": A100_SXM4_X4,
    "a40_x10": A40_X10,
    "a10": A10,
    "a10_hw_slowdown": A10_HW_SLOWDOWN,
    "rtx_a6000_first3": RTX_A6000_FIRST3_OF_9,
    "h200_x1": H200_X1,
}


def field_values(memory_temperature_c: int | None) -> Any:
    """nvmlDeviceGetFieldValues: the HBM temperature where the board reports one, NotSupported (3) otherwise."""

    def read(field_ids: Any) -> list[Any]:
        return [
            SimpleNamespace(
                fieldId=field_id, valueType=NVML_VALUE_TYPE_UNSIGNED_INT,
                nvmlReturn=0 if field_id == NVML_FI_DEV_MEMORY_TEMP and memory_temperature_c is not None else 3,
                value=SimpleNamespace(uiVal=memory_temperature_c or 0),
            )
            for field_id in field_ids
        ]

    return read


def real_device(board: RealBoard, gpu: RealGpu) -> FakeDevice:
    total = board.memory_total_mib * MIB
    used = gpu.memory_used_mib * MIB  # no processes
    values: dict[str, Any] = {
        "nvmlDeviceGetName": board.name,
        "nvmlDeviceGetUUID": gpu.uuid,
        "nvmlDeviceGetPciInfo": SimpleNamespace(busId=gpu.bus_id),
        "nvmlDeviceGetVbiosVersion": board.vbios,
        "nvmlDeviceGetUtilizationRates": SimpleNamespace(gpu=0, memory=0),
        "nvmlDeviceGetMemoryInfo": SimpleNamespace(total=total, used=used, free=total - used),
        "nvmlDeviceGetTemperature": by_argument({0: gpu.temperature_c}),
        "nvmlDeviceGetPowerUsage": round(gpu.power_draw_w * 1000),
        "nvmlDeviceGetEnforcedPowerLimit": round(board.power_limit_w * 1000),
        "nvmlDeviceGetPowerManagementLimit": round(board.power_limit_w * 1000),
        "nvmlDeviceGetPowerManagementDefaultLimit": round(board.power_limit_w * 1000),
        "nvmlDeviceGetPowerManagementLimitConstraints": [
            round(board.power_limit_min_w * 1000), round(board.power_limit_w * 1000),
        ],
        "nvmlDeviceGetBAR1MemoryInfo": SimpleNamespace(bar1Total=board.bar1_total_mib * MIB, bar1Used=MIB,
                                                       bar1Free=(board.bar1_total_mib - 1) * MIB),
        "nvmlDeviceGetPersistenceMode": 1,  # "Persistence Mode : Enabled"
        "nvmlDeviceGetComputeMode": 0,  # "Compute Mode : Default"
        "nvmlDeviceGetClockInfo": by_argument({1: gpu.sm_clock_mhz, 2: board.memory_clock_mhz}),
        "nvmlDeviceGetMaxClockInfo": by_argument({1: board.sm_clock_max_mhz}),
        "nvmlDeviceGetPerformanceState": board.pstate,
        "nvmlDeviceGetCurrPcieLinkGeneration": gpu.pcie_generation,
        "nvmlDeviceGetMaxPcieLinkGeneration": board.pcie_generation_max,
        "nvmlDeviceGetGpuMaxPcieLinkGeneration": board.pcie_generation_max,
        "nvmlDeviceGetCurrPcieLinkWidth": board.pcie_width_max,
        "nvmlDeviceGetMaxPcieLinkWidth": board.pcie_width_max,
        "nvmlDeviceGetPcieThroughput": by_argument({0: gpu.tx_kb_per_s, 1: gpu.rx_kb_per_s}),
        "nvmlDeviceGetPcieReplayCounter": gpu.replays,
        "nvmlDeviceGetEccMode": [1, 1],
        "nvmlDeviceGetTotalEccErrors": by_argument({(1, 0): 0, (0, 0): gpu.ecc_volatile_corrected}),
        "nvmlDeviceGetRemappedRows": gpu.remapped_rows,
        "nvmlDeviceGetCurrentClocksEventReasons": gpu.clocks_event_mask,
        "nvmlDeviceGetCurrentClocksThrottleReasons": gpu.clocks_event_mask,
        "nvmlDeviceGetFieldValues": field_values(gpu.memory_temperature_c),
    }
    if board.temperature_thresholds_c:
        values["nvmlDeviceGetTemperatureThreshold"] = by_argument(dict(board.temperature_thresholds_c))
    if board.fan_percent is not None:
        values["nvmlDeviceGetFanSpeed"] = board.fan_percent
    if board.mig_supported:
        values["nvmlDeviceGetMigMode"] = [0, 0]
    if board.nvlink_links:
        values["nvmlDeviceGetNvLinkState"] = nvlink_state(board.nvlink_links)
    for suffix in ("_v3", "_v2", ""):
        values[f"nvmlDeviceGetComputeRunningProcesses{suffix}"] = []
        values[f"nvmlDeviceGetGraphicsRunningProcesses{suffix}"] = []
    return FakeDevice(values=values, gpm_metrics=dict(board.gpm_metrics) if board.gpm_metrics is not None else None)


def make_real_machine(name: str) -> FakePynvml:
    """A FakePynvml answering as the machine `name` of REAL_MACHINES did; identical on every call."""
    board, gpus = REAL_MACHINES[name]
    return FakePynvml(
        devices=[real_device(board, gpu) for gpu in gpus],
        system_values={
            "nvmlSystemGetDriverVersion": board.driver_version,
            "nvmlSystemGetCudaDriverVersion": board.cuda_version,
            "nvmlSystemGetCudaDriverVersion_v2": board.cuda_version,
        },
    )

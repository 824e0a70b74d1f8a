"""Every NVML entry point the sampler calls x every failure: the sampler keeps running.

NotSupported -> that field N/A; GpuIsLost / Unknown -> that GPU lost, the others unchanged;
FunctionNotFound or a function missing from the binding -> probed once, remembered, fallback used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml
import pytest

from pth_top.sensors.model import Snapshot
from pth_top.sensors.na import NA
from pth_top.units import MIB
from tests.fakes.gpu_fixtures import enable_mig, make_fake_gpus
from tests.sensors.helpers import FakeClock, sampler_with, small_proc_root

FAILING_GPU = 0
ERRORS = ("not_supported", "gpu_is_lost", "unknown", "function_not_found", "removed")
ERROR_CLASSES = {
    "not_supported": pynvml.NVMLError_NotSupported,
    "gpu_is_lost": pynvml.NVMLError_GpuIsLost,
    "unknown": pynvml.NVMLError_Unknown,
}


@dataclass(frozen=True)
class Case:
    function: str
    # GpuSample fields and the value they take when the function cannot answer.
    unsupported: dict[str, Any] = field(default_factory=dict)
    # Functions removed first, so that this fallback variant is the one in use.
    removed_first: tuple[str, ...] = ()
    # A FunctionNotFound on this function falls back to another variant with the same answer.
    has_fallback: bool = False
    scope: str = "device"  # "device", "system" (no device argument), "process" or "process_utilization"


PROCESS_VARIANTS = ("_v3", "_v2", "")
CASES = [
    Case("nvmlSystemGetDriverVersion", scope="system"),
    Case("nvmlSystemGetCudaDriverVersion_v2", scope="system", has_fallback=True),
    Case("nvmlSystemGetCudaDriverVersion", scope="system", removed_first=("nvmlSystemGetCudaDriverVersion_v2",)),
    Case("nvmlDeviceGetCount", scope="system"),
    Case("nvmlDeviceGetHandleByIndex", scope="system"),
    Case("nvmlDeviceGetName", {"name": "unknown GPU"}),
    Case("nvmlDeviceGetUUID", {"uuid": ""}),
    Case("nvmlDeviceGetPciInfo", {"bus_id": ""}),
    Case("nvmlDeviceGetUtilizationRates", {"utilization_percent": NA, "memory_utilization_percent": NA}),
    Case("nvmlDeviceGetMemoryInfo", {"memory_used_bytes": NA, "memory_total_bytes": NA}),
    Case("nvmlDeviceGetTemperature", {"temperature_c": NA}),  # temperature_missing_reason then says why
    Case("nvmlDeviceGetFanSpeed", {"fan_speed_percent": NA}),
    Case("nvmlDeviceGetPowerUsage", {"power_draw_w": NA}),
    Case("nvmlDeviceGetEnforcedPowerLimit", {"power_limit_w": NA}, has_fallback=True),
    Case("nvmlDeviceGetPowerManagementLimit", {"power_limit_w": NA},
         removed_first=("nvmlDeviceGetEnforcedPowerLimit",)),
    Case("nvmlDeviceGetClockInfo", {"sm_clock_mhz": NA, "memory_clock_mhz": NA}),
    Case("nvmlDeviceGetPerformanceState", {"pstate": NA}),
    Case("nvmlDeviceGetCurrPcieLinkGeneration", {"pcie_generation_current": NA}),
    Case("nvmlDeviceGetMaxPcieLinkGeneration", {"pcie_generation_max": NA}),
    Case("nvmlDeviceGetCurrPcieLinkWidth", {"pcie_width_current": NA}),
    Case("nvmlDeviceGetMaxPcieLinkWidth", {"pcie_width_max": NA}),
    Case("nvmlDeviceGetPcieThroughput", {"pcie_rx_bytes_per_s": NA, "pcie_tx_bytes_per_s": NA}),
    Case("nvmlDeviceGetEccMode", {"ecc_enabled": NA, "ecc_volatile_uncorrected_errors": NA}),
    Case("nvmlDeviceGetTotalEccErrors", {"ecc_volatile_uncorrected_errors": NA}),
    Case("nvmlDeviceGetCurrentClocksEventReasons", {"throttle_reasons": ()}, has_fallback=True),
    Case("nvmlDeviceGetCurrentClocksThrottleReasons", {"throttle_reasons": ()},
         removed_first=("nvmlDeviceGetCurrentClocksEventReasons",)),
    Case("nvmlDeviceGetNvLinkState", {"nvlink_active_links": NA}),
    Case("nvmlDeviceGetMigMode", {"mig_enabled": NA, "mig_instances": ()}),
    Case("nvmlDeviceGetMaxMigDeviceCount", {"mig_instances": ()}),
    Case("nvmlDeviceGetMigDeviceHandleByIndex", {"mig_instances": ()}),
    Case("nvmlDeviceGetGpuInstanceId"),
    Case("nvmlDeviceGetRemappedRows",
         {"remapped_rows": NA, "remapped_rows_pending": NA, "remapped_rows_failed": NA}),
    Case("nvmlDeviceGetRetiredPages", {"retired_pages": NA}),
    # GPM's sample and metrics calls are faulted in tests/sensors/test_gpm_reader.py (GPUs with GPM).
    Case("nvmlGpmQueryDeviceSupport", {"gpm_supported": False, "sm_active_ratio": NA}),
    *[
        Case(
            f"nvmlDevice{kind}RunningProcesses{suffix}",
            scope="process",
            has_fallback=suffix != "",
            removed_first=tuple(f"nvmlDevice{kind}RunningProcesses{earlier}"
                                for earlier in PROCESS_VARIANTS[:PROCESS_VARIANTS.index(suffix)]),
        )
        for kind in ("GetCompute", "GetGraphics")
        for suffix in PROCESS_VARIANTS
    ],
    Case("nvmlDeviceGetProcessUtilization", scope="process_utilization"),
]


def make_machine():
    """Three H100s; GPU 0 (power-capped) runs MIG and hosts this test process as compute + graphics."""
    fake = enable_mig(make_fake_gpus(3, process_pids={FAILING_GPU: [os.getpid()]}), FAILING_GPU)
    graphics = [SimpleNamespace(pid=os.getpid(), usedGpuMemory=64 * MIB)]
    for suffix in PROCESS_VARIANTS:
        fake.devices[FAILING_GPU].values[f"nvmlDeviceGetGraphicsRunningProcesses{suffix}"] = graphics
    return fake


def own_gpu_uses(snapshot: Snapshot) -> set[tuple[int, str]]:
    own = next(process for process in snapshot.processes if process.pid == os.getpid())
    return {(use.gpu_index, use.kind) for use in own.gpu_uses}


def run_case(case: Case, error: str, proc_root: str):
    baseline_sampler = sampler_with(make_machine(), proc_root=proc_root)
    baseline = baseline_sampler.sample()
    fake = make_machine()
    for function in case.removed_first:
        fake.remove(function)
    if error == "removed":
        fake.remove(case.function)
    elif error == "function_not_found":
        fake.fail(case.function, pynvml.NVMLError_FunctionNotFound)
    else:
        device = None if case.scope == "system" else FAILING_GPU
        fake.fail(case.function, ERROR_CLASSES[error], device_index=device)
    clock = FakeClock()
    sampler = sampler_with(fake, clock, proc_root)
    snapshots = []
    for _ in range(3):
        snapshots.append(sampler.sample())
        clock.advance(1.0)
    return baseline, snapshots, sampler, fake


def test_case_table_covers_the_functions_the_sampler_calls():
    sampler = sampler_with(make_machine())
    sampler.sample()
    called = set(sampler.nvml.module.calls) - {"nvmlInit"}
    listed = {case.function for case in CASES}
    assert called <= listed, f"add cases for {sorted(called - listed)}"


@pytest.mark.parametrize("error", ERRORS)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.function)
def test_sampler_survives(case: Case, error: str, tmp_path):
    baseline, snapshots, sampler, fake = run_case(case, error, small_proc_root(tmp_path / "proc"))
    if error in ("function_not_found", "removed"):
        assert case.function in sampler.nvml.missing_functions
        # Probed at most once, then remembered.
        assert fake.calls[case.function] <= (1 if error == "function_not_found" else 0)
    for snapshot in snapshots:
        assert snapshot.cpu.cores and snapshot.processes and snapshot.memory.total_bytes > 0
        assert snapshot.host.nvml_unavailable_reason is None
        if case.scope == "system":
            check_system_case(case, error, baseline, snapshot)
        elif case.scope == "process":
            check_process_case(case, error, baseline, snapshot)
        elif case.scope == "process_utilization":
            # Per-process SM % unknown; the GPUs and the processes' GPU memory are untouched.
            assert snapshot.gpus == baseline.gpus and own_gpu_uses(snapshot) == own_gpu_uses(baseline)
            own = next(process for process in snapshot.processes if process.pid == os.getpid())
            assert all(use.sm_util_percent is NA for use in own.gpu_uses)
        else:
            check_device_case(case, error, baseline, snapshot)


def check_system_case(case: Case, error: str, baseline: Snapshot, last: Snapshot) -> None:
    if case.function == "nvmlDeviceGetCount":
        assert last.gpus == ()
    elif case.function == "nvmlDeviceGetHandleByIndex":
        assert [gpu.lost for gpu in last.gpus] == [True, True, True]
        assert [gpu.index for gpu in last.gpus] == [0, 1, 2]
    elif case.function == "nvmlSystemGetDriverVersion":
        assert last.host.nvidia_driver_version is NA
        assert last.gpus == baseline.gpus
    elif case.has_fallback and error in ("function_not_found", "removed"):
        assert last.host.cuda_driver_version == baseline.host.cuda_driver_version == "12.4"
    else:
        assert last.host.cuda_driver_version is NA
        assert last.gpus == baseline.gpus


def check_process_case(case: Case, error: str, baseline: Snapshot, last: Snapshot) -> None:
    kind = "compute" if "Compute" in case.function else "graphics"
    assert last.gpus == baseline.gpus
    if case.has_fallback and error in ("function_not_found", "removed"):
        assert own_gpu_uses(last) == {(FAILING_GPU, "compute"), (FAILING_GPU, "graphics")}
    else:
        assert (FAILING_GPU, kind) not in own_gpu_uses(last)


def check_device_case(case: Case, error: str, baseline: Snapshot, last: Snapshot) -> None:
    if error in ("gpu_is_lost", "unknown"):
        healthy = [gpu for gpu in last.gpus if gpu.index != FAILING_GPU]
        assert healthy == [gpu for gpu in baseline.gpus if gpu.index != FAILING_GPU]
        assert last.gpus[FAILING_GPU].lost
        assert last.gpus[FAILING_GPU].utilization_percent is NA
        return
    if error == "not_supported":
        affected = [last.gpus[FAILING_GPU]]
        assert last.gpus[FAILING_GPU + 1:] == baseline.gpus[FAILING_GPU + 1:]
    else:
        affected = list(last.gpus)
    for gpu in affected:
        assert not gpu.lost
        if case.has_fallback and error in ("function_not_found", "removed"):
            assert gpu == baseline.gpus[gpu.index]
            continue
        for name, value in case.unsupported.items():
            assert getattr(gpu, name) == value, name
    if case.function == "nvmlDeviceGetGpuInstanceId":
        instances = last.gpus[FAILING_GPU].mig_instances
        assert len(instances) == 2 and all(instance.gpu_instance_id is NA for instance in instances)


@pytest.mark.parametrize("error", ["gpu_is_lost", "unknown"])
def test_lost_gpu_comes_back_by_bus_id(error):
    fake = make_machine()
    fake.fail("nvmlDeviceGetUtilizationRates", ERROR_CLASSES[error], device_index=1)
    clock = FakeClock()
    sampler = sampler_with(fake, clock)
    first = sampler.sample()
    assert [gpu.lost for gpu in first.gpus] == [False, True, False]
    assert first.gpus[1].bus_id == "00000000:2A:00.0"
    fake.clear_failures()
    clock.advance(1.0)
    second = sampler.sample()
    assert [gpu.lost for gpu in second.gpus] == [False, False, False]
    assert second.gpus[1].utilization_percent == 68.0
    assert fake.calls["nvmlDeviceGetHandleByPciBusId"] == 1


@pytest.mark.parametrize("init_error, reason", [
    (pynvml.NVMLError_LibraryNotFound, "no NVIDIA driver (NVML library not found)"),
    (pynvml.NVMLError_DriverNotLoaded, "no NVIDIA driver (driver not loaded)"),
])
def test_no_driver_leaves_everything_else_working(init_error, reason):
    fake = make_fake_gpus(2)
    fake.init_error = init_error
    sampler = sampler_with(fake)
    for _ in range(2):
        snapshot = sampler.sample()
    assert snapshot.host.nvml_unavailable_reason == reason
    assert snapshot.gpus == ()
    assert snapshot.host.nvidia_driver_version is NA
    assert snapshot.processes and snapshot.cpu.cores
    assert fake.calls["nvmlInit"] == 1
    sampler.close()


def test_bogus_v3_process_pids_fall_back_to_v2():
    fake = make_fake_gpus(1)
    fake.devices[0].values["nvmlDeviceGetComputeRunningProcesses_v3"] = [
        SimpleNamespace(pid=4294967295, usedGpuMemory=0)
    ]
    fake.devices[0].values["nvmlDeviceGetComputeRunningProcesses_v2"] = [
        SimpleNamespace(pid=os.getpid(), usedGpuMemory=3 * MIB)
    ]
    sampler = sampler_with(fake)
    snapshot = sampler.sample()
    own = next(process for process in snapshot.processes if process.pid == os.getpid())
    assert own.gpu_memory_used_bytes == 3 * MIB and own.gpu_indices == (0,)
    assert "nvmlDeviceGetComputeRunningProcesses_v3" in sampler.nvml.missing_functions
    sampler.sample()
    assert fake.calls["nvmlDeviceGetComputeRunningProcesses_v3"] == 1


def test_a_binding_with_another_signature_is_dropped_not_fatal():
    fake = make_fake_gpus(1)

    def takes_no_sensor_argument():
        return 50

    fake.devices[0].values["nvmlDeviceGetTemperature"] = takes_no_sensor_argument
    sampler = sampler_with(fake)
    (gpu,) = sampler.sample().gpus
    assert gpu.temperature_c is NA and not gpu.lost
    assert "nvmlDeviceGetTemperature" in sampler.nvml.missing_functions

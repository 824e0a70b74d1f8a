"""GPU and driver checks against a scripted pynvml that raises the real NVML error classes."""

from __future__ import annotations

import pynvml
import pytest

from pth_top.doctor import gpu_checks, gpu_state_checks
from pth_top.doctor.gpus import list_gpus
from pth_top.doctor.model import Status
from pth_top.doctor.registry import checks_in
from pth_top.sensors.gpu import GpuReader
from pth_top.units import MIB
from tests.fakes.doctor_inputs import (
    cuda_probe_report,
    fake_nvml,
    healthy_gpu_values,
    make_context,
    no_driver_nvml,
    write,
)

GPU_CHECKS = [*checks_in(gpu_checks), *checks_in(gpu_state_checks)]


def run(check, context):
    return check.run(context)


def only(check, context):
    findings = check.run(context)
    assert len(findings) == 1, findings
    return findings[0]


@pytest.mark.parametrize("check", GPU_CHECKS, ids=lambda check: check.check_id)
def test_every_gpu_check_is_not_applicable_without_a_driver(tmp_path, check):
    context = make_context(tmp_path, nvml_module=no_driver_nvml(), probe=cuda_probe_report())
    findings = check.run(context)
    assert [f.status for f in findings] == [Status.NOT_APPLICABLE]
    assert "no NVIDIA driver" in findings[0].value


@pytest.mark.parametrize("check", GPU_CHECKS, ids=lambda check: check.check_id)
def test_every_gpu_check_passes_or_is_not_applicable_on_a_healthy_gpu(tmp_path, check):
    context = make_context(tmp_path, probe=cuda_probe_report())
    statuses = {f.status for f in check.run(context)}
    assert statuses <= {Status.PASS, Status.NOT_APPLICABLE}, check.check_id


def test_driver_reports_version_and_supported_cuda(tmp_path):
    finding = only(gpu_checks.check_driver, make_context(tmp_path))
    assert finding.status is Status.PASS
    assert "550.54.15" in finding.value and "CUDA up to 12.4" in finding.value


@pytest.mark.parametrize(("torch_cuda", "status"), [
    ("12.4", Status.PASS), ("11.8", Status.PASS), ("12.6", Status.WARN), ("13.0", Status.FAIL),
])
def test_torch_cuda_against_driver_cuda(tmp_path, torch_cuda, status):
    context = make_context(tmp_path, probe=cuda_probe_report(torch_cuda_version=torch_cuda))
    finding = only(gpu_checks.check_cuda_compatibility, context)
    assert finding.status is status
    if status is not Status.PASS:
        assert "driver" in finding.fix


def test_cuda_compatibility_is_not_applicable_for_a_cpu_torch(tmp_path):
    context = make_context(tmp_path, probe=cuda_probe_report(torch_cuda_version=None, cuda_available=False))
    assert only(gpu_checks.check_cuda_compatibility, context).status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(("gpu_count", "torch_count", "env", "status"), [
    (1, 1, {}, Status.PASS),
    (1, 0, {}, Status.FAIL),
    (2, 1, {"CUDA_VISIBLE_DEVICES": "0"}, Status.PASS),
    (2, 1, {}, Status.WARN),
])
def test_torch_sees_the_gpus_nvml_sees(tmp_path, gpu_count, torch_count, env, status):
    nvml = fake_nvml(*(healthy_gpu_values(i) for i in range(gpu_count)))
    context = make_context(tmp_path, nvml_module=nvml, probe=cuda_probe_report(device_count=torch_count, env=env))
    finding = only(gpu_checks.check_torch_sees_gpus, context)
    assert finding.status is status
    assert f"{torch_count} of {gpu_count}" in finding.value


def test_pcie_link_slow_at_idle_is_a_warning_to_recheck_under_load(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetCurrPcieLinkGeneration=1))
    finding = only(gpu_checks.check_pcie_link, make_context(tmp_path, nvml_module=nvml, probe=cuda_probe_report()))
    assert finding.status is Status.WARN
    assert "idle" in finding.value and "--load" in finding.fix
    assert finding.subject == "GPU 0 (NVIDIA H100 PCIe)"


def test_pcie_link_narrow_while_busy_fails(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(
        nvmlDeviceGetCurrPcieLinkWidth=4, nvmlDeviceGetUtilizationRates=type("U", (), {"gpu": 97})(),
    ))
    finding = only(gpu_checks.check_pcie_link, make_context(tmp_path, nvml_module=nvml, probe=cuda_probe_report()))
    assert finding.status is Status.FAIL
    assert "Gen5 x4 busy (max Gen5 x16)" == finding.value


def test_pcie_link_uses_the_probe_reading_taken_under_load(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetCurrPcieLinkGeneration=1))
    link = {"pci_bus_id": "00000000:17:00.0", "generation": 5, "width": 16, "utilization_percent": 100}
    context = make_context(tmp_path, nvml_module=nvml, probe=cuda_probe_report(load={"seconds": 3, "links": [link]}))
    finding = only(gpu_checks.check_pcie_link, context)
    assert finding.status is Status.PASS
    assert "under load" in finding.value


def test_pcie_slot_slower_than_the_gpu_is_a_warning(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(
        nvmlDeviceGetMaxPcieLinkGeneration=3, nvmlDeviceGetCurrPcieLinkGeneration=3,
    ))
    finding = only(gpu_checks.check_pcie_link, make_context(tmp_path, nvml_module=nvml, probe=cuda_probe_report()))
    assert finding.status is Status.WARN
    assert "supports Gen5" in finding.value


def test_small_bar1_means_resizable_bar_is_off(tmp_path):
    bar1 = type("Bar1", (), {"bar1Total": 256 * MIB})()
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetBAR1MemoryInfo=bar1))
    finding = only(gpu_checks.check_bar1, make_context(tmp_path, nvml_module=nvml))
    assert finding.status is Status.WARN
    assert "256 MiB" in finding.value and "Above 4G" in finding.fix


def test_persistence_mode_off_warns(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetPersistenceMode=0))
    finding = only(gpu_checks.check_persistence, make_context(tmp_path, nvml_module=nvml))
    assert finding.status is Status.WARN and "nvidia-smi -i 0 -pm 1" in finding.fix


@pytest.mark.parametrize(("mode", "status"), [(0, Status.PASS), (3, Status.WARN), (2, Status.FAIL)])
def test_compute_mode(tmp_path, mode, status):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetComputeMode=mode))
    assert only(gpu_checks.check_compute_mode, make_context(tmp_path, nvml_module=nvml)).status is status


@pytest.mark.parametrize(("volatile", "aggregate", "status"), [
    (0, 0, Status.PASS), (0, 3, Status.WARN), (2, 5, Status.FAIL),
])
def test_ecc_errors(tmp_path, volatile, aggregate, status):
    counts = {0: volatile, 1: aggregate}
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetTotalEccErrors=lambda error_type, counter: counts[counter]))
    finding = only(gpu_state_checks.check_ecc, make_context(tmp_path, nvml_module=nvml))
    assert finding.status is status
    assert f"{volatile} since boot, {aggregate} lifetime" in finding.value


def test_ecc_not_supported_is_not_applicable(tmp_path):
    values = healthy_gpu_values()
    del values["nvmlDeviceGetEccMode"]
    finding = only(gpu_state_checks.check_ecc, make_context(tmp_path, nvml_module=fake_nvml(values)))
    assert finding.status is Status.NOT_APPLICABLE


@pytest.mark.parametrize(("rows", "status"), [
    ((2, 0, 0, 0), Status.PASS), ((0, 1, 1, 0), Status.WARN), ((0, 1, 0, 1), Status.FAIL),
])
def test_remapped_rows(tmp_path, rows, status):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetRemappedRows=rows))
    assert only(gpu_state_checks.check_retired_memory, make_context(tmp_path, nvml_module=nvml)).status is status


def test_retired_pages_pending_on_older_gpus(tmp_path):
    values = healthy_gpu_values(
        nvmlDeviceGetRetiredPagesPendingStatus=1,
        nvmlDeviceGetRetiredPages=lambda cause: [0x1000] if cause == 1 else [],
    )
    del values["nvmlDeviceGetRemappedRows"]
    finding = only(gpu_state_checks.check_retired_memory, make_context(tmp_path, nvml_module=fake_nvml(values)))
    assert finding.status is Status.WARN and "retired pages: 1" in finding.value


def test_power_limit_below_default_warns(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetPowerManagementLimit=250_000))
    finding = only(gpu_state_checks.check_power_limit, make_context(tmp_path, nvml_module=nvml))
    assert finding.status is Status.WARN
    assert finding.value.startswith("250 W (default 350 W, max 350 W)")


def test_throttle_reasons_in_words():
    assert gpu_state_checks.decode_throttle_reasons(0x44) == ("power cap", "thermal (HW)")


def test_thermal_throttling_warns_and_old_bindings_fall_back(tmp_path):
    module = fake_nvml(healthy_gpu_values(nvmlDeviceGetCurrentClocksThrottleReasons=0x40))
    module.remove("nvmlDeviceGetCurrentClocksEventReasons")
    finding = only(gpu_state_checks.check_throttle, make_context(tmp_path, nvml_module=module))
    assert finding.status is Status.WARN and finding.value == "thermal (HW)"


@pytest.mark.parametrize(("temperature", "status"), [(60, Status.PASS), (80, Status.WARN), (88, Status.FAIL)])
def test_temperature_against_slowdown_threshold(tmp_path, temperature, status):
    nvml = fake_nvml(healthy_gpu_values(nvmlDeviceGetTemperature=lambda sensor: temperature))
    finding = only(gpu_state_checks.check_temperature, make_context(tmp_path, nvml_module=nvml))
    assert finding.status is status and "slowdown at 87" in finding.value


def test_nvlink_inactive_link_warns_on_multi_gpu(tmp_path):
    def links(active):
        def state(link):
            if link >= 4:
                raise pynvml.NVMLError_NotSupported()
            return 1 if link < active else 0
        return state

    nvml = fake_nvml(
        healthy_gpu_values(0, nvmlDeviceGetNvLinkState=links(4)),
        healthy_gpu_values(1, nvmlDeviceGetNvLinkState=links(3)),
    )
    findings = gpu_state_checks.check_nvlink.run(make_context(tmp_path, nvml_module=nvml))
    assert [f.status for f in findings] == [Status.PASS, Status.WARN]
    assert findings[1].value == "3 of 4 NVLink links active"


def test_nvlink_is_not_applicable_on_one_gpu(tmp_path):
    assert only(gpu_state_checks.check_nvlink, make_context(tmp_path)).value == "single GPU"


def test_numa_node_and_nearest_cpus_from_sysfs(tmp_path):
    context = make_context(tmp_path)
    device = context.sys_root / "bus" / "pci" / "devices" / "0000:17:00.0"
    write(device / "numa_node", "1\n")
    write(device / "local_cpulist", "16-31\n")
    finding = only(gpu_state_checks.check_numa, context)
    assert finding.status is Status.PASS and finding.value == "NUMA node 1, nearest CPUs 16-31"


def test_a_lost_gpu_could_not_run_and_the_others_still_report(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(0), healthy_gpu_values(1))
    nvml.fail("nvmlDeviceGetPersistenceMode", pynvml.NVMLError_GpuIsLost, device_index=1)
    findings = gpu_checks.check_persistence.run(make_context(tmp_path, nvml_module=nvml))
    assert [f.status for f in findings] == [Status.PASS, Status.COULD_NOT_RUN]
    assert findings[1].subject.startswith("GPU 1")


def test_a_gpu_lost_while_listing_could_not_run_and_the_others_still_report(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(0), healthy_gpu_values(1))
    nvml.fail("nvmlDeviceGetName", pynvml.NVMLError_GpuIsLost, device_index=1)
    findings = gpu_checks.check_persistence.run(make_context(tmp_path, nvml_module=nvml))
    assert [f.status for f in findings] == [Status.PASS, Status.COULD_NOT_RUN]
    assert findings[0].subject == "GPU 0 (NVIDIA H100 PCIe)" and findings[1].subject.startswith("GPU 1")
    assert "stopped answering" in findings[1].value


def test_the_doctor_lists_the_gpus_the_monitor_samples(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(0), healthy_gpu_values(1, nvmlDeviceGetName=b"NVIDIA A100"))
    nvml.fail("nvmlDeviceGetPciInfo", pynvml.NVMLError_NotSupported, device_index=1)
    context = make_context(tmp_path, nvml_module=nvml)
    listed = [(gpu.index, gpu.name, gpu.pci_bus_id or "") for gpu in list_gpus(context)]
    sampled = [(gpu.index, gpu.name, gpu.bus_id) for gpu in GpuReader(context.nvml).sample()]
    assert listed == sampled == [(0, "NVIDIA H100 PCIe", "00000000:17:00.0"), (1, "NVIDIA A100", "")]
    numa = gpu_state_checks.check_numa.run(context)
    assert numa[1].status is Status.NOT_APPLICABLE and numa[1].value == "PCI bus id not reported"


def test_old_bindings_fall_back_to_the_older_cuda_version_call(tmp_path):
    nvml = fake_nvml(healthy_gpu_values(0), nvmlSystemGetCudaDriverVersion=11080)
    nvml.remove("nvmlSystemGetCudaDriverVersion_v2")
    finding = only(gpu_checks.check_driver, make_context(tmp_path, nvml_module=nvml))
    assert "supports CUDA up to 11.8" in finding.value


@pytest.mark.gpu
def test_real_gpus_give_a_verdict_for_every_gpu_check(tmp_path):
    from pth_top.doctor.context import DoctorContext

    context = DoctorContext(data_dir=tmp_path)
    try:
        for check in GPU_CHECKS:
            if check.needs_torch:
                continue
            for finding in check.run(context):
                assert finding.status is not Status.COULD_NOT_RUN, finding
    finally:
        context.nvml.shutdown()

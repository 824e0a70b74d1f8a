"""The sensors, `snapshot --json`, the GPU panel and the doctor on GPUs as real `nvidia-smi -q` outputs
report them (tests/fakes/real_gpus.py: 8 x H100 SXM, 4 x A100 SXM4, 10 x A40, an A10, RTX A6000s, and
the H200 this repository recorded)."""

from __future__ import annotations

import json

import pytest

from pth_top.doctor import gpu_checks, gpu_state_checks
from pth_top.doctor.model import Status
from pth_top.doctor.registry import checks_in
from pth_top.sensors.gpm import GPM_FIELDS
from pth_top.sensors.na import NA
from pth_top.sensors.snapshot_json import SCHEMA_PATH, snapshot_to_dict
from pth_top.sensors.snapshot_table import format_snapshot_table
from pth_top.tui.panels.gpus import gpu_cells, gpu_detail_text
from pth_top.units import MIB
from tests.fakes.doctor_inputs import cuda_probe_report, make_context
from tests.fakes.real_gpus import REAL_MACHINES, make_real_machine
from tests.fakes.recorded_h200 import recorded_gpu
from tests.sensors.helpers import sampler_with, small_proc_root
from tests.sensors.schema_check import validate

SCHEMA = json.loads(SCHEMA_PATH.read_text())


def sample(name, tmp_path):
    sampler = sampler_with(make_real_machine(name), proc_root=small_proc_root(tmp_path))
    try:
        return sampler.sample()
    finally:
        sampler.close()


@pytest.mark.parametrize("name", REAL_MACHINES)
def test_every_gpu_reads_as_the_machine_reported_it(name, tmp_path):
    board, gpus = REAL_MACHINES[name]
    snapshot = sample(name, tmp_path)
    assert snapshot.host.nvidia_driver_version == board.driver_version
    assert [gpu.uuid for gpu in snapshot.gpus] == [gpu.uuid for gpu in gpus]
    for read, real in zip(snapshot.gpus, gpus, strict=True):
        assert not read.lost and read.name == board.name and read.bus_id == real.bus_id
        assert read.temperature_c == real.temperature_c and read.temperature_missing_reason is NA
        assert read.power_draw_w == pytest.approx(real.power_draw_w) and read.power_limit_w == board.power_limit_w
        assert read.memory_used_bytes == real.memory_used_mib * MIB
        assert read.memory_total_bytes == board.memory_total_mib * MIB
        assert read.pstate == f"P{board.pstate}" and read.sm_clock_mhz == real.sm_clock_mhz
        assert read.pcie_generation_current == real.pcie_generation
        assert read.pcie_generation_max == board.pcie_generation_max
        assert read.pcie_rx_bytes_per_s == real.rx_kb_per_s * 1024 and read.ecc_enabled is True
        assert read.remapped_rows == real.remapped_rows[0] + real.remapped_rows[1]
        assert read.retired_pages is NA, "Ampere and Hopper remap rows; retired pages are N/A"
        assert read.fan_speed_percent == (NA if board.fan_percent is None else board.fan_percent)
        assert read.mig_enabled is (False if board.mig_supported else NA)
        assert read.nvlink_active_links == (board.nvlink_links or NA)


def test_snapshot_json_and_table_on_every_machine(tmp_path):
    for name, (board, gpus) in REAL_MACHINES.items():
        snapshot = sample(name, tmp_path / name)
        document = json.loads(json.dumps(snapshot_to_dict(snapshot)))
        assert validate(document, SCHEMA) == [], name
        assert len(document["gpus"]) == len(gpus)
        first = document["gpus"][0]
        assert first["fan_speed_percent"] == board.fan_percent and first["xid_errors"] is None
        assert first["remapped_rows_pending"] is False and first["retired_pages"] is None
        table = format_snapshot_table(snapshot)
        assert board.name in table and board.driver_version in table


def test_idle_is_not_throttling_and_an_idle_link_is_not_flagged(tmp_path):
    h100 = sample("h100_sxm_x8", tmp_path / "h100").gpus[0]
    detail = gpu_detail_text(h100).plain
    assert h100.throttle_reasons == ("idle",)
    assert "throttled" not in detail and "clocks idle" in detail
    a40 = sample("a40_x10", tmp_path / "a40").gpus
    assert a40[1].pcie_link_degraded and gpu_cells(a40[1])[-1].plain == "1x16", "Gen1 at idle is power saving"
    assert gpu_cells(a40[0])[-1].plain == "1x16", "idle at 0 % though the driver said power cap, not idle"
    assert "PCIe Gen1 x16 (max Gen4 x16) idle " in gpu_detail_text(a40[0]).plain
    assert "throttled: power cap" in gpu_detail_text(a40[0]).plain, "a real A40 reported SW Power Cap at 30 W"
    assert "no NVLink" in gpu_detail_text(a40[0]).plain and "NVLink N/A" not in gpu_detail_text(a40[0]).plain
    slowdown = gpu_detail_text(sample("a10_hw_slowdown", tmp_path / "a10").gpus[0]).plain
    assert "throttled: HW slowdown, power brake (HW)" in slowdown and "clocks idle" in slowdown


def test_the_a100_with_a_pending_row_remap_is_flagged(tmp_path):
    gpus = sample("a100_sxm4_x4", tmp_path).gpus
    assert [gpu.health_problems for gpu in gpus] == [(), ("row remap pending (reset the GPU)",), (), ()]
    assert gpu_cells(gpus[1])[0].plain == "1!"
    assert "health: row remap pending (reset the GPU)" in gpu_detail_text(gpus[1]).plain
    assert "1 remapped row, none pending" in gpu_detail_text(gpus[2]).plain


@pytest.mark.parametrize("name", REAL_MACHINES)
def test_doctor_on_every_machine(name, tmp_path):
    board, gpus = REAL_MACHINES[name]
    probe = cuda_probe_report(device_count=len(gpus), devices=[
        {"index": index, "name": board.name, "total_memory_bytes": board.memory_total_mib * MIB,
         "capability": [8, 0], "pci_bus_id": gpu.bus_id} for index, gpu in enumerate(gpus)])
    context = make_context(tmp_path, nvml_module=make_real_machine(name), probe=probe)
    findings = {check.check_id: check.run(context) for check in [*checks_in(gpu_checks), *checks_in(gpu_state_checks)]}
    statuses = {finding.status for found in findings.values() for finding in found}
    assert Status.FAIL not in statuses, name
    assert [finding.status for finding in findings["gpu.driver"]] == [Status.PASS]
    assert [finding.status for finding in findings["gpu.torch_sees_gpus"]] == [Status.PASS]
    remap = [finding.status for finding in findings["gpu.retired_memory"]]
    assert remap == [Status.WARN if gpu.remapped_rows[2] else Status.PASS for gpu in gpus]
    throttle = [finding.status for finding in findings["gpu.throttle"]]
    assert (Status.WARN in throttle) == (name == "a10_hw_slowdown")


# What does not change with load: the recorded H200 (tests/fakes/recorded/h200) read the same in every capture.
H200_STEADY_FIELDS = (
    "name", "bus_id", "uuid", "memory_total_bytes", "power_limit_w", "memory_clock_mhz", "pstate",
    "pcie_generation_current", "pcie_generation_max", "pcie_width_current", "pcie_width_max", "fan_speed_percent",
    "ecc_enabled", "ecc_volatile_uncorrected_errors", "nvlink_active_links", "mig_enabled", "mig_instances",
    "remapped_rows", "remapped_rows_pending", "remapped_rows_failed", "retired_pages", "gpm_supported",
)


def test_the_h200_fixture_reads_as_pth_top_read_the_real_h200(tmp_path):
    """From nvidia-smi -q, the fake answers what the real H200 answered pth-top (the idle-context capture), GPM too."""
    sampler = sampler_with(make_real_machine("h200_x1"), proc_root=small_proc_root(tmp_path))
    try:
        sampler.sample()
        read = snapshot_to_dict(sampler.sample())["gpus"][0]  # the second: GPM needs an interval
    finally:
        sampler.close()
    recorded = recorded_gpu("idle-context")
    steady = {field: recorded[field] for field in H200_STEADY_FIELDS}
    assert {field: read[field] for field in H200_STEADY_FIELDS} == steady
    assert read["memory_total_bytes"] == 150_754_820_096 and read["nvlink_active_links"] is None
    assert {field: read[field] for field in GPM_FIELDS} == pytest.approx(
        {field: recorded[field] for field in GPM_FIELDS}, rel=1e-9, abs=1e-15)
    assert read["sm_active_ratio"] == 0.0 and read["utilization_percent"] == recorded["utilization_percent"] == 0.0
    assert read["power_draw_w"] == 79.25 and read["sm_clock_mhz"] == 345.0, "nvidia-smi -q's idle, before any context"

"""The exporter's GPM series: DCGM profiling names, base units, absent where the GPU has no GPM."""

from __future__ import annotations

import pytest

from pth_top.units import MIB
from tests.fakes.gpm_profiles import NCCL_HANG, TRAINING, enable_gpm, hang
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fleet.scraping import scrape
from tests.fleet.test_collector import exporter, gpu

GPM_FAMILIES = (
    "pth_top_gpu_sm_active_ratio", "pth_top_gpu_sm_occupancy_ratio", "pth_top_gpu_pipe_tensor_active_ratio",
    "pth_top_gpu_pipe_tensor_hmma_active_ratio", "pth_top_gpu_pipe_fp64_active_ratio",
    "pth_top_gpu_pipe_fp32_active_ratio", "pth_top_gpu_pipe_fp16_active_ratio", "pth_top_gpu_dram_active_ratio",
    "pth_top_gpu_prof_pcie_transmit_bytes_per_second", "pth_top_gpu_prof_pcie_receive_bytes_per_second",
    "pth_top_gpu_prof_nvlink_transmit_bytes_per_second", "pth_top_gpu_prof_nvlink_receive_bytes_per_second",
)


def test_gpm_series_in_base_units_from_the_second_scrape_and_absent_without_gpm():
    fake = enable_gpm(make_fake_gpus(3), 0, TRAINING)
    hang(fake, 1)  # GPU 2: no GPM (as an A100 would be)
    registry = exporter(fake)[1]
    first = scrape(registry)
    assert first.get("pth_top_gpu_gpm_supported", **gpu(0)) == 1.0
    assert first.get("pth_top_gpu_gpm_supported", **gpu(2)) == 0.0
    assert all(not first.series(name) for name in GPM_FAMILIES)  # one sample: no interval yet, no 0 either
    result = scrape(registry)
    assert result.get("pth_top_gpu_sm_active_ratio", **gpu(0)) == pytest.approx(0.93)
    assert result.get("pth_top_gpu_pipe_tensor_active_ratio", **gpu(0)) == pytest.approx(0.75)
    assert result.get("pth_top_gpu_dram_active_ratio", **gpu(0)) == pytest.approx(0.42)
    assert result.get("pth_top_gpu_prof_nvlink_receive_bytes_per_second", **gpu(0)) == pytest.approx(41_000 * MIB)
    assert result.get("pth_top_gpu_sm_active_ratio", **gpu(1)) == pytest.approx(NCCL_HANG[2] / 100)
    assert result.get("pth_top_gpu_utilization_ratio", **gpu(1)) == 1.0
    for name in GPM_FAMILIES:
        assert {dict(labels)["gpu"] for labels in result.series(name)} == {"0", "1"}, name

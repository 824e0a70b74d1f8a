"""SM and pipe activity from NVML GPM, read through the GpuReader against the scripted NVML."""

from __future__ import annotations

import pynvml
import pytest

from pth_top.sensors.gpm import GPM_FIELDS
from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.na import NA, is_na
from pth_top.sensors.nvml import NvmlSession
from pth_top.units import MIB
from tests.fakes.gpm_profiles import IDLE, NCCL_HANG, TRAINING, enable_gpm, hang
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fakes.real_gpus import make_real_machine
from tests.sensors.helpers import FakeClock, sampler_with


def reader_for(fake):
    return GpuReader(NvmlSession(fake, clock=FakeClock()))


def expected(profile):
    """The GpuSample fields a profile should read as: percent -> ratio, MiB/s -> bytes/s."""
    return {
        field: value / 100.0 if field.endswith("_ratio") else value * MIB
        for field, (metric_id, _) in GPM_FIELDS.items()
        for value in (profile[metric_id],)
    }


def activity(gpu):
    return {field: getattr(gpu, field) for field in GPM_FIELDS}


def test_supported_gpu_reads_the_recorded_values_from_its_second_sample():
    fake = enable_gpm(make_fake_gpus(2), 0, TRAINING)
    reader = reader_for(fake)
    first = reader.sample()[0]
    assert first.gpm_supported is True
    assert all(is_na(value) for value in activity(first).values())  # one sample: no interval yet
    second = reader.sample()[0]
    assert activity(second) == pytest.approx(expected(TRAINING))
    assert second.sm_active_ratio == pytest.approx(0.93) and second.tensor_active_ratio == pytest.approx(0.75)
    assert second.nvlink_rx_bytes_per_s == pytest.approx(41_000 * MIB)


def test_values_follow_the_interval_between_samples():
    fake = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    reader = reader_for(fake)
    reader.sample()
    reader.sample()
    fake.devices[0].gpm_metrics = dict(NCCL_HANG)
    assert activity(reader.sample()[0]) == pytest.approx(expected(NCCL_HANG))


def test_unsupported_gpus_are_na_without_an_exception():
    fake = make_real_machine("a100_sxm4_x4")
    reader = reader_for(fake)
    for _ in range(3):
        gpus = reader.sample()
    for gpu in gpus:
        assert gpu.gpm_supported is False
        assert all(value is NA for value in activity(gpu).values())
        assert not gpu.lost and gpu.utilization_percent == 0.0
    assert fake.calls["nvmlGpmQueryDeviceSupport"] == 4  # asked once per GPU, then remembered
    assert fake.calls["nvmlGpmSampleAlloc"] == 0


def test_a_support_query_that_raises_not_supported_is_unsupported():
    fake = make_fake_gpus(1)
    fake.fail("nvmlGpmQueryDeviceSupport", pynvml.NVMLError_NotSupported)
    gpu = reader_for(fake).sample()[0]
    assert gpu.gpm_supported is False and gpu.sm_active_ratio is NA


def test_one_metric_the_driver_lacks_is_na_and_the_others_stand():
    profile = {key: value for key, value in TRAINING.items() if key != 13}  # no FP16 pipe metric
    fake = enable_gpm(make_fake_gpus(1), 0, profile)
    reader = reader_for(fake)
    reader.sample()
    gpu = reader.sample()[0]
    assert gpu.fp16_active_ratio is NA and gpu.fp32_active_ratio == pytest.approx(0.09)


def test_two_buffers_per_gpu_reused_and_freed_on_close():
    fake = enable_gpm(enable_gpm(make_fake_gpus(3), 0, TRAINING), 1, IDLE)
    reader = reader_for(fake)
    for _ in range(5):
        reader.sample()
    assert fake.calls["nvmlGpmSampleAlloc"] == 4 and len(fake.gpm_samples) == 4
    reader.close()
    assert fake.gpm_samples == {} and fake.calls["nvmlGpmSampleFree"] == 4


def test_sampler_close_frees_the_buffers(tmp_path):
    fake = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    sampler = sampler_with(fake)
    sampler.sample()
    assert len(fake.gpm_samples) == 2
    sampler.close()
    assert fake.gpm_samples == {}


def test_an_error_mid_way_skips_one_interval_then_recovers():
    fake = enable_gpm(make_fake_gpus(2), 0, TRAINING)
    enable_gpm(fake, 1, TRAINING)
    reader = reader_for(fake)
    reader.sample()
    fake.fail("nvmlGpmSampleGet", pynvml.NVMLError_InsufficientResources, device_index=0)
    broken, other = reader.sample()
    assert broken.sm_active_ratio is NA and not broken.lost
    assert other.sm_active_ratio == pytest.approx(0.93)
    fake.clear_failures()
    assert reader.sample()[0].sm_active_ratio is NA  # a fresh interval starts here
    assert reader.sample()[0].sm_active_ratio == pytest.approx(0.93)
    fake.fail("nvmlGpmMetricsGet", pynvml.NVMLError_InsufficientResources)
    assert reader.sample()[0].tensor_active_ratio is NA
    fake.clear_failures()
    assert reader.sample()[0].tensor_active_ratio == pytest.approx(0.75)
    assert len(fake.gpm_samples) == 4


def test_a_gpu_lost_during_gpm_frees_its_buffers_and_comes_back():
    fake = hang(make_fake_gpus(2), 0)
    enable_gpm(fake, 1, TRAINING)
    reader = reader_for(fake)
    reader.sample()
    fake.fail("nvmlGpmSampleGet", pynvml.NVMLError_GpuIsLost, device_index=0)
    lost, other = reader.sample()
    assert lost.lost and other.sm_active_ratio == pytest.approx(0.93)
    assert len(fake.gpm_samples) == 2  # GPU 0's two buffers freed
    fake.clear_failures()
    reader.sample()
    back = reader.sample()[0]
    assert not back.lost and back.sm_active_ratio == pytest.approx(0.15)


def test_a_binding_without_gpm_functions_is_na():
    fake = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    fake.remove("nvmlGpmQueryDeviceSupport")
    reader = reader_for(fake)
    reader.sample()
    gpu = reader.sample()[0]
    assert gpu.gpm_supported is False and gpu.sm_active_ratio is NA


def test_a_failed_allocation_is_na_not_a_lost_gpu():
    fake = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    fake.fail("nvmlGpmSampleAlloc", pynvml.NVMLError_Unknown)
    reader = reader_for(fake)
    reader.sample()
    gpu = reader.sample()[0]
    assert not gpu.lost and gpu.gpm_supported is False and gpu.sm_active_ratio is NA
    assert fake.gpm_samples == {}


def test_sampling_not_supported_any_more_says_unsupported_and_frees():
    fake = enable_gpm(make_fake_gpus(1), 0, TRAINING)
    reader = reader_for(fake)
    reader.sample()
    fake.fail("nvmlGpmSampleGet", pynvml.NVMLError_NotSupported)  # e.g. MIG mode switched on
    gpu = reader.sample()[0]
    assert gpu.gpm_supported is False and gpu.sm_active_ratio is NA and fake.gpm_samples == {}

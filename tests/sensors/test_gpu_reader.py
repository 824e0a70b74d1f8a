"""GPU readings from the fake fixtures: values, slow-field caching, MIG, throttle words."""

from __future__ import annotations

import pytest

from pth_top.sensors.gpu import SLOW_FIELD_TTL_S, THERMAL_FIELD_TTL_S, GpuReader, format_cuda_version
from pth_top.sensors.na import NA
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.throttle import decode_throttle_reasons
from tests.fakes.gpu_fixtures import enable_mig, make_fake_gpus
from tests.sensors.helpers import FakeClock


def reader_for(fake, clock=None):
    return GpuReader(NvmlSession(fake, clock=clock or FakeClock()))


def test_eight_h100_values():
    reader = reader_for(make_fake_gpus(8))
    gpus = reader.sample()
    assert reader.driver_versions() == ("550.54.15", "12.4")
    assert [gpu.index for gpu in gpus] == list(range(8))
    first = gpus[0]
    assert first.name == "NVIDIA H100 80GB HBM3"
    assert first.bus_id == "00000000:18:00.0"
    assert first.power_limit_w == 700.0 and first.power_draw_w == 665.0
    assert first.throttle_reasons == ("power cap",)
    assert first.pcie_generation_current == first.pcie_generation_max == 5
    assert first.pcie_rx_bytes_per_s == 3_400_000 * 1024.0
    assert first.nvlink_active_links == 18
    assert first.ecc_enabled is True and first.ecc_volatile_uncorrected_errors == 0
    assert first.fan_speed_percent is NA and first.pstate == "P0"
    idle = gpus[3]
    assert idle.throttle_reasons == ("idle",) and idle.pcie_link_degraded and idle.pstate == "P8"
    assert gpus[5].ecc_volatile_uncorrected_errors == 2
    assert len({gpu.uuid for gpu in gpus}) == 8


def test_fixtures_are_deterministic():
    assert reader_for(make_fake_gpus(8)).sample() == reader_for(make_fake_gpus(8)).sample()
    a100 = reader_for(make_fake_gpus(1, model="A100")).sample()[0]
    assert a100.name == "NVIDIA A100 80GB PCIe" and a100.nvlink_active_links is NA
    with pytest.raises(ValueError):
        make_fake_gpus(1, model="V100")


def test_mig_instances_listed_under_their_parent():
    gpus = reader_for(enable_mig(make_fake_gpus(2, model="A100"), 1)).sample()
    assert gpus[0].mig_enabled is False and gpus[0].mig_instances == ()
    assert gpus[1].mig_enabled is True
    assert [instance.gpu_instance_id for instance in gpus[1].mig_instances] == [1, 2]
    assert gpus[1].mig_instances[0].name.endswith("MIG 3g.40gb")


def test_slow_fields_are_cached_until_their_ttl():
    fake = make_fake_gpus(2)
    clock = FakeClock()
    reader = reader_for(fake, clock)
    reader.sample()
    clock.advance(min(SLOW_FIELD_TTL_S, THERMAL_FIELD_TTL_S) / 2)
    reader.sample()
    assert fake.calls["nvmlDeviceGetUtilizationRates"] == 4
    for slow in ("nvmlDeviceGetTemperature", "nvmlDeviceGetEccMode", "nvmlDeviceGetEnforcedPowerLimit",
                 "nvmlDeviceGetMaxPcieLinkGeneration"):
        assert fake.calls[slow] == 2, slow
    clock.advance(max(SLOW_FIELD_TTL_S, THERMAL_FIELD_TTL_S))
    reader.sample()
    for slow in ("nvmlDeviceGetTemperature", "nvmlDeviceGetEccMode", "nvmlDeviceGetEnforcedPowerLimit"):
        assert fake.calls[slow] == 4, slow
    # Identity is read once per handle, never again.
    assert fake.calls["nvmlDeviceGetName"] == fake.calls["nvmlDeviceGetUUID"] == 2
    assert fake.calls["nvmlDeviceGetCount"] == 1 and fake.calls["nvmlInit"] == 1


@pytest.mark.parametrize("mask, words", [
    (0, ()),
    (0x1, ("idle",)),
    (0x4, ("power cap",)),
    (0x20 | 0x40, ("thermal (SW)", "thermal (HW)")),
    (0x8 | 0x80, ("HW slowdown", "power brake (HW)")),
    (0x10 | 0x2 | 0x100, ("sync boost", "applications clocks", "display clocks")),
    (0x4 | 0x1000, ("power cap", "other 0x1000")),
])
def test_throttle_reasons_in_words(mask, words):
    assert decode_throttle_reasons(mask) == words


def test_cuda_version_format():
    assert format_cuda_version(12040) == "12.4"
    assert format_cuda_version(11080) == "11.8"
    assert format_cuda_version(NA) is NA

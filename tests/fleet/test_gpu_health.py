"""GpuHealthReader on hostile or partial NVML answers: unsupported, garbage shapes and types all become NA."""

from __future__ import annotations

from types import SimpleNamespace

import pynvml as real_pynvml
import pytest

from pth_top.fleet.metrics import FamilyBook
from pth_top.sensors.gpu_health import GpuHealthReader
from pth_top.sensors.na import NA
from pth_top.sensors.nvml import GpuLostError, NvmlSession
from tests.fakes.fake_pynvml import FakeHandle
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fleet.fixtures import make_exporter_gpus
from tests.fleet.scraping import scrape
from tests.fleet.test_collector import exporter, gpu


def health_of(fake, index=0, ecc_enabled=True, nvlink_links=18):
    session = NvmlSession(fake)
    assert session.start()
    return GpuHealthReader(session).read(index, FakeHandle(index), ecc_enabled, nvlink_links)


def test_nothing_supported_is_all_na():
    health = health_of(make_fake_gpus(1), nvlink_links=NA)
    assert health.energy_joules is NA and health.pcie_replays is NA and health.remapped_rows_correctable is NA
    assert health.row_remap_pending is NA and health.retired_pages_single_bit is NA
    assert health.violation_seconds == () and health.nvlink_errors == ()
    assert health.ecc_corrected_errors is NA and health.ecc_uncorrected_errors == 0


@pytest.mark.parametrize("answer", [(), (1, 2), "1,2,0,0", None, (1.5, 2, 0, 0)])
def test_remapped_rows_of_the_wrong_shape(answer):
    fake = make_exporter_gpus(1)
    fake.devices[0].values["nvmlDeviceGetRemappedRows"] = answer
    health = health_of(fake)
    assert health.remapped_rows_correctable is NA
    if not (isinstance(answer, tuple) and len(answer) == 4):
        assert health.row_remap_pending is NA


def test_field_values_with_failures_and_unknown_types_are_skipped():
    fake = make_exporter_gpus(1)
    fake.devices[0].values["nvmlDeviceGetFieldValues"] = lambda field_ids: [
        SimpleNamespace(fieldId=82, nvmlReturn=0, valueType=99, value=SimpleNamespace(ullVal=50)),
        SimpleNamespace(fieldId=138, nvmlReturn=3, valueType=3, value=SimpleNamespace(ullVal=7)),
        SimpleNamespace(fieldId=139, nvmlReturn=0, valueType=3, value=SimpleNamespace(ullVal=True)),
        SimpleNamespace(fieldId=38, nvmlReturn=0, valueType=3, value=SimpleNamespace(ullVal=4)),
        "garbage",
    ]
    health = health_of(fake)
    assert health.memory_temperature_c is NA
    assert health.nvlink_transmit_bytes is NA and health.nvlink_receive_bytes is NA
    assert health.nvlink_errors == (("crc_flit", 4),)


def test_violation_status_without_a_time_is_left_out():
    fake = make_exporter_gpus(1)
    fake.devices[0].values["nvmlDeviceGetViolationStatus"] = lambda policy: (
        SimpleNamespace(violationTime=2_000_000_000) if policy == 0 else SimpleNamespace())
    assert health_of(fake).violation_seconds == (("power", 2.0),)


def test_a_gpu_lost_while_reading_health_raises_for_the_caller():
    fake = make_exporter_gpus(1)
    fake.fail("nvmlDeviceGetTotalEnergyConsumption", real_pynvml.NVMLError_GpuIsLost)
    with pytest.raises(GpuLostError):
        health_of(fake)


def test_hostile_gpu_name_and_uuid_become_printable_labels():
    fake = make_exporter_gpus(1)
    fake.devices[0].values["nvmlDeviceGetName"] = b"Evil\x1b]52;c;owned\x07 GPU"
    fake.devices[0].values["nvmlDeviceGetUUID"] = "GPU-\x1b[2J"
    result = scrape(exporter(fake)[1])
    assert "\x1b" not in result.text
    assert result.get("pth_top_gpu_memory_used_bytes", **gpu(0, "GPU-\\x1b[2J")) is not None


def test_family_book_refuses_programming_errors():
    book = FamilyBook()
    with pytest.raises(TypeError):
        book.add("pth_top_gpu_power_watts", ("0", "GPU-x"), "650")
    with pytest.raises(ValueError):
        book.add("pth_top_gpu_power_watts", ("0",), 650)
    with pytest.raises(KeyError):
        book.add("pth_top_gpu_power_percent", ("0", "GPU-x"), 65)

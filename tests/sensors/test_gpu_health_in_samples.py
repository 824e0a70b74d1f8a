"""GPU health in the dashboard's samples: Xid errors since start, row remapping, retired pages, and why
a temperature is N/A; shown in words in the GPU detail line and flagged in the GPU table."""

from __future__ import annotations

import time

import pynvml as real_pynvml

from pth_top.sensors.gpu import GpuReader
from pth_top.sensors.gpu_health import GpuHealthReader
from pth_top.sensors.na import NA
from pth_top.sensors.nvml import NvmlSession
from pth_top.tui.panels.gpus import gpu_cells, gpu_detail_text
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.fleet.fixtures import XidQueue, make_exporter_gpus
from tests.sensors.helpers import FakeClock, sampler_with, small_proc_root
from tests.waiting import WAIT_TIMEOUT_S


def health_reader_for(fake, clock=None):
    session = NvmlSession(fake, clock=clock or FakeClock())
    return GpuReader(session, health=GpuHealthReader(session))


def test_pending_row_remap_is_in_words_and_flagged():
    gpus = health_reader_for(make_exporter_gpus(4)).sample()
    pending = gpus[2]
    assert pending.remapped_rows_pending is True and pending.remapped_rows == 3
    assert pending.remapped_rows_failed is False
    assert pending.retired_pages is NA  # H100-like: rows are remapped, pages are not retired
    assert pending.health_problems == ("row remap pending (reset the GPU)",)
    assert gpu_cells(pending)[0].plain == "2!"
    assert "health: row remap pending (reset the GPU)" in gpu_detail_text(pending).plain
    healthy = gpus[0]
    assert healthy.health_problems == () and gpu_cells(healthy)[0].plain == "0"
    assert "0 remapped rows, none pending" in gpu_detail_text(healthy).plain


def test_failed_remap_and_retired_pages_are_problems():
    fake = make_exporter_gpus(2)
    fake.devices[0].values["nvmlDeviceGetRemappedRows"] = (0, 3, 0, 1)
    fake.devices[1].values["nvmlDeviceGetRetiredPages"] = lambda cause: [0x1000] * (2 if cause == 0 else 1)
    failed, retired = health_reader_for(fake).sample()
    assert "row remapping failed (GPU needs service)" in failed.health_problems
    assert retired.retired_pages == 3 and "3 retired pages" in retired.health_problems


def test_memory_repair_is_read_once_per_slow_ttl():
    fake = make_exporter_gpus(2)
    clock = FakeClock()
    reader = health_reader_for(fake, clock)
    for _ in range(3):
        reader.sample()
        clock.advance(1.0)
    assert fake.calls["nvmlDeviceGetRemappedRows"] == 2


def test_temperature_na_says_why():
    fake = make_fake_gpus(3)
    del fake.devices[0].values["nvmlDeviceGetTemperature"]
    fake.fail("nvmlDeviceGetTemperature", real_pynvml.NVMLError_NoPermission, device_index=1)
    no_sensor, no_permission, reading = health_reader_for(fake).sample()
    assert no_sensor.temperature_c is NA and no_sensor.temperature_missing_reason == "no sensor"
    assert no_permission.temperature_missing_reason == "no permission"
    assert reading.temperature_missing_reason is NA and reading.temperature_c > 0
    assert "temperature N/A (no sensor)" in gpu_detail_text(no_sensor).plain
    assert "temperature N/A (no permission)" in gpu_detail_text(no_permission).plain
    assert "temperature N/A" not in gpu_detail_text(reading).plain


def test_xid_errors_counted_from_the_second_sample_on(tmp_path):
    queue = XidQueue()
    sampler = sampler_with(make_exporter_gpus(2, xid_queue=queue), proc_root=small_proc_root(tmp_path))
    try:
        first = sampler.sample()
        assert [gpu.xid_errors for gpu in first.gpus] == [NA, NA], "a one-off sample starts no watcher"
        assert queue.registered == []
        sampler.sample()
        assert queue.registered == [0, 1]
        queue.push(1, 79)
        queue.push(1, 48)
        deadline = time.monotonic() + WAIT_TIMEOUT_S
        while (gpus := sampler.sample().gpus)[1].xid_errors != 2:
            assert time.monotonic() < deadline, f"Xid errors never counted: {gpus[1].xid_errors}"
            time.sleep(0.02)
        assert gpus[0].xid_errors == 0
        assert gpus[1].health_problems == ("2 Xid errors since start",)
        healthy = "health: no Xid errors since start, 0 remapped rows, none pending"
        assert gpu_detail_text(gpus[0]).plain.endswith(healthy)
    finally:
        sampler.close()
    assert sampler._xid_thread is not None
    sampler._xid_thread.join(WAIT_TIMEOUT_S)  # it ends (how fast depends on the machine's load)
    assert not sampler._xid_thread.is_alive()


def test_a_sampler_closed_after_one_sample_has_no_thread(tmp_path):
    sampler = sampler_with(make_exporter_gpus(1, xid_queue=XidQueue()), proc_root=small_proc_root(tmp_path))
    sampler.sample()
    sampler.close()
    assert sampler._xid_thread is None

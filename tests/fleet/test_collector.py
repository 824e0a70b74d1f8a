"""The exporter's collector on a scripted 8-GPU NVML: values in base units, unsupported left out, bounded labels."""

from __future__ import annotations

import threading
from pathlib import Path

import pynvml as real_pynvml
import pytest

from pth_top.fleet.collector import ExporterCollector, ExportOptions, make_registry
from pth_top.fleet.gpu_families import WATCHED_XIDS
from pth_top.fleet.metrics import SPECS
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.xid_events import XidEventWatcher
from tests.fakes.fake_pynvml import FakeHandle, FakePynvml
from tests.fakes.gpu_fixtures import enable_mig
from tests.fleet.fixtures import XidQueue, energy_mj, make_exporter_gpus, violation_ns
from tests.fleet.scraping import Scrape, scrape
from tests.sensors.helpers import FakeClock
from tests.sensors.proc_tree import add_process, make_proc_root

MIB = 1024 * 1024


def exporter(fake, clock=None, **options) -> tuple[ExporterCollector, object]:
    clock = clock or FakeClock()
    collector = ExporterCollector(NvmlSession(fake, clock=clock), ExportOptions(reuse_s=0.0, **options), clock=clock)
    return collector, make_registry(collector)


def gpu(index: int, uuid: str | None = None) -> dict[str, str]:
    return {"gpu": str(index), "uuid": uuid or f"GPU-h100{index:02d}-0000-4000-8000-{index:012d}"}


def test_registering_reads_no_nvml():
    fake = make_exporter_gpus(8)
    exporter(fake)
    assert sum(fake.calls.values()) == 0


def test_eight_gpus_in_base_units():
    result = scrape(exporter(make_exporter_gpus(8))[1])
    assert result.get("pth_top_nvml_up") == 1.0
    assert len(result.series("pth_top_gpu_info")) == 8
    assert result.get("pth_top_gpu_info", **gpu(0), name="NVIDIA H100 80GB HBM3", bus_id="00000000:18:00.0",
                      vbios="96.00.89.00.01") == 1.0
    assert result.get("pth_top_gpu_utilization_ratio", **gpu(0)) == pytest.approx(0.55)
    assert result.get("pth_top_gpu_memory_utilization_ratio", **gpu(0)) == pytest.approx(0.27)
    assert result.get("pth_top_gpu_memory_used_bytes", **gpu(1)) == (20_000 + 7919) * MIB
    assert result.get("pth_top_gpu_memory_total_bytes", **gpu(1)) == 81559 * MIB
    assert result.get("pth_top_gpu_power_watts", **gpu(0)) == pytest.approx(665.0)
    assert result.get("pth_top_gpu_power_limit_watts", **gpu(0)) == pytest.approx(700.0)
    assert result.get("pth_top_gpu_energy_joules_total", **gpu(3)) == pytest.approx(energy_mj(3) / 1000)
    assert result.get("pth_top_gpu_sm_clock_hertz", **gpu(0)) == pytest.approx(1980e6)
    assert result.get("pth_top_gpu_sm_clock_max_hertz", **gpu(0)) == pytest.approx(1980e6)
    assert result.get("pth_top_gpu_memory_clock_hertz", **gpu(0)) == pytest.approx(2619e6)
    assert result.get("pth_top_gpu_performance_state", **gpu(3)) == 8.0
    assert result.get("pth_top_gpu_temperature_celsius", **gpu(0)) == 58.0
    assert result.get("pth_top_gpu_memory_temperature_celsius", **gpu(4)) == 49.0
    assert result.get("pth_top_gpu_pcie_link_generation", **gpu(3)) == 1.0
    assert result.get("pth_top_gpu_pcie_link_generation_max", **gpu(3)) == 5.0
    assert result.get("pth_top_gpu_pcie_receive_bytes_per_second", **gpu(0)) == 3_400_000 * 1024
    assert result.get("pth_top_gpu_pcie_replays_total", **gpu(2)) == 6.0
    assert result.get("pth_top_gpu_nvlink_links_active", **gpu(0)) == 18.0
    assert result.get("pth_top_gpu_nvlink_transmit_bytes_total", **gpu(1)) == 1_000_001 * 1024
    assert result.get("pth_top_gpu_nvlink_errors_total", **gpu(3), error="replay") == 6.0
    assert result.get("pth_top_gpu_ecc_enabled", **gpu(0)) == 1.0
    assert result.get("pth_top_gpu_ecc_errors_total", **gpu(5), severity="uncorrected") == 2.0
    assert result.get("pth_top_gpu_ecc_errors_total", **gpu(5), severity="corrected") == 50.0
    assert result.get("pth_top_gpu_mig_enabled", **gpu(0)) == 0.0
    assert result.get("pth_top_gpu_lost", **gpu(0)) == 0.0


def test_throttle_reasons_and_time():
    result = scrape(exporter(make_exporter_gpus(8))[1])
    reasons = {dict(labels)["reason"]: value
               for labels, value in result.series("pth_top_gpu_clocks_event_active").items()
               if dict(labels)["gpu"] == "0"}
    assert len(reasons) == 9 and reasons["sw_power_cap"] == 1.0
    assert sum(reasons.values()) == 1.0
    assert result.get("pth_top_gpu_clocks_event_active", **gpu(3), reason="gpu_idle") == 1.0
    assert result.get("pth_top_gpu_throttle_seconds_total", **gpu(2), reason="thermal") == violation_ns(2, 1) / 1e9
    assert result.types["pth_top_gpu_throttle_seconds"] == "counter"


def test_memory_repair_state():
    result = scrape(exporter(make_exporter_gpus(8))[1])
    assert result.get("pth_top_gpu_remapped_rows", **gpu(2), severity="uncorrectable") == 1.0
    assert result.get("pth_top_gpu_remapped_rows", **gpu(2), severity="correctable") == 2.0
    assert result.get("pth_top_gpu_row_remap_pending", **gpu(2)) == 1.0
    assert result.get("pth_top_gpu_row_remap_pending", **gpu(1)) == 0.0
    assert result.get("pth_top_gpu_row_remap_failed", **gpu(2)) == 0.0


def test_unsupported_readings_are_left_out_not_zero():
    fake = make_exporter_gpus(8)
    fake.remove("nvmlDeviceGetTotalEnergyConsumption")
    del fake.devices[6].values["nvmlDeviceGetFieldValues"]
    result = scrape(exporter(fake)[1])
    names = result.names()
    # H100 SXM: no fan reading, no retired pages (Ampere and later remap rows instead).
    assert "pth_top_gpu_fan_speed_ratio" not in names
    assert "pth_top_gpu_retired_pages" not in names
    assert "pth_top_gpu_energy_joules_total" not in names
    assert result.get("pth_top_gpu_memory_temperature_celsius", **gpu(6)) is None
    assert result.get("pth_top_gpu_nvlink_transmit_bytes_total", **gpu(6)) is None
    assert result.get("pth_top_gpu_memory_temperature_celsius", **gpu(5)) == 50.0
    assert all(value < 2**53 for value in result.values.values()), "a sentinel leaked as a value"


def test_a100_pcie_has_no_nvlink_series():
    fake = make_exporter_gpus(1)
    fake.devices[0].values.pop("nvmlDeviceGetNvLinkState")
    result = scrape(exporter(fake)[1])
    assert not {name for name in result.names() if "nvlink" in name}


def test_lost_gpu_keeps_identity_and_says_lost():
    fake = make_exporter_gpus(8)
    fake.fail("nvmlDeviceGetUtilizationRates", real_pynvml.NVMLError_GpuIsLost, device_index=4)
    fake.fail("nvmlDeviceGetHandleByPciBusId", real_pynvml.NVMLError_GpuIsLost)
    result = scrape(exporter(fake)[1])
    assert result.get("pth_top_gpu_lost", **gpu(4)) == 1.0
    assert result.get("pth_top_gpu_info", **gpu(4), name="NVIDIA H100 80GB HBM3", bus_id="00000000:9A:00.0",
                      vbios="") == 1.0
    assert result.get("pth_top_gpu_memory_used_bytes", **gpu(4)) is None
    assert result.get("pth_top_gpu_energy_joules_total", **gpu(4)) is None
    assert result.get("pth_top_gpu_memory_used_bytes", **gpu(5)) is not None
    assert result.get("pth_top_nvml_up") == 1.0


def test_no_driver_serves_nvml_up_zero_and_host_identity():
    result = scrape(exporter(FakePynvml(init_error=real_pynvml.NVMLError_DriverNotLoaded))[1])
    assert result.get("pth_top_nvml_up") == 0.0
    assert not {name for name in result.names() if name.startswith("pth_top_gpu")}
    (labels, value), = result.series("pth_top_host_info").items()
    assert value == 1.0 and dict(labels)["nvidia_driver_version"] == ""


def test_labels_stay_within_the_declared_bounded_sets():
    fake = make_exporter_gpus(8, process_pids={index: [1] for index in range(8)})
    result = scrape(exporter(enable_mig(fake, 1), host_metrics=True)[1])
    for (name, labels), _value in result.values.items():
        family = name if name in SPECS else name.removesuffix("_total") + "_total"
        if family not in SPECS:
            assert name.startswith("process_"), f"{name} is not declared"
            continue
        assert tuple(sorted(key for key, _ in labels)) == tuple(sorted(SPECS[family].labels)), name
        assert not {"hostname", "instance", "job", "driver_version"} & {key for key, _ in labels} or name.endswith(
            "_info"), name
    reasons = {dict(labels)["reason"] for labels in result.series("pth_top_gpu_clocks_event_active")}
    assert len(reasons) == 9


def test_mig_instances_by_profile():
    result = scrape(exporter(enable_mig(make_exporter_gpus(8), 1))[1])
    assert result.get("pth_top_gpu_mig_enabled", **gpu(1)) == 1.0
    assert result.get("pth_top_mig_memory_used_bytes", **gpu(1), gpu_instance="1", profile="3g.40gb") == 12_000 * MIB
    assert result.get("pth_top_mig_memory_total_bytes", **gpu(1), gpu_instance="2", profile="3g.40gb") == 40192 * MIB
    assert len(result.series("pth_top_mig_memory_used_bytes")) == 2


def process_tree(tmp_path: Path, pids: list[int]) -> str:
    root = make_proc_root(tmp_path / "proc")
    for pid in pids:
        comm = "evil\x1b]0;owned\x07" if pid == 1010 else f"train{pid}"
        add_process(root, pid, comm, ["python", "train.py", "--token=SECRET"])
    return str(root)


def test_processes_capped_per_gpu_with_per_user_sums(tmp_path):
    pids = list(range(1000, 1015))
    root = process_tree(tmp_path, pids)
    fake = make_exporter_gpus(8, process_pids={0: pids + [999_999], 1: [1001]})
    result = scrape(exporter(fake, proc_root=root, processes_per_gpu=10)[1])
    per_process = {labels: value for labels, value in result.series("pth_top_process_gpu_memory_bytes").items()
                   if dict(labels)["gpu"] == "0"}
    assert len(per_process) == 10
    each = fake.devices[0].values["nvmlDeviceGetComputeRunningProcesses"][0].usedGpuMemory
    user_sum = result.get("pth_top_user_gpu_memory_bytes", **gpu(0), user="root")
    assert user_sum == each * 15
    # The PID that exited between NVML's list and our /proc read still counts, under an unknown user.
    assert result.get("pth_top_user_gpu_memory_bytes", **gpu(0), user="") == each
    assert result.get("pth_top_gpu_compute_processes", **gpu(0)) == 16.0
    assert result.get("pth_top_gpu_compute_processes", **gpu(2)) == 0.0
    assert "SECRET" not in result.text and "train.py" not in result.text
    assert result.get("pth_top_process_gpu_memory_bytes", **gpu(1), pid="1001", user="root", comm="train1001",
                      job_id="1001", job_kind="tree", pod="", namespace="", container="") == (
        fake.devices[1].values["nvmlDeviceGetComputeRunningProcesses"][0].usedGpuMemory)


def test_process_name_with_escape_codes_is_made_printable(tmp_path):
    root = process_tree(tmp_path, [1010])
    result = scrape(exporter(make_exporter_gpus(2, process_pids={0: [1010]}), proc_root=root)[1])
    (labels, _value), = result.series("pth_top_process_gpu_memory_bytes").items()
    assert dict(labels)["comm"] == "evil\\x1b]0;owned\\x07"
    assert "\x1b" not in result.text


def test_no_process_metrics_flag():
    fake = make_exporter_gpus(2, process_pids={0: [1]})
    names = scrape(exporter(fake, process_metrics=False)[1]).names()
    assert "pth_top_process_gpu_memory_bytes" not in names and "pth_top_user_gpu_memory_bytes" not in names


def test_host_metrics_only_with_the_flag():
    without = scrape(exporter(make_exporter_gpus(1))[1]).names()
    assert "pth_top_host_info" in without
    assert not {name for name in without if name.startswith("pth_top_host_") and name != "pth_top_host_info"}
    with_host = scrape(exporter(make_exporter_gpus(1), host_metrics=True)[1])
    assert (with_host.get("pth_top_host_cpu_seconds_total", mode="idle") or 0) > 0
    assert (with_host.get("pth_top_host_memory_total_bytes") or 0) > 0
    assert with_host.types["pth_top_host_network_receive_bytes"] == "counter"


def test_concurrent_scrapes_share_one_locked_reading():
    fake = make_exporter_gpus(8)
    clock = FakeClock()
    collector = ExporterCollector(NvmlSession(fake, clock=clock), ExportOptions(reuse_s=1.0), clock=clock)
    registry = make_registry(collector)
    results: list[Scrape] = []
    errors: list[BaseException] = []

    def scrape_once() -> None:
        try:
            results.append(scrape(registry))
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=scrape_once) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(results) == 8
    assert fake.calls["nvmlDeviceGetUtilizationRates"] == 8, "one reading of 8 GPUs for all 8 scrapes"
    assert len({result.text.split("pth_top_scrape_duration_seconds")[0] for result in results}) == 1
    clock.advance(1.0)
    scrape(registry)
    assert fake.calls["nvmlDeviceGetUtilizationRates"] == 16


def test_xid_errors_counted_by_gpu_and_code():
    queue = XidQueue()
    fake = make_exporter_gpus(8, xid_queue=queue)
    collector, registry = exporter(fake)
    watcher = XidEventWatcher(collector.session)
    collector.xid_watcher = watcher
    assert watcher.register(collector.gpu_handles())
    assert queue.registered == list(range(8))
    for gpu_index, code in ((2, 79), (2, 79), (5, 48), (1, 5000)):
        queue.push(gpu_index, code)
    for _ in range(4):
        watcher.wait_once(timeout_ms=0)
    result = scrape(registry)
    assert result.get("pth_top_gpu_xid_errors_total", **gpu(2), xid="79") == 2.0
    assert result.get("pth_top_gpu_xid_errors_total", **gpu(5), xid="48") == 1.0
    assert result.get("pth_top_gpu_xid_errors_total", **gpu(1), xid="other") == 1.0
    served = result.series("pth_top_gpu_xid_errors_total")
    assert len([value for value in served.values() if value]) == 3
    assert len(served) == 8 * len(WATCHED_XIDS), "every watched GPU serves the watched codes, from 0"
    assert result.get("pth_top_gpu_xid_events_watched", **gpu(7)) == 1.0


def test_xid_events_unsupported_say_so():
    fake = make_exporter_gpus(2)
    collector, registry = exporter(fake)
    watcher = XidEventWatcher(collector.session)
    collector.xid_watcher = watcher
    assert not watcher.register(collector.gpu_handles())
    result = scrape(registry)
    assert result.get("pth_top_gpu_xid_events_watched", **gpu(0)) == 0.0
    assert "pth_top_gpu_xid_errors_total" not in result.names()


def test_xid_wait_that_fails_fast_does_not_spin():
    fake = make_exporter_gpus(1, xid_queue=XidQueue())
    clock = FakeClock()
    session = NvmlSession(fake, clock=clock)
    assert session.start()
    watcher = XidEventWatcher(session, clock=clock)
    assert watcher.register([(0, "GPU-x", FakeHandle(0))])
    fake.fail("nvmlEventSetWait_v2", real_pynvml.NVMLError_Unknown)
    waited: list[float] = []
    watcher._stop.wait = lambda timeout: waited.append(timeout)
    watcher.wait_once(timeout_ms=1000)
    assert waited == [1.0]

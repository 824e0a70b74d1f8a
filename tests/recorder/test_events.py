"""Events from a recording of the scripted NVML and real processes: Xid, ECC, row remaps, throttling, lost GPUs,
limits, GPU process start and exit; each stored with its time, GPU or process and evidence."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from types import SimpleNamespace

import pynvml as real_pynvml

from pth_top.recorder.replay import snapshots
from pth_top.units import MIB
from tests.fakes.gpu_fixtures import by_argument
from tests.fleet.fixtures import XidQueue, make_exporter_gpus
from tests.recorder.helpers import make_recorder, step, stored_events
from tests.waiting import WAIT_TIMEOUT_S

THERMAL_HW_BIT = 0x40


def kinds(events) -> list[str]:
    return [event.kind for event in events]


def test_injected_gpu_faults_become_events_with_evidence(tmp_path):
    queue = XidQueue()
    fake = make_exporter_gpus(8, xid_queue=queue)
    path = tmp_path / "r.sqlite"
    recorder, nvml_clock = make_recorder(fake, path)
    try:
        assert step(recorder, nvml_clock) == [], "the first sample is the baseline"
        step(recorder, nvml_clock)  # the Xid watcher starts with the second sample
        queue.push(4, 79)
        deadline = time.monotonic() + WAIT_TIMEOUT_S
        xid = []
        while not xid:
            assert time.monotonic() < deadline, "the Xid never became an event"
            xid = [event for event in step(recorder, nvml_clock) if event.kind == "xid"]
        assert xid[0].gpu_index == 4 and xid[0].severity == "critical"
        assert xid[0].evidence["xid"] == 79 and "fallen off the bus" in xid[0].evidence["meaning"]

        values = fake.devices[1].values
        values["nvmlDeviceGetTotalEccErrors"] = by_argument({(1, 0): 5, (0, 0): 10})
        values["nvmlDeviceGetRemappedRows"] = (4, 2, 0, 0)
        values["nvmlDeviceGetCurrentClocksEventReasons"] = THERMAL_HW_BIT
        values["nvmlDeviceGetCurrentClocksThrottleReasons"] = THERMAL_HW_BIT
        fake.devices[3].values["nvmlDeviceGetTemperature"] = by_argument({0: 91})
        fake.fail("nvmlDeviceGetUtilizationRates", real_pynvml.NVMLError_GpuIsLost, device_index=6)
        events = step(recorder, nvml_clock)
        by_kind = {event.kind: event for event in events}
        assert {"ecc", "row_remap", "throttle_start", "gpu_lost", "temperature_limit"} <= set(by_kind), kinds(events)
        assert by_kind["ecc"].gpu_index == 1 and by_kind["ecc"].evidence == {
            "counter": "ecc_volatile_uncorrected_errors", "before": 0, "after": 5}
        assert by_kind["row_remap"].evidence["after"] == 6
        assert by_kind["throttle_start"].evidence["reasons"] == ["thermal (HW)"]
        assert by_kind["gpu_lost"].gpu_index == 6 and by_kind["gpu_lost"].severity == "critical"
        hot = by_kind["temperature_limit"]
        assert hot.gpu_index == 3 and hot.evidence["temperature_c"] == 91

        values["nvmlDeviceGetCurrentClocksEventReasons"] = 0
        values["nvmlDeviceGetCurrentClocksThrottleReasons"] = 0
        ended = [event for event in step(recorder, nvml_clock) if event.kind == "throttle_end"]
        assert ended and ended[0].evidence["reasons"] == ["thermal (HW)"]
        assert ended[0].evidence["duration_s"]["thermal (HW)"] > 0
        assert kinds(step(recorder, nvml_clock)).count("ecc") == 0, "a counter that stays put is no new event"
    finally:
        recorder.close()
    stored = stored_events(path)
    assert {"xid", "ecc", "row_remap", "throttle_start", "throttle_end", "gpu_lost"} <= {row[0] for row in stored}
    xid_row = next(row for row in stored if row[0] == "xid")
    assert xid_row[2] == 4 and json.loads(xid_row[5])["xid"] == 79


def test_power_limit_crossing_is_one_event_until_it_rearms(tmp_path):
    fake = make_exporter_gpus(2)
    values = fake.devices[1].values
    recorder, nvml_clock = make_recorder(fake, tmp_path / "r.sqlite")
    try:
        step(recorder, nvml_clock)
        values["nvmlDeviceGetPowerUsage"] = 699_000
        assert kinds(step(recorder, nvml_clock)).count("power_limit") == 1
        assert kinds(step(recorder, nvml_clock)).count("power_limit") == 0
        values["nvmlDeviceGetPowerUsage"] = 300_000
        step(recorder, nvml_clock)
        values["nvmlDeviceGetPowerUsage"] = 700_000
        again = [event for event in step(recorder, nvml_clock) if event.kind == "power_limit"]
        assert again and again[0].gpu_index == 1 and again[0].evidence["power_limit_w"] == 700
    finally:
        recorder.close()


def test_real_gpu_processes_start_and_exit_with_peak_memory_and_run_time(tmp_path):
    fake = make_exporter_gpus(8)
    on_gpu: list[SimpleNamespace] = []
    for suffix in ("_v3", "_v2", ""):
        fake.devices[2].values[f"nvmlDeviceGetComputeRunningProcesses{suffix}"] = lambda: list(on_gpu)
    recorder, nvml_clock = make_recorder(fake, tmp_path / "r.sqlite")
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        step(recorder, nvml_clock)
        on_gpu.append(SimpleNamespace(pid=child.pid, usedGpuMemory=1024 * MIB))
        started = [event for event in step(recorder, nvml_clock) if event.kind == "gpu_process_start"]
        assert [event.pid for event in started] == [child.pid] and started[0].gpu_index == 2
        assert "time.sleep(120)" in started[0].evidence["command"]
        on_gpu[0] = SimpleNamespace(pid=child.pid, usedGpuMemory=3072 * MIB)
        step(recorder, nvml_clock)
        on_gpu[0] = SimpleNamespace(pid=child.pid, usedGpuMemory=2048 * MIB)
        step(recorder, nvml_clock)
        child.kill()
        child.wait(WAIT_TIMEOUT_S)
        on_gpu.clear()
        exited = [event for event in step(recorder, nvml_clock) if event.kind == "gpu_process_exit"]
        assert [event.pid for event in exited] == [child.pid]
        evidence = exited[0].evidence
        assert evidence["peak_gpu_memory_bytes"] == 3072 * MIB and evidence["still_running"] is False
        assert evidence["run_time_s"] > 0 and evidence["gpus"] == [2]
    finally:
        child.kill()
        child.wait(WAIT_TIMEOUT_S)
        recorder.close()


def test_no_cmdline_records_the_name_only(tmp_path):
    fake = make_exporter_gpus(1)
    on_gpu: list[SimpleNamespace] = []
    for suffix in ("_v3", "_v2", ""):
        fake.devices[0].values[f"nvmlDeviceGetComputeRunningProcesses{suffix}"] = lambda: list(on_gpu)
    path = tmp_path / "r.sqlite"
    recorder, nvml_clock = make_recorder(fake, path, include_cmdline=False)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # token=hunter2"])
    try:
        step(recorder, nvml_clock)
        on_gpu.append(SimpleNamespace(pid=child.pid, usedGpuMemory=512 * MIB))
        started = [event for event in step(recorder, nvml_clock) if event.kind == "gpu_process_start"]
        assert started and "hunter2" not in started[0].message and "hunter2" not in str(started[0].evidence)
    finally:
        child.kill()
        child.wait(WAIT_TIMEOUT_S)
        recorder.close()
    connection = sqlite3.connect(path)
    try:
        stored = [json.dumps(snapshot) for snapshot in snapshots(connection, 0, float("inf"))]
        commands = [row[0] for row in connection.execute("SELECT command FROM processes")]
    finally:
        connection.close()
    assert stored and str(child.pid) in "".join(stored)
    assert not any("hunter2" in text for text in stored + commands)

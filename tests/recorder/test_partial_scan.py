"""The recorder reads every process each FULL_SCAN_EVERY_S only: GPU processes and its top ones every interval."""

from __future__ import annotations

import json
from types import SimpleNamespace

from pth_top.recorder.database import open_recording
from pth_top.recorder.recorder import FULL_SCAN_EVERY_S, Recorder, RecorderOptions
from pth_top.recorder.replay import snapshots
from pth_top.sensors.nvml import NvmlSession
from pth_top.sensors.sampler import Sampler
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.recorder.helpers import SteppedClock
from tests.sensors.helpers import FakeClock
from tests.sensors.proc_tree import add_process, make_proc_root

MIB = 1 << 20
IDLE = range(200, 230)


def set_gpu_pids(fake, pids: list[int]) -> None:
    listed = [SimpleNamespace(pid=pid, usedGpuMemory=1024 * MIB) for pid in pids]
    for suffix in ("_v3", "_v2", ""):
        fake.devices[0].values[f"nvmlDeviceGetComputeRunningProcesses{suffix}"] = listed


def test_gpu_processes_every_interval_and_a_new_top_process_within_the_full_scan_period(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1, "init", ["/sbin/init"], ppid=0)
    add_process(root, 100, "python", ["python", "train.py"], ppid=1, rss_pages=1000)
    for pid in IDLE:
        add_process(root, pid, "idle", ["idle"], ppid=1, rss_pages=10)
    fake = make_fake_gpus(1, process_pids={0: [100]})
    clock, nvml_clock, wall = FakeClock(), FakeClock(), SteppedClock()
    sampler = Sampler(nvml=NvmlSession(fake, clock=nvml_clock), clock=clock, proc_root=str(root),
                      full_scan_every_s=FULL_SCAN_EVERY_S)
    recorder = Recorder(RecorderOptions(path=tmp_path / "r.sqlite", top=2, min_free_bytes=0, read_kernel_log=False),
                        sampler=sampler, clock=wall)
    busy_ticks = 0

    def step() -> None:
        nonlocal busy_ticks
        busy_ticks += 100  # process 229 uses a whole core from its first step on
        add_process(root, 229, "idle", ["idle"], ppid=1, rss_pages=10, utime=busy_ticks)
        for each in (clock, nvml_clock, wall):
            each.advance(1.0)
        recorder.step()

    try:
        recorder.step()  # the first read is a full one
        assert sampler.fresh_pids is None
        steps = 0
        while 229 not in {process.pid for process in recorder._chosen}:
            step()
            steps += 1
            assert steps <= FULL_SCAN_EVERY_S, "a busy process is recorded within one full-scan period"
        assert steps > 1, "between full scans a process outside the recorded ones is not read"
        add_process(root, 300, "python", ["python", "serve.py"], ppid=1)
        set_gpu_pids(fake, [100, 300])
        step()
        assert sampler.fresh_pids is None, "a process NVML lists for the first time makes it a full read"
        step()
        assert sampler.fresh_pids is not None and {100, 300, 229} <= sampler.fresh_pids
    finally:
        recorder.close()
    connection = open_recording(tmp_path / "r.sqlite", create=False)
    try:
        recorded = [{process["pid"] for process in sample["processes"]} for sample in snapshots(connection, 0, 1e12)]
    finally:
        connection.close()
    assert len(recorded) == steps + 3
    assert all(100 in pids for pids in recorded), "the GPU process is in every sample"
    assert 300 in recorded[-2] and 300 in recorded[-1], "a new GPU process is recorded at once"
    assert 229 in recorded[-1], "a top process stays read while it is recorded"


def test_a_recorded_sample_leaves_out_derived_run_times_and_rounds_noise(tmp_path):
    from pth_top.recorder.rows import decompress
    from tests.recorder.helpers import make_recorder, step

    recorder, nvml_clock = make_recorder(make_fake_gpus(2), tmp_path / "r.sqlite")
    try:
        for _ in range(2):
            step(recorder, nvml_clock)
        connection = recorder.connection
        blob, keyframe = connection.execute("SELECT s.snapshot, k.snapshot FROM samples s JOIN keyframes k "
                                            "ON k.id = s.keyframe_id ORDER BY s.id DESC LIMIT 1").fetchone()
        stored = json.loads(decompress(blob, decompress(keyframe, None)))
        replayed = list(snapshots(connection, 0, 1e12))[-1]
    finally:
        recorder.close()
    assert stored["processes"] and all("running_time_s" not in process for process in stored["processes"])
    assert all(round(process["cpu_percent"], 1) == process["cpu_percent"] for process in stored["processes"])
    for process in replayed["processes"]:
        assert process["running_time_s"] == max(0.0, replayed["timestamp_s"] - process["start_time_s"])

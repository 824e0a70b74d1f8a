"""Exporter job series: per-process GPU memory labelled with the job (real processes with TORCHELASTIC_RUN_ID),
pod, namespace and container from a fake /proc; per-job GPU memory and energy from NVML's counter."""

from __future__ import annotations

import pytest

from tests.fleet.fixtures import make_exporter_gpus
from tests.fleet.scraping import scrape
from tests.fleet.test_collector import exporter, gpu
from tests.sensors.helpers import FakeClock
from tests.sensors.test_jobs import CONTAINER_ID, POD_UID, fake_proc_with_cgroups, trees  # noqa: F401


def test_process_series_carry_the_torchrun_job_and_jobs_get_energy(trees):  # noqa: F811
    launcher, workers = trees["torchrun"]
    fake = make_exporter_gpus(2, process_pids={0: [workers[0]], 1: [workers[1]]})
    counter = [5_000_000]
    for device in fake.devices:
        device.values["nvmlDeviceGetTotalEnergyConsumption"] = lambda: counter[0]
    clock = FakeClock()
    _collector, registry = exporter(fake, clock=clock)
    scrape(registry)
    counter[0] += 3_000  # 3 J on each GPU
    clock.advance(15.0)
    result = scrape(registry)
    series = result.series("pth_top_process_gpu_memory_bytes")
    labels = [dict(found) for found in series]
    assert {(found["pid"], found["job_id"], found["job_kind"]) for found in labels} == {
        (str(workers[0]), "run-42", "torchrun"), (str(workers[1]), "run-42", "torchrun")}
    user = labels[0]["user"]
    assert result.get("pth_top_job_energy_joules_total", job_id="run-42", kind="torchrun", user=user) == (
        pytest.approx(6.0))
    memory = sum(series.values())
    assert result.get("pth_top_job_gpu_memory_bytes", job_id="run-42", kind="torchrun", user=user) == memory
    assert launcher > 0


def test_process_series_carry_pod_namespace_and_container(tmp_path):
    fake = make_exporter_gpus(2, process_pids={0: [11], 1: [20]})
    _collector, registry = exporter(fake, proc_root=fake_proc_with_cgroups(tmp_path))
    result = scrape(registry)
    by_pid = {dict(found)["pid"]: dict(found) for found in result.series("pth_top_process_gpu_memory_bytes")}
    assert by_pid["11"]["pod"] == "trainer-0" and by_pid["11"]["namespace"] == "research"
    assert by_pid["11"]["job_id"] == POD_UID and by_pid["11"]["job_kind"] == "pod"
    assert by_pid["11"]["container"] == CONTAINER_ID[:12], "the pod's container id, after the pod UID in its cgroup"
    assert by_pid["20"]["container"] == CONTAINER_ID[:12] and by_pid["20"]["job_kind"] == "docker"
    assert result.get("pth_top_job_gpu_memory_bytes", **{"job_id": CONTAINER_ID[:12], "kind": "docker",
                                                        "user": by_pid["20"]["user"]}) is not None
    assert gpu(0)["gpu"] == "0"

"""Jobs: real process trees with TORCHELASTIC_RUN_ID / SLURM_JOB_ID in their environment, cgroup paths in a
fake /proc for Kubernetes, Docker and Slurm, the process-tree fallback, and energy from NVML's counter or power."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pth_top.sensors.job_environ import EnvironTags, JobTags, tags_from_environ
from pth_top.sensors.jobs import group_jobs
from pth_top.sensors.model import GpuProcessUse, GpuSample, ProcessSample
from pth_top.sensors.na import is_na
from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.sensors.helpers import FakeClock, sampler_with
from tests.sensors.proc_tree import add_process, make_proc_root
from tests.waiting import wait_for

SLEEPER = "import time; time.sleep(60)"
# A launcher starting two sleeping workers with `extra` in their environment, then sleeping itself.
LAUNCHER = (
    "import os, subprocess, sys, time, json\n"
    "extra = json.loads(sys.argv[1])\n"
    "env = dict(os.environ, **extra)\n"
    f"workers = [subprocess.Popen([sys.executable, '-c', {SLEEPER!r}], env=env) for _ in range(2)]\n"
    "time.sleep(60)\n"
)
POD_UID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
CONTAINER_ID = "31cb02944da7a12196a193cf0e0f6c226d7c453a1db62e65ba98287593a2ee30"


def children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
                found.append(int(name))
    return sorted(found)


def two_children(pid: int) -> list[int] | None:
    """The launcher's two workers once both have exec'd: a forked child shows its parent's environment until then
    (one was once read before its exec, without its TORCHELASTIC_RUN_ID, and grouped as a plain tree)."""
    found = [child for child in children_of(pid) if _command_of(child)[-1:] == [SLEEPER]]
    return found if len(found) == 2 else None


def _command_of(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").rstrip("\0").split("\0")
    except OSError:
        return []


@pytest.fixture
def trees():
    """Three real launchers: workers with a torchrun run id, a Slurm job (launcher too), a plain tree."""
    import json

    started = {}
    launchers = {
        "torchrun": ({}, {"TORCHELASTIC_RUN_ID": "run-42"}),
        "slurm": ({"SLURM_JOB_ID": "777"}, {}),
        "tree": ({}, {}),
    }
    try:
        for name, (own_env, worker_env) in launchers.items():
            env = {key: value for key, value in os.environ.items()
                   if key not in ("TORCHELASTIC_RUN_ID", "SLURM_JOB_ID")}
            launcher = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, json.dumps(worker_env)], env={**env, **own_env},
                start_new_session=True,
            )
            started[name] = launcher
        workers = {
            name: wait_for(lambda pid=launcher.pid: two_children(pid), f"the {name} workers")
            for name, launcher in started.items()
        }
        yield {name: (launcher.pid, workers[name]) for name, launcher in started.items()}
    finally:
        for launcher in started.values():
            try:
                os.killpg(launcher.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            launcher.wait(timeout=30)


def fake_counter(fake, index: int, start_mj: int = 1_000_000) -> list[int]:
    """NVML's total-energy counter of GPU `index`, in mJ, as a list the test moves on."""
    counter = [start_mj]
    fake.devices[index].values["nvmlDeviceGetTotalEnergyConsumption"] = lambda: counter[0]
    return counter


def job_of(snapshot, kind: str):
    return next(job for job in snapshot.jobs if job.kind == kind)


def test_real_trees_group_by_run_id_slurm_job_and_tree_root(trees):
    torchrun_launcher, torchrun_workers = trees["torchrun"]
    slurm_launcher, slurm_workers = trees["slurm"]
    tree_launcher, tree_workers = trees["tree"]
    fake = make_fake_gpus(4, process_pids={0: [torchrun_workers[0]], 1: [torchrun_workers[1]], 2: [tree_workers[0]]})
    clock = FakeClock()
    sampler = sampler_with(fake, clock)
    try:
        assert sampler.sample().jobs == (), "the first sample (the dashboard's first frame) skips the job step"
        clock.advance(1.0)
        snapshot = sampler.sample()
    finally:
        sampler.close()
    torchrun = job_of(snapshot, "torchrun")
    assert torchrun.job_id == "run-42"
    assert set(torchrun.pids) == {torchrun_launcher, *torchrun_workers}, "the launcher joins its workers"
    assert torchrun.gpu_indices == (0, 1) and torchrun.gpu_memory_used_bytes > 0
    assert torchrun.start_time_s <= min(p.start_time_s for p in snapshot.processes if p.pid in torchrun.pids)
    slurm = job_of(snapshot, "slurm")
    assert slurm.job_id == "777" and set(slurm.pids) == {slurm_launcher, *slurm_workers}
    assert slurm.gpu_indices == (), "a Slurm job is listed without a GPU"
    tree = job_of(snapshot, "tree")
    assert {tree_launcher, *tree_workers} <= set(tree.pids) and tree.gpu_indices == (2,)
    assert not set(tree.pids) & {torchrun_launcher, slurm_launcher, *torchrun_workers, *slurm_workers}
    by_pid = {process.pid: process for process in snapshot.processes}
    ancestor = tree_launcher
    while ancestor != int(tree.job_id):
        ancestor = by_pid[ancestor].ppid
        assert ancestor > 1, "the tree job is named after an ancestor of the launcher"


def test_environ_is_read_once_per_process(trees):
    _launcher, workers = trees["torchrun"]
    reader = EnvironTags()
    start = 123.0
    assert reader.tags(workers[0], start).torchelastic_run_id == "run-42"
    assert reader.tags(workers[0], start).torchelastic_run_id == "run-42"
    assert reader.reads == 1
    reader.tags(workers[0], start + 5.0)
    assert reader.reads == 2, "a reused PID (another start time) is read again"


def test_only_the_job_variables_are_kept():
    raw = b"SECRET_TOKEN=abc\0SLURM_JOB_ID=12\0POD_NAMESPACE=ml\0TORCHELASTIC_RUN_ID=" + b"x" * 500 + b"\0"
    tags = tags_from_environ(raw)
    assert tags.slurm_job_id == "12" and tags.pod_namespace == "ml" and len(tags.torchelastic_run_id) == 128
    assert "abc" not in repr(tags)


def fake_proc_with_cgroups(tmp_path: Path) -> str:
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1, "init", ["/sbin/init"], ppid=0)
    groups = {
        10: f"0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{POD_UID.replace('-', '_')}.slice"
            f"/cri-containerd-{CONTAINER_ID}.scope\n",
        20: f"0::/system.slice/docker-{CONTAINER_ID}.scope\n",
        30: "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n",
    }
    for pid, cgroup in groups.items():
        directory = add_process(root, pid, "python", ["python", "train.py"], ppid=1)
        (directory / "cgroup").write_text(cgroup)
    pod = add_process(root, 11, "python", ["python", "worker.py"], ppid=10)
    (pod / "cgroup").write_text(groups[10])
    (pod / "environ").write_bytes(b"POD_NAMESPACE=research\0POD_NAME=trainer-0\0")
    return str(root)


def test_cgroup_paths_give_pod_docker_and_slurm_jobs(tmp_path):
    fake = make_fake_gpus(3, process_pids={0: [11], 1: [20], 2: [30]})
    clock = FakeClock()
    sampler = sampler_with(fake, clock, proc_root=fake_proc_with_cgroups(tmp_path))
    try:
        sampler.sample()
        clock.advance(1.0)
        jobs = {job.kind: job for job in sampler.sample().jobs}
    finally:
        sampler.close()
    assert jobs["pod"].job_id == POD_UID and jobs["pod"].pids == (10, 11) and jobs["pod"].gpu_indices == (0,)
    assert jobs["pod"].namespace == "research" and jobs["pod"].pod_name == "trainer-0"
    assert jobs["pod"].container == f"pod:{POD_UID}/{CONTAINER_ID[:12]}"
    assert jobs["docker"].job_id == CONTAINER_ID[:12] and jobs["docker"].pids == (20,)
    assert jobs["slurm"].job_id == "4242" and jobs["slurm"].pids == (30,)


def gpu_jobs_sampler(tmp_path: Path, with_counter: bool):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1, "init", ["/sbin/init"], ppid=0)
    add_process(root, 50, "bash", ["bash", "run.sh"], ppid=1)
    add_process(root, 51, "python", ["python", "train.py"], ppid=50)
    add_process(root, 60, "python", ["python", "serve.py"], ppid=1)
    fake = make_fake_gpus(2, process_pids={0: [51, 60], 1: [51]})
    counters = [fake_counter(fake, 0), fake_counter(fake, 1)] if with_counter else []
    clock = FakeClock()
    return sampler_with(fake, clock, proc_root=str(root)), clock, counters


def test_energy_from_the_counter_split_between_jobs_sharing_a_gpu(tmp_path):
    sampler, clock, counters = gpu_jobs_sampler(tmp_path, with_counter=True)
    try:
        sampler.sample()
        clock.advance(1.0)
        first = {job.job_id: job for job in sampler.sample().jobs}
        assert first["50"].energy_j == 0.0 and first["60"].energy_j == 0.0, "energy counts from first seen"
        counters[0][0] += 4_000  # 4 J on GPU 0, shared by both jobs
        counters[1][0] += 10_000  # 10 J on GPU 1, job 50's alone
        clock.advance(2.0)
        jobs = {job.job_id: job for job in sampler.sample().jobs}
    finally:
        sampler.close()
    assert jobs["50"].pids == (50, 51), "bash run.sh is the root of its children"
    assert jobs["50"].energy_j == pytest.approx(12.0) and jobs["60"].energy_j == pytest.approx(2.0)
    assert jobs["50"].energy_method == "counter"
    gpu_power = {gpu.index: gpu.power_draw_w for gpu in sampler_gpus(jobs)}
    assert jobs["60"].power_draw_w == pytest.approx(gpu_power[0] / 2)
    assert jobs["50"].power_draw_w == pytest.approx(gpu_power[0] / 2 + gpu_power[1])


def sampler_gpus(jobs):
    # Power of the fake GPUs as the fixture scripts it (index 0 and 1 of an H100 set).
    fake = make_fake_gpus(2)
    return [GpuSample(index=i, name="", bus_id="", uuid="",
                      power_draw_w=fake.devices[i].values["nvmlDeviceGetPowerUsage"] / 1000) for i in range(2)]


def test_energy_integrates_power_without_a_counter(tmp_path):
    sampler, clock, _ = gpu_jobs_sampler(tmp_path, with_counter=False)
    try:
        sampler.sample()
        clock.advance(1.0)
        sampler.sample()
        clock.advance(2.0)
        jobs = {job.job_id: job for job in sampler.sample().jobs}
    finally:
        sampler.close()
    power = {gpu.index: gpu.power_draw_w for gpu in sampler_gpus(jobs)}
    assert jobs["60"].energy_j == pytest.approx(power[0] / 2 * 2.0)
    assert jobs["50"].energy_method == "power x time"


def test_sm_active_is_the_mean_of_the_jobs_gpus_and_na_without_gpm():
    def process(pid, gpus):
        return ProcessSample(pid=pid, ppid=1, user="u", cpu_percent=0, memory_percent=0, rss_bytes=0, state="S",
                             start_time_s=10.0 + pid, command="python", name="python",
                             gpu_uses=tuple(GpuProcessUse(index, 1 << 30, "compute") for index in gpus))
    gpus = [GpuSample(index=0, name="", bus_id="", uuid="", sm_active_ratio=0.2),
            GpuSample(index=1, name="", bus_id="", uuid="", sm_active_ratio=0.6),
            GpuSample(index=2, name="", bus_id="", uuid="")]
    jobs = {job.job_id: job for job in group_jobs(
        [process(5, (0, 1)), process(6, (2,))], gpus, {5: JobTags(slurm_job_id="9")})}
    assert jobs["9"].sm_active_ratio == pytest.approx(0.4) and jobs["9"].gpu_memory_used_bytes == 2 << 30
    assert is_na(jobs["6"].sm_active_ratio)


def test_a_pod_with_a_sidecar_is_one_job_named_by_its_gpu_processs_container():
    def process(pid, container, gpus=()):
        return ProcessSample(pid=pid, ppid=1, user="u", cpu_percent=0, memory_percent=0, rss_bytes=0, state="S",
                             start_time_s=float(pid), command="python", name="python", container=container,
                             gpu_uses=tuple(GpuProcessUse(index, 1 << 30, "compute") for index in gpus))
    sidecar = process(3, f"pod:{POD_UID}/aaaaaaaaaaaa")
    trainer = process(4, f"pod:{POD_UID}/{CONTAINER_ID[:12]}", gpus=(0,))
    (job,) = group_jobs([sidecar, trainer], [GpuSample(index=0, name="", bus_id="", uuid="")], {})
    assert (job.kind, job.job_id, job.pids) == ("pod", POD_UID, (3, 4))
    assert job.container == f"pod:{POD_UID}/{CONTAINER_ID[:12]}", "the started-first sidecar does not name it"


def test_snapshot_json_has_jobs_and_validates(trees):
    import json

    from pth_top.sensors.snapshot_json import SCHEMA_PATH, snapshot_to_dict
    from tests.sensors.schema_check import validate

    _launcher, workers = trees["torchrun"]
    fake = make_fake_gpus(2, process_pids={0: workers})
    clock = FakeClock()
    sampler = sampler_with(fake, clock)
    try:
        sampler.sample()
        clock.advance(1.0)
        snapshot = sampler.sample()
    finally:
        sampler.close()
    document = snapshot_to_dict(snapshot, top_processes=3)
    assert validate(document, json.loads(SCHEMA_PATH.read_text())) == []
    job = next(job for job in document["jobs"] if job["kind"] == "torchrun")
    assert job["job_id"] == "run-42" and job["gpu_indices"] == [0] and job["energy_method"] in ("", "counter",
                                                                                                 "power x time")
    assert job["running_time_s"] == max(0.0, snapshot.timestamp_s - job["start_time_s"])

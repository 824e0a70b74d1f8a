"""The job step keeps its grouping while no process that could be in a listed job comes, goes or changes."""

from __future__ import annotations

import shutil

from tests.fakes.gpu_fixtures import make_fake_gpus
from tests.sensors.helpers import FakeClock, sampler_with
from tests.sensors.proc_tree import add_process, make_proc_root


def test_grouping_is_kept_through_unrelated_churn_and_redone_for_a_job_member(tmp_path):
    root = make_proc_root(tmp_path / "proc")
    add_process(root, 1, "init", ["/sbin/init"], ppid=0)
    add_process(root, 50, "bash", ["bash", "run.sh"], ppid=1)
    add_process(root, 51, "python", ["python", "train.py"], ppid=50)
    add_process(root, 60, "sshd", ["sshd: admin"], ppid=1)
    clock = FakeClock()
    sampler = sampler_with(make_fake_gpus(1, process_pids={0: [51]}), clock, proc_root=str(root))
    tracker = sampler._jobs
    assert tracker is not None

    def jobs():
        clock.advance(1.0)
        return {job.job_id: job.pids for job in sampler.sample().jobs}

    try:
        sampler.sample()
        assert jobs() == {"50": (50, 51)} and tracker.plans_made == 1
        add_process(root, 61, "bash", ["-bash"], ppid=60)  # a login elsewhere, and a command in it
        add_process(root, 62, "ls", ["ls"], ppid=61)
        assert jobs() == {"50": (50, 51)}
        shutil.rmtree(root / "62")
        assert jobs() == {"50": (50, 51)}
        assert tracker.plans_made == 1, "processes outside every listed job leave the grouping as it was"
        add_process(root, 52, "python", ["python", "loader.py"], ppid=51)
        assert jobs() == {"50": (50, 51, 52)}, "a new child of a job's process joins it"
        (root / "63").mkdir()
        (root / "63" / "environ").write_bytes(b"SLURM_JOB_ID=77\0")
        add_process(root, 63, "python", ["python", "step.py"], ppid=1)
        assert jobs() == {"50": (50, 51, 52), "77": (63,)}, "a process with a job variable is a new job"
        shutil.rmtree(root / "52")
        assert jobs() == {"50": (50, 51), "77": (63,)}, "a member that exits leaves its job"
        add_process(root, 51, "python", ["python", "train.py"], ppid=60)
        assert jobs() == {"51": (51,), "77": (63,)}, "a member with a new parent is grouped again"
        assert tracker.plans_made == 5
    finally:
        sampler.close()

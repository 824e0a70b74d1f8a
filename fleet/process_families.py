"""GPU memory per process (the largest N per GPU, labelled pid/user/comm) and per user (every process).

Never the command line: it is unbounded and carries secrets (tokens, passwords). `comm` is the
kernel's 15-character name (FamilyBook makes every label printable).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Mapping

from pth_top.fleet.gpu_families import gpu_labels
from pth_top.fleet.metrics import FamilyBook
from pth_top.sensors.gpu_process_owners import ProcessOwner
from pth_top.sensors.gpu_processes import NvmlProcess
from pth_top.sensors.model import GpuSample, JobSample
from pth_top.sensors.na import is_na

# The user label of a process that has exited or is hidden from us since NVML listed it.
UNKNOWN_USER = ""


def compute_process_counts(gpu_processes: list[NvmlProcess]) -> dict[int, int]:
    """GPU index -> number of distinct compute processes on it."""
    pids: dict[int, set[int]] = defaultdict(set)
    for process in gpu_processes:
        if process.kind == "compute":
            pids[process.gpu_index].add(process.pid)
    return {index: len(found) for index, found in pids.items()}


def add_processes(
    book: FamilyBook,
    gpus: tuple[GpuSample, ...],
    gpu_processes: list[NvmlProcess],
    owners: Mapping[int, ProcessOwner],
    comm_of: Callable[[int], str | None],
    per_gpu: int,
    jobs: tuple[JobSample, ...] = (),
) -> None:
    """Per-process series for the `per_gpu` largest processes of each GPU, per-user sums over all of them.

    A process series carries its job (id and kind, as the pth_top_job_* series), pod (name, else UID), namespace
    and container where known; never a `job` label, which Prometheus keeps for the scrape job.
    """
    job_labels = {pid: job_label_values(job) for job in jobs for pid in job.pids}
    memory_by_pid: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for process in gpu_processes:
        if not is_na(process.gpu_memory_used_bytes):
            memory_by_pid[process.gpu_index][process.pid] += process.gpu_memory_used_bytes
    for gpu in gpus:
        by_pid = memory_by_pid.get(gpu.index)
        if not by_pid:
            continue
        labels = gpu_labels(gpu)
        by_user: dict[str, int] = defaultdict(int)
        for pid, used_bytes in by_pid.items():
            owner = owners.get(pid)
            by_user[owner.user if owner else UNKNOWN_USER] += used_bytes
        largest = sorted(by_pid.items(), key=lambda item: (-item[1], item[0]))[:per_gpu]
        for pid, used_bytes in largest:
            owner = owners.get(pid)
            comm = comm_of(owner.pid) if owner else None
            process_labels = (
                str(owner.pid if owner else pid),
                owner.user if owner else UNKNOWN_USER,
                comm if comm is not None else "",
            )
            job = job_labels.get(owner.pid if owner else -1, ("", "", "", "", ""))
            book.add("pth_top_process_gpu_memory_bytes", (*labels, *process_labels, *job), used_bytes)
        for user, used_bytes in sorted(by_user.items()):
            book.add("pth_top_user_gpu_memory_bytes", (*labels, user), used_bytes)


def job_label_values(job: JobSample) -> tuple[str, str, str, str, str]:
    """(job_id, job_kind, pod, namespace, container) label values of a job's process series."""
    kind, _, ident = job.container.partition(":")
    # A pod's is "pod:<uid>/<container id>" (sensors/cgroups.py).
    pod_uid, _, pod_container = ident.partition("/") if kind == "pod" else ("", "", "")
    pod = job.pod_name or pod_uid
    container = ident if kind in ("docker", "container") else pod_container
    return (job.job_id, job.kind, pod, job.namespace, container)


def add_jobs(book: FamilyBook, jobs: tuple[JobSample, ...]) -> None:
    """Per-job GPU memory and energy, for the jobs holding a GPU."""
    for job in jobs:
        if not job.gpu_indices:
            continue
        labels = (job.job_id, job.kind, job.user)
        book.add("pth_top_job_gpu_memory_bytes", labels, job.gpu_memory_used_bytes)
        book.add("pth_top_job_energy_joules_total", labels, job.energy_j)

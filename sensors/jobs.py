"""Processes grouped into jobs: pure functions over ProcessSample, GpuSample and each process's JobTags.

A process's job, first rule that applies:
1. torchrun: TORCHELASTIC_RUN_ID in its environment (id: the run id; "none" or empty: its launcher's PID).
   The launcher (the workers' parent, which has no run id itself) joins its workers' job.
2. slurm: SLURM_JOB_ID in its environment, else a cgroup path .../job_<id>/...
3. pod / docker / container: from its cgroup path (sensors/cgroups.py).
4. torchrun again where the environment is unreadable: a torchrun launcher (`torchrun`,
   `torch.distributed.run` or `.launch` in its command) among its ancestors; id: the launcher's PID.
5. tree: the process-tree root, id its PID. The root is the topmost ancestor below a session boundary:
   init (PID 1), a kernel thread, a process not visible here, a session manager (sshd, tmux, screen, login,
   su, sudo, systemd, a container shim, slurmstepd), or an interactive shell (a shell with no script or -c
   command: only options). So `python train.py` typed at a shell is its own root, and `bash run.sh` groups
   its children.

A job is listed when one of its processes holds a GPU context, or it is a torchrun or Slurm job.
GPU power is shared: each GPU's power is split equally among the listed jobs holding a context on it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

from pth_top.sensors.job_environ import NO_TAGS, JobTags
from pth_top.sensors.model import GpuSample, JobSample, ProcessSample
from pth_top.sensors.na import NA, is_na

if TYPE_CHECKING:
    from pth_top.sensors.job_energy import JobAccount

JobKey = tuple[str, str]
SESSION_MANAGERS = frozenset({
    "init", "systemd", "sshd", "sshd-session", "tmux: server", "tmux", "screen", "SCREEN", "login", "su", "sudo",
    "containerd-shim", "containerd-shim-runc-v2", "conmon", "slurmstepd", "kthreadd", "mosh-server",
})
SHELLS = frozenset({"bash", "sh", "zsh", "fish", "dash", "ksh", "tcsh", "csh"})
LAUNCHER_MARKS = ("torch.distributed.run", "torch.distributed.launch")
ALWAYS_LISTED_KINDS = frozenset({"torchrun", "slurm"})
_CONTAINER_KINDS = ("pod", "docker", "container")


def is_launcher(process: ProcessSample) -> bool:
    """A torchrun launcher: the `torchrun` script or `python -m torch.distributed.run/launch`."""
    return process.name == "torchrun" or any(mark in process.command for mark in LAUNCHER_MARKS)


def tagged_key(process: ProcessSample, tags: JobTags) -> JobKey | None:
    """The job a process names itself from its environment or cgroup (rules 1-3), or None."""
    run_id = tags.torchelastic_run_id
    if run_id:
        return ("torchrun", run_id if run_id != "none" else str(process.ppid))
    if tags.slurm_job_id:
        return ("slurm", tags.slurm_job_id)
    kind, _, ident = process.container.partition(":")
    if ident and (kind == "slurm" or kind in _CONTAINER_KINDS):
        # A pod's containers are one job: "pod:<uid>/<container id>" is the pod's.
        return (kind, ident.partition("/")[0] if kind == "pod" else ident)
    return None


def is_interactive_shell(process: ProcessSample) -> bool:
    """A shell started with options only ("-bash", "zsh -l"): a session, not a script."""
    return process.name in SHELLS and all(argument.startswith("-") for argument in process.command.split()[1:])


class _Tree:
    """Parent links of one sample's processes, with the boundary and root of each, computed once."""

    def __init__(self, by_pid: Mapping[int, ProcessSample]) -> None:
        self.by_pid = by_pid
        self._boundary: dict[int, bool] = {}
        self._key: dict[int, tuple[JobKey, int]] = {}

    def is_boundary(self, pid: int) -> bool:
        known = self._boundary.get(pid)
        if known is not None:
            return known
        process = self.by_pid.get(pid)
        if process is None or pid <= 1 or process.is_kernel_thread or process.name in SESSION_MANAGERS:
            answer = True
        else:
            answer = is_interactive_shell(process)
        self._boundary[pid] = answer
        return answer

    def key(self, pid: int) -> tuple[JobKey, int]:
        """Rules 4-5: the torchrun launcher above `pid`, else its tree root; with the PID it is named after."""
        chain: list[int] = []
        found: tuple[JobKey, int] | None = None
        current = pid
        while found is None:
            found = self._key.get(current)
            if found is not None:
                break
            chain.append(current)
            process = self.by_pid[current]
            if is_launcher(process):
                found = (("torchrun", str(current)), current)
            elif self.is_boundary(process.ppid) or len(chain) > 4096:
                found = (("tree", str(current)), current)
            else:
                current = process.ppid
        for member in chain:
            self._key[member] = found
        return found


def group_jobs(
    processes: Iterable[ProcessSample], gpus: Iterable[GpuSample], tags_of: Mapping[int, JobTags],
) -> tuple[JobSample, ...]:
    """The listed jobs of one sample, largest GPU memory first; energy is left NA (sensors/job_energy.py)."""
    table = tuple(processes)
    holders = {process.pid: process for process in table if process.gpu_uses}
    return job_samples(plan_jobs(table, tags_of), holders, gpus)


@dataclass(frozen=True, slots=True)
class JobPlan:
    """One listed job's membership and fixed fields: they hold while its processes' PIDs, parents, names and GPU
    placement do; only its GPU figures change from sample to sample."""

    key: JobKey
    # Its members holding a GPU context.
    gpu_holders: tuple[int, ...]
    gpu_indices: tuple[int, ...]
    user: str
    pids: tuple[int, ...]
    start_time_s: float
    container: str
    namespace: str
    pod_name: str


@dataclass(frozen=True, slots=True)
class JobsPlan:
    jobs: tuple[JobPlan, ...]
    # GPU index -> how many listed jobs hold a context on it (its power is split among them).
    jobs_on_gpu: Mapping[int, int]


def plan_jobs(processes: Iterable[ProcessSample], tags_of: Mapping[int, JobTags]) -> JobsPlan:
    """Which processes form each listed job (rules in the module docstring)."""
    by_pid = {process.pid: process for process in processes if not process.is_kernel_thread}
    keys: dict[int, JobKey] = {}
    for pid, process in by_pid.items():
        tags = tags_of.get(pid, NO_TAGS)
        if tags is NO_TAGS and not process.container:
            continue
        key = tagged_key(process, tags)
        if key is not None:
            keys[pid] = key
    for pid, key in list(keys.items()):
        parent = by_pid.get(by_pid[pid].ppid)
        if key[0] == "torchrun" and parent is not None and keys.get(parent.pid, ("",))[0] != "torchrun":
            keys[parent.pid] = key
    tree = _Tree(by_pid)
    roots: dict[int, JobKey] = {}
    for pid, process in by_pid.items():
        if pid not in keys and process.gpu_uses:
            keys[pid], root = tree.key(pid)
            roots[root] = keys[pid]
    if roots:
        _add_untagged_descendants(by_pid, keys, roots)
    members: dict[JobKey, list[ProcessSample]] = defaultdict(list)
    for pid, key in keys.items():
        members[key].append(by_pid[pid])
    listed = {
        key: group for key, group in members.items()
        if key[0] in ALWAYS_LISTED_KINDS or any(process.gpu_uses for process in group)
    }
    jobs_on_gpu: dict[int, int] = defaultdict(int)
    plans = []
    for key, group in listed.items():
        plan = _plan(key, group, tags_of)
        plans.append(plan)
        for index in plan.gpu_indices:
            jobs_on_gpu[index] += 1
    return JobsPlan(tuple(plans), dict(jobs_on_gpu))


def _add_untagged_descendants(
    by_pid: Mapping[int, ProcessSample], keys: dict[int, JobKey], roots: Mapping[int, JobKey],
) -> None:
    """A tree or launcher job holds its root and every descendant without a job of its own."""
    children: dict[int, list[int]] = defaultdict(list)
    for pid, process in by_pid.items():
        children[process.ppid].append(pid)
    for root, key in roots.items():
        keys.setdefault(root, key)
        stack = [root]
        seen = {root}
        while stack:
            for child in children.get(stack.pop(), ()):
                # Through the job's own GPU processes too: their children (data loader workers) are in it.
                if child not in seen and keys.setdefault(child, key) == key:
                    seen.add(child)
                    stack.append(child)


def _plan(
    key: JobKey, group: list[ProcessSample], tags_of: Mapping[int, JobTags],
) -> JobPlan:
    group.sort(key=lambda process: (process.start_time_s, process.pid))
    tags = [tags_of.get(process.pid, NO_TAGS) for process in group]
    return JobPlan(
        key=key,
        gpu_holders=tuple(process.pid for process in group if process.gpu_uses),
        gpu_indices=tuple(sorted({use.gpu_index for process in group for use in process.gpu_uses})),
        user=group[0].user,
        pids=tuple(sorted(process.pid for process in group)),
        start_time_s=group[0].start_time_s,
        # A GPU process's container first: a pod's sidecars are in its job too.
        container=next((process.container for process in sorted(group, key=lambda member: not member.gpu_uses)
                        if process.container), ""),
        namespace=next((tag.pod_namespace for tag in tags if tag.pod_namespace), ""),
        pod_name=next((tag.pod_name for tag in tags if tag.pod_name), ""),
    )


def job_samples(
    plan: JobsPlan, holders: Mapping[int, ProcessSample], gpus: Iterable[GpuSample],
    accounts: Sequence[JobAccount] | None = None,
) -> tuple[JobSample, ...]:
    """The planned jobs with this sample's GPU memory (`holders`: PID -> process, those holding a GPU context),
    SM active and power share, and energy from `accounts` (one per planned job; None: NA); largest GPU memory first."""
    gpu_by_index = {gpu.index: gpu for gpu in gpus}
    jobs_on_gpu = plan.jobs_on_gpu
    jobs = []
    for number, job in enumerate(plan.jobs):
        energy_j, method, first_seen_s = (NA, "", 0.0) if accounts is None else (
            accounts[number].energy_j, accounts[number].method, accounts[number].first_seen_s)
        memory = [use.gpu_memory_used_bytes for pid in job.gpu_holders for use in holders[pid].gpu_uses
                  if not is_na(use.gpu_memory_used_bytes)]
        job_gpus = [gpu_by_index[index] for index in job.gpu_indices if index in gpu_by_index]
        active = [gpu.sm_active_ratio for gpu in job_gpus if not is_na(gpu.sm_active_ratio)]
        power = [gpu.power_draw_w / jobs_on_gpu[gpu.index] for gpu in job_gpus if not is_na(gpu.power_draw_w)]
        jobs.append(JobSample(
            kind=job.key[0],
            job_id=job.key[1],
            user=job.user,
            pids=job.pids,
            gpu_indices=job.gpu_indices,
            gpu_memory_used_bytes=sum(memory) if memory else NA,
            sm_active_ratio=sum(active) / len(active) if active else NA,
            power_draw_w=sum(power) if power else NA,
            start_time_s=job.start_time_s,
            container=job.container,
            namespace=job.namespace,
            pod_name=job.pod_name,
            energy_j=energy_j,
            energy_method=method,
            first_seen_s=first_seen_s,
        ))
    jobs.sort(key=lambda job: (-(0 if is_na(job.gpu_memory_used_bytes) else job.gpu_memory_used_bytes),
                               job.kind, job.job_id))
    return tuple(jobs)

"""Where the OOM watcher finds a process's oom_kill counter, on fake /proc and cgroup trees: the cgroup v1 memory
hierarchy (mountinfo, the `N:memory:/path` line, memory.oom_control), v2's memory.events, hybrid hosts, a
container's view of a subtree; and how counter rises and kernel log lines become one event each."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pth_top.recorder import oom
from pth_top.recorder.oom import CgroupHierarchy, OomWatcher, memory_hierarchies, process_cgroups
from tests.fakes.snapshots import make_snapshot

CENTOS7_MOUNTINFO = """\
18 41 0:17 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw
25 18 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:8 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,xattr,name=systemd
29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,cpuacct,cpu
33 25 0:30 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,memory
"""
HYBRID_MOUNTINFO = CENTOS7_MOUNTINFO + (
    "41 25 0:38 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:7 - cgroup2 cgroup2 rw\n")
V2_MOUNTINFO = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
# A container without a cgroup namespace: it sees its own subtree of the host's memory hierarchy.
CONTAINER_MOUNTINFO = ("812 805 0:30 /docker/0123456789ab /sys/fs/cgroup/my\\040memory ro,nosuid,nodev,noexec,"
                       "relatime master:15 - cgroup cgroup rw,memory\n")
SLURM_V1_CGROUP = """\
11:memory:/slurm/uid_1000/job_4242/step_0
10:cpuset:/slurm/uid_1000/job_4242/step_0
4:cpu,cpuacct:/slurm/uid_1000/job_4242/step_0
1:name=systemd:/system.slice/slurmd.service
"""
JOB = "/slurm/uid_1000/job_4242/step_0"
OOM_CONTROL = "oom_kill_disable 0\nunder_oom 0\noom_kill {count}\n"
# As this kernel wrote them for a kill in a v1 memory group (pid and group renamed).
DETAIL = ("oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
          f"oom_memcg={JOB},task_memcg={JOB},task=python,pid=4300,uid=1000")
KILLED = ("Memory cgroup out of memory: Killed process 4300 (python) total-vm:63176kB, anon-rss:49536kB, "
          "file-rss:6032kB, shmem-rss:0kB, UID:1000 pgtables:164kB oom_score_adj:0")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class FakeKernelLog:
    """The kernel log lines that come in each poll, in turn."""

    def __init__(self, *batches: list[str], unavailable_reason: str | None = None) -> None:
        self.batches = list(batches)
        self.unavailable_reason = unavailable_reason

    def messages(self) -> list[str]:
        return self.batches.pop(0) if self.batches else []

    def close(self) -> None:
        pass


@pytest.fixture
def v1_host(tmp_path):
    """A fake /proc with PID 4300 in a Slurm job's v1 memory cgroup, and the v1 memory mount holding its counter."""
    proc = tmp_path / "proc"
    write(proc / "4300" / "cgroup", SLURM_V1_CGROUP)
    mount = tmp_path / "memory"
    counter = write(mount / JOB.lstrip("/") / "memory.oom_control", OOM_CONTROL.format(count=0))
    return proc, CgroupHierarchy(1, str(mount), "/", "memory.oom_control"), counter


def snapshot_with(*pids: int, container: str = "slurm:4242"):
    base = make_snapshot(process_count=2)
    process = base.processes[1]
    return replace(base, processes=tuple(replace(process, pid=pid, container=container) for pid in pids))


def watcher(proc: Path, hierarchies, kernel_log=None) -> OomWatcher:
    return OomWatcher(lambda snapshot: snapshot.processes, proc_root=str(proc), hierarchies=hierarchies,
                      kernel_log=kernel_log)


def test_the_memory_hierarchies_and_their_roots_come_from_mountinfo(tmp_path):
    def parsed(text: str) -> list[CgroupHierarchy]:
        return memory_hierarchies(str(write(tmp_path / "mountinfo", text)))

    v1 = CgroupHierarchy(1, "/sys/fs/cgroup/memory", "/", "memory.oom_control")
    v2_unified = CgroupHierarchy(2, "/sys/fs/cgroup/unified", "/", "memory.events")
    assert parsed(CENTOS7_MOUNTINFO) == [v1]
    assert parsed(HYBRID_MOUNTINFO) == [v1, v2_unified]
    assert parsed(V2_MOUNTINFO) == [CgroupHierarchy(2, "/sys/fs/cgroup", "/", "memory.events")]
    assert parsed(CONTAINER_MOUNTINFO) == [
        CgroupHierarchy(1, "/sys/fs/cgroup/my memory", "/docker/0123456789ab", "memory.oom_control")]
    assert memory_hierarchies(str(tmp_path / "absent")) == []


def test_a_process_cgroups_are_its_memory_line_and_its_unified_line(tmp_path):
    proc = tmp_path / "proc"
    write(proc / "1" / "cgroup", SLURM_V1_CGROUP)
    write(proc / "2" / "cgroup", "12:hugetlb,memory:/user.slice/user-1000.slice\n1:name=systemd:/user.slice\n"
                                 "0::/user.slice/user-1000.slice/session-3.scope\n")
    write(proc / "3" / "cgroup", "0::/system.slice/train.service\n")
    assert process_cgroups(1, str(proc)) == {1: JOB}
    assert process_cgroups(2, str(proc)) == {1: "/user.slice/user-1000.slice",
                                             2: "/user.slice/user-1000.slice/session-3.scope"}
    assert process_cgroups(3, str(proc)) == {2: "/system.slice/train.service"}
    assert process_cgroups(4, str(proc)) == {}, "a process gone"


def test_a_counter_path_is_the_cgroup_under_the_mount_relative_to_its_root():
    host = CgroupHierarchy(1, "/sys/fs/cgroup/memory", "/", "memory.oom_control")
    assert host.counter_path(JOB) == f"/sys/fs/cgroup/memory{JOB}/memory.oom_control"
    assert host.counter_path("/") == "/sys/fs/cgroup/memory/memory.oom_control"
    container = CgroupHierarchy(1, "/sys/fs/cgroup/memory", "/docker/0123456789ab", "memory.oom_control")
    assert container.counter_path("/docker/0123456789ab") == "/sys/fs/cgroup/memory/memory.oom_control"
    assert container.counter_path("/docker/0123456789ab/worker") == "/sys/fs/cgroup/memory/worker/memory.oom_control"
    assert container.counter_path("/docker/0123456789abcd") is None, "a sibling the mount cannot see"
    assert container.counter_path("/user.slice") is None


def test_a_v1_oom_kill_count_that_rises_is_one_event_with_the_counters(v1_host):
    proc, v1, counter = v1_host
    watching = watcher(proc, [v1])
    assert watching.poll(snapshot_with(4300)) == []
    assert watching.watched_cgroups == {JOB}
    counter.write_text(OOM_CONTROL.format(count=2))
    [event] = watching.poll(snapshot_with(4300))
    assert (event.kind, event.severity, event.pid) == ("oom_kill", "critical", None)
    assert event.evidence == {"cgroup": JOB, "oom_kill_before": 0, "oom_kill_after": 2, "container": "slurm:4242",
                              "counter": str(counter)}
    assert "2 process(es) killed" in event.message
    assert watching.poll(snapshot_with()) == [], "counted once; the cgroup stays watched after its process died"
    counter.parent.joinpath("memory.oom_control").unlink()
    assert watching.poll(snapshot_with()) == [] and watching.watched_cgroups == set(), "a removed cgroup"


def test_the_kernel_log_names_the_victim_in_the_same_event(v1_host):
    proc, v1, counter = v1_host
    watching = watcher(proc, [v1], FakeKernelLog([], [DETAIL, KILLED]))
    watching.poll(snapshot_with(4300))
    counter.write_text(OOM_CONTROL.format(count=1))
    [event] = watching.poll(snapshot_with())
    assert event.pid == 4300 and "(python)" in event.message
    assert event.evidence["kernel_log"] == [KILLED] and event.evidence["oom_kill_after"] == 1


def test_a_count_seen_before_the_kernel_logs_the_victim_waits_one_poll_for_it(v1_host):
    proc, v1, counter = v1_host
    watching = watcher(proc, [v1], FakeKernelLog([], [DETAIL], [KILLED]))
    watching.poll(snapshot_with(4300))
    counter.write_text(OOM_CONTROL.format(count=1))
    assert watching.poll(snapshot_with()) == [], "the count rose, the victim's line not yet read"
    [event] = watching.poll(snapshot_with())
    assert event.pid == 4300 and event.evidence["oom_kill_before"] == 0 and event.evidence["kernel_log"] == [KILLED]


def test_without_a_kernel_log_line_the_count_alone_is_the_event_one_poll_later(v1_host):
    proc, v1, counter = v1_host
    watching = watcher(proc, [v1], FakeKernelLog())
    watching.poll(snapshot_with(4300))
    counter.write_text(OOM_CONTROL.format(count=1))
    assert watching.poll(snapshot_with()) == []
    [event] = watching.poll(snapshot_with())
    assert event.pid is None and "kernel_log" not in event.evidence
    unreadable = watcher(proc, [v1], FakeKernelLog(unavailable_reason="/dev/kmsg: Permission denied"))
    unreadable.poll(snapshot_with(4300))
    counter.write_text(OOM_CONTROL.format(count=2))
    [event] = unreadable.poll(snapshot_with())
    assert event.evidence["oom_kill_before"] == 1, "no kernel log to wait for: at once"


def test_a_hybrid_host_reads_v1_unless_its_memory_controller_is_on_v2(tmp_path, v1_host):
    proc, v1, counter = v1_host
    write(proc / "4300" / "cgroup", SLURM_V1_CGROUP + "0::/system.slice/slurmd.service\n")
    unified = tmp_path / "unified"
    (unified / "system.slice" / "slurmd.service").mkdir(parents=True)  # no memory.events: memory is on v1
    v2 = CgroupHierarchy(2, str(unified), "/", "memory.events")
    watching = watcher(proc, [v1, v2])
    watching.poll(snapshot_with(4300))
    assert watching.watched_cgroups == {JOB}
    events = write(unified / "system.slice" / "slurmd.service" / "memory.events", "oom 0\noom_kill 0\n")
    on_v2 = watcher(proc, [v1, v2])
    on_v2.poll(snapshot_with(4300))
    events.write_text("oom 1\noom_kill 1\n")
    [event] = on_v2.poll(snapshot_with())
    assert event.evidence["cgroup"] == "/system.slice/slurmd.service" and event.evidence["counter"] == str(events)


def test_the_watched_cgroups_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(oom, "MAX_CGROUPS", 3)
    proc, mount = tmp_path / "proc", tmp_path / "memory"
    for pid in range(100, 106):
        write(proc / str(pid) / "cgroup", f"9:memory:/job_{pid}\n")
        write(mount / f"job_{pid}" / "memory.oom_control", OOM_CONTROL.format(count=0))
    watching = watcher(proc, [CgroupHierarchy(1, str(mount), "/", "memory.oom_control")])
    watching.poll(snapshot_with(*range(100, 106)))
    assert watching.watched_cgroups == {"/job_100", "/job_101", "/job_102"}


def test_a_kernel_before_4_19_names_the_cgroup_in_its_task_in_line(v1_host):
    proc, v1, counter = v1_host
    old_kernel = [f"Task in {JOB} killed as a result of limit of /slurm/uid_1000/job_4242",
                  "Memory cgroup out of memory: Kill process 4300 (python) score 1000 or sacrifice child",
                  "Killed process 4300 (python) total-vm:63176kB, anon-rss:49536kB, file-rss:6032kB, shmem-rss:0kB"]
    watching = watcher(proc, [v1], FakeKernelLog([], old_kernel))
    watching.poll(snapshot_with(4300))
    counter.write_text(OOM_CONTROL.format(count=1))
    [event] = watching.poll(snapshot_with())
    assert event.pid == 4300 and event.evidence["cgroup"] == JOB and event.evidence["kernel_log"] == [old_kernel[2]]


def test_a_kill_outside_the_watched_cgroups_is_its_own_event(v1_host):
    proc, v1, _ = v1_host
    watching = watcher(proc, [v1], FakeKernelLog([], [DETAIL.replace(JOB, "/other"), KILLED]))
    watching.poll(snapshot_with(4300))
    [event] = watching.poll(snapshot_with())
    assert event.pid == 4300 and event.evidence == {"cgroup": "/other", "kernel_log": [KILLED]}
